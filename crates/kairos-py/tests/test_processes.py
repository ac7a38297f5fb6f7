"""Python nodes across processes on Zenoh (rmw_zenoh's wire format): with a Rust kairos
process, and with zenoh-ros2-sdk, an rmw_zenoh implementation in Python no one here wrote.
Every process talks to its own router on a loopback port; every loop is bounded."""

import json
import subprocess
import sys
import threading

import pytest

from conftest import LIMIT, ROOT, kairos_bin, python, run

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

# What the zenoh-ros2-sdk publisher scripts share: wait (bounded) until the kairos
# listener's subscription exists and zenoh has matched it, then until it has left with
# its messages. Subscribers are counted because a topic is listed as soon as the SDK's
# own publisher exists.
SDK_WAITS = """
import time
from zenoh_ros2_sdk import get_topic_info
def bounded_wait(pred, seconds=30):
    end = time.monotonic() + seconds
    while not pred():
        if time.monotonic() > end:
            return False
        time.sleep(0.05)
    return True
def subscribers(topic):
    info = get_topic_info(topic, router_port=PORT)
    return 0 if info is None else info.subscriber_count
def wait_for_the_listener(pub, topic):
    assert bounded_wait(lambda: subscribers(topic) > 0), "the kairos listener never appeared"
    assert bounded_wait(lambda: pub.pub.matching_status.matching), "zenoh never matched the listener"
def wait_for_the_listener_to_leave(topic):
    assert bounded_wait(lambda: subscribers(topic) == 0), "the listener did not take its messages and leave"
"""

SDK_PUBLISHER = """
import os, time
from zenoh_ros2_sdk import ROS2Publisher
PORT = int(os.environ["ROUTER_PORT"])
""" + SDK_WAITS + """
STRING_DEF = "string data\\n"
STRING_HASH = "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18"
pub = ROS2Publisher("/sdk_chatter", "std_msgs/msg/String", msg_definition=STRING_DEF,
                    type_hash=STRING_HASH, node_name="sdk_talker", router_port=PORT)
wait_for_the_listener(pub, "/sdk_chatter")
for i in range(3):
    pub.publish(data="from the sdk %d" % i)
wait_for_the_listener_to_leave("/sdk_chatter")
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
    """Waits for `process` and returns the rest of its stdout and stderr.

    Reads through the process's own file objects: a `readline` before may have taken
    further lines into their buffer, which `communicate` (reading the pipes underneath
    when both are piped) would lose."""
    if process.stdin:
        process.stdin.close()
    output = {}
    readers = [threading.Thread(target=lambda name=name, pipe=pipe:
                                output.update({name: pipe.read() if pipe else ""}))
               for name, pipe in (("out", process.stdout), ("err", process.stderr))]
    for reader in readers:
        reader.start()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        timed_out = True
    else:
        timed_out = False
    for reader in readers:
        reader.join()
    out, err = output["out"], output["err"]
    if timed_out:
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


# -- interfaces beyond std_msgs: geometry_msgs/Twist and sensor_msgs/Imu ------------------

TYPED_LISTENER = """
import importlib, json, queue, sys, threading
import kairos
from kairos.node import Node
topic, type_name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
package, kind, name = type_name.split("/")
cls = getattr(importlib.import_module(f"kairos.{package}.{kind}"), name)
def plain(m):
    if hasattr(m, "get_fields_and_field_types"):
        return {n: plain(getattr(m, n)) for n in m.get_fields_and_field_types()}
    if hasattr(m, "tolist"):  # numpy arrays and array.array, as rclpy makes them
        return m.tolist()
    return [plain(x) for x in m] if isinstance(m, list) else m
kairos.init()
node = Node("py_typed_listener")
heard = queue.Queue()
node.create_subscription(cls, topic, heard.put, 10)
executor = kairos.SingleThreadedExecutor()
executor.add_node(node)
threading.Thread(target=executor.spin, daemon=True).start()
print("ready", flush=True)
for _ in range(count):
    message = heard.get(timeout=45)
    assert type(message) is cls, type(message)
    print(json.dumps(plain(message)), flush=True)
print(executor.shutdown(timeout_sec=1.0), flush=True)
"""

TYPED_TALKER = """
import time
import kairos
from kairos.node import Node
from kairos.builtin_interfaces.msg import Time
from kairos.geometry_msgs.msg import Quaternion, Twist, Vector3
from kairos.sensor_msgs.msg import Imu
from kairos.std_msgs.msg import Header
kairos.init()
node = Node("py_typed_talker")
twist = node.create_publisher(Twist, "/py_twist", 10)
imu = node.create_publisher(Imu, "/py_imu", 10)
for i in range(800):  # at most 40 s; the test stops it once heard
    twist.publish(Twist(linear=Vector3(x=1.25), angular=Vector3(z=-0.75)))
    imu.publish(Imu(header=Header(stamp=Time(sec=100, nanosec=42), frame_id="py_imu_link"),
                    orientation=Quaternion(w=1.0), orientation_covariance=[0.5] * 9,
                    linear_acceleration=Vector3(z=9.75)))
    time.sleep(0.05)
"""


def start_typed_listener(router, topic, type_name, count):
    listener = subprocess.Popen([sys.executable, "-c", TYPED_LISTENER, topic, type_name,
                                 str(count)], env=router.env(), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
    first = listener.stdout.readline()
    if first.strip() != "ready":
        listener.kill()
        pytest.fail(f"the Python listener did not start: {first!r} {listener.stderr.read()}")
    return listener


def test_a_python_listener_hears_twist_and_imu_from_kairos_topic_pub(router):
    for topic, type_name, value, check in [
        ("/x_twist", "geometry_msgs/msg/Twist", "{linear: {x: 1.5}, angular: {z: -0.5}}",
         lambda m: (m["linear"]["x"], m["angular"]["z"], m["linear"]["y"]) == (1.5, -0.5, 0.0)),
        ("/x_imu", "sensor_msgs/msg/Imu",
         "{header: {stamp: {sec: 7, nanosec: 9}, frame_id: imu_link}, "
         "orientation: {w: 1.0}, linear_acceleration: {z: 9.75}}",
         lambda m: (m["header"], m["orientation"]["w"], m["linear_acceleration"]["z"],
                    m["orientation_covariance"])
         == ({"stamp": {"sec": 7, "nanosec": 9}, "frame_id": "imu_link"}, 1.0, 9.75,
             [0.0] * 9)),
    ]:
        listener = start_typed_listener(router, topic, type_name, 2)
        published = run([kairos_bin(), "topic", "pub", topic, type_name, value, "--times", "2",
                         "--rate", "20", "--wait-matching", "30"], router.env())
        assert published.returncode == 0, published.stderr
        out, err = finish(listener)
        assert listener.returncode == 0, err
        heard = [json.loads(line) for line in out.splitlines()[:2]]
        assert len(heard) == 2 and all(check(m) for m in heard), out


def test_kairos_topic_echo_hears_twist_and_imu_from_a_python_talker(router):
    echoes = {
        topic: subprocess.Popen([kairos_bin(), "topic", "echo", topic, type_name, "--count",
                                 "2", "--json", "--timeout", "45"], env=router.env(),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for topic, type_name in [("/py_twist", "geometry_msgs/msg/Twist"),
                                 ("/py_imu", "sensor_msgs/msg/Imu")]}
    talker = subprocess.Popen([sys.executable, "-c", TYPED_TALKER], env=router.env(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        outputs = {topic: finish(echo) for topic, echo in echoes.items()}
    finally:
        talker.kill()
        _, talker_err = talker.communicate()
    for topic, echo in echoes.items():
        assert echo.returncode == 0, (outputs[topic][1], talker_err)
    twists = [json.loads(line) for line in outputs["/py_twist"][0].splitlines()]
    imus = [json.loads(line) for line in outputs["/py_imu"][0].splitlines()]
    assert len(twists) == 2 and all(
        t == {"linear": {"x": 1.25, "y": 0.0, "z": 0.0},
              "angular": {"x": 0.0, "y": 0.0, "z": -0.75}} for t in twists), twists
    assert len(imus) == 2 and all(
        m["header"] == {"stamp": {"sec": 100, "nanosec": 42}, "frame_id": "py_imu_link"}
        and m["orientation_covariance"] == [0.5] * 9 and m["linear_acceleration"]["z"] == 9.75
        for m in imus), imus


SDK_TWIST_PUBLISHER = """
import json, os, time
from zenoh_ros2_sdk import ROS2Publisher
from zenoh_ros2_sdk.session import ZenohSession
from zenoh_ros2_sdk.utils import get_type_hash
PORT = int(os.environ["ROUTER_PORT"])
DEFS = json.loads(os.environ["MSG_DEFS"])
DEPS = dict(DEFS)
""" + SDK_WAITS + """
session = ZenohSession.get_instance("127.0.0.1", PORT)
for name, text in DEFS:
    session.register_message_type(text, name)
T = session.store.types
TWIST = "geometry_msgs/msg/Twist"
pub = ROS2Publisher("/sdk_twist", TWIST, msg_definition=DEPS[TWIST],
                    type_hash=get_type_hash(TWIST, DEPS[TWIST], DEPS),
                    node_name="sdk_twist_talker", router_port=PORT)
wait_for_the_listener(pub, "/sdk_twist")
V3 = T["geometry_msgs/msg/Vector3"]
for i in range(3):
    pub.publish(linear=V3(x=0.5 * i, y=0.0, z=0.0), angular=V3(x=0.0, y=0.0, z=-1.0))
wait_for_the_listener_to_leave("/sdk_twist")
pub.close()
"""


def test_a_python_subscriber_hears_twist_from_the_zenoh_ros2_sdk(router):
    found = subprocess.run([sys.executable, "-c", "import zenoh_ros2_sdk"], capture_output=True)
    assert found.returncode == 0, ("the Python package zenoh-ros2-sdk is required: "
                                   "pip install zenoh-ros2-sdk==0.1.8 (scripts/test does this)")
    # The definitions the SDK needs, dependencies first: the files kairos-msgs is made from.
    interfaces = ROOT / "crates" / "kairos-msgs" / "interfaces"
    defs = [(t, (interfaces / f"{t}.msg").read_text())
            for t in ("geometry_msgs/msg/Vector3", "geometry_msgs/msg/Twist")]
    listener = start_typed_listener(router, "/sdk_twist", "geometry_msgs/msg/Twist", 3)
    published = python(SDK_TWIST_PUBLISHER, router.env(MSG_DEFS=json.dumps(defs)))
    assert published.returncode == 0, published.stderr
    out, err = finish(listener)
    assert listener.returncode == 0, err
    heard = [json.loads(line) for line in out.splitlines()[:3]]
    assert heard == [{"linear": {"x": 0.5 * i, "y": 0.0, "z": 0.0},
                      "angular": {"x": 0.0, "y": 0.0, "z": -1.0}} for i in range(3)], out


PARAM_NODE = """
import sys
import kairos
from kairos.node import Node
from kairos.rcl_interfaces.msg import IntegerRange, ParameterDescriptor
kairos.init()
node = Node("py_params", namespace="/arm")
node.declare_parameter("rate", 10, ParameterDescriptor(
    integer_range=[IntegerRange(from_value=1, to_value=100, step=1)]))
node.declare_parameter("frame", "base_link")
print("ready", flush=True)
executor = kairos.SingleThreadedExecutor()
executor.add_node(node)
for _ in range(600):  # at most 60 s
    executor.spin_once(timeout_sec=0.1)
    if node.get_parameter("rate").value == 42:
        print("rate 42", flush=True)
        break
"""


def test_kairos_param_reads_and_sets_a_python_nodes_parameters_across_processes(router):
    """The Rust CLI, in another process, through the router: list, get, a set the
    descriptor refuses (out of range) and one it accepts, which the node sees."""
    node = subprocess.Popen([sys.executable, "-c", PARAM_NODE], env=router.env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert node.stdout.readline().strip() == "ready"

        def param(*args):
            return subprocess.run([kairos_bin(), "param", *args, "--timeout", "30"],
                                  env=router.env(), capture_output=True, text=True, timeout=120)

        listed = param("list", "/arm/py_params")
        assert listed.returncode == 0, listed.stderr
        assert {"rate", "frame", "use_sim_time"} <= set(listed.stdout.split()), listed.stdout
        got = param("get", "/arm/py_params", "frame")
        assert got.returncode == 0 and "base_link" in got.stdout, got.stdout + got.stderr
        refused = param("set", "/arm/py_params", "rate", "1000")
        assert refused.returncode != 0 and "out of range" in refused.stdout + refused.stderr, \
            refused.stdout + refused.stderr
        accepted = param("set", "/arm/py_params", "rate", "42")
        assert accepted.returncode == 0, accepted.stdout + accepted.stderr
        out, err = finish(node, timeout=60)
        assert "rate 42" in out, out + err
    finally:
        node.kill()
        node.communicate()


# -- the type description service and incompatible types, across processes -----------------

DESCRIBED_NODE = """
import sys
import kairos
from kairos.node import Node
from kairos.geometry_msgs.msg import Twist
kairos.init()
node = Node("py_described", namespace="/arm")
node.create_publisher(Twist, "/td_cmd", 10)
print(node.get_parameter("start_type_description_service").value, flush=True)
executor = kairos.SingleThreadedExecutor()
executor.add_node(node)
from kairos.task import Future
executor.spin_until_future_complete(Future(), timeout_sec=60)
"""

DESCRIPTION_CLIENT = """
import kairos
from kairos.node import Node
from kairos.type_description_interfaces.srv import GetTypeDescription
kairos.init()
node = Node("py_asker")
client = node.create_client(GetTypeDescription, "/arm/py_described/get_type_description")
assert client.wait_for_service(timeout_sec=30), "no /arm/py_described/get_type_description"
infos = []
for _ in range(300):
    infos = node.get_publishers_info_by_topic("/td_cmd")
    if infos:
        break
    kairos.spin_once(node, timeout_sec=0.1)
assert infos, "the described node's publisher never appeared"
for type_hash in (str(infos[0].topic_type_hash), "RIHS01_" + "0" * 64):
    request = GetTypeDescription.Request(type_name="geometry_msgs/msg/Twist",
                                         type_hash=type_hash, include_type_sources=True)
    response = client.call(request, timeout_sec=30)
    main = response.type_description.type_description
    print(response.successful, main.type_name, [f.name for f in main.fields],
          sorted(t.type_name for t in response.type_description.referenced_type_descriptions),
          repr(response.failure_reason), flush=True)
"""


def test_a_python_node_serves_the_types_it_carries_to_another_process(router):
    """rclpy's start_type_description_service: on by default; a client in another process
    gets the description of the node's publisher type by name and hash, and a refusal with
    a reason for a hash that is not its type's."""
    node = subprocess.Popen([sys.executable, "-c", DESCRIBED_NODE], env=router.env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert node.stdout.readline().strip() == "True", node.stderr.read()
        asked = python(DESCRIPTION_CLIENT, router.env())
        assert asked.returncode == 0, asked.stderr
        lines = asked.stdout.splitlines()
        assert lines[0] == ("True geometry_msgs/msg/Twist ['linear', 'angular'] "
                            "['geometry_msgs/msg/Vector3'] ''"), lines
        assert lines[1].startswith("False ") and "not RIHS01_000" in lines[1], lines
    finally:
        node.kill()
        node.communicate()


INCOMPATIBLE_TYPE_LISTENER = """
import queue, threading
import kairos
from kairos.node import Node
from kairos.event_handler import SubscriptionEventCallbacks
from kairos.std_msgs.msg import String
kairos.init()
node = Node("py_typed")
events = queue.Queue()
subscription = node.create_subscription(
    String, "/py_mixed", lambda m: print("heard", m.data, flush=True), 10,
    event_callbacks=SubscriptionEventCallbacks(incompatible_type=events.put,
                                               matched=lambda i: print("matched", flush=True)))
executor = kairos.SingleThreadedExecutor()
executor.add_node(node)
threading.Thread(target=executor.spin, daemon=True).start()
print("ready", flush=True)
info = events.get(timeout=45)
print(type(info).__name__, info.total_count, info.total_count_change, flush=True)
"""

SDK_INT32_PUBLISHER = """
import os, sys, time
from zenoh_ros2_sdk import ROS2Publisher
PORT = int(os.environ["ROUTER_PORT"])
INT32_HASH = "RIHS01_b6578ded3c58c626cfe8d1a6fb6e04f706f97e9f03d2727c9ff4e74b1cef0deb"
pub = ROS2Publisher("/py_mixed", "std_msgs/msg/Int32", msg_definition="int32 data\\n",
                    type_hash=INT32_HASH, node_name="sdk_int32_talker", router_port=PORT)
print("declared", flush=True)
sys.stdin.readline()  # until the test is done (bounded by its timeout)
pub.close()
"""


def test_a_publisher_of_another_type_from_the_zenoh_ros2_sdk_is_an_incompatible_type_event(
        router):
    """An rmw_zenoh publisher no one here wrote, of std_msgs/Int32 on a topic a kairos
    subscription takes as std_msgs/String: the subscription gets rclpy's incompatible-type
    event, and neither matches nor hears it."""
    listener = subprocess.Popen([sys.executable, "-c", INCOMPATIBLE_TYPE_LISTENER],
                                env=router.env(), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
    sdk = subprocess.Popen([sys.executable, "-c", SDK_INT32_PUBLISHER], env=router.env(),
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    try:
        assert listener.stdout.readline().strip() == "ready", listener.stderr.read()
        out, err = finish(listener)
        assert listener.returncode == 0, err
        assert out.splitlines() == ["IncompatibleTypeInfo 1 1"], out + err
    finally:
        try:
            sdk.communicate(input="\n", timeout=LIMIT)
        except subprocess.TimeoutExpired:
            sdk.kill()
            sdk.communicate()
