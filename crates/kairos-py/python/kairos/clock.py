"""rclpy's ``clock``: ``Clock`` of a ``ClockType``, ``ROSClock``, and the shapes of its
jump callbacks, over kairos's Rust clocks.

``Clock(clock_type=ClockType.STEADY_TIME)`` is kairos's steady (monotonic) clock,
``SYSTEM_TIME`` the system clock, ``ROS_TIME`` a ``ROSClock``: system time, or
simulation time once ROS time is active (a node's clock under ``use_sim_time``). Sleeps
are kairos's: never early, ended by shutdown (False), and waited on the monotonic clock.

Not there yet: time-jump callbacks are accepted and kept (``create_jump_callback`` returns
a ``JumpHandle``) but only ROS-time activation changes call them.
"""

from kairos import _kairos
from kairos.clock_type import ClockType
from kairos.duration import Duration
from kairos.time import Time

_KINDS = {ClockType.SYSTEM_TIME: "system", ClockType.STEADY_TIME: "steady",
          ClockType.ROS_TIME: "ros"}


class ClockChange:
    ROS_TIME_NO_CHANGE = 1
    ROS_TIME_ACTIVATED = 2
    ROS_TIME_DEACTIVATED = 3
    SYSTEM_TIME_NO_CHANGE = 4


class JumpThreshold:
    def __init__(self, *, min_forward, min_backward, on_clock_change=True):
        if min_forward is not None and min_forward.nanoseconds <= 0:
            raise ValueError("min_forward must be greater than zero")
        if min_backward is not None and min_backward.nanoseconds >= 0:
            raise ValueError("min_backward must be less than zero")
        self.min_forward, self.min_backward = min_forward, min_backward
        self.on_clock_change = on_clock_change


class TimeJump:
    def __init__(self, clock_change, delta):
        self.clock_change, self.delta = clock_change, delta


class JumpHandle:
    def __init__(self, *, clock, threshold, pre_callback, post_callback):
        if pre_callback is None and post_callback is None:
            raise ValueError("One of pre_callback or post_callback must be callable")
        if pre_callback is not None and not callable(pre_callback):
            raise ValueError("pre_callback must be callable if given")
        if post_callback is not None and not callable(post_callback):
            raise ValueError("post_callback must be callable if given")
        self._clock, self.threshold = clock, threshold
        self._pre, self._post = pre_callback, post_callback
        clock._handles.append(self)

    def unregister(self):
        if self._clock is not None and self in self._clock._handles:
            self._clock._handles.remove(self)
        self._clock = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.unregister()


class Clock:
    def __new__(cls, *, clock_type=ClockType.SYSTEM_TIME, **_):
        if not isinstance(clock_type, ClockType):
            raise TypeError("Clock type must be a ClockType enum")
        if cls is Clock and clock_type == ClockType.ROS_TIME:
            return super().__new__(ROSClock)
        return super().__new__(cls)

    def __init__(self, *, clock_type=ClockType.SYSTEM_TIME, _core=None):
        if clock_type == ClockType.UNINITIALIZED:
            raise ValueError("a clock needs a clock type: SYSTEM_TIME, STEADY_TIME or ROS_TIME")
        self._clock_type = clock_type
        self._core = _core if _core is not None else _kairos.Clock(_KINDS[clock_type])
        self._handles = []

    @property
    def clock_type(self):
        return self._clock_type

    def __repr__(self):
        return f"Clock(clock_type={self._clock_type.name})"

    def now(self):
        return Time(nanoseconds=self._current().now().nanoseconds, clock_type=self._clock_type)

    def create_jump_callback(self, threshold, *, pre_callback=None, post_callback=None):
        return JumpHandle(clock=self, threshold=threshold, pre_callback=pre_callback,
                          post_callback=post_callback)

    def sleep_for(self, rel_time, context=None, cancel=None):
        """Sleeps ``rel_time`` (a Duration, or seconds) of this clock; True when it passed,
        False if shutdown (or ``cancel``) woke it. Never early."""
        if isinstance(rel_time, Duration):
            rel_time = Duration(nanoseconds=max(0, rel_time.nanoseconds))
        elif rel_time < 0:
            rel_time = 0.0
        if context is not None and not context.ok():
            from kairos.exceptions import NotInitializedException

            raise NotInitializedException()
        return self._current().sleep_for(rel_time, cancel)

    def sleep_async(self, duration):
        """kairos: a future done once this clock has advanced by ``duration``; ``await``
        it in an ``async def`` callback (the executor's other callbacks run meanwhile)."""
        return self._current().sleep_async(duration)

    def _current(self):
        return self._core

    def sleep_until(self, until, context=None):
        """Sleeps until this clock reads ``until``; True when it does, False if shutdown
        woke it first."""
        if not isinstance(until, Time):
            raise TypeError("until must be a Time")
        if until.clock_type != self._clock_type:
            raise ValueError(f"until is a {until.clock_type.name} time; this clock is "
                             f"{self._clock_type.name}")
        remaining = until.nanoseconds - self.now().nanoseconds
        while remaining > 0:
            if not self.sleep_for(Duration(nanoseconds=remaining), context):
                return False
            remaining = until.nanoseconds - self.now().nanoseconds
        return True


class ROSClock(Clock):
    """ROS time: system time, or simulation time while ROS time is active."""

    def __init__(self, *, clock_type=ClockType.ROS_TIME, _core=None, _node=None):
        super().__init__(clock_type=ClockType.ROS_TIME,
                         _core=_core if _core is not None else _kairos.Clock("ros"))
        self._node = _node
        self._active = False

    @property
    def ros_time_is_active(self):
        if self._node is not None:
            return self._node._core.clock().clock_type == "sim"
        return self._active

    def _set_ros_time_is_active(self, enabled):
        enabled = bool(enabled)
        if enabled == self.ros_time_is_active:
            return
        if self._node is not None:
            self._node._core.set_use_sim_time(enabled)
        self._active = enabled
        change = ClockChange.ROS_TIME_ACTIVATED if enabled else ClockChange.ROS_TIME_DEACTIVATED
        jump = TimeJump(change, Duration())
        for handle in [h for h in self._handles if h.threshold.on_clock_change]:
            if handle._pre is not None:
                handle._pre()
            if handle._post is not None:
                handle._post(jump)

    def _current(self):
        # A node's clock follows its use_sim_time (the node may switch it at any time).
        return self._node._core.clock() if self._node is not None else self._core
