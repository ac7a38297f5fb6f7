"""rclpy's ``Timer`` type (what ``node.create_timer`` returns) and ``TimerInfo``, which a
timer callback receives when it has a parameter annotated ``TimerInfo``: the deadline the
tick was due at and when it actually ran, on the timer's clock (the difference is the
tick's lateness; kairos never runs a tick early)."""

import functools
import inspect

from kairos._kairos import Timer
from kairos.clock_type import ClockType
from kairos.time import Time

__all__ = ["Timer", "TimerInfo"]


class TimerInfo:
    def __init__(self, *, expected_call_time=0, actual_call_time=0,
                 clock_type=ClockType.SYSTEM_TIME):
        if not isinstance(clock_type, ClockType):
            raise TypeError("Clock type must be a ClockType enum")
        if expected_call_time < 0 or actual_call_time < 0:
            raise ValueError("call time values must not be negative")
        self._expected_call_time = Time(nanoseconds=expected_call_time, clock_type=clock_type)
        self._actual_call_time = Time(nanoseconds=actual_call_time, clock_type=clock_type)

    @property
    def expected_call_time(self):
        """When the tick was due."""
        return self._expected_call_time

    @property
    def actual_call_time(self):
        """When the callback started."""
        return self._actual_call_time


def timer_info_argument(callback):
    """The name of ``callback``'s parameter annotated ``TimerInfo``, if it has one."""
    target = callback
    while isinstance(target, functools.partial):
        target = target.func
    try:
        parameters = inspect.signature(callback).parameters
    except (TypeError, ValueError):
        return None
    for name, parameter in parameters.items():
        if parameter.annotation in (TimerInfo, "TimerInfo"):
            return name
    return None


def with_timer_info(callback, name, timer_holder, clock, is_async):
    """``callback`` as a timer callback of no arguments that passes a ``TimerInfo`` as
    ``name``; ``timer_holder[0]`` is a weak reference to the timer, set once it exists."""

    def info():
        timer = timer_holder[0]()
        return TimerInfo(expected_call_time=max(0, timer.scheduled_ns),
                         actual_call_time=max(0, clock.now().nanoseconds),
                         clock_type=clock.clock_type)

    if is_async:
        async def tick():
            return await callback(**{name: info()})
    else:
        def tick():
            return callback(**{name: info()})
    return tick
