"""rclpy's ``Timer`` type (what ``node.create_timer`` returns), for annotations and
``isinstance``."""

from kairos._kairos import Timer

__all__ = ["Timer"]
