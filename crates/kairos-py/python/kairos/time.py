"""rclpy's Time: a point of one clock (``ClockType``) in integer nanoseconds, with rclpy's
arithmetic (Time ± Duration, Time - Time), comparisons within one clock type and
``builtin_interfaces/msg/Time``."""

from kairos.clock_type import ClockType
from kairos.duration import Duration, _OrderedByNanoseconds

_MAX_NS = 2**63 - 1


class Time(_OrderedByNanoseconds):
    __slots__ = ("_nanoseconds", "_clock_type")

    def __init__(self, *, seconds=0, nanoseconds=0, clock_type=ClockType.SYSTEM_TIME):
        if not isinstance(clock_type, ClockType):
            raise TypeError("Clock type must be a ClockType enum")
        if seconds < 0:
            raise ValueError("Seconds value must not be negative")
        if nanoseconds < 0:
            raise ValueError("Nanoseconds value must not be negative")
        total = int(seconds * 1_000_000_000) + int(nanoseconds)
        if total > _MAX_NS:
            raise OverflowError(f"Total nanoseconds value is too large to store in C time "
                                f"point: {total}")
        self._nanoseconds, self._clock_type = total, clock_type

    @property
    def nanoseconds(self):
        return self._nanoseconds

    @property
    def clock_type(self):
        return self._clock_type

    def seconds_nanoseconds(self):
        return divmod(self._nanoseconds, 1_000_000_000)

    def __repr__(self):
        return f"Time(nanoseconds={self._nanoseconds}, clock_type={self._clock_type.name})"

    def __add__(self, other):
        if not isinstance(other, Duration):
            return NotImplemented
        total = self._nanoseconds + other.nanoseconds
        if total > _MAX_NS:
            raise OverflowError("Addition leads to overflow in C storage.")
        if total < 0:
            raise ValueError("Addition leads to negative time.")
        return Time(nanoseconds=total, clock_type=self._clock_type)

    __radd__ = __add__

    def __sub__(self, other):
        if isinstance(other, Time):
            if other._clock_type != self._clock_type:
                raise TypeError("Can't subtract times with different clock types")
            return Duration(nanoseconds=self._nanoseconds - other._nanoseconds)
        if isinstance(other, Duration):
            total = self._nanoseconds - other.nanoseconds
            if total < 0:
                raise ValueError("Subtraction leads to negative time.")
            return Time(nanoseconds=total, clock_type=self._clock_type)
        return NotImplemented

    def _other(self, other):
        if not isinstance(other, Time):
            raise TypeError(f"Can't compare a Time with {type(other).__name__}")
        if other._clock_type != self._clock_type:
            raise TypeError("Can't compare times with different clock types")
        return other._nanoseconds

    def __eq__(self, other):
        if not isinstance(other, Time):
            return False  # as rclpy: a Time equals no other kind of value
        return self._nanoseconds == self._other(other)

    def __hash__(self):
        return hash((self._nanoseconds, self._clock_type))

    def to_msg(self):
        from kairos.builtin_interfaces.msg import Time as TimeMsg

        sec, nanosec = self.seconds_nanoseconds()
        return TimeMsg(sec=sec, nanosec=nanosec)

    @classmethod
    def from_msg(cls, msg, clock_type=ClockType.ROS_TIME):
        if not all(hasattr(msg, f) for f in ("sec", "nanosec")):
            raise TypeError("Must pass a builtin_interfaces.msg.Time object")
        return cls(seconds=msg.sec, nanoseconds=msg.nanosec, clock_type=clock_type)
