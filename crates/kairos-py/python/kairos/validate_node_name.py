"""rclpy's `validate_node_name`, from :mod:`kairos.names`."""

from kairos.names import validate_node_name  # noqa: F401
