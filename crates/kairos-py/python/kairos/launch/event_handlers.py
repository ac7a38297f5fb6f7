"""ROS 2's ``launch.event_handlers`` on kairos: what to do when a process starts, exits
or prints, or when the launch shuts down. Handlers run in the launch driver, one event
at a time; what they ask for, the kairos launcher does, and a handler cannot delay the
launcher's bounded stop."""

from kairos._layout import stands_for_package

# ROS 2's launch.event_handlers.<module> paths are this module (see kairos._layout).
stands_for_package(__name__, (
    "event_named", "on_action_event_base", "on_execution_complete",
    "on_include_launch_description", "on_process_exit", "on_process_io",
    "on_process_start", "on_shutdown"))

from kairos.launch._core import EventHandler, LaunchDescriptionEntity
from kairos.launch.events import ExecutionComplete, Shutdown
from kairos.launch.events.process import ProcessExited, ProcessIO, ProcessStarted


def _as_entities(value):
    """What a handler gave, as a list to visit (the driver visits it)."""
    if value is None:
        return None
    if isinstance(value, LaunchDescriptionEntity):
        return [value]
    return list(value)


def _checked_entities(value, what):
    """``value`` (actions, or a callable) as ROS 2 takes it: a list of actions is kept as
    a list; anything in it that is not an action is a ``TypeError``."""
    if value is None or callable(value):
        return value
    if isinstance(value, LaunchDescriptionEntity):
        return [value]
    try:
        entities = list(value)
    except TypeError:
        raise TypeError(f"{what} must be a callable, an action or a list of actions, "
                        f"not {type(value).__name__}") from None
    for entity in entities:
        if not isinstance(entity, LaunchDescriptionEntity):
            raise TypeError(f"{what} holds {type(entity).__name__}, not an action")
    return entities


class _ActionHandler(EventHandler):
    """A handler of one kind of event about an action: for ``target_action`` (that
    action, a callable that matches actions, or ``None`` for all), ``callback``
    (actions, or a callable ``(event, context)``)."""

    kind = None

    def __init__(self, *, target_action=None, callback, **kwargs):
        if target_action is not None and not callable(target_action) \
                and not isinstance(target_action, self._targets()):
            raise TypeError(
                f"target_action must be {self._targets_said}, a callable that matches "
                f"actions, or None, not {type(target_action).__name__}")
        self.target_action = target_action
        self.callback = _checked_entities(callback, "the handler's actions")
        super().__init__(matcher=self._match, **kwargs)

    def describe(self):
        entities = self.callback if isinstance(self.callback, list) else []
        return (type(self).__name__, list(entities))

    def _match(self, event):
        if not isinstance(event, self.kind):
            return False
        if self.target_action is None:
            return True
        if callable(self.target_action):
            return bool(self.target_action(event.action))
        return event.action is self.target_action

    def handle(self, event, context):
        super().handle(event, context)
        if callable(self.callback) and not isinstance(self.callback, LaunchDescriptionEntity):
            return self.callback(event, context)
        return self.callback


class _ProcessHandler(_ActionHandler):
    _targets_said = "an ExecuteLocal (an ExecuteProcess, a Node, ...)"

    @staticmethod
    def _targets():
        from kairos.launch.actions import ExecuteLocal
        return ExecuteLocal


class OnProcessStart(_ProcessHandler):
    kind = ProcessStarted

    def __init__(self, *, target_action=None, on_start, **kwargs):
        super().__init__(target_action=target_action, callback=on_start, **kwargs)


class OnProcessExit(_ProcessHandler):
    kind = ProcessExited

    def __init__(self, *, target_action=None, on_exit, **kwargs):
        super().__init__(target_action=target_action, callback=on_exit, **kwargs)


class OnProcessIO(_ProcessHandler):
    kind = ProcessIO

    def __init__(self, *, target_action=None, on_stdin=None, on_stdout=None,
                 on_stderr=None, **kwargs):
        self.on_stdout = on_stdout
        self.on_stderr = on_stderr
        super().__init__(target_action=target_action, callback=None, **kwargs)

    def handle(self, event, context):
        EventHandler.handle(self, event, context)
        callback = self.on_stdout if event.fd == 1 else self.on_stderr
        return callback(event) if callback else None


class OnShutdown(EventHandler):
    def __init__(self, *, on_shutdown, **kwargs):
        self.on_shutdown = on_shutdown
        super().__init__(matcher=lambda e: isinstance(e, Shutdown), **kwargs)

    def handle(self, event, context):
        super().handle(event, context)
        if callable(self.on_shutdown) and not isinstance(self.on_shutdown,
                                                         LaunchDescriptionEntity):
            return self.on_shutdown(event, context)
        return self.on_shutdown


class OnIncludeLaunchDescription(EventHandler):
    """Launches the description of each ``IncludeLaunchDescription`` event (what ROS 2's
    launch service registers for every launch; the driver does it itself)."""

    def __init__(self, **kwargs):
        from kairos.launch.events import IncludeLaunchDescription
        super().__init__(matcher=lambda e: isinstance(e, IncludeLaunchDescription), **kwargs)

    def handle(self, event, context):
        super().handle(event, context)
        return event.launch_description


class OnExecutionComplete(_ActionHandler):
    """Actions, or a callable ``(event, context)``, when an action has completed: at
    once for most actions, when its process has exited for a process (for good: not
    when it is respawned), when its timer has fired or been cancelled for a timer.
    ``target_action``: that action, a callable that matches actions, or ``None`` (all)."""

    kind = ExecutionComplete
    _targets_said = "an action"

    def __init__(self, *, target_action=None, on_completion, **kwargs):
        super().__init__(target_action=target_action, callback=on_completion, **kwargs)
        self.on_completion = self.callback

    @staticmethod
    def _targets():
        from kairos.launch._core import Action
        return Action
