"""rclpy's QoS profiles and policies; kairos keeps depth and durability (history is
keep-last)."""

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


class LivelinessPolicy(enum.IntEnum):
    SYSTEM_DEFAULT = 0
    AUTOMATIC = 1
    MANUAL_BY_TOPIC = 3
    UNKNOWN = 4


# rclpy's names for the same policies.
QoSHistoryPolicy = HistoryPolicy
QoSReliabilityPolicy = ReliabilityPolicy
QoSDurabilityPolicy = DurabilityPolicy
QoSLivelinessPolicy = LivelinessPolicy


class InvalidQoSProfileException(Exception):
    """A QoS profile that cannot be made."""

    def __init__(self, *args):
        super().__init__("Invalid QoSProfile", *args)


class QoSProfile:
    """rclpy's QoS profile. kairos honours depth, history, reliability and durability;
    deadline, lifespan and liveliness are kept and announced as given, not enforced yet.
    As rclpy's, a profile needs its history or depth."""

    _POLICIES = ("history", "depth", "reliability", "durability", "lifespan", "deadline",
                 "liveliness", "liveliness_lease_duration", "avoid_ros_namespace_conventions")

    def __init__(self, **kwargs):
        from kairos.duration import Duration

        unknown = set(kwargs) - set(self._POLICIES)
        if unknown:
            raise TypeError(f"QoSProfile has no policy {sorted(unknown)[0]!r}")
        if "history" not in kwargs and "depth" not in kwargs:
            raise InvalidQoSProfileException("History and/or depth settings are required.")
        self.history = HistoryPolicy(kwargs.get("history", HistoryPolicy.KEEP_LAST))
        self.depth = int(kwargs.get("depth", 0))
        self.reliability = ReliabilityPolicy(kwargs.get("reliability",
                                                        ReliabilityPolicy.RELIABLE))
        self.durability = DurabilityPolicy(kwargs.get("durability", DurabilityPolicy.VOLATILE))
        self.lifespan = kwargs.get("lifespan", Duration())
        self.deadline = kwargs.get("deadline", Duration())
        self.liveliness = LivelinessPolicy(kwargs.get("liveliness",
                                                      LivelinessPolicy.SYSTEM_DEFAULT))
        self.liveliness_lease_duration = kwargs.get("liveliness_lease_duration", Duration())
        self.avoid_ros_namespace_conventions = bool(
            kwargs.get("avoid_ros_namespace_conventions", False))

    def __eq__(self, other):
        return isinstance(other, QoSProfile) and all(
            getattr(self, p) == getattr(other, p) for p in self._POLICIES)

    def __repr__(self):
        return ("QoSProfile(" + ", ".join(f"{p}={getattr(self, p)!r}" for p in self._POLICIES[:4])
                + ")")


qos_profile_system_default = QoSProfile(depth=10)
qos_profile_sensor_data = QoSProfile(depth=5, reliability=ReliabilityPolicy.BEST_EFFORT)
qos_profile_services_default = QoSProfile(depth=10)
qos_profile_parameters = QoSProfile(depth=1000)
qos_profile_parameter_events = QoSProfile(depth=1000)
qos_profile_rosout_default = QoSProfile(depth=1000, durability=DurabilityPolicy.TRANSIENT_LOCAL)
qos_profile_action_status_default = QoSProfile(depth=1,
                                               durability=DurabilityPolicy.TRANSIENT_LOCAL)
qos_profile_unknown = QoSProfile(history=HistoryPolicy.SYSTEM_DEFAULT)


class QoSPresetProfiles(enum.Enum):
    SYSTEM_DEFAULT = qos_profile_system_default
    SENSOR_DATA = qos_profile_sensor_data
    SERVICES_DEFAULT = qos_profile_services_default
    PARAMETERS = qos_profile_parameters
    PARAMETER_EVENTS = qos_profile_parameter_events
    ACTION_STATUS_DEFAULT = qos_profile_action_status_default
    ROSOUT_DEFAULT = qos_profile_rosout_default
    UNKNOWN = qos_profile_unknown


def _qos_args(qos):
    """What kairos's entities take of an int depth or a QoSProfile: depth, durability,
    history (KEEP_ALL is bounded by the depth, 1000 when it is 0) and reliability.
    Deadline, lifespan and liveliness are not kairos settings yet (issue 27)."""
    if isinstance(qos, int):
        return {"depth": qos, "transient_local": False}
    return {"depth": int(qos.depth),
            "transient_local": qos.durability == DurabilityPolicy.TRANSIENT_LOCAL,
            "keep_all": qos.history == HistoryPolicy.KEEP_ALL,
            "best_effort": qos.reliability == ReliabilityPolicy.BEST_EFFORT}
