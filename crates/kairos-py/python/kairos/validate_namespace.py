"""rclpy's `validate_namespace`, from :mod:`kairos.names`."""

from kairos.names import validate_namespace  # noqa: F401
