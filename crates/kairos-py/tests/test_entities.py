"""rclpy's lifetime shapes of entities and futures: `with` destroys an entity, its
`handle` is invalid once destroyed, a future made with an executor schedules its done
callbacks there, and an executor's tasks run in the order they were made."""

import pytest

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
