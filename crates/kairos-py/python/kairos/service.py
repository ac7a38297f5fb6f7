"""rclpy's ``rclpy.service``: the class of what ``Node.create_service`` returns."""

from kairos._kairos import Service  # noqa: F401
