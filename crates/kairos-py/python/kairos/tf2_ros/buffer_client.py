"""tf2_ros's ``BufferClient``: lookups answered by a buffer server of another node
(``tf2_msgs/action/LookupTransform``), for a program that keeps no buffer of its own.

Every wait is bounded: the server is given the lookup's timeout, and the client waits
for it that long plus ``timeout_padding``, then raises ``TimeoutException``; a call that
could never be answered (the action's responses need the executor the caller blocks)
raises ``kairos.WouldDeadlock`` at once.
"""

from kairos.action import ActionClient
from kairos.duration import Duration
from kairos.tf2_py import (
    ConnectivityException,
    ExtrapolationException,
    InvalidArgumentException,
    LookupException,
    TimeoutException,
    TransformException,
)

from .buffer_interface import BufferInterface

__all__ = ["BufferClient"]

# tf2_msgs/TF2Error's codes and the exceptions they raise.
_ERRORS = {
    1: LookupException, 2: ConnectivityException, 3: ExtrapolationException,
    4: InvalidArgumentException, 5: TimeoutException, 6: TransformException,
}


def _seconds(value):
    nanoseconds = getattr(value, "nanoseconds", None)
    return nanoseconds / 1e9 if nanoseconds is not None else float(value)


def _time_msg(time):
    if time is None:
        from kairos.builtin_interfaces.msg import Time

        return Time()
    return time.to_msg() if hasattr(time, "to_msg") else time


class BufferClient(BufferInterface):
    """Looks up through the ``LookupTransform`` action server named ``ns``."""

    def __init__(self, node, ns, check_frequency=None, timeout_padding=Duration(seconds=2.0)):
        from kairos.tf2_msgs.action import LookupTransform

        super().__init__()
        self.node = node
        self.check_frequency = check_frequency  # kept for rclpy's signature: no polling
        self.timeout_padding = timeout_padding
        self.action_client = ActionClient(node, LookupTransform, ns)
        self._goal = LookupTransform.Goal

    def destroy(self):
        """Ends the action client's entities."""
        self.action_client.destroy()

    def wait_for_server(self, timeout_sec=None):
        return self.action_client.wait_for_server(timeout_sec=timeout_sec)

    def lookup_transform(self, target_frame, source_frame, time, timeout=Duration()):
        goal = self._goal(target_frame=target_frame, source_frame=source_frame,
                          source_time=_time_msg(time), timeout=_duration_msg(timeout),
                          advanced=False)
        return self._process_goal(goal, timeout)

    def lookup_transform_full(self, target_frame, target_time, source_frame, source_time,
                              fixed_frame, timeout=Duration()):
        goal = self._goal(target_frame=target_frame, source_frame=source_frame,
                          source_time=_time_msg(source_time), timeout=_duration_msg(timeout),
                          target_time=_time_msg(target_time), fixed_frame=fixed_frame,
                          advanced=True)
        return self._process_goal(goal, timeout)

    def can_transform(self, target_frame, source_frame, time, timeout=Duration()):
        try:
            self.lookup_transform(target_frame, source_frame, time, timeout)
            return True
        except TransformException:
            return False

    def can_transform_full(self, target_frame, target_time, source_frame, source_time,
                           fixed_frame, timeout=Duration()):
        try:
            self.lookup_transform_full(target_frame, target_time, source_frame, source_time,
                                       fixed_frame, timeout)
            return True
        except TransformException:
            return False

    def _process_goal(self, goal, timeout):
        bound = _seconds(timeout) + _seconds(self.timeout_padding)
        client = self.action_client
        if not client.wait_for_server(timeout_sec=bound):
            raise TimeoutException(
                f"no tf2 buffer server answers on {client._action_name!r} after {bound:.3f} s: start "
                "one (kairos tf buffer-server, or tf2_ros's buffer_server) or look up with a "
                "Buffer and a TransformListener of this program's own")
        try:
            handle = client._sent_within(goal, bound)
            if not handle.accepted:
                raise TransformException("the buffer server refused the lookup")
            response = handle._result_within(bound)
        except TimeoutError as error:
            raise TimeoutException(f"the buffer server did not answer within {bound:.3f} s: "
                                   f"{error}") from None
        result = response.result
        if result.error.error != 0:
            raise _ERRORS.get(result.error.error, TransformException)(result.error.error_string)
        return result.transform


def _duration_msg(timeout):
    from kairos.builtin_interfaces.msg import Duration as DurationMsg

    nanoseconds = int(_seconds(timeout) * 1e9)
    return DurationMsg(sec=nanoseconds // 1_000_000_000, nanosec=nanoseconds % 1_000_000_000)
