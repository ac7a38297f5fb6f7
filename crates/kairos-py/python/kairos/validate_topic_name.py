"""rclpy's `validate_topic_name`, from :mod:`kairos.names`."""

from kairos.names import validate_topic_name  # noqa: F401
