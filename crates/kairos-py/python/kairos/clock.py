"""rclpy's ``clock``: ``Clock`` of a ``ClockType``, ``ROSClock``, and the shapes of its
jump callbacks, over kairos's Rust clocks.

``Clock(clock_type=ClockType.STEADY_TIME)`` is kairos's steady (monotonic) clock,
``SYSTEM_TIME`` the system clock, ``ROS_TIME`` a ``ROSClock``: system time, or
simulation time once ROS time is active (a node's clock under ``use_sim_time``). Sleeps
are kairos's: never early, ended by shutdown (False), and waited on the monotonic clock.

A ``ROSClock`` of no node follows ``set_ros_time_override`` while ROS time is active
(what a ``TimeSource`` feeds it from ``/clock``; 0 before the first), and its jump
callbacks are called for activation changes and for override jumps past their
thresholds. A node's own clock (``node.get_clock()``) is driven by kairos from
``/clock``; its jump callbacks are called only for activation changes. Sleeps on a
``ROSClock`` of no node whose time is overridden are not supported yet (they sleep
system time).
"""

import threading

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
        if min_forward is None and min_backward is None and not on_clock_change:
            raise ValueError("One of min_forward, min_backward or on_clock_change must be "
                             "enabled")
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

    def _check_until(self, until):
        if not isinstance(until, Time):
            raise TypeError("until must be a Time")
        if until.clock_type != self._clock_type:
            raise ValueError(f"until's clock type does not match this clock's: until is a "
                             f"{until.clock_type.name} time, this clock is "
                             f"{self._clock_type.name}")

    def sleep_until(self, until, context=None):
        """Sleeps until this clock reads ``until``; True when it does, False if shutdown
        woke it first."""
        self._check_until(until)
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
        self._override_ns = 0
        # A clock of no node: sleeps wait on this for override changes and end (False)
        # when ROS time is switched on or off (the generation changes).
        self._changed = threading.Condition()
        self._generation = 0
        self._cancels = set()

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
        with self._changed:
            self._active = enabled
            self._generation += 1
            for cancel in self._cancels:
                cancel.cancel()
            self._changed.notify_all()
        change = ClockChange.ROS_TIME_ACTIVATED if enabled else ClockChange.ROS_TIME_DEACTIVATED
        jump = TimeJump(change, Duration())
        for handle in [h for h in self._handles if h.threshold.on_clock_change]:
            if handle._pre is not None:
                handle._pre()
            if handle._post is not None:
                handle._post(jump)

    def now(self):
        if self._node is None and self._active:
            return Time(nanoseconds=self._override_ns, clock_type=ClockType.ROS_TIME)
        return super().now()

    def set_ros_time_override(self, time):
        """The time this clock reads while ROS time is active (a clock of no node);
        jump callbacks whose threshold the change passes are called."""
        if not isinstance(time, Time):
            raise TypeError("time must be a Time")
        delta = time.nanoseconds - self._override_ns
        jumped = [h for h in self._handles if self._active and _passes(h.threshold, delta)]
        for handle in jumped:
            if handle._pre is not None:
                handle._pre()
        with self._changed:
            self._override_ns = time.nanoseconds
            self._changed.notify_all()
        jump = TimeJump(ClockChange.ROS_TIME_NO_CHANGE, Duration(nanoseconds=delta))
        for handle in jumped:
            if handle._post is not None:
                handle._post(jump)

    def sleep_for(self, rel_time, context=None, cancel=None):
        if self._node is not None or cancel is not None:
            return super().sleep_for(rel_time, context, cancel)
        if not isinstance(rel_time, Duration):
            rel_time = Duration(nanoseconds=int(rel_time * 1e9))
        rel_time = Duration(nanoseconds=max(0, rel_time.nanoseconds))
        return self.sleep_until(self.now() + rel_time, context)

    def sleep_until(self, until, context=None):
        """As :meth:`Clock.sleep_until`; on a clock of no node, also False as soon as ROS
        time is switched on or off, and, while it is on, True once the override reaches
        ``until``."""
        if self._node is not None:
            return super().sleep_until(until, context)
        self._check_until(until)
        if context is not None and not context.ok():
            from kairos.exceptions import NotInitializedException

            raise NotInitializedException()
        with self._changed:
            generation, active = self._generation, self._active
            if active:
                return self._wait_for_override(until.nanoseconds, generation, context)
            cancel = _kairos.Cancel()
            self._cancels.add(cancel)
        try:
            remaining = until.nanoseconds - self._core.now().nanoseconds
            while remaining > 0:
                if not Clock.sleep_for(self, Duration(nanoseconds=remaining), context, cancel):
                    return False
                remaining = until.nanoseconds - self._core.now().nanoseconds
            return self._generation == generation
        finally:
            with self._changed:
                self._cancels.discard(cancel)

    def _wait_for_override(self, until_ns, generation, context):
        # Called with self._changed held. Shutdown has no hook here, so it is looked at
        # every 50 ms; an override change or a switch wakes the wait at once.
        while True:
            if self._generation != generation:
                return False
            if self._override_ns >= until_ns:
                return True
            if not _kairos.ok() or (context is not None and not context.ok()):
                return False
            self._changed.wait(0.05)

    def _current(self):
        # A node's clock follows its use_sim_time (the node may switch it at any time).
        return self._node._core.clock() if self._node is not None else self._core


def _passes(threshold, delta_ns):
    if delta_ns > 0 and threshold.min_forward is not None:
        return delta_ns >= threshold.min_forward.nanoseconds
    if delta_ns < 0 and threshold.min_backward is not None:
        return delta_ns <= threshold.min_backward.nanoseconds
    return False
