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
from typing import List

from kairos.launch._core import (
    Action, InvalidLaunchFileError, LaunchDescriptionEntity,
    normalize_to_list_of_substitutions, perform_substitutions, perform_text)
from kairos.launch.frontend.entity import Entity
from kairos.launch.events import Shutdown as ShutdownEvent
from kairos.launch.frontend.expose import expose_action


def parse_name_and_value(cls, entity, parser):
    """``(cls, kwargs)`` of an entity with a ``name`` and a ``value`` (``let``,
    ``set_env``, launch_ros' ``set_parameter``), each text with substitutions."""
    _, kwargs = Action.parse(entity, parser)
    kwargs["name"] = parser.parse_substitution(entity.get_attr("name"))
    kwargs["value"] = parser.parse_substitution(entity.get_attr("value"))
    return cls, kwargs


def _keeps(entity, parser):
    """A ``<keep name= value=/>`` list as ``{name: value}``, or ``None``."""
    keeps = entity.get_attr("keep", data_type=List[Entity], optional=True)
    if keeps is None:
        return None
    kept = {tuple(parser.parse_substitution(e.get_attr("name"))):
            parser.parse_substitution(e.get_attr("value")) for e in keeps}
    for e in keeps:
        e.assert_entity_completely_parsed()
    return kept


@expose_action("arg")
class DeclareLaunchArgument(Action):
    def __init__(self, name, *, default_value=None, description=None, choices=None,
                 **kwargs):
        super().__init__(**kwargs)
        self.name = name
        self.default_value = None if default_value is None else \
            normalize_to_list_of_substitutions(default_value)
        # A default in text is checked now; one made of substitutions when performed.
        if choices is not None and isinstance(default_value, str) and \
                default_value not in choices:
            raise RuntimeError(f"Provided default_value '{default_value}' is not in provided "
                               f"choices '{choices}'.")
        if description is None:
            description = "no description given" if choices is None else \
                f"One of: {choices}"
        elif choices is not None:
            description += f". Valid choices are: {choices}"
        self.description = description
        self.choices = choices

    @classmethod
    def parse(cls, entity, parser):
        _, kwargs = super().parse(entity, parser)
        kwargs["name"] = parser.escape_characters(entity.get_attr("name"))
        default = entity.get_attr("default", optional=True)
        if default is not None:
            kwargs["default_value"] = parser.parse_substitution(default)
        description = entity.get_attr("description", optional=True)
        if description is not None:
            kwargs["description"] = parser.escape_characters(description)
        choices = entity.get_attr("choice", data_type=List[Entity], optional=True)
        if choices is not None:
            kwargs["choices"] = [parser.escape_characters(c.get_attr("value"))
                                 for c in choices]
            for c in choices:
                c.assert_entity_completely_parsed()
        return cls, kwargs

    def execute(self, context):
        if self.name not in context.launch_configurations:
            if self.default_value is None:
                raise LaunchArgumentError(
                    f"Required launch argument '{self.name}' was not provided (it has no "
                    f"default): pass {self.name}:=VALUE")
            context.launch_configurations[self.name] = perform_substitutions(
                context, self.default_value)
        value = context.launch_configurations[self.name]
        if self.choices is not None and value not in self.choices:
            raise LaunchArgumentError(
                f"launch argument '{self.name}' is '{value}', which is not valid. Valid "
                f"options are: [{', '.join(self.choices)}]")


class LaunchArgumentError(InvalidLaunchFileError, RuntimeError):
    """A launch argument missing or not one of its choices (a ``RuntimeError``, as ROS
    2's; reported as a bad launch file, with no traceback)."""


@expose_action("let")
class SetLaunchConfiguration(Action):
    def __init__(self, name, value, **kwargs):
        super().__init__(**kwargs)
        self.name = normalize_to_list_of_substitutions(name)
        self.value = normalize_to_list_of_substitutions(value)

    parse = classmethod(parse_name_and_value)

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


@expose_action("reset")
class ResetLaunchConfigurations(Action):
    """Forgets every launch configuration, keeping those given (evaluated first)."""

    def __init__(self, launch_configurations=None, **kwargs):
        super().__init__(**kwargs)
        self.launch_configurations = launch_configurations

    @classmethod
    def parse(cls, entity, parser):
        _, kwargs = super().parse(entity, parser)
        kept = _keeps(entity, parser)
        if kept is not None:
            kwargs["launch_configurations"] = kept
        return cls, kwargs

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


@expose_action("reset_env")
class ResetEnvironment(Action):
    """The environment processes get, as it was when the launch began."""

    @classmethod
    def parse(cls, entity, parser):
        _, kwargs = super().parse(entity, parser)
        return cls, kwargs

    def execute(self, context):
        context._reset_environment()


@expose_action("group")
class GroupAction(Action):
    """Actions in a scope of their own (``scoped=True``): configurations, environment,
    namespace, parameters and remappings set in it stay in it. Without ``forwarding``
    the group starts from the launch's first environment and only the configurations
    it keeps."""

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
        sets = [SetLaunchConfiguration(name, value)
                for name, value in self.launch_configurations.items()]
        if not self.scoped:
            return sets + self.actions
        opening = [PushLaunchConfigurations(), PushEnvironment()]
        if self.forwarding:
            opening += sets
        else:
            opening += [ResetEnvironment(), ResetLaunchConfigurations(self.launch_configurations)]
        return opening + self.actions + [PopEnvironment(), PopLaunchConfigurations()]

    @classmethod
    def parse(cls, entity, parser):
        _, kwargs = super().parse(entity, parser)
        for key in ("scoped", "forwarding"):
            value = entity.get_attr(key, data_type=bool, optional=True)
            if value is not None:
                kwargs[key] = value
        kept = _keeps(entity, parser)
        if kept is not None:
            kwargs["launch_configurations"] = kept
        kwargs["actions"] = [parser.parse_action(e) for e in entity.children
                             if e.type_name != "keep"]
        return cls, kwargs


@expose_action("include")
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

    @classmethod
    def parse(cls, entity, parser):
        _, kwargs = super().parse(entity, parser)
        kwargs["launch_description_source"] = parser.parse_substitution(entity.get_attr("file"))
        args = entity.get_attr("arg", data_type=List[Entity], optional=True)
        if args is not None:
            kwargs["launch_arguments"] = [
                (parser.parse_substitution(e.get_attr("name")),
                 parser.parse_substitution(e.get_attr("value"))) for e in args]
            for e in args:
                e.assert_entity_completely_parsed()
        return cls, kwargs

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


@expose_action("set_env")
class SetEnvironmentVariable(Action):
    def __init__(self, name, value, **kwargs):
        super().__init__(**kwargs)
        self.name = normalize_to_list_of_substitutions(name)
        self.value = normalize_to_list_of_substitutions(value)

    parse = classmethod(parse_name_and_value)

    def execute(self, context):
        context.set_env(perform_substitutions(context, self.name),
                        perform_substitutions(context, self.value))


@expose_action("unset_env")
class UnsetEnvironmentVariable(Action):
    def __init__(self, name, **kwargs):
        super().__init__(**kwargs)
        self.name = normalize_to_list_of_substitutions(name)

    @classmethod
    def parse(cls, entity, parser):
        _, kwargs = super().parse(entity, parser)
        kwargs["name"] = parser.parse_substitution(entity.get_attr("name"))
        return cls, kwargs

    def execute(self, context):
        context.unset_env(perform_substitutions(context, self.name))


@expose_action("append_env")
class AppendEnvironmentVariable(Action):
    def __init__(self, name, value, *, prepend=False, separator=os.pathsep, **kwargs):
        super().__init__(**kwargs)
        self.name = normalize_to_list_of_substitutions(name)
        self.value = normalize_to_list_of_substitutions(value)
        self.prepend = prepend if isinstance(prepend, bool) else \
            normalize_to_list_of_substitutions(prepend)
        self.separator = normalize_to_list_of_substitutions(separator)

    def execute(self, context):
        name = perform_substitutions(context, self.name)
        value = perform_substitutions(context, self.value)
        separator = perform_substitutions(context, self.separator)
        prepend = self.prepend if isinstance(self.prepend, bool) else \
            perform_substitutions(context, self.prepend).strip().lower() in ("true", "1", "yes")
        old = context.environment.get(name)
        if old:
            value = value + separator + old if prepend else old + separator + value
        context.set_env(name, value)

    @classmethod
    def parse(cls, entity, parser):
        _, kwargs = super().parse(entity, parser)
        kwargs["name"] = parser.parse_substitution(entity.get_attr("name"))
        kwargs["value"] = parser.parse_substitution(entity.get_attr("value"))
        prepend = entity.get_attr("prepend", data_type=bool, optional=True, can_be_str=True)
        if prepend is not None:
            kwargs["prepend"] = parser.parse_if_substitutions(prepend)
        separator = entity.get_attr("separator", optional=True)
        if separator is not None:
            kwargs["separator"] = parser.parse_substitution(separator)
        return cls, kwargs


@expose_action("log")
class LogInfo(Action):
    def __init__(self, *, msg, **kwargs):
        super().__init__(**kwargs)
        self.msg = normalize_to_list_of_substitutions(msg)

    @classmethod
    def parse(cls, entity, parser):
        _, kwargs = super().parse(entity, parser)
        kwargs["msg"] = parser.parse_substitution(entity.get_attr("message"))
        return cls, kwargs

    def execute(self, context):
        message = perform_substitutions(context, self.msg)
        if context._driver is None:
            # A context of no launch (a test's own): the launch logger, as ROS 2 logs it.
            from kairos.launch.logging import get_logger
            get_logger("launch.user").info(message)
        else:
            context._driver.log(message)


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

    def describe_conditional_sub_entities(self):
        """The handler's actions, run only if its event comes."""
        text, entities = self.event_handler.describe()
        return [(f"{text} (when its event comes)", entities)]

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


@expose_action("shutdown")
class Shutdown(EmitEvent):
    """Stop the launch (every process, within the launcher's bound)."""

    def __init__(self, *, reason="reason not given", **kwargs):
        super().__init__(event=ShutdownEvent(reason=reason), **kwargs)
        self.reason = reason

    def execute(self, context):
        if not isinstance(self.reason, str):
            self.event = ShutdownEvent(reason=perform_text(context, self.reason))
        return super().execute(context)

    @classmethod
    def parse(cls, entity, parser):
        _, kwargs = Action.parse(entity, parser)
        reason = entity.get_attr("reason", optional=True)
        if reason:
            kwargs["reason"] = parser.parse_substitution(reason)
        return cls, kwargs


@expose_action("timer")
class TimerAction(Action):
    """Actions performed `period` seconds from now (on the launcher's monotonic clock;
    cancelled by the launch's stop)."""

    completes_later = True

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

    @classmethod
    def parse(cls, entity, parser):
        _, kwargs = super().parse(entity, parser)
        kwargs["period"] = parser.parse_if_substitutions(
            entity.get_attr("period", data_type=float, can_be_str=True))
        kwargs["actions"] = [parser.parse_action(child) for child in entity.children]
        cancel = entity.get_attr("cancel_on_shutdown", data_type=bool, optional=True,
                                 can_be_str=True)
        if cancel is not None:
            kwargs["cancel_on_shutdown"] = parser.parse_if_substitutions(cancel)
        return cls, kwargs

    def _period(self, context):
        period = self.period if isinstance(self.period, (int, float)) else \
            float(perform_substitutions(context, self.period))
        if not period >= 0:
            raise InvalidLaunchFileError(
                f"{type(self).__name__} period {period} is not a time: give seconds, 0 "
                "or more")
        return period

    def execute(self, context):
        context._driver.schedule(self._period(context), self, context)


class ExecuteLocal(Action):
    """A process the launcher starts, watches and stops, described by an
    ``Executable`` (``launch.descriptions``); how it runs: output, respawning,
    ``on_exit`` (actions or a callable ``(event, context)``)."""

    completes_later = True

    def __init__(self, *, process_description, shell=False, sigterm_timeout=None,
                 sigkill_timeout=None, emulate_tty=False, output="log", output_format=None,
                 cached_output=False, log_cmd=False, on_exit=None, respawn=False,
                 respawn_delay=None, respawn_max_retries=-1, **kwargs):
        super().__init__(**kwargs)
        self.process_description = process_description
        self.shell = shell
        self.emulate_tty = emulate_tty
        self.sigterm_timeout = None if sigterm_timeout is None else \
            normalize_to_list_of_substitutions(sigterm_timeout)
        self.sigkill_timeout = None if sigkill_timeout is None else \
            normalize_to_list_of_substitutions(sigkill_timeout)
        self.output = output
        self.on_exit = on_exit
        self.respawn = respawn
        self.respawn_delay = respawn_delay
        self.respawn_max_retries = respawn_max_retries
        self.process_name = None
        #: The command line as started (for messages), once it has been.
        self.command_line = None
        #: What the launch started, once it has: ``name`` (``talker-1``), ``cmd``,
        #: ``cwd``, ``env`` (what the launch file set), ``pid``; ``None`` before.
        self.process_details = None

    # What ExecuteProcess (and launch_ros' Node) give of the description.
    cmd = property(lambda self: self.process_description.cmd)
    prefix = property(lambda self: self.process_description.prefix)
    name = property(lambda self: self.process_description.name)
    cwd = property(lambda self: self.process_description.cwd)
    env = property(lambda self: self.process_description.env)
    additional_env = property(lambda self: self.process_description.additional_env)

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
        """The command line, substitutions performed (the prefix first)."""
        return self.process_description.command(context)

    def base_name(self, context, words):
        if self.name is not None:
            return perform_text(context, self.name)
        return os.path.basename(words[0]) if words else "process"

    def _seconds(self, context, key):
        """This process's own ``sigterm_timeout`` or ``sigkill_timeout`` (``None``: the
        launch's), checked."""
        value = getattr(self, key)
        if value is None:
            # As ROS 2's: else the launch configuration of that name, else the launch's.
            value = context.launch_configurations.get(key)
        if value is None:
            return None
        text = perform_text(context, value)
        try:
            seconds = float(text)
        except ValueError:
            raise InvalidLaunchFileError(f"{key} '{text}' is not a number of seconds") from None
        if not seconds >= 0.0 or seconds == float("inf"):
            raise InvalidLaunchFileError(f"{key} '{text}' is not seconds >= 0")
        return seconds

    def execute(self, context):
        words = self.command(context)
        if not words:
            raise InvalidLaunchFileError(f"{type(self).__name__} with an empty cmd")
        # Named after the command, a shell's too (as ROS 2's).
        name = self.base_name(context, words)
        if self.shell:
            words = ["sh", "-c", " ".join(words)]
        description = self.process_description
        description.prepare(context, self, cmd=words)
        # As ROS 2's: env= is the process's whole environment, else the launch's with
        # what the launch file set.
        env, env_only = description.launch_env, description.env_only
        self.process_name = name
        self.command_line = " ".join(words)
        output = perform_text(context, self.output) if not isinstance(self.output, dict) \
            else "screen"
        respawn = self.respawn
        if not isinstance(respawn, bool):
            respawn = perform_text(context, respawn).strip().lower() in ("true", "1")
        self._respawns = respawn
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
        retries = self.respawn_max_retries
        if not isinstance(retries, int):
            retries = int(perform_text(context, retries))
        self._respawn_limit = None if retries < 0 else retries
        emulate_tty = self.emulate_tty
        if "emulate_tty" in context.launch_configurations:
            # As ROS 2's: the launch configuration, when set, decides for every process.
            emulate_tty = context.launch_configurations["emulate_tty"]
        if not isinstance(emulate_tty, bool):
            from kairos.launch.conditions import evaluate_condition_expression
            emulate_tty = evaluate_condition_expression(
                context, normalize_to_list_of_substitutions(emulate_tty))
        context._driver.start(self, name=name, cmd=words, env=env, cwd=description.final_cwd,
                              output=output if output in ("screen", "log", "both") else "log",
                              respawn=respawn, respawn_delay=delay, required=required,
                              env_only=env_only,
                              respawn_max_retries=None if retries < 0 else retries,
                              emulate_tty=emulate_tty,
                              sigterm_timeout=self._seconds(context, "sigterm_timeout"),
                              sigkill_timeout=self._seconds(context, "sigkill_timeout"))


@expose_action("executable")
class ExecuteProcess(ExecuteLocal):
    """A process the launcher starts, watches and stops: ``ExecuteLocal`` of an
    ``Executable`` made from ``cmd``, ``prefix``, ``name``, ``cwd``, ``env`` and
    ``additional_env``."""

    def __init__(self, *, cmd, prefix=None, name=None, cwd=None, env=None,
                 additional_env=None, **kwargs):
        from kairos.launch.descriptions import Executable
        super().__init__(process_description=Executable(
            cmd=cmd, prefix=prefix, name=name, cwd=cwd, env=env,
            additional_env=additional_env), **kwargs)

    @classmethod
    def _parse_cmdline(cls, cmd, parser):
        """A frontend's ``cmd="..."`` as arguments, each a list of substitutions: text
        is split into words as a shell would (``shlex``); a substitution joins the
        word it touches (``$(find-exec ls)/x -l`` is two arguments)."""
        from kairos.launch.substitutions import TextSubstitution
        args, word = [], []

        def end_word():
            nonlocal word
            if word:
                args.append(word)
                word = []

        for sub in parser.parse_substitution(cmd):
            if not isinstance(sub, TextSubstitution):
                word.append(sub)
                continue
            tokens = shlex.split(sub.text)
            if sub.text[:1].isspace() or not tokens:
                end_word()
            for i, token in enumerate(tokens):
                if i > 0:
                    end_word()
                word.append(TextSubstitution(text=token))
            if sub.text[-1:].isspace():
                end_word()
        end_word()
        return args

    @classmethod
    def parse(cls, entity, parser, ignore=None):
        """``<executable cmd= cwd= name= launch-prefix= output= shell= ...>`` with its
        ``<env name= value=/>`` children; ``ignore`` names attributes a subclass reads
        itself (``launch_ros``' ``node``)."""
        _, kwargs = super().parse(entity, parser)
        ignore = set(ignore or ())

        def text(attribute, key=None):
            key = key or attribute
            if key in ignore:
                return
            value = entity.get_attr(attribute, optional=True)
            if value is not None:
                kwargs[key] = parser.parse_substitution(value)

        if "cmd" not in ignore:
            kwargs["cmd"] = cls._parse_cmdline(entity.get_attr("cmd"), parser)
        text("cwd")
        text("name")
        text("launch-prefix", "prefix")
        text("output")
        text("respawn")
        if "on_exit" not in ignore:
            on_exit = entity.get_attr("on_exit", optional=True)
            if on_exit is not None:
                if on_exit != "shutdown":
                    raise ValueError(
                        f"Attribute on_exit of Entity node expected to be shutdown but got "
                        f"`{on_exit}`: other on_exit actions are not supported in a frontend")
                kwargs["on_exit"] = [Shutdown()]
        if "respawn_max_retries" not in ignore:
            retries = entity.get_attr("respawn_max_retries", data_type=int, optional=True)
            if retries is not None:
                kwargs["respawn_max_retries"] = retries
        for key in ("respawn_delay", "sigkill_timeout", "sigterm_timeout"):
            if key in ignore:
                continue
            seconds = entity.get_attr(key, data_type=float, optional=True)
            if seconds is None:
                continue
            if seconds < 0.0:
                raise ValueError(f"Attribute {key} of Entity node expected to be a "
                                 f"non-negative value but got `{seconds}`")
            kwargs[key] = seconds if key == "respawn_delay" else str(seconds)
        for key in ("shell", "emulate_tty"):
            if key not in ignore:
                flag = entity.get_attr(key, data_type=bool, optional=True)
                if flag is not None:
                    kwargs[key] = flag
        if "additional_env" not in ignore:
            env = entity.get_attr("env", data_type=List[Entity], optional=True)
            if env is not None:
                kwargs["additional_env"] = {
                    tuple(parser.parse_substitution(e.get_attr("name"))):
                    parser.parse_substitution(e.get_attr("value")) for e in env}
                for e in env:
                    e.assert_entity_completely_parsed()
        return cls, kwargs
