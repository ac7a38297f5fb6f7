"""rclpy's executors, on kairos's executor (spun with the GIL released)."""

import atexit
import inspect
import itertools
import signal
import threading
import types
import warnings
import weakref

from kairos import _kairos
from kairos.callback_groups import deciding_groups, is_custom, owner_of

#: Threads inside a spin now, per executor: joined at exit (see _shut_down_at_exit).
_spinning = weakref.WeakKeyDictionary()


@atexit.register
def _shut_down_at_exit():
    """Before the interpreter finalizes: shut every executor down and let the threads that
    spin them leave kairos. A thread that wakes after finalization began cannot take the
    GIL back (CPython ends it mid-call), so none is left waiting in a spin."""
    _kairos.shutdown(1.0)
    current = threading.current_thread()
    for threads in list(_spinning.values()):
        for thread in list(threads):
            if thread is not current:
                thread.join(timeout=2.0)


#: Set by Ctrl-C while an executor spins: the spin in the main thread raises
#: KeyboardInterrupt once kairos's handler has shut the executors down (and printed their
#: reports), never before, so the program's own clean-up never races the handler.
_interrupted = False


def _on_sigint(signum, frame):
    """Python's SIGINT handler while kairos handles Ctrl-C (see kairos.init)."""
    global _interrupted
    if any(_spinning.values()):
        _interrupted = True
        return
    signal.default_int_handler(signum, frame)


class ShutdownException(Exception):
    """An executor was asked to do work after it was shut down."""


class TimeoutException(Exception):
    """A wait for work ran out of time."""


class ConditionReachedException(Exception):
    """A spin's future is done (rclpy's internal signal, kept for its name)."""


class ExternalShutdownException(Exception):
    """rclpy raises it from a spin that shutdown ended; kairos's spin returns instead, so
    it is never raised. It is here so that code catching it runs unchanged."""


class _Spinning:
    def __init__(self, executor):
        self.threads = _spinning.setdefault(executor, set())

    def __enter__(self):
        self.threads.add(threading.current_thread())

    def __exit__(self, exc_type, *exc):
        global _interrupted
        self.threads.discard(threading.current_thread())
        if (_interrupted and exc_type is None
                and threading.current_thread() is threading.main_thread()):
            _interrupted = False
            raise KeyboardInterrupt


class Executor:
    """A kairos executor. ``num_threads=1`` is single threaded."""

    def __init__(self, *, context=None, num_threads=1):
        self._core = _kairos.ExecutorCore(num_threads)
        self._nodes = []
        #: Handed-out callbacks their group of the program's own refused (see spin_once).
        self._refused = []
        #: Set by cancel(): ends a spin that runs spin_once in a loop (see spin).
        self._cancelled = False

    def add_node(self, node):
        """Adds ``node``; False if it is in this executor already. A node belongs to one
        executor at a time (``kairos.ExecutorError`` otherwise)."""
        if node in self._nodes:
            return False
        self._core.add_node(node._core)
        node._executor = self
        self._nodes.append(node)
        return True

    def remove_node(self, node):
        if node not in self._nodes:
            return
        self._core.remove_node(node._core)
        node._executor = None
        self._nodes.remove(node)

    def get_nodes(self):
        return list(self._nodes)

    def create_task(self, callback, *args, **kwargs):
        """Runs ``callback(*args, **kwargs)`` (a function, a coroutine function or a
        coroutine) as a callback of this executor, in the order tasks were created; the
        returned ``Task`` is done with its result or exception. A coroutine may await
        futures and kairos sleeps; it holds no group, so tasks and other callbacks go on
        meanwhile."""
        from kairos.task import Task

        task = Task(callback, args, kwargs, executor=self)
        core, group = self._task_node()
        guard = None

        def start():
            guard.destroy()
            return _drive(task, callback, args, kwargs)

        guard = core.create_guard_condition(start, group, True)
        guard.trigger()
        return task

    def _task_node(self):
        """The runtime node (hidden from the graph) whose guard conditions run this
        executor's tasks, made at the first task."""
        if getattr(self, "_tasks", None) is None:
            core = _kairos.NodeCore(f"_kairos_tasks_{next(_task_nodes)}", "/", False, None,
                                    1.0, None, None, False, False)
            self._core.add_node(core)
            self._tasks = (core, core.create_group("tasks", True))
        return self._tasks

    def spin(self):
        """Runs callbacks until shutdown. An executor class that overrides ``spin_once``
        (rclpy's way of writing a custom executor) is spun by calling its ``spin_once``
        until it is shut down; so is one with a callback group of the program's own
        class (see ``spin_once``)."""
        if type(self).spin_once is not Executor.spin_once or deciding_groups(self._nodes):
            while not self._is_shutdown:
                if self._cancelled:
                    self._cancelled = False
                    # A cancel made while nothing spun is pending in kairos too: taken
                    # here (a callback this hands out is queued again as it drops).
                    self._core.wait_for_ready(0)
                    return
                try:
                    self.spin_once()
                except ShutdownException:
                    return
            return
        with _Spinning(self):
            self._core.spin()
        self._cancelled = False  # a cancel it took was kairos's too

    def wait_for_ready_callbacks(self, timeout_sec=None, nodes=None, condition=None):
        """Waits up to ``timeout_sec`` (None: no limit) for one ready callback and returns
        ``(handler, entity, node)`` without running it, for a custom executor's
        ``spin_once``: ``handler()`` runs the callback on whatever thread calls it. The
        callback holds its callback group from now until it has run, so a mutually
        exclusive group still runs one callback at a time. ``entity`` is always None here;
        ``node`` is the callback's node (None for a task). An exception the callback
        raises is raised by the next wait. ``ShutdownException`` once the executor is shut
        down, ``TimeoutException`` when the time ran out, ``StopIteration`` when
        ``cancel()`` ended a wait without a time limit. ``nodes`` and ``condition`` are
        accepted and not used: every node of the executor is waited on."""
        if self._is_shutdown:
            raise ShutdownException()
        with _Spinning(self):
            work = self._core.wait_for_ready(_timeout(timeout_sec))
        if work is None:
            if self._is_shutdown:
                raise ShutdownException()
            if _timeout(timeout_sec) is not None:
                raise TimeoutException()
            # Cancelled: no work and no time limit, as rclpy's callback generator running
            # out (ros2/examples' custom executor catches StopIteration for it).
            raise StopIteration
        group, node = owner_of(work.group_id)
        return _ReadyHandler(work, group), None, node

    def _wait_for_ready_callbacks(self, timeout_sec=None, nodes=None, condition=None):
        """rclpy's generator form of ``wait_for_ready_callbacks``."""
        while True:
            try:
                ready = self.wait_for_ready_callbacks(timeout_sec, nodes, condition)
            except StopIteration:
                return
            yield ready

    def spin_once(self, timeout_sec=None):
        """Runs one ready callback, waiting up to ``timeout_sec`` for one (None or a
        negative value: no limit, as rclpy).

        A callback of a group of the program's own class (a ``CallbackGroup`` subclass
        with its own ``can_execute``/``beginning_execution``) starts only once its group
        lets it, on this thread; one its group refuses waits, holding its work, and is
        asked again before any other wait and every 50 ms while waiting, as rclpy asks
        at every wake-up of its wait set."""
        if not self._refused and not deciding_groups(self._nodes):
            with _Spinning(self):
                self._core.spin_once(_timeout(timeout_sec))
            self._cancelled = False  # a cancel it took was kairos's too
            return
        for index, (handler, group) in enumerate(self._refused):
            if group.can_execute(None) and group.beginning_execution(None):
                del self._refused[index]
                _run_in_group(handler, group)
                return
        wait = _timeout(timeout_sec)
        if self._refused:
            wait = _ASK_AGAIN if wait is None else min(wait, _ASK_AGAIN)
        try:
            handler, _, _ = self.wait_for_ready_callbacks(timeout_sec=wait)
        except (TimeoutException, StopIteration):
            return
        group = handler._group
        if group is None or not is_custom(group):
            handler()
        elif group.can_execute(None) and group.beginning_execution(None):
            _run_in_group(handler, group)
        else:
            self._refused.append((handler, group))

    def spin_once_until_future_complete(self, future, timeout_sec=None):
        """Runs at most one callback, waiting up to ``timeout_sec`` for one, and returns as
        soon as ``future`` is done, even if no callback ran (another thread may complete
        it)."""
        if not future.done():
            with _Spinning(self):
                self._core.spin_once_until_future_complete(future, _timeout(timeout_sec))

    def spin_until_future_complete(self, future, timeout_sec=None):
        """Runs callbacks until ``future`` is done or ``timeout_sec`` passed. From one of
        this executor's own callbacks it raises ``WouldDeadlock`` at once."""
        with _Spinning(self):
            self._core.spin_until_future_complete(future, _timeout(timeout_sec))

    def shutdown(self, timeout_sec=None):
        """Stops within ``timeout_sec`` (1 s by default); the report names callbacks still
        running and is true when shutdown was clean."""
        report = self._core.shutdown(timeout_sec)
        self._refused.clear()
        for node in list(self._nodes):
            node._executor = None
        self._nodes.clear()
        return report

    def cancel(self):
        """Makes the spin in progress return (after the callback running now); if none is,
        the next spin returns at once."""
        self._cancelled = True
        self._core.cancel()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.shutdown()

    @property
    def num_threads(self):
        return self._core.num_threads

    @property
    def idle_spin_sec(self):
        """How long (0 to 1 s) a worker that ran out of work keeps polling for more before
        it sleeps: a message arriving meanwhile skips a thread wake-up (tens of
        microseconds on a virtual machine) at the price of a busy core. 0 by default."""
        return self._core.idle_spin_sec

    @idle_spin_sec.setter
    def idle_spin_sec(self, seconds):
        self._core.idle_spin_sec = seconds

    @property
    def _is_shutdown(self):
        """rclpy's flag: whether the executor has been shut down."""
        return self._core.is_shut_down


_task_nodes = itertools.count(1)


def _timeout(timeout_sec):
    return None if timeout_sec is not None and timeout_sec < 0 else timeout_sec


async def _drive(task, callback, args, kwargs):
    try:
        result = callback if inspect.iscoroutine(callback) else callback(*args, **kwargs)
        if inspect.isawaitable(result):
            result = await result
    except Exception as error:  # the task's outcome, as rclpy keeps it
        task.set_exception(error)
    else:
        task.set_result(result)


#: How often a callback refused by its group of the program's own is asked about again.
_ASK_AGAIN = 0.05


def _run_in_group(handler, group):
    try:
        handler()
    finally:
        group.ending_execution(None)


class _ReadyHandler:
    """Runs one handed-out callback (rclpy hands out a Task of the same shape)."""

    def __init__(self, work, group):
        self._work = work
        self._group = group
        self._done = False

    def __call__(self):
        self._done = True
        self._work.run()

    def done(self):
        return self._done

    def result(self):
        return None

    def exception(self):
        return None

    def __repr__(self):
        return f"<ready callback {self._work.name!r}>"


class SingleThreadedExecutor(Executor):
    def __init__(self, *, context=None):
        super().__init__(num_threads=1)


class MultiThreadedExecutor(Executor):
    """``num_threads=None``: one worker per core."""

    def __init__(self, num_threads=None, *, context=None):
        if num_threads == 1:
            warnings.warn("MultiThreadedExecutor is used with a single thread; use the "
                          "SingleThreadedExecutor instead", UserWarning, stacklevel=2)
        super().__init__(num_threads=num_threads)
        # rclpy's thread pool, as far as its size goes.
        self._executor = types.SimpleNamespace(_max_workers=self.num_threads)
