"""rclpy's ``wait_for_message``: the next message on a topic, with a deadline.

The subscription is made on the node given (so the graph shows it there, with the
node's remappings) in a group of its own, and removed afterwards. If the node is in no
executor, one is made for the wait; if it is, that executor delivers the message and this
call waits for it. Either way the wait ends at the message, at ``time_to_wait`` (never
before; negative: no limit) or at shutdown, with ``(False, None)`` for the last two.
"""

import threading
import time

from kairos.callback_groups import ReentrantCallbackGroup
from kairos.task import Future

_SHUTDOWN_CHECK_SEC = 0.1


def wait_for_message(msg_type, node, topic, *, qos_profile=1, time_to_wait=-1):
    """``(True, msg)`` for the next message on ``topic``, or ``(False, None)``."""
    from kairos.executors import SingleThreadedExecutor

    received = Future()

    def keep(msg):
        if not received.done():
            received.set_result(msg)

    subscription = node.create_subscription(msg_type, topic, keep, qos_profile,
                                            callback_group=ReentrantCallbackGroup())
    timeout = None if time_to_wait is None or time_to_wait < 0 else float(time_to_wait)
    try:
        if node.executor is None:
            executor = SingleThreadedExecutor(context=node.context)
            executor.add_node(node)
            try:
                executor.spin_until_future_complete(received, timeout_sec=timeout)
            finally:
                executor.remove_node(node)
        else:
            _wait(received, timeout, node.context)
    finally:
        node.destroy_subscription(subscription)
    return (True, received.result()) if received.done() else (False, None)


def _wait(future, timeout, context):
    """Waits for ``future`` (completed by another thread's executor) until ``timeout``
    seconds passed or the context shut down."""
    done = threading.Event()
    future.add_done_callback(lambda _: done.set())
    deadline = None if timeout is None else time.monotonic() + timeout
    while not done.is_set() and context.ok():
        left = _SHUTDOWN_CHECK_SEC if deadline is None else deadline - time.monotonic()
        if left <= 0:
            return
        done.wait(min(left, _SHUTDOWN_CHECK_SEC))
