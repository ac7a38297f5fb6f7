"""rclpy's lifetime shapes of entities and futures: `with` destroys an entity, its
`handle` is invalid once destroyed, a future made with an executor schedules its done
callbacks there, and an executor's tasks run in the order they were made. Custom
executors: ready callbacks handed out to run where the program chooses."""

import threading
import time

import pytest

from conftest import LIMIT
from kairos.exceptions import InvalidHandle
from kairos.executors import SingleThreadedExecutor
from kairos.node import Node
from kairos.std_msgs.msg import String
from kairos.std_srvs.srv import Trigger
from kairos.task import Future


def test_with_destroys_an_entity_and_its_handle_then_says_so(session):
    node = Node("e_node")
    with node.create_publisher(String, "e_topic", 1) as publisher:
        with publisher.handle:
            assert node.count_publishers("e_topic") == 1
    assert node.count_publishers("e_topic") == 0
    with pytest.raises(InvalidHandle):
        publisher.handle
    for entity, destroy in (
            (node.create_subscription(String, "e_topic", lambda m: None, 1),
             node.destroy_subscription),
            (node.create_timer(1.0, lambda: None), node.destroy_timer),
            (node.create_client(Trigger, "e_srv"), node.destroy_client)):
        with entity.handle:
            pass
        assert destroy(entity)
        with pytest.raises(InvalidHandle):
            entity.handle
    node.destroy_node()


def test_an_executors_tasks_run_in_order_and_a_futures_callbacks_run_there(session):
    node = Node("e_tasks")
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    ran = []

    async def second():
        ran.append("second")
        return 2

    first = executor.create_task(lambda: ran.append("first") or 1)
    later = executor.create_task(second)
    assert not first.done() and not later.done()
    executor.spin_once(timeout_sec=0)
    assert ran == ["first"] and first.result() == 1
    executor.spin_once(timeout_sec=0)
    assert ran == ["first", "second"] and later.result() == 2

    scheduled = Future(executor=executor)
    called = []
    scheduled.add_done_callback(lambda f: called.append(f.result()))
    scheduled.set_result("value")
    assert called == [], "a done callback of a future with an executor runs there"
    executor.spin_once(timeout_sec=5)
    assert called == ["value"]

    # A done callback gets the very future it was added on, subclass and all (rclpy).
    class Tagged(Future):
        tag = "mine"

    tagged, seen = Tagged(), []
    tagged.add_done_callback(seen.append)
    tagged.set_result(1)
    tagged.add_done_callback(seen.append)
    assert seen == [tagged, tagged] and seen[0] is tagged and seen[0].tag == "mine"

    failed = Future()
    failed.set_exception("not an exception")
    assert failed.exception() == "not an exception"
    with pytest.raises(TypeError):
        failed.result()
    executor.shutdown()


def test_two_servers_of_one_name_exist_and_the_older_answers_each_call(session):
    from kairos.example_interfaces.srv import AddTwoInts
    older, younger, caller = Node("e_driver"), Node("e_driver"), Node("e_caller")
    served = []

    def server(tag, offset):
        def add(request, response):
            served.append(tag)
            response.sum = request.a + request.b + offset
            return response
        return add

    first = older.create_service(AddTwoInts, "e_add", server("older", 0))
    younger.create_service(AddTwoInts, "e_add", server("younger", 100))
    assert caller.count_services("e_add") == 2, "both serve it, as in ROS 2"
    executor = SingleThreadedExecutor()
    for node in (older, younger, caller):
        executor.add_node(node)
    client = caller.create_client(AddTwoInts, "e_add")

    def call():
        future = client.call_async(AddTwoInts.Request(a=1, b=2))
        executor.spin_until_future_complete(future, timeout_sec=30)
        return future.result().sum

    assert [call(), call()] == [3, 3]
    assert served == ["older", "older"], "each call ran one callback"
    older.destroy_service(first)
    assert call() == 103, "then the younger server answers"
    assert served == ["older", "older", "younger"]


def test_an_executor_says_it_is_shut_down_and_a_one_thread_pool_warns(session):
    from kairos.executors import MultiThreadedExecutor
    with SingleThreadedExecutor() as executor:
        assert not executor._is_shutdown
    assert executor._is_shutdown, "leaving the with block shut it down"
    with pytest.warns(UserWarning, match="SingleThreadedExecutor"):
        single = MultiThreadedExecutor(num_threads=1)
    assert single._executor._max_workers == 1
    single.shutdown()
    assert MultiThreadedExecutor(num_threads=3)._executor._max_workers == 3


def test_a_custom_executor_runs_handed_out_callbacks_where_it_chooses(session):
    """ros2/examples' PriorityExecutor shape: a subclass overrides ``spin_once``, takes
    each ready callback with ``wait_for_ready_callbacks`` and runs it on a thread pool
    chosen by the callback's node; ``spin()`` calls the override until shutdown."""
    import concurrent.futures
    import threading

    from kairos.executors import Executor

    class PriorityExecutor(Executor):
        def __init__(self):
            super().__init__()
            self.high = set()
            self.hp = concurrent.futures.ThreadPoolExecutor(2, thread_name_prefix="hp")
            self.lp = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="lp")

        def spin_once(self, timeout_sec=None):
            try:
                handler, _, node = self.wait_for_ready_callbacks(timeout_sec=timeout_sec)
            except StopIteration:
                pass
            else:
                (self.hp if node in self.high else self.lp).submit(handler)

    talker, urgent = Node("ce_talker"), Node("ce_urgent")
    ran = {}
    done = threading.Event()

    def record(name):
        def callback(*_):
            ran.setdefault(name, []).append(threading.current_thread().name)
            if len(ran.get("urgent", [])) >= 3 and len(ran.get("talker", [])) >= 3:
                done.set()
        return callback

    talker.create_timer(0.01, record("talker"))
    urgent.create_subscription(String, "ce_estop", record("urgent"), 10)
    publisher = talker.create_publisher(String, "ce_estop", 10)
    talker.create_timer(0.01, lambda: publisher.publish(String(data="stop")))
    executor = PriorityExecutor()
    executor.high.add(urgent)
    executor.add_node(talker)
    executor.add_node(urgent)
    spinner = threading.Thread(target=executor.spin)
    spinner.start()
    try:
        assert done.wait(LIMIT), f"callbacks ran: {ran}"
    finally:
        executor.shutdown()
        spinner.join(LIMIT)
        executor.hp.shutdown()
        executor.lp.shutdown()
    assert not spinner.is_alive(), "spin() returned at shutdown"
    assert all(name.startswith("hp") for name in ran["urgent"]), ran
    assert all(name.startswith("lp") for name in ran["talker"]), ran


def test_wait_for_ready_callbacks_times_out_then_raises_once_shut_down(session):
    from kairos.executors import ShutdownException, TimeoutException

    node = Node("ce_wait")
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    with pytest.raises(TimeoutException):
        executor.wait_for_ready_callbacks(timeout_sec=0.01)
    fired = []
    node.create_timer(0.001, lambda: fired.append(1))
    handler, _, owner = executor.wait_for_ready_callbacks(timeout_sec=LIMIT)
    assert owner is node and fired == []
    handler()
    assert fired == [1] and handler.done()
    waits = executor._wait_for_ready_callbacks()
    executor.shutdown()
    with pytest.raises(ShutdownException):
        next(waits)
    with pytest.raises(ShutdownException):
        executor.wait_for_ready_callbacks()


def test_a_callback_group_of_the_programs_own_decides_which_callbacks_start(session):
    """ros2/examples' throttled group shape: ``beginning_execution`` hands out tokens; a
    1 ms timer in the group runs once per token, its refused ticks wait (they are not
    dropped: one runs as soon as a token comes), and ``ending_execution`` follows each
    run."""
    import time

    from kairos.callback_groups import CallbackGroup

    class Bucket(CallbackGroup):
        def __init__(self, tokens):
            super().__init__()
            self.tokens, self.ended = tokens, 0

        def can_execute(self, entity):
            return self.tokens > 0

        def beginning_execution(self, entity):
            if self.tokens > 0:
                self.tokens -= 1
                return True
            return False

        def ending_execution(self, entity):
            self.ended += 1

    node = Node("cg_bucket")
    group = Bucket(3)
    ran = []
    node.create_timer(0.001, lambda: ran.append(1), callback_group=group)
    executor = SingleThreadedExecutor()
    executor.add_node(node)

    def spin_for(seconds, until=None):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not (until and until()):
            executor.spin_once(timeout_sec=0.01)

    spin_for(0.3)
    assert (len(ran), group.ended) == (3, 3)
    group.tokens = 2
    spin_for(LIMIT, until=lambda: len(ran) == 5)
    spin_for(0.1)
    assert (len(ran), group.ended) == (5, 5)
    executor.shutdown()


def test_cancel_ends_a_spin_that_loops_over_spin_once(session):
    """Every blocking call has a way out: ``cancel()`` ends ``spin()`` of a custom
    executor and of one with a group of the program's own, as it ends kairos's own."""
    import threading

    from kairos.callback_groups import ReentrantCallbackGroup
    from kairos.executors import Executor

    class Custom(Executor):
        def spin_once(self, timeout_sec=None):
            try:
                handler, _, _ = self.wait_for_ready_callbacks(timeout_sec=timeout_sec)
            except StopIteration:
                pass
            else:
                handler()

    class Own(ReentrantCallbackGroup):
        def can_execute(self, entity):
            return True

    for make, group in ((Custom, None), (SingleThreadedExecutor, Own())):
        node = Node("ce_cancel")
        ran = threading.Event()
        node.create_timer(0.001, ran.set, callback_group=group)
        executor = make()
        executor.add_node(node)
        spinner = threading.Thread(target=executor.spin)
        spinner.start()
        assert ran.wait(LIMIT)
        executor.cancel()
        spinner.join(LIMIT)
        assert not spinner.is_alive(), f"{make.__name__}: spin() returned on cancel"
        executor.shutdown()
        node.destroy_node()

    # A cancel that kairos's own spin took ends that spin only, not a later looping one.
    executor = SingleThreadedExecutor()
    executor.cancel()
    executor.spin_once(timeout_sec=LIMIT)
    node = Node("ce_cancel_later")
    ran = threading.Event()
    node.create_timer(0.001, ran.set, callback_group=Own())
    executor.add_node(node)
    spinner = threading.Thread(target=executor.spin)
    spinner.start()
    try:
        assert ran.wait(LIMIT), "the later spin ran its callbacks"
        assert spinner.is_alive()
    finally:
        executor.cancel()
        spinner.join(LIMIT)
        executor.shutdown()


def test_destroying_an_entity_whose_callback_owner_destroys_it_again_does_not_hang(session):
    """The last reference to an object can be its own bound-method callback: dropping the
    subscription or service then runs the object's ``__del__``, which may destroy that
    entity again (tf2_ros's TransformListener does). That second destroy used to wait for
    the first's lock forever."""
    node = Node("reentrant_destroy")
    destroyed = []

    class Owner:
        def __init__(self):
            self.subscription = node.create_subscription(String, "reentrant", self.heard, 10)
            self.service = node.create_service(Trigger, "reentrant", self.serve)

        def heard(self, message):
            pass

        def serve(self, request, response):
            return response

        def __del__(self):
            node.destroy_subscription(self.subscription)
            node.destroy_service(self.service)
            destroyed.append(True)

    Owner()  # kept alive only by its callbacks
    done = threading.Event()
    thread = threading.Thread(target=lambda: (node.destroy_node(), done.set()), daemon=True)
    thread.start()
    assert done.wait(LIMIT), "destroy_node hung on an entity destroyed again by __del__"
    assert destroyed == [True]


def test_introspection_publishes_each_moment_of_a_call_as_rclpy_does(session):
    from kairos.example_interfaces.srv import AddTwoInts
    from kairos.qos import qos_profile_system_default
    from kairos.service_introspection import ServiceIntrospectionState as State
    from kairos.service_msgs.msg import ServiceEventInfo as Info
    node = Node("e_introspected")
    service = node.create_service(
        AddTwoInts, "e_sum", lambda req, resp: AddTwoInts.Response(sum=req.a + req.b))
    client = node.create_client(AddTwoInts, "e_sum")
    heard = []
    node.create_subscription(AddTwoInts.Event, "e_sum/_service_event", heard.append, 10)
    executor = SingleThreadedExecutor()
    executor.add_node(node)

    def call(a, b, expected):
        heard.clear()
        future = client.call_async(AddTwoInts.Request(a=a, b=b))
        executor.spin_until_future_complete(future, timeout_sec=LIMIT)
        assert future.result().sum == a + b
        deadline = time.monotonic() + LIMIT
        while len(heard) < expected and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.05)
        executor.spin_once(timeout_sec=0)
        return {event.info.event_type: event for event in heard}

    assert call(1, 2, 0) == {}, "off until configured"
    for entity in (service, client):
        entity.configure_introspection(node.get_clock(), qos_profile_system_default,
                                       State.CONTENTS)
    events = call(20, 22, 4)
    assert sorted(events) == [Info.REQUEST_SENT, Info.REQUEST_RECEIVED, Info.RESPONSE_SENT,
                              Info.RESPONSE_RECEIVED]
    assert [(r.a, r.b) for r in events[Info.REQUEST_RECEIVED].request] == [(20, 22)]
    assert [r.sum for r in events[Info.RESPONSE_RECEIVED].response] == [42]
    assert len({bytes(e.info.client_gid) for e in events.values()}) == 1, "one client"
    assert len({e.info.sequence_number for e in events.values()}) == 1, "one call"
    now = node.get_clock().now().nanoseconds
    for event in events.values():
        stamp = event.info.stamp.sec * 10**9 + event.info.stamp.nanosec
        assert 0 < stamp <= now, "stamped by the node's clock"

    service.configure_introspection(node.get_clock(), 10, State.METADATA)
    client.configure_introspection(node.get_clock(), 10, State.OFF)
    events = call(1, 1, 2)
    assert sorted(events) == [Info.REQUEST_RECEIVED, Info.RESPONSE_SENT]
    assert all(len(e.request) == 0 and len(e.response) == 0 for e in events.values())

    with pytest.raises(ValueError, match="ServiceIntrospectionState"):
        service.configure_introspection(node.get_clock(), 10, 7)
    with pytest.raises(TypeError, match="Clock"):
        client.configure_introspection(object(), 10, State.OFF)
