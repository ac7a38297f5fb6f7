"""rclpy's ``rclpy.impl.logging_severity``: the severities of rcutils' logging."""

from kairos.logging import LoggingSeverity  # noqa: F401
