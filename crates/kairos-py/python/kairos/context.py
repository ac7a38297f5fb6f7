"""rclpy's ``Context``: the lifetime of a kairos session, as ``rclpy.init``/``shutdown``
bound it.

A context is made, initialized once (``init``), used by nodes and executors, and shut down
once; it cannot be used again after. What it does, as rclpy's does:
- ``ok()`` is false before ``init``, after ``shutdown`` and after Ctrl-C;
- a second ``init``, or ``shutdown`` of a context not initialized or already shut down,
  raises ``RuntimeError``; ``try_shutdown`` is the quiet form;
- ``shutdown`` destroys the nodes made in the context and then calls the ``on_shutdown``
  callbacks;
- ``with context:`` ends with ``try_shutdown``.

What kairos does differently: every context of a process shares the process's kairos
session (its transport and its executors' shutdown), so shutting one down shuts down the
executors of all; rclpy programs use one context at a time, and kairos keeps the
promise that a shutdown wakes every wait.
"""

import os
import threading
import weakref
from inspect import ismethod

from kairos import _kairos


class Context:
    def __init__(self):
        self._lock = threading.RLock()
        self._state = "new"  # then "initialized", then "shut down"
        self._domain_id = None
        self._callbacks = []
        self._nodes = []  # weak references, in creation order
        self._args = None  # init(args=...), when given

    def init(self, args=None, *, initialize_logging=True, domain_id=None):
        with self._lock:
            if domain_id is not None and (not isinstance(domain_id, int) or domain_id < 0):
                raise RuntimeError(f"Domain id ({domain_id}) should not be lower than zero.")
            if self._state != "new":
                raise RuntimeError("Context.init() must only be called once")
            if args is not None:
                for arg in args:
                    str(arg).encode("utf-8")  # UnicodeEncodeError, as rcl refuses them
                _check_ros_args([str(arg) for arg in args])
                # The nodes of this context read their ROS arguments from here, not from
                # the process's command line.
                self._args = [str(arg) for arg in args]
            if domain_id is None:
                domain_id = int(os.environ.get("ROS_DOMAIN_ID", "0") or 0)
            elif "ROS_DOMAIN_ID" not in os.environ:
                # Read by the transport when it opens (once per process).
                os.environ["ROS_DOMAIN_ID"] = str(domain_id)
            _kairos.init()
            self._domain_id = domain_id
            self._state = "initialized"

    @property
    def handle(self):
        """rclpy's handle of the context while it is initialized (else ``None``): usable
        as ``with context.handle:``, which does nothing (``with context:`` shuts the
        context down on leaving; its handle's does not)."""
        return _ContextHandle(self) if self._state == "initialized" else None

    def ok(self):
        with self._lock:
            return self._state == "initialized" and _kairos.ok()

    def get_domain_id(self):
        if self._state == "new":
            raise RuntimeError("Context must be initialized before it can have a domain id")
        return self._domain_id

    def track_node(self, node):
        with self._lock:
            self._nodes.append(weakref.ref(node))

    def untrack_node(self, node):
        with self._lock:
            self._nodes = [ref for ref in self._nodes if ref() not in (None, node)]

    def on_shutdown(self, callback):
        if not callable(callback):
            raise TypeError(f"callback should be a callable, got {type(callback)}")
        with self._lock:
            if self._state == "shut down":
                callback()
                return
            if ismethod(callback):
                callback = weakref.WeakMethod(callback)
            self._callbacks.append(callback)

    def shutdown(self, timeout_sec=1.0):
        """Shuts the context down; returns the executors' shutdown reports (kairos)."""
        with self._lock:
            if self._state == "new":
                raise RuntimeError("Context must be initialized before it can be shutdown")
            if self._state == "shut down":
                raise RuntimeError("Context is already shut down (rcl_shutdown already called)")
            return self._cleanup(timeout_sec)

    def try_shutdown(self, timeout_sec=1.0):
        with self._lock:
            if self._state == "initialized":
                return self._cleanup(timeout_sec)
        return []

    def _cleanup(self, timeout_sec):
        self._state = "shut down"
        nodes, self._nodes = [ref() for ref in self._nodes], []
        for node in nodes:
            if node is not None:
                node.destroy_node()
        reports = _kairos.shutdown(timeout_sec)
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            if isinstance(callback, weakref.WeakMethod):
                callback = callback()
            if callback is not None:
                callback()
        return reports

    def destroy(self):
        self.try_shutdown()

    def __enter__(self):
        if self._state == "new":
            self.init()
        return self

    def __exit__(self, *exc):
        self.try_shutdown()
        return False


def _check_ros_args(args):
    """Raises what rclpy's ``init`` raises for ROS arguments that do not read."""
    from kairos.exceptions import RCLInvalidROSArgsError, UnknownROSArgsError

    fault = _kairos.ros_args_error(args)
    if fault is None:
        return
    kind, detail = fault
    if kind == "unknown":
        raise UnknownROSArgsError(f"Found unknown ROS arguments: {[detail]!r}")
    raise RCLInvalidROSArgsError(f"Failed to parse ROS arguments: {detail}")


class _ContextHandle:
    """What ``Context.handle`` gives: the context, as a ``with`` block that does nothing."""

    __slots__ = ("context",)

    def __init__(self, context):
        self.context = context

    def __enter__(self):
        return self

    def __exit__(self, *_exc):
        return False

    def __eq__(self, other):
        return isinstance(other, _ContextHandle) and other.context is self.context

    def __hash__(self):
        return id(self.context)
