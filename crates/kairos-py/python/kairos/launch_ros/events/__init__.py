"""``launch_ros.events``: what ROS nodes of a launch do (``lifecycle``)."""

from kairos.launch_ros.events import lifecycle  # noqa: F401
from kairos.launch.events.process import matches_action  # noqa: F401


def matches_node_name(node_name):
    """A matcher of the node action whose fully qualified name is ``node_name``."""
    return lambda action: getattr(action, "node_fully_qualified_name", None) == node_name


__all__ = ["lifecycle", "matches_action", "matches_node_name"]
