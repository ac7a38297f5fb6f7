"""``python -m kairos.demo deadlock``: story 3, the rclpy callback that deadlocked its own
executor, replayed with rclpy's own shapes on kairos.

Each pattern is written as rclpy users write it: a timer callback that calls a service.
In rclpy the ones marked ``would_deadlock`` hang forever (a silent deadlock); on kairos
they raise ``kairos.WouldDeadlock`` at once, naming the group and the fix. The ones that
work in rclpy complete. Every case runs under a watchdog, so the demo always ends; a case
that hangs, is slow to fail, or ends otherwise fails the demo (exit status 1).
"""

import queue
import sys
import threading
import time

import kairos
from kairos.callback_groups import MutuallyExclusiveCallbackGroup
from kairos.example_interfaces.srv import AddTwoInts
from kairos.executors import MultiThreadedExecutor, SingleThreadedExecutor
from kairos.node import Node

#: A blocking call may wait this long: far beyond what a working call needs.
CALL_TIMEOUT = 30.0
#: A case still running after this is reported as hung.
WATCHDOG = 60.0
#: A WouldDeadlock must come faster than this ("at once"): far under CALL_TIMEOUT, which a
#: wait that blocked would reach, and far over what a loaded machine adds to an instant.
FAST = 5.0


def add_two_ints(request, response):
    response.sum = request.a + request.b
    return response


class Server(Node):
    """The service every case calls: ``add_two_ints`` in the node's default group."""

    def __init__(self, name, service):
        super().__init__(name)
        self.create_service(AddTwoInts, service, add_two_ints)


class Caller(Node):
    """A node whose first timer tick runs ``body(self)`` once and reports what it did."""

    def __init__(self, name, service, body, *, client_group=None, service_here=False):
        super().__init__(name)
        self.results = queue.Queue()
        self.body = body
        self.done = False
        if service_here:
            # The service in this node's default group: the group the timer holds.
            self.create_service(AddTwoInts, service, add_two_ints)
        self.client = self.create_client(AddTwoInts, service, callback_group=client_group)
        self.timer = self.create_timer(0.001, self.on_timer)

    def on_timer(self):
        if self.done:
            return
        self.done = True
        start = time.monotonic()
        try:
            outcome, detail = self.body(self)
        except kairos.WouldDeadlock as err:
            outcome, detail = "would_deadlock", str(err)
        except Exception as err:  # what else a case ends with is reported as it is
            outcome, detail = "error", f"{type(err).__name__}: {err}"
        if outcome is not None:
            self.results.put((outcome, detail, time.monotonic() - start))

    def request(self):
        return AddTwoInts.Request(a=2, b=3)


def blocking_call(node):
    response = node.client.call(node.request(), timeout_sec=CALL_TIMEOUT)
    return "completed", f"response {response.sum}"


def nested_spin(node):
    future = node.client.call_async(node.request())
    kairos.spin_until_future_complete(node, future, timeout_sec=CALL_TIMEOUT)
    return "completed", f"response {future.result().sum}"


def done_callback(node):
    start = time.monotonic()

    def on_response(future):
        node.results.put(("completed", f"response {future.result().sum}",
                          time.monotonic() - start))

    node.client.call_async(node.request()).add_done_callback(on_response)
    return None, None  # reported by on_response


async def awaited_call(node):
    start = time.monotonic()
    try:
        response = await node.client.call_async(node.request())
        node.results.put(("completed", f"response {response.sum}", time.monotonic() - start))
    except kairos.WouldDeadlock as err:
        node.results.put(("would_deadlock", str(err), time.monotonic() - start))


class AsyncCaller(Caller):
    async def on_timer(self):
        if self.done:
            return
        self.done = True
        await awaited_call(self)


#: (name, what rclpy users write, executor, how the caller is built, expected outcome)
CASES = [
    ("a_call_in_callback_single_threaded",
     "client.call() in a timer callback, rclpy.spin() (single-threaded)",
     SingleThreadedExecutor, dict(body=blocking_call), "would_deadlock"),
    ("b_client_in_own_group_single_threaded",
     "the same with the client in a MutuallyExclusiveCallbackGroup of its own",
     SingleThreadedExecutor,
     dict(body=blocking_call, client_group=MutuallyExclusiveCallbackGroup()), "would_deadlock"),
    ("c_spin_until_future_complete_in_callback",
     "rclpy.spin_until_future_complete(self, future) inside the timer callback",
     SingleThreadedExecutor, dict(body=nested_spin), "would_deadlock"),
    ("d_separate_groups_multi_threaded",
     "client in its own group, service on another node, MultiThreadedExecutor",
     lambda: MultiThreadedExecutor(num_threads=2),
     dict(body=blocking_call, client_group=MutuallyExclusiveCallbackGroup()), "completed"),
    ("e_service_in_callers_group_multi_threaded",
     "the same recipe with the service in the group the timer callback holds",
     lambda: MultiThreadedExecutor(num_threads=2),
     dict(body=blocking_call, client_group=MutuallyExclusiveCallbackGroup(), service_here=True),
     "would_deadlock"),
    ("f_done_callback",
     "client.call_async(request).add_done_callback(...) (no waiting in the callback)",
     SingleThreadedExecutor, dict(body=done_callback), "completed"),
    ("g_awaited_call_async_coroutine",
     "async def timer callback: response = await client.call_async(request)",
     SingleThreadedExecutor, dict(body=None, cls=AsyncCaller), "completed"),
]


def run_case(index, name, make_executor, build):
    """Builds the case's nodes, spins them on a thread, waits for the first result."""
    service = f"/demo_{index}/add_two_ints"
    build = dict(build)
    cls = build.pop("cls", Caller)
    server = Server(f"server_{index}", service) if not build.get("service_here") else None
    caller = cls(f"caller_{index}", service, **build)
    executor = make_executor()
    for node in (server, caller):
        if node is not None:
            executor.add_node(node)
    spinner = threading.Thread(target=executor.spin, daemon=True, name=f"spin-{name}")
    spinner.start()
    start = time.monotonic()
    try:
        outcome, detail, took = caller.results.get(timeout=WATCHDOG)
    except queue.Empty:
        outcome, detail, took = "hung", f"no result within the {WATCHDOG} s watchdog", \
            time.monotonic() - start
    report = executor.shutdown(timeout_sec=1.0)
    spinner.join(timeout=2.0)
    for node in (server, caller):
        if node is not None:
            node.destroy_node()
    return outcome, detail, took, report


def deadlock():
    kairos.init()
    failures = []
    print(f"{'case':<44} {'expected':>15} {'outcome':>15} {'ms':>9}")
    details = []
    for index, (name, what, make_executor, build, expected) in enumerate(CASES):
        outcome, detail, took, _report = run_case(index, name, make_executor, build)
        fast = expected != "would_deadlock" or took < FAST
        ok = outcome == expected and fast
        if not ok:
            failures.append(name)
        print(f"{name:<44} {expected:>15} {outcome:>15} {took * 1e3:>9.2f}"
              + ("" if ok else "   <- FAIL"))
        details.append((name, what, detail))
    print()
    for name, what, detail in details:
        print(f"{name}: {what}\n    -> {detail}")
    kairos.shutdown()
    print()
    if failures:
        print(f"FAIL deadlock: {', '.join(failures)}")
        return 1
    print("PASS deadlock: every pattern that deadlocks in rclpy raised kairos.WouldDeadlock "
          f"at once (< {FAST:.0f} s); every pattern that works there completed")
    return 0


SCENARIOS = {"deadlock": deadlock}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    name = argv[0] if argv else "deadlock"
    if name not in SCENARIOS:
        print(f"unknown scenario '{name}'; one of: {', '.join(SCENARIOS)}", file=sys.stderr)
        return 2
    return SCENARIOS[name]()


if __name__ == "__main__":
    sys.exit(main())
