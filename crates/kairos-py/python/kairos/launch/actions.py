"""ROS 2's ``launch.actions`` on kairos."""

from kairos._layout import stands_for_package

# ROS 2's launch.actions.<module> paths are this module (see kairos._layout).
stands_for_package(__name__, (
    "append_environment_variable", "declare_launch_argument", "emit_event",
    "execute_local", "execute_process", "group_action", "include_launch_description",
    "log_info", "opaque_coroutine", "opaque_function", "pop_environment",
    "pop_launch_configurations", "push_environment", "push_launch_configurations",
    "register_event_handler", "reset_environment", "reset_launch_configurations",
    "set_environment_variable", "set_launch_configuration", "shutdown_action",
    "timer_action", "unregister_event_handler", "unset_environment_variable",
    "unset_launch_configuration"))

import os
import shlex

from kairos.launch._core import (
    Action, InvalidLaunchFileError, LaunchDescriptionEntity,
    normalize_to_list_of_substitutions, perform_substitutions, perform_text)
from kairos.launch.events import Shutdown as ShutdownEvent


class DeclareLaunchArgument(Action):
    def __init__(self, name, *, default_value=None, description=None, choices=None,
                 **kwargs):
        super().__init__(**kwargs)
        self.name = name
        self.default_value = None if default_value is None else \
            normalize_to_list_of_substitutions(default_value)
        self.description = description
        self.choices = choices

    def execute(self, context):
        if self.name not in context.launch_configurations:
            if self.default_value is None:
                raise InvalidLaunchFileError(
                    f"launch argument '{self.name}' has no default: pass {self.name}:=VALUE")
            context.launch_configurations[self.name] = perform_substitutions(
                context, self.default_value)
        value = context.launch_configurations[self.name]
        if self.choices is not None and value not in self.choices:
            raise InvalidLaunchFileError(
                f"launch argument '{self.name}' is '{value}', not one of "
                f"{', '.join(self.choices)}")


class SetLaunchConfiguration(Action):
    def __init__(self, name, value, **kwargs):
        super().__init__(**kwargs)
        self.name = normalize_to_list_of_substitutions(name)
        self.value = normalize_to_list_of_substitutions(value)

    def execute(self, context):
        context.launch_configurations[perform_substitutions(context, self.name)] = \
            perform_substitutions(context, self.value)


class PushLaunchConfigurations(Action):
    def execute(self, context):
        context._push()


class PopLaunchConfigurations(Action):
    def execute(self, context):
        context._pop()


class UnsetLaunchConfiguration(Action):
    def __init__(self, name, **kwargs):
        super().__init__(**kwargs)
        self.name = normalize_to_list_of_substitutions(name)

    def execute(self, context):
        context.launch_configurations.pop(perform_substitutions(context, self.name), None)


class ResetLaunchConfigurations(Action):
    """Forgets every launch configuration, keeping those given (evaluated first)."""

    def __init__(self, launch_configurations=None, **kwargs):
        super().__init__(**kwargs)
        self.launch_configurations = launch_configurations

    def execute(self, context):
        kept = {}
        for key, value in (self.launch_configurations or {}).items():
            kept[perform_text(context, key)] = perform_text(context, value)
        context.launch_configurations.clear()
        context.launch_configurations.update(kept)


class PushEnvironment(Action):
    """Saves the environment processes get, for ``PopEnvironment``."""

    def execute(self, context):
        context._push_environment()


class PopEnvironment(Action):
    def execute(self, context):
        context._pop_environment()


class ResetEnvironment(Action):
    """The environment processes get, as it was when the launch began."""

    def execute(self, context):
        context._reset_environment()


class GroupAction(Action):
    """Actions in a scope of their own (``scoped=True``): configurations, environment,
    namespace, parameters and remappings set in it stay in it."""

    def __init__(self, actions, *, scoped=True, forwarding=True, launch_configurations=None,
                 **kwargs):
        super().__init__(**kwargs)
        self.actions = list(actions)
        self.scoped = scoped
        self.forwarding = forwarding
        self.launch_configurations = launch_configurations or {}

    def get_sub_entities(self):
        return self.actions

    def execute(self, context):
        entities = []
        if self.scoped:
            entities.append(PushLaunchConfigurations())
            if not self.forwarding:
                entities.append(_ClearConfigurations())
        for name, value in self.launch_configurations.items():
            entities.append(SetLaunchConfiguration(name, value))
        entities.extend(self.actions)
        if self.scoped:
            entities.append(PopLaunchConfigurations())
        return entities


class _ClearConfigurations(Action):
    def execute(self, context):
        context.launch_configurations.clear()


class IncludeLaunchDescription(Action):
    """Another launch file (Python, XML or YAML), with launch arguments, in a scope of
    its own."""

    def __init__(self, launch_description_source, *, launch_arguments=None, **kwargs):
        super().__init__(**kwargs)
        from kairos.launch.launch_description_sources import (
            AnyLaunchDescriptionSource, LaunchDescriptionSource)
        if not isinstance(launch_description_source, LaunchDescriptionSource):
            launch_description_source = AnyLaunchDescriptionSource(launch_description_source)
        self.launch_description_source = launch_description_source
        self.launch_arguments = list(
            launch_arguments.items() if isinstance(launch_arguments, dict)
            else launch_arguments or [])

    def execute(self, context):
        args = [(perform_text(context, k), perform_text(context, v))
                for k, v in self.launch_arguments]
        description = self.launch_description_source.get_launch_description(context)
        path = self.launch_description_source.location_in(context)
        entities = [PushLaunchConfigurations()]
        entities.extend(SetLaunchConfiguration(k, v) for k, v in args)
        entities.append(_SetLocals({
            "current_launch_file_path": path,
            "current_launch_file_directory": os.path.dirname(path) if path else None,
        }))
        entities.append(description)
        entities.append(PopLaunchConfigurations())
        return entities


class _SetLocals(Action):
    def __init__(self, values):
        super().__init__()
        self.values = values

    def execute(self, context):
        context.extend_locals(self.values)


class SetEnvironmentVariable(Action):
    def __init__(self, name, value, **kwargs):
        super().__init__(**kwargs)
        self.name = normalize_to_list_of_substitutions(name)
        self.value = normalize_to_list_of_substitutions(value)

    def execute(self, context):
        context.set_env(perform_substitutions(context, self.name),
                        perform_substitutions(context, self.value))


class UnsetEnvironmentVariable(Action):
    def __init__(self, name, **kwargs):
        super().__init__(**kwargs)
        self.name = normalize_to_list_of_substitutions(name)

    def execute(self, context):
        context.unset_env(perform_substitutions(context, self.name))


class AppendEnvironmentVariable(Action):
    def __init__(self, name, value, *, prepend=False, separator=os.pathsep, **kwargs):
        super().__init__(**kwargs)
        self.name = normalize_to_list_of_substitutions(name)
        self.value = normalize_to_list_of_substitutions(value)
        self.prepend = prepend
        self.separator = separator

    def execute(self, context):
        name = perform_substitutions(context, self.name)
        value = perform_substitutions(context, self.value)
        old = context.environment.get(name)
        if old:
            value = value + self.separator + old if self.prepend else old + self.separator + value
        context.set_env(name, value)


class LogInfo(Action):
    def __init__(self, *, msg, **kwargs):
        super().__init__(**kwargs)
        self.msg = normalize_to_list_of_substitutions(msg)

    def execute(self, context):
        context._driver.log(perform_substitutions(context, self.msg))


class OpaqueFunction(Action):
    """A Python function run when the launch is performed: ``function(context, *args,
    **kwargs)`` may return more actions."""

    def __init__(self, *, function, args=None, kwargs=None, **rest):
        super().__init__(**rest)
        if not callable(function):
            raise TypeError("OpaqueFunction's function must be callable")
        self.function = function
        self.args = list(args or [])
        self.kwargs = dict(kwargs or {})

    def execute(self, context):
        return self.function(context, *self.args, **self.kwargs)


class RegisterEventHandler(Action):
    def __init__(self, event_handler, **kwargs):
        super().__init__(**kwargs)
        self.event_handler = event_handler

    def execute(self, context):
        context.register_event_handler(self.event_handler)


class UnregisterEventHandler(Action):
    def __init__(self, event_handler, **kwargs):
        super().__init__(**kwargs)
        self.event_handler = event_handler

    def execute(self, context):
        context.unregister_event_handler(self.event_handler)


class EmitEvent(Action):
    def __init__(self, *, event, **kwargs):
        super().__init__(**kwargs)
        self.event = event

    def execute(self, context):
        context._driver.emit(self.event)


class Shutdown(EmitEvent):
    """Stop the launch (every process, within the launcher's bound)."""

    def __init__(self, *, reason="reason not given", **kwargs):
        super().__init__(event=ShutdownEvent(reason=reason), **kwargs)


class TimerAction(Action):
    """Actions performed `period` seconds from now (on the launcher's monotonic clock;
    cancelled by the launch's stop)."""

    def __init__(self, *, period, actions, cancel_on_shutdown=True, **kwargs):
        super().__init__(**kwargs)
        self.period = normalize_to_list_of_substitutions(period) \
            if not isinstance(period, (int, float)) else period
        self.actions = list(actions)
        self.cancel_on_shutdown = cancel_on_shutdown
        self.cancelled = False

    def get_sub_entities(self):
        return self.actions

    def cancel(self):
        self.cancelled = True

    def execute(self, context):
        period = self.period if isinstance(self.period, (int, float)) else \
            float(perform_substitutions(context, self.period))
        if period < 0:
            raise InvalidLaunchFileError(f"TimerAction period {period} is negative")
        context._driver.schedule(period, self, context)


class ExecuteProcess(Action):
    """A process the launcher starts, watches and stops."""

    def __init__(self, *, cmd, prefix=None, name=None, cwd=None, env=None,
                 additional_env=None, shell=False, sigterm_timeout=None,
                 sigkill_timeout=None, emulate_tty=False, output="log",
                 output_format=None, log_cmd=False, on_exit=None, respawn=False,
                 respawn_delay=None, respawn_max_retries=-1, cached_output=False,
                 **kwargs):
        super().__init__(**kwargs)
        self.cmd = [normalize_to_list_of_substitutions(c) for c in cmd]
        self.prefix = prefix
        self.name = name
        self.cwd = cwd
        self.env = env
        self.additional_env = additional_env
        self.shell = shell
        self.output = output
        self.on_exit = on_exit
        self.respawn = respawn
        self.respawn_delay = respawn_delay
        self.respawn_max_retries = respawn_max_retries
        self.process_name = None
        self.process_description = None
        #: What the launch started, once it has: ``name`` (``talker-1``), ``cmd``,
        #: ``cwd``, ``env`` (what the launch file set), ``pid``; ``None`` before.
        self.process_details = None

    def get_sub_entities(self):
        """The actions of ``on_exit``, when it is actions (not a callable)."""
        on_exit = self.on_exit
        if isinstance(on_exit, LaunchDescriptionEntity):
            return [on_exit]
        if isinstance(on_exit, (list, tuple)) and \
                all(isinstance(e, LaunchDescriptionEntity) for e in on_exit):
            return list(on_exit)
        return []

    def command(self, context):
        """The command line, substitutions performed."""
        words = [perform_substitutions(context, c) for c in self.cmd]
        if self.prefix is not None:
            words = shlex.split(perform_text(context, self.prefix)) + words
        return words

    def base_name(self, context, words):
        if self.name is not None:
            return perform_text(context, self.name)
        return os.path.basename(words[0]) if words else "process"

    def execute(self, context):
        words = self.command(context)
        if self.shell:
            words = ["sh", "-c", " ".join(words)]
        if not words:
            raise InvalidLaunchFileError("ExecuteProcess with an empty cmd")
        # As ROS 2's: env= is the process's whole environment, else the launch's with
        # what the launch file set.
        env_only = self.env is not None
        if env_only:
            env = {perform_text(context, k): perform_text(context, v)
                   for k, v in (self.env.items() if isinstance(self.env, dict)
                                else self.env)}
        else:
            env = dict(context._extra_env)
        if self.additional_env is not None:
            env.update({perform_text(context, k): perform_text(context, v)
                        for k, v in (self.additional_env.items()
                                     if isinstance(self.additional_env, dict)
                                     else self.additional_env)})
        name = self.base_name(context, words)
        self.process_name = name
        self.process_description = " ".join(words)
        output = perform_text(context, self.output) if not isinstance(self.output, dict) \
            else "screen"
        respawn = self.respawn
        if not isinstance(respawn, bool):
            respawn = perform_text(context, respawn).strip().lower() in ("true", "1")
        delay = 0.0 if self.respawn_delay is None else float(self.respawn_delay)
        on_exit = self.on_exit
        required = False
        if on_exit is not None:
            from kairos.launch.event_handlers import OnProcessExit
            entities = on_exit if isinstance(on_exit, (list, tuple)) else [on_exit]
            if all(isinstance(e, LaunchDescriptionEntity) for e in entities) and \
                    any(isinstance(e, Shutdown) for e in entities) and len(entities) == 1:
                required = True
            else:
                context.register_event_handler(OnProcessExit(target_action=self,
                                                             on_exit=on_exit))
        cwd = perform_text(context, self.cwd) if self.cwd is not None else None
        retries = self.respawn_max_retries
        if not isinstance(retries, int):
            retries = int(perform_text(context, retries))
        context._driver.start(self, name=name, cmd=words, env=env, cwd=cwd,
                              output=output if output in ("screen", "log", "both") else "log",
                              respawn=respawn, respawn_delay=delay, required=required,
                              env_only=env_only,
                              respawn_max_retries=None if retries < 0 else retries)
        self._environment = env if env_only else dict(context.environment, **env)
