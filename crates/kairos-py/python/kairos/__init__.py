"""kairos for Python: rclpy's programming model on kairos's Rust executor, without its hangs.

rclpy code ports by changing imports::

    import kairos as rclpy
    from kairos.node import Node
    from kairos.std_msgs.msg import String

Everything underneath is kairos: nodes, topics, services, timers, executors, callback
groups, clocks and futures are the Rust ones. A blocking wait that could never complete
(a ``call()`` whose service is in the group the caller holds, a nested spin, a call on a
single-threaded executor) raises :class:`WouldDeadlock` at once, with the message kairos
gives in Rust; sleeps are never early and wake on shutdown; ``shutdown`` returns by its
deadline with a report. Python callbacks run with the GIL; threads that wait never hold it.
"""

import os as _os
import signal as _signal
import threading as _threading

from kairos import _interfaces, _kairos

# ``kairos.<package>.msg`` / ``.srv`` for every interface package kairos-msgs ships; first,
# because the modules below use rcl_interfaces' messages.
_interfaces.install()

from kairos._kairos import (
    CallError,
    Clock,
    ClockStalled,
    ExecutorError,
    Future,
    ShutdownReport,
    Time,
    WaitCancelled,
    WouldDeadlock,
)
from kairos import logging
from kairos.callback_groups import (
    CallbackGroup,
    MutuallyExclusiveCallbackGroup,
    ReentrantCallbackGroup,
)
from kairos.duration import Duration
from kairos.executors import Executor, MultiThreadedExecutor, SingleThreadedExecutor
from kairos.node import Node
from kairos.context import Context
from kairos import utilities
from kairos.utilities import get_default_context

__all__ = [
    "CallError", "CallbackGroup", "Clock", "ClockStalled", "Context", "Duration", "Executor", "ExecutorError",
    "Future", "MultiThreadedExecutor", "MutuallyExclusiveCallbackGroup", "Node",
    "ReentrantCallbackGroup", "ShutdownReport", "SingleThreadedExecutor", "Time",
    "WaitCancelled", "WouldDeadlock", "create_node", "get_default_context", "get_global_executor",
    "init", "logging",
    "ok", "shutdown", "spin", "spin_once", "spin_until_future_complete", "try_shutdown",
]

_global_executor = None


def _install_sigint():
    """Ctrl-C is kairos's (as rclpy's is rclpy's): its handler, installed with the first
    node, shuts every executor down and prints their reports; Python's own handler then
    only marks the spin, which raises KeyboardInterrupt when it returns. This must run
    before the first node: the kairos handler chains to the handler Python has then."""
    off = _os.environ.get("KAIROS_SIGNAL_HANDLER", "").strip().lower() in ("0", "off", "false")
    if off or _threading.current_thread() is not _threading.main_thread():
        return
    if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
        from kairos.executors import _on_sigint

        _signal.signal(_signal.SIGINT, _on_sigint)


_install_sigint()


def init(args=None, *, context=None, domain_id=None, signal_handler_options=None):
    """Starts kairos in ``context`` (the default context when None): the Zenoh transport
    when ``KAIROS_TRANSPORT=zenoh`` (or ``RMW_IMPLEMENTATION=rmw_zenoh_cpp``) is set.
    Ctrl-C (SIGINT, SIGTERM) shuts every executor down within 1 s and prints each shutdown
    report; ``spin`` returns and ``KeyboardInterrupt`` is raised in the main thread, as
    with rclpy. A second ``init`` of one context raises ``RuntimeError``.

    As rclpy's, the value returned is a context manager: ``with kairos.init():`` shuts
    kairos down when the block ends."""
    context = get_default_context() if context is None else context
    context.init(args, domain_id=domain_id)
    return _Initialized(context)


class _Initialized:
    """What ``init()`` returns: ``with init(): ...`` ends with the context's
    ``try_shutdown``."""

    def __init__(self, context):
        self.context = context

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        try_shutdown(context=self.context)
        return False


def ok(context=None):
    """True between ``init()`` and ``shutdown()`` of the context, unless a signal asked the
    program to stop."""
    return (context or get_default_context()).ok()


def shutdown(*, context=None, timeout_sec=1.0, uninstall_handlers=None):
    """Shuts ``context`` (the default one when None) down: destroys its nodes, wakes every
    sleep, shuts every executor down within ``timeout_sec`` each and returns their
    :class:`ShutdownReport` s (true when clean). A context not initialized or already shut
    down raises ``RuntimeError``, as rclpy's."""
    global _global_executor
    _global_executor = None
    return utilities.shutdown(context=context, timeout_sec=timeout_sec)


def try_shutdown(*, context=None, timeout_sec=1.0, uninstall_handlers=None):
    """:func:`shutdown` if the context runs, else nothing."""
    global _global_executor
    _global_executor = None
    return utilities.try_shutdown(context=context, timeout_sec=timeout_sec)


def create_node(node_name, *, namespace=None, use_sim_time=False, **kwargs):
    from kairos.parameter import Parameter

    overrides = list(kwargs.pop("parameter_overrides", []) or [])
    if use_sim_time:
        overrides.append(Parameter("use_sim_time", value=True))
    return Node(node_name, namespace=namespace, parameter_overrides=overrides, **kwargs)


def get_global_executor():
    global _global_executor
    if _global_executor is None:
        _global_executor = SingleThreadedExecutor()
    return _global_executor


def _executor_for(node, executor):
    """The executor given, else the one the node is in, else the global one."""
    if executor is not None:
        return executor
    if node is not None and node.executor is not None:
        return node.executor
    return get_global_executor()


class _Adopted:
    """Adds the node to the executor for the duration of a spin, as rclpy does."""

    def __init__(self, executor, node):
        self.executor, self.node, self.added = executor, node, False

    def __enter__(self):
        if self.node is not None and self.node.executor is None:
            self.added = self.executor.add_node(self.node)
        return self.executor

    def __exit__(self, *exc):
        if self.added:
            self.executor.remove_node(self.node)


def spin(node, executor=None):
    """Runs callbacks until shutdown (or a callback's exception, raised here)."""
    executor = _executor_for(node, executor)
    with _Adopted(executor, node):
        executor.spin()


def spin_once(node, *, executor=None, timeout_sec=None):
    executor = _executor_for(node, executor)
    with _Adopted(executor, node):
        executor.spin_once(timeout_sec=timeout_sec)


def spin_until_future_complete(node, future, executor=None, timeout_sec=None):
    """Runs callbacks until ``future`` is done or ``timeout_sec`` passed. Called from a
    callback of the executor that would spin, it raises :class:`WouldDeadlock` at once."""
    executor = _executor_for(node, executor)
    with _Adopted(executor, node):
        executor.spin_until_future_complete(future, timeout_sec=timeout_sec)
