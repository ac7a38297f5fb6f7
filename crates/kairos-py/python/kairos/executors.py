"""rclpy's executors, on kairos's executor (spun with the GIL released)."""

from kairos import _kairos


class Executor:
    """A kairos executor. ``num_threads=1`` is single threaded."""

    def __init__(self, *, context=None, num_threads=1):
        self._core = _kairos.ExecutorCore(num_threads)
        self._nodes = []

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

    def spin(self):
        self._core.spin()

    def spin_once(self, timeout_sec=None):
        self._core.spin_once(timeout_sec)

    def spin_until_future_complete(self, future, timeout_sec=None):
        """Runs callbacks until ``future`` is done or ``timeout_sec`` passed. From one of
        this executor's own callbacks it raises ``WouldDeadlock`` at once."""
        self._core.spin_until_future_complete(future, timeout_sec)

    def shutdown(self, timeout_sec=None):
        """Stops within ``timeout_sec`` (1 s by default); the report names callbacks still
        running and is true when shutdown was clean."""
        report = self._core.shutdown(timeout_sec)
        for node in list(self._nodes):
            node._executor = None
        self._nodes.clear()
        return report

    def cancel(self):
        self._core.cancel()

    @property
    def num_threads(self):
        return self._core.num_threads


class SingleThreadedExecutor(Executor):
    def __init__(self, *, context=None):
        super().__init__(num_threads=1)


class MultiThreadedExecutor(Executor):
    """``num_threads=None``: one worker per core."""

    def __init__(self, num_threads=None, *, context=None):
        super().__init__(num_threads=num_threads)
