"""rclpy's Rate: ``rate.sleep()`` keeps a period on a kairos clock, never early.

As rclpy's (which is timer-backed), a rate is also an entity of its node's executor: a
timer of the same period, so ``spin_once()`` returns each period while a rate is the only
thing pending. ``destroy()`` (``node.destroy_rate``) wakes a sleep in progress, which then
returns; a shutdown during a sleep raises ``ROSInterruptException``.
"""

import numbers

from kairos import _kairos


def _period_ns(frequency):
    if not isinstance(frequency, numbers.Real) or isinstance(frequency, bool):
        raise TypeError(f"a rate's frequency is a number of Hz, got {type(frequency).__name__}")
    if not frequency > 0.0:
        raise ValueError(f"a rate's frequency must be > 0 Hz, got {frequency}")
    return max(1, int(round(1e9 / frequency)))


class Rate:
    def __init__(self, frequency, clock, node=None):
        self._period_ns = _period_ns(frequency)
        self._clock = clock
        self._next = None
        self._cancel = _kairos.Cancel()
        self._destroyed = False
        self._timer = None
        if node is not None:
            self._timer = node.create_timer(self._period_ns / 1e9, lambda: None, clock=clock)

    def sleep(self):
        """Sleeps until the next period (absolute deadlines, no drift); returns at once
        when late, then starts again from now. True once the period is over; False if
        ``destroy()`` woke it; raises ``ROSInterruptException`` if shutdown did."""
        if self._destroyed:
            return False
        now = self._clock.now().nanoseconds
        if self._next is None:
            self._next = now + self._period_ns
        elif self._next <= now:
            self._next = now + self._period_ns
            return True
        remaining = self._next - now
        self._next += self._period_ns
        from kairos.duration import Duration

        if self._clock.sleep_for(Duration(nanoseconds=remaining), cancel=self._cancel):
            return True
        if self._destroyed:
            return False
        from kairos.exceptions import ROSInterruptException

        raise ROSInterruptException()

    def destroy(self):
        self._destroyed = True
        self._cancel.cancel()
