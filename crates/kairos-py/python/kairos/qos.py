"""rclpy's QoS profiles and policies. kairos honours every policy: history, depth,
reliability, durability, and the deadline, lifespan and liveliness whose events
``kairos.event_handler`` delivers."""

import enum
import warnings


class _ShortKeys:
    """Lower-case names for command lines and parameter files (``keep_last``), as rclpy's
    policy enums and preset profiles have them."""

    @classmethod
    def short_keys(cls):
        return [name.lower() for name in cls.__members__]

    @classmethod
    def get_from_short_key(cls, name):
        return cls[name.upper()].value


class QoSPolicyEnum(_ShortKeys, enum.IntEnum):
    """The base of the policy enums."""

    @property
    def short_key(self):
        return self.name.lower()


class HistoryPolicy(QoSPolicyEnum):
    SYSTEM_DEFAULT = 0
    KEEP_LAST = 1
    KEEP_ALL = 2
    UNKNOWN = 3


class ReliabilityPolicy(QoSPolicyEnum):
    SYSTEM_DEFAULT = 0
    RELIABLE = 1
    BEST_EFFORT = 2
    UNKNOWN = 3
    BEST_AVAILABLE = 4


class DurabilityPolicy(QoSPolicyEnum):
    SYSTEM_DEFAULT = 0
    TRANSIENT_LOCAL = 1
    VOLATILE = 2
    UNKNOWN = 3
    BEST_AVAILABLE = 4


class LivelinessPolicy(QoSPolicyEnum):
    SYSTEM_DEFAULT = 0
    AUTOMATIC = 1
    MANUAL_BY_TOPIC = 3
    UNKNOWN = 4
    BEST_AVAILABLE = 5


class QoSCompatibility(enum.IntEnum):
    """Whether a publisher and a subscription with two profiles can talk."""
    OK = 0
    WARNING = 1
    ERROR = 2


# rclpy's names for the same policies.
QoSHistoryPolicy = HistoryPolicy
QoSReliabilityPolicy = ReliabilityPolicy
QoSDurabilityPolicy = DurabilityPolicy
QoSLivelinessPolicy = LivelinessPolicy


class InvalidQoSProfileException(Exception):
    """A QoS profile that cannot be made."""

    def __init__(self, *args):
        super().__init__("Invalid QoSProfile", *args)


class QoSPolicyKind(enum.IntEnum):
    """rclpy's names of the QoS policies, as incompatible-QoS events report them."""
    INVALID = 1 << 0
    DURABILITY = 1 << 1
    DEADLINE = 1 << 2
    LIVELINESS = 1 << 3
    RELIABILITY = 1 << 4
    HISTORY = 1 << 5
    LIFESPAN = 1 << 6
    DEPTH = 1 << 7
    LIVELINESS_LEASE_DURATION = 1 << 8
    AVOID_ROS_NAMESPACE_CONVENTIONS = 1 << 9


def qos_policy_name_from_kind(policy_kind):
    """The name of a policy kind (``QoSPolicyKind`` or its value)."""
    try:
        return QoSPolicyKind(policy_kind).name
    except ValueError:
        return "ERROR"


class QoSProfile:
    """rclpy's QoS profile. kairos honours every policy (a zero duration is rclpy's
    default, infinite). As rclpy's, a profile needs its history or depth."""

    _POLICIES = ("history", "depth", "reliability", "durability", "lifespan", "deadline",
                 "liveliness", "liveliness_lease_duration", "avoid_ros_namespace_conventions")

    def __init__(self, **kwargs):
        from kairos.duration import Duration

        unknown = set(kwargs) - set(self._POLICIES)
        if unknown:
            raise TypeError(f"QoSProfile has no policy {sorted(unknown)[0]!r}")
        if "history" not in kwargs and "depth" not in kwargs:
            raise InvalidQoSProfileException("History and/or depth settings are required.")
        if kwargs.get("history") == HistoryPolicy.KEEP_LAST and "depth" not in kwargs:
            raise InvalidQoSProfileException("History is KEEP_LAST but no depth is given.")
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

    @property
    def depth(self):
        return self._depth

    @depth.setter
    def depth(self, value):
        if self.history == HistoryPolicy.KEEP_LAST and value == 0:
            warnings.warn("A zero depth with KEEP_LAST doesn't make sense; no data could be "
                          "stored. This will be interpreted as SYSTEM_DEFAULT", UserWarning)
        self._depth = value

    def get_c_qos_profile(self):
        """The profile as rclpy's C binding holds it (``to_dict()`` gives it back)."""
        return _ProfileValues(self)

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


class _ProfileValues:
    """A profile's values, as ``QoSProfile.get_c_qos_profile()`` returns them."""

    def __init__(self, profile):
        self._values = {p: getattr(profile, p) for p in QoSProfile._POLICIES}

    def to_dict(self):
        return dict(self._values)


class QoSPresetProfiles(_ShortKeys, enum.Enum):
    SYSTEM_DEFAULT = qos_profile_system_default
    SENSOR_DATA = qos_profile_sensor_data
    SERVICES_DEFAULT = qos_profile_services_default
    PARAMETERS = qos_profile_parameters
    PARAMETER_EVENTS = qos_profile_parameter_events
    ACTION_STATUS_DEFAULT = qos_profile_action_status_default
    ROSOUT_DEFAULT = qos_profile_rosout_default
    UNKNOWN = qos_profile_unknown


def _nanoseconds(duration):
    """A QoS duration (kairos or rclpy ``Duration``, or seconds) in ns; 0 is infinite."""
    if duration is None:
        return 0
    if hasattr(duration, "nanoseconds"):
        return int(duration.nanoseconds)
    return int(float(duration) * 1e9)


def _qos_args(qos):
    """What kairos's entities take of an int depth or a QoSProfile: depth, durability,
    history (KEEP_ALL is bounded by the depth, 1000 when it is 0), reliability, and the
    deadline, lifespan and liveliness (``timing``)."""
    if not isinstance(qos, (int, QoSProfile)) or isinstance(qos, bool):
        raise TypeError(f"Expected QoSProfile or int, but got {type(qos).__name__}")
    if isinstance(qos, int):
        if qos < 0:
            raise ValueError(f"the history depth must be greater than or equal to zero, not {qos}")
        return {"depth": qos, "transient_local": False}
    timing = {"deadline_ns": _nanoseconds(qos.deadline),
              "lifespan_ns": _nanoseconds(qos.lifespan),
              "manual_liveliness": qos.liveliness == LivelinessPolicy.MANUAL_BY_TOPIC,
              "lease_ns": _nanoseconds(qos.liveliness_lease_duration)}
    return {"depth": int(qos.depth),
            "transient_local": qos.durability == DurabilityPolicy.TRANSIENT_LOCAL,
            "keep_all": qos.history == HistoryPolicy.KEEP_ALL,
            "best_effort": qos.reliability == ReliabilityPolicy.BEST_EFFORT,
            "timing": timing}


def qos_check_compatible(publisher_qos, subscription_qos):
    """``(QoSCompatibility, reason)`` for a publisher and a subscription with these
    profiles. On Zenoh (kairos speaks rmw_zenoh's protocol) every pair matches, as
    rmw_zenoh reports: a best-effort publisher reaches a reliable subscription."""
    for profile in (publisher_qos, subscription_qos):
        if not isinstance(profile, QoSProfile):
            raise TypeError(f"qos_check_compatible takes QoSProfiles, not {profile!r}")
    return QoSCompatibility.OK, ""
