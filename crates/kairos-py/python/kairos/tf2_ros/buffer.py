"""tf2_ros's ``Buffer``: the Rust transform buffer with lookups that wait.

A lookup with a timeout waits the kairos way: on the buffer's clock (the node's, so
simulation time when it uses it; the system clock without a node), with the GIL released,
until an insertion answers it, the timeout, or ``kairos.shutdown()``; never early, never
polling. When the wait could never end well, because the listener that would bring the
transform cannot run while the caller blocks (a single-threaded executor running both,
or the listener in a mutually exclusive group the caller holds), it raises
``kairos.WouldDeadlock`` at once, naming the group and the fix, where rclpy would stall
for the whole timeout. A timeout raises the class of the error that kept the transform
away (``LookupException``, ``ExtrapolationException``, ...), whose message says it timed
out. ``lookup_transform_async`` never blocks: ``await`` it in an ``async def`` callback.
"""

import threading

from kairos.task import Future
from kairos.tf2_py import BufferCore, _message

from .buffer_interface import BufferInterface

__all__ = ["Buffer"]


def _waits(timeout):
    """Whether ``timeout`` (a ``Duration``, seconds, or ``None``) asks to wait at all."""
    if timeout is None:
        return False
    nanoseconds = getattr(timeout, "nanoseconds", None)
    return (nanoseconds if nanoseconds is not None else timeout) > 0


class Buffer(BufferCore, BufferInterface):
    """A transform buffer keeping ``cache_time`` of each frame (10 s by default). With a
    ``node``, waits are timed on the node's clock and the buffer serves ``tf2_frames``
    (``tf2_msgs/srv/FrameGraph``) on it, as tf2_ros's does."""

    def __init__(self, cache_time=None, node=None):
        clock = node._core.clock() if node is not None else None
        BufferCore.__init__(self, cache_time, _clock=clock)
        BufferInterface.__init__(self)
        self._lock = threading.Lock()
        self._async_waits = []
        self._frames_service = None
        if node is not None:
            from kairos.tf2_msgs.srv import FrameGraph

            self._frames_service = node.create_service(
                FrameGraph, "tf2_frames", self._frames_callback)

    def _frames_callback(self, request, response):
        response.frame_yaml = self.all_frames_as_yaml()
        return response

    def set_transform(self, transform, authority):
        BufferCore.set_transform(self, transform, authority)
        self._wake_async_waits()

    def set_transform_static(self, transform, authority):
        BufferCore.set_transform_static(self, transform, authority)
        self._wake_async_waits()

    def _set_transforms(self, transforms, authority, is_static):
        """Stores one ``TFMessage``'s transforms (the listener's path): the messages of
        those refused."""
        refused = self._core.set_transforms(transforms, authority, is_static)
        self._wake_async_waits()
        return refused

    def lookup_transform(self, target_frame, source_frame, time, timeout=None):
        """The transform from ``source_frame`` to ``target_frame`` at ``time``, waiting up
        to ``timeout`` (a ``Duration``) for it."""
        if _waits(timeout):
            return _message(self._core.lookup_wait(target_frame, source_frame, time, timeout))
        return self.lookup_transform_core(target_frame, source_frame, time)

    def lookup_transform_full(self, target_frame, target_time, source_frame, source_time,
                              fixed_frame, timeout=None):
        """From ``source_frame`` at ``source_time`` to ``target_frame`` at
        ``target_time`` through ``fixed_frame``, waiting up to ``timeout``."""
        if _waits(timeout):
            return _message(self._core.lookup_full_wait(
                target_frame, target_time, source_frame, source_time, fixed_frame, timeout))
        return self.lookup_transform_full_core(
            target_frame, target_time, source_frame, source_time, fixed_frame)

    def can_transform(self, target_frame, source_frame, time, timeout=None,
                      return_debug_tuple=False):
        """Whether the transform is available, waiting up to ``timeout`` for it;
        ``(bool, why)`` with ``return_debug_tuple``."""
        if _waits(timeout):
            answer = self._core.check_wait(target_frame, source_frame, time, timeout)
        else:
            answer = self._core.check(target_frame, source_frame, time)
        return answer if return_debug_tuple else answer[0]

    def can_transform_full(self, target_frame, target_time, source_frame, source_time,
                           fixed_frame, timeout=None, return_debug_tuple=False):
        args = (target_frame, target_time, source_frame, source_time, fixed_frame)
        if _waits(timeout):
            answer = self._core.check_full_wait(*args, timeout)
        else:
            answer = self._core.check_full(*args)
        return answer if return_debug_tuple else answer[0]

    def wait_for_transform_async(self, target_frame, source_frame, time):
        """A future done with the transform once it is available (as geometry2's
        tf2_ros; a result is truthy)."""
        return self._await(
            lambda: self._core.check(target_frame, source_frame, time)[0],
            lambda: self.lookup_transform_core(target_frame, source_frame, time))

    def wait_for_transform_full_async(self, target_frame, target_time, source_frame,
                                      source_time, fixed_frame):
        args = (target_frame, target_time, source_frame, source_time, fixed_frame)
        return self._await(lambda: self._core.check_full(*args)[0],
                           lambda: self.lookup_transform_full_core(*args))

    async def lookup_transform_async(self, target_frame, source_frame, time):
        """The transform, once available: ``await`` it in an ``async def`` callback."""
        return await self.wait_for_transform_async(target_frame, source_frame, time)

    async def lookup_transform_full_async(self, target_frame, target_time, source_frame,
                                          source_time, fixed_frame):
        return await self.wait_for_transform_full_async(
            target_frame, target_time, source_frame, source_time, fixed_frame)

    def _await(self, available, answer):
        future = Future()
        with self._lock:
            # Checked under the lock insertions wake under: no insertion is missed.
            now = available()
            if not now:
                self._async_waits.append((future, available, answer))
        if now:
            _complete(future, answer)
        return future

    def _wake_async_waits(self):
        with self._lock:
            if not self._async_waits:
                return
            ready, waiting = [], []
            for wait in self._async_waits:
                future, available, _ = wait
                if future.done():
                    continue
                (ready if available() else waiting).append(wait)
            self._async_waits = waiting
        # Completed outside the lock: a done callback may look up or wait again.
        for future, _, answer in ready:
            _complete(future, answer)


def _complete(future, answer):
    """Ends ``future`` with ``answer()``, or with what it raised (the data may have been
    cleared between the check and the lookup)."""
    if future.done():  # cancelled by its owner meanwhile
        return
    try:
        future.set_result(answer())
    except Exception as error:  # noqa: BLE001 - handed to the future's awaiter
        future.set_exception(error)
