"""rclpy's `subscription` module: the subscription type `Node.create_subscription`
returns."""

from kairos._kairos import Subscription  # noqa: F401
