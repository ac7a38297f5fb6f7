"""async def callbacks awaiting services and sleeps; sleeps never early, woken by shutdown."""

import queue
import threading
import time

import kairos
from kairos.example_interfaces.srv import AddTwoInts
from kairos.executors import SingleThreadedExecutor
from kairos.node import Node

from conftest import LIMIT, spin_in_thread


def add(request, response):
    response.sum = request.a + request.b
    return response


def test_async_callback_awaits_a_service_on_a_single_threaded_executor(session):
    server = Node("async_server")
    server.create_service(AddTwoInts, "/test/async_add", add)
    caller = Node("async_caller")
    client = caller.create_client(AddTwoInts, "/test/async_add")
    results = queue.Queue()

    async def tick():
        if results.qsize() == 0:
            response = await client.call_async(AddTwoInts.Request(a=20, b=22))
            results.put(response.sum)

    timer = caller.create_timer(0.001, tick)
    executor = SingleThreadedExecutor()
    executor.add_node(server)
    executor.add_node(caller)
    spin_in_thread(executor)
    assert results.get(timeout=LIMIT) == 42
    timer.cancel()
    assert executor.shutdown(timeout_sec=1.0)


def test_awaiting_a_service_in_the_group_the_coroutine_holds_raises_would_deadlock(session):
    node = Node("self_caller")
    node.create_service(AddTwoInts, "/test/self_add", add)  # the node's default group
    client = node.create_client(AddTwoInts, "/test/self_add")
    results = queue.Queue()

    async def tick():
        if results.qsize() == 0:
            start = time.monotonic()
            try:
                await client.call_async(AddTwoInts.Request(a=1, b=1))
                results.put(("completed", 0.0))
            except kairos.WouldDeadlock as err:
                results.put((str(err), time.monotonic() - start))

    node.create_timer(0.001, tick)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    spin_in_thread(executor)
    message, took = results.get(timeout=LIMIT)
    assert "would deadlock" in message and "Fix:" in message, message
    assert took < 1.0
    executor.shutdown(timeout_sec=1.0)


def test_await_sleep_is_never_early_and_other_callbacks_run_meanwhile(session):
    node = Node("sleeper")
    clock = kairos.Clock("steady")
    slept = queue.Queue()
    ticks = []

    async def sleepy():
        if slept.qsize() == 0 and not ticks:
            ticks.append(0)
            start = clock.now().nanoseconds
            await clock.sleep_async(0.05)
            slept.put(clock.now().nanoseconds - start)

    node.create_timer(0.001, sleepy)
    other = Node("other")
    other_ticks = []
    other.create_timer(0.002, lambda: other_ticks.append(1))
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    executor.add_node(other)
    spin_in_thread(executor)
    waited_ns = slept.get(timeout=LIMIT)
    assert waited_ns >= 50_000_000, f"the sleep returned after {waited_ns} ns, before 50 ms"
    assert other_ticks, "the single thread was not free while the coroutine slept"
    executor.shutdown(timeout_sec=1.0)


def test_a_blocking_sleep_wakes_on_shutdown():
    kairos.init()
    clock = kairos.Clock("steady")
    ended = queue.Queue()
    started = threading.Event()

    def sleeper():
        started.set()
        ended.put(clock.sleep_for(3600.0))

    threading.Thread(target=sleeper, daemon=True).start()
    assert started.wait(LIMIT)
    time.sleep(0.05)  # let it block (the test is still right if it had not yet)
    kairos.shutdown()
    assert ended.get(timeout=10) is False, "sleep_for did not report the shutdown"


def test_a_blocking_sleep_is_never_early(session):
    clock = kairos.Clock("steady")
    for seconds in (0.001, 0.0105, 0.02):
        start = clock.now().nanoseconds
        assert clock.sleep_for(seconds) is True
        assert clock.now().nanoseconds - start >= int(seconds * 1e9)
