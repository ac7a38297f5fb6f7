"""rclpy's ``topic_or_service_is_hidden``: a name with a token that starts with ``_`` is
hidden (``ros2 topic list`` leaves it out unless asked)."""

TOPIC_SEPARATOR_STRING = "/"
HIDDEN_TOPIC_PREFIX = "_"


def topic_or_service_is_hidden(name):
    """Whether any ``/``-separated token of ``name`` starts with ``_``."""
    return any(token.startswith(HIDDEN_TOPIC_PREFIX)
               for token in name.split(TOPIC_SEPARATOR_STRING))
