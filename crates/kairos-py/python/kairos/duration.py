"""rclpy's Duration: a span of time, in nanoseconds."""


class Duration:
    __slots__ = ("nanoseconds",)

    def __init__(self, *, seconds=0, nanoseconds=0):
        self.nanoseconds = int(round(seconds * 1e9)) + int(nanoseconds)

    def __repr__(self):
        return f"Duration(nanoseconds={self.nanoseconds})"

    def __eq__(self, other):
        return isinstance(other, Duration) and other.nanoseconds == self.nanoseconds

    def __hash__(self):
        return hash(self.nanoseconds)
