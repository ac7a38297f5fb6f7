"""The model under kairos's ``launch`` API: entities, actions, substitutions, conditions,
the launch context and event handlers, as ROS 2's ``launch`` package defines them.

What an entity does when it is visited is to *ask*: processes are started, signalled and
stopped by the kairos launcher that runs the driver (``kairos.launch.driver``), which owns
the processes and the bounded stop. An error names the launch file's line."""

import inspect
import os
import sys

_KAIROS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def origin():
    """``file:line`` of the first frame outside kairos: where a launch file made this."""
    for frame in inspect.stack()[1:]:
        path = os.path.abspath(frame.filename)
        if not path.startswith(_KAIROS_DIR + os.sep) and not frame.filename.startswith("<"):
            return f"{path}:{frame.lineno}"
    return "<unknown>"


class InvalidLaunchFileError(Exception):
    """A launch file that cannot be launched. ROS 2's form, ``extension=`` and
    ``likely_errors=`` (the errors of each reader that tried it), is taken too."""

    def __init__(self, *args, extension="", likely_errors=None):
        if not args and likely_errors is not None:
            errors = "\n".join(f"  {type(e).__name__}: {e}" for e in likely_errors)
            what = f"the {extension} launch file" if extension else "the launch file"
            args = (f"Caught exception(s) when trying to load {what}:\n{errors}",)
        super().__init__(*args)
        self._extension = extension
        self._likely_errors = likely_errors


class SubstitutionFailure(Exception):
    pass


class LaunchDescriptionEntity:
    """Something a launch description holds; visiting it may give more entities."""

    def visit(self, context):
        return None

    def describe(self):
        """What the entity is, for a reader; each kind of entity says it."""
        raise NotImplementedError(f"{type(self).__name__} does not describe itself")

    def describe_sub_entities(self):
        return []

    def describe_conditional_sub_entities(self):
        return []

    def get_asyncio_future(self):
        """ROS 2's future of an entity still running; kairos's launcher runs what
        entities start, so there is none to wait on in the file's process."""
        return None


class Substitution:
    """Text computed when the launch is performed."""

    def perform(self, context):
        raise NotImplementedError

    def describe(self):
        return repr(self)


def normalize_to_list_of_substitutions(subs):
    """A str, a Substitution, or a list of both, as a list of Substitutions."""
    from kairos.launch.substitutions import TextSubstitution

    def one(x):
        if isinstance(x, str):
            return TextSubstitution(text=x)
        if isinstance(x, Substitution):
            return x
        if isinstance(x, (int, float, bool)):
            return TextSubstitution(text=str(x))
        if isinstance(x, os.PathLike):
            return TextSubstitution(text=os.fspath(x))
        raise TypeError(
            f"expected a str or a Substitution, got {type(x).__name__} ({x!r})")

    if isinstance(subs, (str, Substitution, os.PathLike)):
        return [one(subs)]
    return [one(x) for x in subs]


def perform_substitutions(context, subs):
    return "".join(s.perform(context) for s in subs)


def perform_text(context, value):
    """The text of a str, Substitution or list of them; None stays None."""
    if value is None:
        return None
    return perform_substitutions(context, normalize_to_list_of_substitutions(value))


class Condition:
    """Whether an action runs, decided when it is visited."""

    def __init__(self, *, predicate=None):
        self._predicate = predicate

    def evaluate(self, context):
        """The predicate's answer; a condition with no predicate holds for nothing, as
        ROS 2's."""
        return bool(self._predicate(context)) if self._predicate else False

    def describe(self):
        return self.__repr__()


class Action(LaunchDescriptionEntity):
    """An entity that does something when visited (if its condition holds)."""

    def __init__(self, *, condition=None, **kwargs):
        if kwargs:
            name = next(iter(kwargs))
            raise TypeError(f"{type(self).__name__}() got an unexpected keyword argument '{name}'")
        self.__condition = condition
        self.origin = origin()

    @property
    def condition(self):
        return self.__condition

    #: Whether the action's execution ends later than its visit (a process, a timer):
    #: such an action says itself when it has completed (``context._completed``).
    completes_later = False

    def visit(self, context):
        if self.__condition is None or self.__condition.evaluate(context):
            try:
                return self.execute(context)
            finally:
                if not self.completes_later:
                    context._completed(self)
        return None

    def execute(self, context):
        return None

    def get_sub_entities(self):
        return []

    def describe(self):
        return f"{type(self).__name__}"

    @staticmethod
    def parse(entity, parser):
        """``(Action, kwargs)`` of a frontend entity's ``if`` or ``unless``; each action's
        own ``parse`` adds its attributes (see ``kairos.launch.frontend``)."""
        from kairos.launch.conditions import IfCondition, UnlessCondition
        when = entity.get_attr("if", optional=True)
        unless = entity.get_attr("unless", optional=True)
        if when is not None and unless is not None:
            raise RuntimeError("if and unless conditions can't be used simultaneously")
        kwargs = {}
        if when is not None:
            kwargs["condition"] = IfCondition(
                predicate_expression=parser.parse_substitution(when))
        if unless is not None:
            kwargs["condition"] = UnlessCondition(
                predicate_expression=parser.parse_substitution(unless))
        return Action, kwargs


class EventHandler:
    """Actions, or a callable, run when a matching event happens."""

    def __init__(self, *, matcher, entities=None, handle_once=False):
        self.matcher = matcher
        self.entities = entities
        self.handle_once = handle_once

    def matches(self, event):
        return bool(self.matcher(event))

    def describe(self):
        """``(text, the actions it runs)`` (none listed for a callable)."""
        entities = self.entities
        if entities is None or callable(entities):
            entities = []
        elif isinstance(entities, LaunchDescriptionEntity):
            entities = [entities]
        return (f"{type(self).__name__}", list(entities))

    def handle(self, event, context):
        context.extend_locals({"event": event})
        # As ROS 2's: a handler that handles once takes itself out as it handles.
        if self.handle_once:
            context.unregister_event_handler(self)
        return self.entities


class LaunchContext:
    """What entities see while the launch is performed: launch configurations, the
    environment, the ROS namespace, global parameters and remappings, each scoped by
    groups and includes; and the launcher to ask."""

    def __init__(self, driver=None, argv=None, *, noninteractive=False):
        self._driver = driver
        self.argv = list(argv or [])
        self.noninteractive = noninteractive
        self._stack = []
        self.launch_configurations = {}
        self.environment = dict(os.environ)
        self._extra_env = {}
        self._environment_stack = []
        self._environment_at_start = dict(self.environment)
        self.locals_ = {}
        self.is_shutdown = False
        self.event_handlers = []
        self.anon_names = {}
    # launch_ros's scoped state lives in the launch configurations, where ROS 2 keeps it
    # ('ros_namespace', 'global_params': (name, value) pairs and parameter file paths,
    # 'ros_remaps': (from, to) pairs); these name it.
    @property
    def ros_namespace(self):
        return self.launch_configurations.get("ros_namespace") or ""

    @ros_namespace.setter
    def ros_namespace(self, namespace):
        if namespace:
            self.launch_configurations["ros_namespace"] = namespace
        else:
            self.launch_configurations.pop("ros_namespace", None)

    @property
    def global_parameters(self):
        return list(self.launch_configurations.get("global_params", []))

    @property
    def global_remaps(self):
        return list(self.launch_configurations.get("ros_remaps", []))

    def snapshot(self):
        """The scoped state, to come back to with :meth:`restore`."""
        configurations = {k: list(v) if isinstance(v, list) else v
                          for k, v in self.launch_configurations.items()}
        return (configurations, dict(self._extra_env), dict(self.environment),
                dict(self.locals_))

    def restore(self, snapshot):
        (self.launch_configurations, self._extra_env, self.environment,
         self.locals_) = snapshot

    # -- scoping (GroupAction, IncludeLaunchDescription)
    def _push(self):
        self._stack.append(self.snapshot())

    def _pop(self):
        self.restore(self._stack.pop())

    # ROS 2's names for the scoping of launch configurations.
    _push_launch_configurations = _push
    _pop_launch_configurations = _pop

    @property
    def locals(self):
        class _Locals:
            pass
        view = _Locals()
        for k, v in self.locals_.items():
            setattr(view, k, v)
        return view

    def extend_locals(self, values):
        self.locals_.update(values)

    def get_locals_as_dict(self):
        return dict(self.locals_)

    def perform_substitution(self, substitution):
        return substitution.perform(self)

    def _push_environment(self):
        self._environment_stack.append((dict(self.environment), dict(self._extra_env)))

    def _pop_environment(self):
        if not self._environment_stack:
            raise RuntimeError("environment stack unexpectedly empty")
        self.environment, self._extra_env = self._environment_stack.pop()

    def _reset_environment(self):
        self.environment = dict(self._environment_at_start)
        self._extra_env = {}

    def set_env(self, name, value):
        self.environment[name] = value
        self._extra_env[name] = value

    def unset_env(self, name):
        self.environment.pop(name, None)
        self._extra_env.pop(name, None)

    def register_event_handler(self, handler, append=False):
        if append:
            self.event_handlers.append(handler)
        else:
            self.event_handlers.insert(0, handler)

    def unregister_event_handler(self, handler):
        """Takes ``handler`` out; a ``ValueError`` if it is not registered, as in ROS 2."""
        self.event_handlers.remove(handler)

    def emit_event_sync(self, event):
        self._driver.emit(event)

    def would_handle_event(self, event):
        return any(handler.matches(event) for handler in self.event_handlers)

    def _completed(self, action):
        """``ExecutionComplete`` for ``action``, to the handlers that want it (none are
        asked when none would handle it: most launches have none)."""
        if not self.event_handlers:
            return
        from kairos.launch.events import ExecutionComplete
        event = ExecutionComplete(action=action)
        if not self.would_handle_event(event):
            return
        if self._driver is not None:
            self._driver.emit(event)
        else:
            for handler in list(self.event_handlers):
                if handler.matches(event):
                    handler.handle(event, self)

    async def emit_event(self, event):
        self._driver.emit(event)

    @property
    def asyncio_loop(self):
        return None


def visit_all(entities, context):
    """Visits each entity, then what its visit gave, depth first."""
    for entity in list(entities or []):
        if entity is None:
            continue
        if not isinstance(entity, LaunchDescriptionEntity):
            raise InvalidLaunchFileError(
                f"a launch description holds actions, not {type(entity).__name__} ({entity!r})")
        try:
            more = entity.visit(context)
        except Exception as e:
            if not hasattr(e, "kairos_origin"):
                e.kairos_origin = getattr(entity, "origin", None)
            raise
        if more:
            visit_all(more, context)


def eprint(*args):
    print(*args, file=sys.stderr, flush=True)
