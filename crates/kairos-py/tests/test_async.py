"""async def callbacks awaiting services and sleeps; sleeps never early, woken by shutdown."""

import queue
import threading
import time

import kairos
from kairos.example_interfaces.srv import AddTwoInts
from kairos.executors import MultiThreadedExecutor, SingleThreadedExecutor
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
    called = []

    # One call only: a tick that starts after the test took the result (the queue is
    # empty again) must not await a second one, which the shutdown below would then
    # rightly report as abandoned at its .await.
    async def tick():
        if not called:
            called.append(True)
            response = await client.call_async(AddTwoInts.Request(a=20, b=22))
            results.put(response.sum)

    timer = caller.create_timer(0.001, tick)
    executor = SingleThreadedExecutor()
    executor.add_node(server)
    executor.add_node(caller)
    spin_in_thread(executor)
    assert results.get(timeout=LIMIT) == 42
    timer.cancel()
    assert executor.shutdown(timeout_sec=30.0)


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
                results.put(("completed", 0.0, None))
            except kairos.WouldDeadlock as err:
                results.put((str(err), time.monotonic() - start, err.request_sent))

    node.create_timer(0.001, tick)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    spin_in_thread(executor)
    message, took, sent = results.get(timeout=LIMIT)
    assert "would deadlock" in message and "Fix:" in message, message
    # Known before the request left (the coroutine holds the service's group): it was
    # held, not sent, and the error says so; a never-ending await would not return at all.
    assert sent is False and "The request was not sent" in message, message
    assert took < LIMIT / 2
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


def test_an_async_service_awaits_a_sleep_and_a_service_before_it_answers(session):
    server = Node("adder")
    server.create_service(AddTwoInts, "/test/plain_add", add)
    front = Node("async_front")
    inner = front.create_client(AddTwoInts, "/test/plain_add")
    clock = kairos.Clock("steady")

    async def add_slowly(request, response):
        await clock.sleep_async(0.02)
        partial = await inner.call_async(AddTwoInts.Request(a=request.a, b=request.b))
        response.sum = partial.sum + 1000
        return response

    front.create_service(AddTwoInts, "/test/slow_add", add_slowly)
    executor = SingleThreadedExecutor()
    executor.add_node(server)
    executor.add_node(front)
    spin_in_thread(executor)

    caller = Node("async_service_caller")
    client = caller.create_client(AddTwoInts, "/test/slow_add")
    for a, b in ((1, 2), (40, 2)):
        start = time.monotonic_ns()
        response = client.call(AddTwoInts.Request(a=a, b=b), timeout_sec=LIMIT)
        assert response.sum == a + b + 1000
        took = time.monotonic_ns() - start
        assert took >= 20_000_000, f"answered after {took} ns, before its 20 ms sleep"
    assert executor.shutdown(timeout_sec=30.0)


def test_a_blocking_call_into_an_async_service_of_the_held_group_raises_would_deadlock(session):
    node = Node("async_selfish")
    clock = kairos.Clock("steady")

    async def add_later(request, response):
        await clock.sleep_async(0.001)
        return add(request, response)

    node.create_service(AddTwoInts, "/test/async_self_add", add_later)  # the default group
    client = node.create_client(AddTwoInts, "/test/async_self_add")
    results = queue.Queue()
    called = []  # once: the test takes the result out of `results`, then shuts down

    def tick():
        if not called:
            called.append(True)
            start = time.monotonic()
            try:
                client.call(AddTwoInts.Request(a=1, b=1), timeout_sec=LIMIT)
                results.put(("completed", 0.0))
            except kairos.WouldDeadlock as err:
                results.put((str(err), time.monotonic() - start))

    node.create_timer(0.001, tick)
    executor = MultiThreadedExecutor(num_threads=2)  # a free worker, but the group is held
    executor.add_node(node)
    spin_in_thread(executor)
    message, took = results.get(timeout=LIMIT)
    assert "would deadlock" in message and "Fix:" in message, message
    assert took < LIMIT / 2
    executor.shutdown(timeout_sec=1.0)


def test_an_async_service_that_raises_fails_the_call_and_ends_spin(session):
    node = Node("async_raiser")
    clock = kairos.Clock("steady")

    async def broken(request, response):
        await clock.sleep_async(0.001)
        raise ValueError("boom from an async service")

    node.create_service(AddTwoInts, "/test/async_broken", broken)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    spun = queue.Queue()

    def spin():
        try:
            executor.spin()
            spun.put(None)
        except ValueError as err:
            spun.put(err)

    threading.Thread(target=spin, daemon=True).start()
    client = Node("async_raiser_caller").create_client(AddTwoInts, "/test/async_broken")
    try:
        client.call(AddTwoInts.Request(a=1, b=2), timeout_sec=LIMIT)
    except kairos.CallError as err:
        assert "boom from an async service" in str(err), str(err)
    else:
        raise AssertionError("the call to a raising async service returned")
    assert "boom from an async service" in str(spun.get(timeout=LIMIT))


def test_a_coroutine_may_await_a_plain_yield_and_a_guard_condition_runs_it(session):
    """`await asyncio.sleep(0)` (a bare yield) resumes the coroutine on the executor;
    a guard condition runs an async callback once per trigger."""
    import asyncio

    node = Node("yielding")
    runs = queue.Queue()

    async def on_trigger():
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        runs.put(True)

    guard = node.create_guard_condition(on_trigger)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    spin_in_thread(executor)
    guard.trigger()
    guard.trigger()
    assert runs.get(timeout=LIMIT) and runs.get(timeout=LIMIT)
    assert runs.empty()
    node.destroy_guard_condition(guard)
    guard.trigger()  # destroyed: ignored
    assert executor.shutdown(timeout_sec=30.0)
    assert runs.empty()


def test_a_call_async_from_the_main_thread_completes_under_spin_once(session):
    """rclpy's `client_async` shape: `call_async` from the program's thread, then
    `spin_once` until `future.done()`. The response is a callback of the client, so the
    first `spin_once` returns with it (it does not wait out its timeout)."""
    server = Node("spin_once_server")
    server.create_service(AddTwoInts, "/test/spin_once_add", add)
    executor = SingleThreadedExecutor()
    executor.add_node(server)
    spin_in_thread(executor)
    caller = Node("spin_once_caller")
    client = caller.create_client(AddTwoInts, "/test/spin_once_add")
    assert client.wait_for_service(timeout_sec=LIMIT)
    future = client.call_async(AddTwoInts.Request(a=41, b=1))
    start = time.monotonic()
    kairos.spin_once(caller, timeout_sec=2 * LIMIT)
    assert future.done(), "spin_once returned without the response"
    assert time.monotonic() - start < LIMIT, "spin_once waited out its timeout"
    assert future.result().sum == 42
    assert executor.shutdown(timeout_sec=30.0)


def test_a_response_that_comes_before_spin_once_ends_the_next_spin_once(session):
    """The race of ros2/examples' `client_async` across processes: the response arrives
    before the program calls `spin_once`. As in rclpy, it waits in the client, so the
    future is not done until a spin takes it, and that spin returns at once with it
    (it used to complete unseen, and `spin_once()` then waited for ever)."""
    server = Node("early_server")
    server.create_service(AddTwoInts, "/test/early_add", add)
    server_executor = SingleThreadedExecutor()
    server_executor.add_node(server)
    caller = Node("early_caller")
    client = caller.create_client(AddTwoInts, "/test/early_add")
    future = client.call_async(AddTwoInts.Request(a=40, b=2))
    server_executor.spin_once(timeout_sec=LIMIT)  # serves it; the response is back
    assert not future.done(), "the response completed its future without a spin"
    start = time.monotonic()
    kairos.spin_once(caller, timeout_sec=2 * LIMIT)
    assert time.monotonic() - start < LIMIT, "spin_once waited out its timeout"
    assert future.done() and future.result().sum == 42
