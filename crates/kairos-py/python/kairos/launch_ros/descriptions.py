"""``launch_ros.descriptions``: what a launch file says of a composable node, and the
parameter descriptions."""

from kairos._layout import stands_for_package

# ROS 2's launch_ros.descriptions.<module> paths are this module (see kairos._layout).
stands_for_package(__name__, ("composable_node",))

from kairos.launch_ros.parameter_descriptions import Parameter, ParameterFile, ParameterValue


class ComposableNode:
    """A node a component container makes from a package's registered component
    (``plugin``), with its name, namespace, parameters, remappings and extra arguments
    (``use_intra_process_comms``, ``forward_global_arguments``)."""

    def __init__(self, *, package, plugin, name=None, namespace=None, parameters=None,
                 remappings=None, extra_arguments=None, condition=None):
        self.package = package
        self.node_plugin = plugin
        self.node_name = name
        self.node_namespace = namespace
        self.parameters = parameters
        self.remappings = remappings
        self.extra_arguments = extra_arguments
        self.condition = condition


__all__ = ["ComposableNode", "Parameter", "ParameterFile", "ParameterValue"]
