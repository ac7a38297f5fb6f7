"""The launch's own ROS node (``launch_ros.ros_adapters`` as ROS 2 has it), for the
launch_ros actions that act on ROS themselves: ``SetUseSimTime`` sets its
``use_sim_time``, ``ROSTimer`` waits on its clock.

What it promises:

- One per launch, opened on first use: a kairos context of its own, a node
  ``launch_ros_PID`` and an executor on a thread of its own, on the processes' transport.
- A ``ROSTimer`` waits on that node's ROS time (simulated time once ``use_sim_time`` is
  set and ``/clock`` is heard), never early on it, on a thread of its own; when due, its
  actions run in the launch driver's loop like every other action (the thread only posts
  to a pipe the loop watches), so they can never delay the launcher's stop.
- Nothing waits past the launch: when the driver's loop ends, the context is shut down,
  which wakes every wait on its clock and ends the executor."""

import os
import queue
import threading

from kairos.launch.logging import get_logger


class ROSAdapter:
    """The launch's ROS node and its executor; ``ros_node`` is the node."""

    def __init__(self, driver):
        self.driver = driver
        self.fired = queue.SimpleQueue()
        self.starting = []
        self.read_fd, self.write_fd = os.pipe()
        # Neither end blocks: a full pipe means the driver already has a wake-up coming.
        os.set_blocking(self.read_fd, False)
        os.set_blocking(self.write_fd, False)
        self.waits = []
        self.closed = False
        driver.prepare_ros()
        import kairos
        from kairos.executors import SingleThreadedExecutor
        self.ros_context = kairos.Context()
        kairos.init(args=[], context=self.ros_context)
        self.ros_node = kairos.create_node(f"launch_ros_{os.getpid()}",
                                           context=self.ros_context)
        self.executor = SingleThreadedExecutor(context=self.ros_context)
        self.executor.add_node(self.ros_node)
        self.spinner = threading.Thread(target=self.executor.spin, name="launch-ros",
                                        daemon=True)
        self.spinner.start()

    # -- the driver's loop
    def fileno(self):
        return self.read_fd

    def drain(self):
        try:
            os.read(self.read_fd, 4096)
        except BlockingIOError:
            pass
        starting, self.starting = self.starting, []
        for action, period in starting:
            self._start_wait(action, period)
        while True:
            try:
                action, snapshot = self.fired.get_nowait()
            except queue.Empty:
                return
            self.driver.fire_timer(action, snapshot)

    def _wake(self):
        if self.closed:
            return
        try:
            os.write(self.write_fd, b".")
        except BlockingIOError:
            pass

    # -- timers on ROS time
    def start_timer(self, action, period, context):
        """Fires ``action`` (a ``ROSTimer``) ``period`` seconds of ROS time from when the
        loop next turns, once the description being read is done (a ``SetUseSimTime``
        after the timer in it still decides its clock, as in ROS 2)."""
        action._snapshot = context.snapshot()
        self.driver.timers_elsewhere.add(action)
        self.starting.append((action, period))
        self._wake()

    def _start_wait(self, action, period):
        if action.cancelled or self.closed:
            return
        from kairos.duration import Duration
        clock = self.ros_node.get_clock()
        until = clock.now() + Duration(nanoseconds=round(period * 1e9))

        def wait():
            if clock.sleep_until(until, context=self.ros_context):
                self.fired.put((action, action._snapshot))
                self._wake()

        thread = threading.Thread(target=wait, name="launch-ros-timer", daemon=True)
        self.waits.append(thread)
        thread.start()

    # -- use_sim_time
    def set_use_sim_time(self, value):
        from kairos.parameter import Parameter
        self.ros_node.set_parameters([Parameter("use_sim_time", Parameter.Type.BOOL, value)])
        if self.ros_node.get_parameter("use_sim_time").value is not value:
            raise RuntimeError(f"the launch's ROS node did not take use_sim_time={value}")

    def close(self):
        """Shuts the context down: every wait on its clock returns, the executor ends."""
        if self.closed:
            return
        self.closed = True
        self.ros_context.try_shutdown()
        self.executor.shutdown()
        stuck = []
        for thread in [self.spinner, *self.waits]:
            thread.join(timeout=5.0)
            if thread.is_alive():
                stuck.append(thread.name)
        if stuck:
            # Its pipe stays open: a thread still alive may yet write to it.
            get_logger("launch_ros").warning(
                f"the launch's ROS threads {', '.join(stuck)} did not end within 5 s of "
                "the launch")
            return
        os.close(self.read_fd)
        os.close(self.write_fd)


def get_ros_adapter(context):
    """The launch's ROS adapter (opened on first use)."""
    return context._driver.attachment(ROSAdapter)


def get_ros_node(context):
    """The launch's own ROS node."""
    return get_ros_adapter(context).ros_node


__all__ = ["ROSAdapter", "get_ros_adapter", "get_ros_node"]
