"""ROS 2's ``launch.events`` on kairos."""

from kairos.launch.events import process  # noqa: F401


class Event:
    name = "launch.events.Event"


class Shutdown(Event):
    """Stop the launch: every process gets the launcher's bounded stop."""

    name = "launch.events.Shutdown"

    def __init__(self, *, reason="reason not given", due_to_sigint=False):
        self.reason = reason
        self.due_to_sigint = due_to_sigint


class IncludeLaunchDescription(Event):
    name = "launch.events.IncludeLaunchDescription"

    def __init__(self, launch_description):
        self.launch_description = launch_description


# A matcher of the action itself, as ROS 2's (SignalProcess, ChangeState call it on the
# action, not on an event).
from kairos.launch.events.process import matches_action  # noqa: E402,F401
