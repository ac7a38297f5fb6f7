"""rclpy's exception types, where kairos raises them."""

from kairos._graph import NodeNameNonExistentError  # noqa: F401
from kairos.node import InvalidHandle  # noqa: F401


class NotInitializedException(Exception):
    """Something that needs an initialized context (a node) was made without one."""

    def __init__(self, *args):
        super().__init__("rclpy.init() has not been called", *args)
