"""ROS 2's ``launch.events`` on kairos."""

from kairos._layout import stands_for_package
from kairos.launch.events import process  # noqa: F401

# ROS 2's launch.events.<module> paths are this module (see kairos._layout); its process
# subpackage is a package of its own.
stands_for_package(__name__, ("execution_complete", "include_launch_description",
                              "matchers", "shutdown", "timer_event"))


class Event:
    name = "launch.Event"


class Shutdown(Event):
    """Stop the launch: every process gets the launcher's bounded stop."""

    name = "launch.events.Shutdown"

    def __init__(self, *, reason="reason not given", due_to_sigint=False):
        self.reason = reason
        self.due_to_sigint = due_to_sigint


class ExecutionComplete(Event):
    """An action finished executing (ROS 2 emits it for actions that run asynchronously)."""

    name = "launch.events.ExecutionComplete"

    def __init__(self, *, action):
        self.__action = action

    @property
    def action(self):
        return self.__action


class TimerEvent(Event):
    """A ``TimerAction``'s period passed."""

    name = "launch.events.TimerEvent"

    def __init__(self, *, timer_action):
        self.__timer_action = timer_action

    @property
    def timer_action(self):
        return self.__timer_action


class IncludeLaunchDescription(Event):
    name = "launch.events.IncludeLaunchDescription"

    def __init__(self, launch_description):
        self.launch_description = launch_description


# A matcher of the action itself, as ROS 2's (SignalProcess, ChangeState call it on the
# action, not on an event).
from kairos.launch.events.process import matches_action  # noqa: E402,F401
