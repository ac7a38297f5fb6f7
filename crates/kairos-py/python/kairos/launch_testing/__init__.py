"""ROS 2's ``launch_testing`` on kairos: launch tests, as ``launch_test FILE`` runs them,
run by ``kairos launch-test FILE`` on the kairos launcher.

A launch test is a Python file with ``generate_test_description()`` (a launch description
holding a :class:`~kairos.launch_testing.actions.ReadyToTest` action, and optionally a
dict of objects for the tests) and ``unittest`` test cases: the ones not marked
:func:`post_shutdown_test` run while the launch runs, from the moment ``ReadyToTest`` is
reached; the launch is then shut down (within the launcher's bound) and the marked ones
run on what was recorded (``proc_info``: each process's start and exit; ``proc_output``:
its output). Test methods name what they need as arguments (``proc_info``,
``proc_output``, ``launch_service``, ``test_args`` and the keys of the dict).

What this promises, beside ``launch_test``'s semantics:
- a run never hangs: the wait for ``ReadyToTest`` has its timeout (15 s, or
  :func:`ready_to_test_action_timeout`), Ctrl-C stops the launch and fails the run, and
  ``kairos launch-test --timeout`` bounds the whole run;
- a launch that ends before its tests (its processes all exited, and the description is
  not :func:`~kairos.launch_testing.markers.keep_alive`) fails the run, with the output of
  each process that exited with a failure.
"""

import functools
import threading

from kairos.launch_testing import actions, asserts, io_handler, markers  # noqa: F401
from kairos.launch_testing import proc_info_handler, tools, util  # noqa: F401
from kairos.launch_testing.io_handler import ActiveIoHandler, IoHandler
from kairos.launch_testing.proc_info_handler import ActiveProcInfoHandler, ProcInfoHandler


def post_shutdown_test():
    """Marks a test case class to run after the launch has shut down."""
    def decorator(test_item):
        if not isinstance(test_item, type):
            raise TypeError("post_shutdown_test should decorate test classes")
        test_item.__post_shutdown_test__ = True
        return test_item
    return decorator


def ready_to_test_action_timeout(timeout):
    """Sets how long, in seconds, the tests wait for ``ReadyToTest`` (15 s by default)."""
    def decorator(function):
        function.__ready_to_test_action_timeout__ = timeout
        return function
    return decorator


def parametrize(argnames, argvalues):
    """Makes a test description several launches, one per value of ``argvalues`` (a
    tuple of values when ``argnames`` names several, ``'a, b'``); the tests get the
    values as arguments of those names. Called, the description gives each launch's
    description function and its values."""
    names = [name.strip() for name in argnames.split(",") if name.strip()]
    values = [value if isinstance(value, tuple) else (value,) for value in argvalues]

    def decorator(function):
        @functools.wraps(function)
        def launches():
            for value in values:
                bound = dict(zip(names, value))
                launch = functools.partial(function, **bound)
                functools.update_wrapper(launch, function)
                yield launch, bound
        launches.__parametrized__ = True
        return launches
    return decorator


class ReadyAggregator:
    """Calls ``ready_fn`` once its own ``ready_fn`` has been called ``num_to_aggregate`` times
    (one call for each part of a launch that reports it is ready)."""

    def __init__(self, ready_fn, num_to_aggregate):
        self._ready_fn = ready_fn
        self._left = num_to_aggregate
        self._lock = threading.Lock()

    def ready_fn(self, *args, **kwargs):
        with self._lock:
            self._left -= 1
            if self._left != 0:
                return
        self._ready_fn()


__all__ = ["ActiveIoHandler", "ActiveProcInfoHandler", "IoHandler", "ProcInfoHandler",
           "ReadyAggregator", "actions", "asserts", "io_handler", "markers", "parametrize",
           "post_shutdown_test", "proc_info_handler", "ready_to_test_action_timeout", "tools",
           "util"]
