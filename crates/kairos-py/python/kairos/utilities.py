"""rclpy's ``utilities``: the default context and the functions over it."""

import threading

from kairos.context import Context

_lock = threading.Lock()
_default = None


def get_default_context(*, shutting_down=False):
    """The context ``init()`` and nodes use when given none; once it is shut down through
    these functions, the next call makes a new one (so ``init()`` works again after
    ``shutdown()``)."""
    global _default
    with _lock:
        if _default is None:
            _default = Context()
        context = _default
        if shutting_down:
            _default = None
        return context


def _ending(context):
    """The context to shut down: ``context``, or the default one; either way, a default
    context being shut down stops being the default."""
    global _default
    with _lock:
        context = context or _default or Context()
        if context is _default:
            _default = None
        return context


def ok(*, context=None):
    return (context or get_default_context()).ok()


def shutdown(*, context=None, timeout_sec=1.0):
    return _ending(context).shutdown(timeout_sec)


def try_shutdown(*, context=None, timeout_sec=1.0):
    return _ending(context).try_shutdown(timeout_sec)


def get_rmw_implementation_identifier():
    """kairos speaks rmw_zenoh's wire format."""
    return "rmw_zenoh_cpp"


def remove_ros_args(args=None):
    """``args`` (``sys.argv`` when None) without its ROS arguments: every ``--ros-args``
    section, up to its ``--`` or the end, and the ``--`` itself."""
    import sys

    args = list(sys.argv if args is None else args)
    kept, in_ros = [], False
    for arg in args:
        if arg == "--ros-args":
            in_ros = True
        elif in_ros and arg == "--":
            in_ros = False
        elif not in_ros:
            kept.append(arg)
    return kept


def timeout_sec_to_nsec(timeout_sec):
    """rclpy's conversion: None or a negative number is "wait for ever" (-1), else the
    timeout in integer nanoseconds."""
    if timeout_sec is None or timeout_sec < 0:
        return -1
    from kairos.constants import S_TO_NS

    return int(float(timeout_sec) * S_TO_NS)
