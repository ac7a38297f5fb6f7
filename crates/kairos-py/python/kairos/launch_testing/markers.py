"""``launch_testing.markers``: a description kept alive after its processes end, and a
test retried on failure."""

import functools
import time


def keep_alive(test_description):
    """Keeps the launch running until the tests are done, even once every process of
    the description has exited."""
    markers = getattr(test_description, "__markers__", None)
    if markers is None:
        markers = test_description.__markers__ = {}
    markers["keep_alive"] = True
    return test_description


def retry_on_failure(*, times, delay=None):
    """Runs a test method up to ``times`` times while it fails an assertion, ``delay``
    seconds apart."""
    if times <= 0:
        raise ValueError(f"retry_on_failure: times must be at least 1, not {times}")

    def decorator(function):
        @functools.wraps(function)
        def wrapper(self, *args, **kwargs):
            for _ in range(times - 1):
                try:
                    return function(self, *args, **kwargs)
                except AssertionError:
                    if delay is not None:
                        time.sleep(delay)
            return function(self, *args, **kwargs)
        return wrapper
    return decorator
