"""rclpy's Duration: a signed span of time in integer nanoseconds, with rclpy's
arithmetic and comparisons, ``Infinite``, and ``builtin_interfaces/msg/Duration``."""

_INFINITE_NS = 2**63 - 1  # rmw's RMW_DURATION_INFINITE


class _OrderedByNanoseconds:
    """Ordering of Time and Duration by their nanoseconds; ``_other(other)`` gives the
    other side's nanoseconds or raises ``TypeError`` for a value they cannot compare."""

    def __ne__(self, other):
        return not self == other

    def __lt__(self, other):
        return self._nanoseconds < self._other(other)

    def __le__(self, other):
        return self._nanoseconds <= self._other(other)

    def __gt__(self, other):
        return self._nanoseconds > self._other(other)

    def __ge__(self, other):
        return self._nanoseconds >= self._other(other)


class Duration(_OrderedByNanoseconds):
    __slots__ = ("_nanoseconds",)

    def __init__(self, *, seconds=0, nanoseconds=0):
        total = int(seconds * 1_000_000_000) + int(nanoseconds)
        if not -(2**63) <= total < 2**63:
            raise OverflowError(f"a Duration is an int64 of nanoseconds, {total} is out of range")
        self._nanoseconds = total

    @property
    def nanoseconds(self):
        return self._nanoseconds

    def __repr__(self):
        return f"Duration(nanoseconds={self._nanoseconds})"

    def __str__(self):
        if self._nanoseconds == _INFINITE_NS:
            return "Infinite"
        return f"{self._nanoseconds} nanoseconds"

    def __add__(self, other):
        if not isinstance(other, Duration):
            return NotImplemented
        return Duration(nanoseconds=self._nanoseconds + other._nanoseconds)

    def __sub__(self, other):
        if not isinstance(other, Duration):
            return NotImplemented
        return Duration(nanoseconds=self._nanoseconds - other._nanoseconds)

    def __mul__(self, factor):
        if not isinstance(factor, (int, float)):
            return NotImplemented
        if factor != factor:
            raise ValueError("Can't multiply duration with nan")
        product = self._nanoseconds * factor
        if product == float("inf") or product >= 2**63:
            return Infinite
        return Duration(nanoseconds=int(product))

    __rmul__ = __mul__

    def _other(self, other):
        if not isinstance(other, Duration):
            raise TypeError(f"can't compare a Duration with {type(other).__name__}")
        return other._nanoseconds

    def __eq__(self, other):
        return isinstance(other, Duration) and other._nanoseconds == self._nanoseconds

    def __hash__(self):
        return hash(self._nanoseconds)

    def to_msg(self):
        from kairos.builtin_interfaces.msg import Duration as DurationMsg

        sec, nanosec = divmod(self._nanoseconds, 1_000_000_000)
        return DurationMsg(sec=sec, nanosec=nanosec)

    @classmethod
    def from_msg(cls, msg):
        if not all(hasattr(msg, f) for f in ("sec", "nanosec")):
            raise TypeError("Must pass a builtin_interfaces.msg.Duration object")
        return cls(seconds=msg.sec, nanoseconds=msg.nanosec)


Infinite = Duration(nanoseconds=_INFINITE_NS)
