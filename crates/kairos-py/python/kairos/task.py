"""rclpy's ``task``: ``Future`` (kairos's own) and ``Task``, a future that runs a
function or coroutine one step per call.

A ``Task`` runs its handler when called; a coroutine handler runs to its next ``await``
that yields and resumes at the next call, until it returns (the result) or raises (the
exception). A call while it runs, or after it is done, does nothing.
"""

import inspect
import threading

from kairos._kairos import Future

__all__ = ["Future", "Task"]


class Task(Future):
    def __init__(self, handler, args=None, kwargs=None, executor=None):
        self._handler = handler
        self._args, self._kwargs = tuple(args or ()), dict(kwargs or {})
        self._coroutine = handler if inspect.iscoroutine(handler) else None
        self._running = threading.Lock()
        self._executor = executor
        if executor is not None:
            self._set_executor(executor)

    def __call__(self):
        if self.done() or not self._running.acquire(blocking=False):
            return
        try:
            if self._coroutine is None:
                result = self._handler(*self._args, **self._kwargs)
                if not inspect.iscoroutine(result):
                    self.set_result(result)
                    return
                self._coroutine = result
            try:
                self._coroutine.send(None)
            except StopIteration as done:
                self.set_result(done.value)
        except Exception as error:  # the task's outcome, as rclpy keeps it
            self.set_exception(error)
        finally:
            self._running.release()

    def executing(self):
        """Whether the task is running now."""
        return self._running.locked()
