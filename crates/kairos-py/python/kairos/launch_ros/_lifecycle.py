"""The launch driver's view of its managed nodes: their ``~/transition_event`` heard as
``StateTransition`` events, and ``ChangeState`` events turned into calls of their
``~/change_state``.

A launch driver opens one kairos node for this (hidden, ``_kairos_launch_PID``) when the
first managed node's process has started, so the launcher's router is up; what is asked
before is kept until then. The node's callbacks run on an executor thread of their own and
only post what they heard to the driver's loop (a pipe its ``select`` watches), so every
event handler of the launch file still runs in that loop, one at a time. Every wait here
is bounded; a transition that cannot be asked for is logged, never waited on forever.
"""

import os
import queue
import threading

#: How long a transition may wait for the node's service, then for its answer.
CHANGE_STATE_TIMEOUT_SEC = 30.0


class LifecycleBridge:
    def __init__(self, driver):
        self.driver = driver
        self.posted = queue.SimpleQueue()
        self.read_fd, self.write_fd = os.pipe()
        # Neither end blocks: a full pipe means the driver already has a wake-up coming.
        os.set_blocking(self.read_fd, False)
        os.set_blocking(self.write_fd, False)
        self.node = None
        self.waiting = []
        self.clients = {}
        self.clients_lock = threading.Lock()

    @classmethod
    def of(cls, driver):
        """The driver's bridge, made (not opened) on first use."""
        return driver.attachment(cls)

    def fileno(self):
        return self.read_fd

    def open(self):
        if self.node is not None:
            return
        self.driver.prepare_ros()
        import kairos
        from kairos.executors import SingleThreadedExecutor
        kairos.init(args=[])
        self.node = kairos.create_node(f"_kairos_launch_{os.getpid()}")
        executor = SingleThreadedExecutor()
        executor.add_node(self.node)
        threading.Thread(target=executor.spin, name="launch-lifecycle", daemon=True).start()
        waiting, self.waiting = self.waiting, []
        for call, args in waiting:
            call(*args)

    def watch(self, action, node_name):
        """Posts each transition of ``node_name`` as a ``StateTransition`` of ``action``."""
        if self.node is None:
            self.waiting.append((self.watch, (action, node_name)))
            return
        from kairos.lifecycle_msgs.msg import TransitionEvent
        self.node.create_subscription(
            TransitionEvent, node_name.rstrip("/") + "/transition_event",
            lambda msg: self._post(("transition", action, msg)), 10)

    def change_state(self, node_name, transition_ids):
        """Asks ``node_name`` for each transition in turn (in a thread; bounded)."""
        if self.node is None:
            self.waiting.append((self.change_state, (node_name, transition_ids)))
            return
        threading.Thread(target=self._change, args=(node_name, list(transition_ids)),
                         daemon=True).start()

    def _change(self, node_name, transition_ids):
        from kairos.lifecycle_msgs.msg import Transition
        from kairos.lifecycle_msgs.srv import ChangeState
        service = node_name.rstrip("/") + "/change_state"
        with self.clients_lock:
            # One client per node for the launch, however often it is asked.
            client = self.clients.get(service)
            if client is None:
                client = self.clients[service] = self.node.create_client(ChangeState, service)
        if not client.wait_for_service(timeout_sec=CHANGE_STATE_TIMEOUT_SEC):
            self._post(("log", f"no {service} within {CHANGE_STATE_TIMEOUT_SEC:g} s: "
                               f"transition {transition_ids[0]} of {node_name} not asked"))
            return
        for transition_id in transition_ids:
            done = threading.Event()
            future = client.call_async(ChangeState.Request(
                transition=Transition(id=transition_id)))
            future.add_done_callback(lambda _: done.set())
            if not done.wait(CHANGE_STATE_TIMEOUT_SEC):
                self._post(("log", f"{service} did not answer transition {transition_id} "
                                   f"within {CHANGE_STATE_TIMEOUT_SEC:g} s"))
                return
            if not future.result().success:
                self._post(("log", f"{node_name} refused transition {transition_id}"))
                return

    def _post(self, item):
        self.posted.put(item)
        try:
            os.write(self.write_fd, b"\0")
        except OSError:
            pass

    def drain(self):
        """In the driver's loop: what the node heard, as events and log lines."""
        from kairos.launch_ros.events.lifecycle import StateTransition
        try:
            os.read(self.read_fd, 65536)
        except BlockingIOError:
            pass
        while True:
            try:
                item = self.posted.get_nowait()
            except queue.Empty:
                return
            if item[0] == "transition":
                self.driver.dispatch(StateTransition(action=item[1], msg=item[2]))
            else:
                self.driver.log(item[1])
