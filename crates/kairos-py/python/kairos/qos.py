"""rclpy's QoS profiles; kairos keeps depth and durability (history is keep-last)."""

import enum


class HistoryPolicy(enum.IntEnum):
    SYSTEM_DEFAULT = 0
    KEEP_LAST = 1
    KEEP_ALL = 2


class ReliabilityPolicy(enum.IntEnum):
    SYSTEM_DEFAULT = 0
    RELIABLE = 1
    BEST_EFFORT = 2


class DurabilityPolicy(enum.IntEnum):
    SYSTEM_DEFAULT = 0
    TRANSIENT_LOCAL = 1
    VOLATILE = 2


class QoSProfile:
    def __init__(self, *, depth=10, history=HistoryPolicy.KEEP_LAST,
                 reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE, **_):
        self.depth, self.history = depth, history
        self.reliability, self.durability = reliability, durability


qos_profile_system_default = QoSProfile(depth=10)
qos_profile_sensor_data = QoSProfile(depth=5, reliability=ReliabilityPolicy.BEST_EFFORT)
qos_profile_services_default = QoSProfile(depth=10)


def _depth_and_durability(qos):
    """(depth, transient_local) of an int depth or a QoSProfile."""
    if isinstance(qos, int):
        return qos, False
    return int(qos.depth), qos.durability == DurabilityPolicy.TRANSIENT_LOCAL
