"""rclpy's ``type_description_service``: ``~/get_type_description``
(``type_description_interfaces/srv/GetTypeDescription``, REP 2011), so ROS 2 tools and
nodes in other processes can learn the types a node uses, users' own included.

A node serves it when its ``start_type_description_service`` parameter is true (rclpy's
default; ``--ros-args -p start_type_description_service:=false`` turns it off) and the
process is on Zenoh. The answers come from kairos's Rust service
(``kairos_zenoh::type_description``): every type the process carries to other processes,
described as its RIHS01 hash is computed. In a process that is not on Zenoh no other
process could ask, so nothing is served and the parameter reads false.
"""

from kairos.rcl_interfaces.msg import ParameterDescriptor, ParameterType

START_TYPE_DESCRIPTION_SERVICE_PARAM = "start_type_description_service"


def declare_parameter(node):
    """Declares ``start_type_description_service`` on ``node`` (read-only) and starts the
    service when it is true and the process is on Zenoh."""
    if node.has_parameter(START_TYPE_DESCRIPTION_SERVICE_PARAM):
        return
    wanted = True
    override = node._parameter_overrides.get(START_TYPE_DESCRIPTION_SERVICE_PARAM)
    if override is not None and isinstance(override.value, bool):
        wanted = override.value
    served = wanted and node._core.start_type_description_service()
    node.declare_parameter(
        START_TYPE_DESCRIPTION_SERVICE_PARAM, served,
        ParameterDescriptor(
            name=START_TYPE_DESCRIPTION_SERVICE_PARAM, type=ParameterType.PARAMETER_BOOL,
            description="whether ~/get_type_description is served (only on Zenoh)",
            read_only=True),
        ignore_override=True)


def stop(node):
    """Stops the service (the node is destroyed)."""
    node._core.stop_type_description_service()
