"""rclpy's ``type_description_service``: the parameter that would start
``~/get_type_description``.

kairos does not serve ``~/get_type_description`` yet, so every node declares the parameter
read-only and false, and its description says so: a tool that reads it is not told of a
service that is not there.
"""

from kairos.rcl_interfaces.msg import ParameterDescriptor, ParameterType

START_TYPE_DESCRIPTION_SERVICE_PARAM = "start_type_description_service"


def declare_parameter(node):
    """Declares ``start_type_description_service`` on ``node`` (false, read-only)."""
    if node.has_parameter(START_TYPE_DESCRIPTION_SERVICE_PARAM):
        return
    node.declare_parameter(
        START_TYPE_DESCRIPTION_SERVICE_PARAM, False,
        ParameterDescriptor(
            name=START_TYPE_DESCRIPTION_SERVICE_PARAM, type=ParameterType.PARAMETER_BOOL,
            description="kairos does not serve ~/get_type_description yet; always false",
            read_only=True),
        ignore_override=True)
