"""rclpy's `expand_topic_name`, from :mod:`kairos.names`."""

from kairos.names import expand_topic_name  # noqa: F401
