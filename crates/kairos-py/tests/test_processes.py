"""Python nodes across processes on Zenoh (rmw_zenoh's wire format): with a Rust kairos
process, and with zenoh-ros2-sdk, an rmw_zenoh implementation in Python no one here wrote.
Every process talks to its own router on a loopback port; every loop is bounded."""

import json
import subprocess
import sys

import pytest

from conftest import LIMIT, kairos_bin, python, run

LISTENER = """
import queue, sys, threading
import kairos
from kairos.node import Node
from kairos.std_msgs.msg import String
kairos.init()
node = Node("py_listener")
heard = queue.Queue()
node.create_subscription(String, sys.argv[1], heard.put, 10)
executor = kairos.SingleThreadedExecutor()
executor.add_node(node)
threading.Thread(target=executor.spin, daemon=True).start()
print("ready", flush=True)
for _ in range(int(sys.argv[2])):
    print(heard.get(timeout=45).data, flush=True)
print(executor.shutdown(timeout_sec=1.0), flush=True)
"""

TALKER = """
import sys, time
import kairos
from kairos.node import Node
from kairos.std_msgs.msg import String
kairos.init()
node = Node("py_talker")
publisher = node.create_publisher(String, sys.argv[1], 10)
for i in range(800):  # at most 40 s; the test stops it once heard
    publisher.publish(String(data=f"py {i}"))
    time.sleep(0.05)
"""

SDK_PUBLISHER = """
import os, time
from zenoh_ros2_sdk import ROS2Publisher, get_topic_names_and_types
PORT = int(os.environ["ROUTER_PORT"])
STRING_DEF = "string data\\n"
STRING_HASH = "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18"
pub = ROS2Publisher("/sdk_chatter", "std_msgs/msg/String", msg_definition=STRING_DEF,
                    type_hash=STRING_HASH, node_name="sdk_talker", router_port=PORT)
end = time.monotonic() + 30
while time.monotonic() < end and not any(
        n == "/sdk_chatter" for n, _ in get_topic_names_and_types(router_port=PORT)):
    time.sleep(0.05)
time.sleep(0.5)
for i in range(3):
    pub.publish(data="from the sdk %d" % i)
    time.sleep(0.05)
time.sleep(0.5)
pub.close()
"""


def start_listener(router, topic, count):
    listener = subprocess.Popen([sys.executable, "-c", LISTENER, topic, str(count)],
                                env=router.env(), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
    first = listener.stdout.readline()
    if first.strip() != "ready":
        listener.kill()
        pytest.fail(f"the Python listener did not start: {first!r} {listener.stderr.read()}")
    return listener


def finish(process, timeout=LIMIT):
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        pytest.fail(f"process did not finish within {timeout} s\nstdout:\n{out}\nstderr:\n{err}")
    return out, err


def test_a_python_listener_hears_a_rust_process(router):
    listener = start_listener(router, "/x_chatter", 3)
    published = run([kairos_bin(), "topic", "pub", "/x_chatter", "std_msgs/msg/String",
                     "{data: from rust}", "--times", "3", "--rate", "20", "--wait-matching", "30"],
                    router.env())
    assert published.returncode == 0, published.stderr
    out, err = finish(listener)
    assert listener.returncode == 0, err
    assert out.splitlines()[:3] == ["from rust"] * 3, out


def test_a_rust_process_hears_a_python_talker(router):
    echo = subprocess.Popen([kairos_bin(), "topic", "echo", "/py_chatter", "std_msgs/msg/String",
                             "--count", "3", "--json", "--timeout", "45"], env=router.env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    talker = subprocess.Popen([sys.executable, "-c", TALKER, "/py_chatter"], env=router.env(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = finish(echo)
    finally:
        talker.kill()
        talker.communicate()
    assert echo.returncode == 0, err
    numbers = [int(json.loads(line)["data"].split()[1]) for line in out.splitlines()]
    assert len(numbers) == 3 and numbers == list(range(numbers[0], numbers[0] + 3)), out


def test_a_python_client_calls_a_rust_service_process(router):
    server = subprocess.Popen([kairos_bin(), "service", "serve-add-two-ints", "/x_add",
                               "--count", "1"], env=router.env(), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        called = python("""
import kairos
from kairos.node import Node
from kairos.example_interfaces.srv import AddTwoInts
kairos.init()
node = Node("py_client")
client = node.create_client(AddTwoInts, "/x_add")
assert client.wait_for_service(timeout_sec=30), "no /x_add within 30 s"
print(client.call(AddTwoInts.Request(a=2, b=40), timeout_sec=30).sum)
""", router.env())
        assert called.returncode == 0, called.stderr
        assert called.stdout.strip() == "42"
    finally:
        server.kill()
        server.communicate()


def test_a_python_subscriber_hears_the_zenoh_ros2_sdk_publisher(router):
    found = subprocess.run([sys.executable, "-c", "import zenoh_ros2_sdk"], capture_output=True)
    assert found.returncode == 0, ("the Python package zenoh-ros2-sdk is required: "
                                   "pip install zenoh-ros2-sdk==0.1.8 (scripts/test does this)")
    listener = start_listener(router, "/sdk_chatter", 3)
    published = python(SDK_PUBLISHER, router.env())
    assert published.returncode == 0, published.stderr
    out, err = finish(listener)
    assert listener.returncode == 0, err
    assert out.splitlines()[:3] == [f"from the sdk {i}" for i in range(3)], out
