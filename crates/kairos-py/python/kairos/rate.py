"""rclpy's Rate: ``rate.sleep()`` keeps a period on a kairos clock, never early."""


class Rate:
    def __init__(self, frequency, clock):
        self._period_ns = int(round(1e9 / frequency))
        self._clock = clock
        self._next = None

    def sleep(self):
        """Sleeps until the next period (absolute deadlines, no drift); returns at once
        when late, then starts again from now. False if shutdown woke it."""
        now = self._clock.now().nanoseconds
        if self._next is None:
            self._next = now + self._period_ns
        elif self._next <= now:
            self._next = now + self._period_ns
            return True
        remaining = self._next - now
        self._next += self._period_ns
        from kairos.duration import Duration

        return self._clock.sleep_for(Duration(nanoseconds=remaining))
