"""rclpy's ``validate_parameter_name``: a parameter name must not be empty (ROS 2 checks
nothing else yet)."""

from kairos.exceptions import InvalidParameterException


def validate_parameter_name(name):
    """True, or ``InvalidParameterException`` for an empty name."""
    if not name:
        raise InvalidParameterException(name)
    return True
