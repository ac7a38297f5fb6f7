"""Topics and services between Python nodes, and between Python and Rust nodes, in one
process."""

import queue

import pytest

import kairos
from kairos._kairos import RustEchoNode
from kairos.example_interfaces.srv import AddTwoInts
from kairos.executors import MultiThreadedExecutor, SingleThreadedExecutor
from kairos.node import Node
from kairos.std_msgs.msg import String

from conftest import LIMIT, spin_in_thread


class Talker(Node):
    def __init__(self, topic, count):
        super().__init__("talker")
        self.publisher = self.create_publisher(String, topic, 10)
        self.i = 0
        self.count = count
        self.timer = self.create_timer(0.005, self.tick)

    def tick(self):
        if self.i < self.count:
            self.publisher.publish(String(data=f"hello {self.i}"))
            self.i += 1


class Listener(Node):
    def __init__(self, topic):
        super().__init__("listener")
        self.heard = queue.Queue()
        self.create_subscription(String, topic, lambda m: self.heard.put(m), 10)


def talk_and_listen(executor, topic):
    """Spins a talker of five messages and a listener on `executor`; checks every one is
    heard in order, then shuts the executor down."""
    listener = Listener(topic)
    talker = Talker(topic, 5)
    executor.add_node(listener)
    executor.add_node(talker)
    spin_in_thread(executor)
    heard = [listener.heard.get(timeout=LIMIT) for _ in range(5)]
    assert heard == [String(data=f"hello {i}") for i in range(5)]
    assert executor.shutdown(timeout_sec=30.0)


def test_talker_and_listener_in_one_process(session):
    talk_and_listen(SingleThreadedExecutor(), "/test/chatter")


def test_an_idle_spinning_executor_delivers_and_keeps_its_timers(session):
    executor = MultiThreadedExecutor(num_threads=2)
    assert executor.idle_spin_sec == 0.0
    executor.idle_spin_sec = 0.5
    assert executor.idle_spin_sec == 0.5
    for wrong in (1.5, -0.1):
        with pytest.raises(ValueError, match="0 to 1 s|>= 0"):
            executor.idle_spin_sec = wrong
    assert executor.idle_spin_sec == 0.5
    # The talker's 5 ms timer fires through the polling: five messages, well within LIMIT.
    talk_and_listen(executor, "/test/spun")


def test_python_and_rust_nodes_exchange_messages_and_calls_in_one_process(session):
    rust = RustEchoNode("rust_echo", "/test/to_rust", "/test/from_rust", "/test/rust_add")
    try:
        node = Node("python_side")
        heard = queue.Queue()
        node.create_subscription(String, "/test/from_rust", heard.put, 10)
        publisher = node.create_publisher(String, "/test/to_rust", 10)
        client = node.create_client(AddTwoInts, "/test/rust_add")
        executor = MultiThreadedExecutor(num_threads=2)
        executor.add_node(node)
        spin_in_thread(executor)
        assert client.wait_for_service(timeout_sec=LIMIT)
        # The Rust node's subscription is in this process: publish returns its count.
        assert publisher.publish(String(data="from python")) == 1
        assert heard.get(timeout=LIMIT).data == "rust heard: from python"
        response = client.call(AddTwoInts.Request(a=40, b=2), timeout_sec=LIMIT)
        assert response.sum == 42
        executor.shutdown()
    finally:
        rust.stop()


def test_spin_until_future_complete_at_top_level(session):
    rust = RustEchoNode("rust_adder", "/test/unused_in", "/test/unused_out", "/test/rust_add2")
    try:
        node = Node("future_spinner")
        client = node.create_client(AddTwoInts, "/test/rust_add2")
        assert client.wait_for_service(timeout_sec=LIMIT)
        future = client.call_async(AddTwoInts.Request(a=1, b=2))
        kairos.spin_until_future_complete(node, future, timeout_sec=LIMIT)
        assert future.done() and future.result().sum == 3
    finally:
        rust.stop()


def test_a_wrong_message_raises_type_error_not_a_panic(session):
    node = Node("typed")
    publisher = node.create_publisher(String, "/test/typed", 10)
    try:
        publisher.publish(String(data=3))
    except TypeError as err:
        assert "std_msgs" in str(err) or "String" in str(err) or "string" in str(err)
    else:
        raise AssertionError("publishing an int as String.data did not raise TypeError")


def test_a_callback_exception_ends_spin_and_is_raised(session):
    node = Node("raiser")

    def boom():
        raise ValueError("boom from a timer")

    node.create_timer(0.001, boom)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    try:
        executor.spin()
    except ValueError as err:
        assert "boom from a timer" in str(err)
    else:
        raise AssertionError("spin returned without raising the callback's exception")


def test_a_raw_subscription_hands_the_callback_the_serialized_message(session):
    from kairos.serialization import deserialize_message, serialize_message
    node = Node("raw_listener")
    heard = queue.Queue()
    node.create_subscription(String, "/test/raw", heard.put, 10, raw=True)
    publisher = node.create_publisher(String, "/test/raw", 10)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    spin_in_thread(executor)
    publisher.publish(String(data="bytes please"))
    data = heard.get(timeout=LIMIT)
    assert isinstance(data, bytes)
    assert data == serialize_message(String(data="bytes please"))
    assert deserialize_message(data, String) == String(data="bytes please")
    assert executor.shutdown(timeout_sec=30.0)


def test_an_unknown_keyword_argument_is_a_type_error_as_in_rclpy(session):
    node = Node("strict")
    with pytest.raises(TypeError, match="rwa"):
        node.create_subscription(String, "/test/strict", print, 10, rwa=True)
    with pytest.raises(TypeError, match="qos"):
        node.create_publisher(String, "/test/strict", 10, qos=5)
    with pytest.raises(TypeError, match="callbackgroup"):
        node.create_client(AddTwoInts, "/test/strict", callbackgroup=None)
