"""rclpy's `publisher` module: the publisher type `Node.create_publisher` returns."""

from kairos._kairos import Publisher  # noqa: F401
