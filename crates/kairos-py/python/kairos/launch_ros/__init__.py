"""ROS 2's ``launch_ros`` Python API on kairos: nodes of installed packages (ament's
index), namespaces, global parameters and remappings for ``kairos launch``."""

from kairos.launch_ros import actions, parameter_descriptions, substitutions  # noqa: F401
