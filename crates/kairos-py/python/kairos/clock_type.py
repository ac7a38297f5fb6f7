"""rclpy's ``ClockType``: which clock a ``Clock`` or ``Time`` is of."""

import enum


class ClockType(enum.IntEnum):
    UNINITIALIZED = 0
    ROS_TIME = 1
    SYSTEM_TIME = 2
    STEADY_TIME = 3
