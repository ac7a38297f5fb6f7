"""rclpy's `validate_full_topic_name`, from :mod:`kairos.names`."""

from kairos.names import validate_full_topic_name  # noqa: F401
