"""The graph API of rclpy's Node: what a node sees of the ROS graph, in this process and,
over Zenoh, in another, and `wait_for_node`, which wakes on graph changes."""

import queue
import subprocess
import sys
import threading
import time

import pytest

from conftest import LIMIT
from kairos.node import Node, NodeNameNonExistentError
from kairos.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from kairos.std_msgs.msg import String
from kairos.topic_endpoint_info import TopicEndpointTypeEnum
from kairos.example_interfaces.srv import AddTwoInts


def test_a_node_sees_the_entities_of_this_process(session):
    node = Node("g_talker", namespace="/g_ns")
    other = Node("g_listener")
    chatter = node.create_publisher(String, "chatter", QoSProfile(
        depth=4, durability=DurabilityPolicy.TRANSIENT_LOCAL))
    heard = other.create_subscription(String, "/g_ns/chatter", lambda m: None, 10)
    other.create_subscription(String, "/g_ns/chatter", lambda m: None, 10)
    add = node.create_service(AddTwoInts, "~/add", lambda req, resp: resp)
    assert (chatter.topic_name, heard.topic_name) == ("/g_ns/chatter", "/g_ns/chatter")
    assert add.service_name == "/g_ns/g_talker/add"
    other.create_client(AddTwoInts, "/g_ns/g_talker/add")

    assert ("g_talker", "/g_ns") in node.get_node_names_and_namespaces()
    assert "/g_ns/g_talker" in other.get_fully_qualified_node_names()
    assert "g_listener" in node.get_node_names()
    topics = dict(node.get_topic_names_and_types())
    assert topics["/g_ns/chatter"] == ["std_msgs/msg/String"]
    services = dict(other.get_service_names_and_types())
    assert services["/g_ns/g_talker/add"] == ["example_interfaces/srv/AddTwoInts"]

    # Names expand against the asking node, as rclpy's count_* do.
    assert node.count_publishers("chatter") == 1
    assert node.count_publishers("/g_ns/chatter") == 1
    assert node.count_subscribers("chatter") == 2
    assert other.count_subscribers("chatter") == 0, "/chatter is another topic"
    assert node.count_services("~/add") == 1
    assert node.count_clients("~/add") == 1

    [info] = other.get_publishers_info_by_topic("/g_ns/chatter")
    assert (info.node_name, info.node_namespace) == ("g_talker", "/g_ns")
    assert info.topic_type == "std_msgs/msg/String"
    assert info.endpoint_type == TopicEndpointTypeEnum.PUBLISHER
    assert info.qos_profile.depth == 4
    assert info.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL
    assert info.qos_profile.reliability == ReliabilityPolicy.RELIABLE
    assert len(node.get_subscriptions_info_by_topic("chatter")) == 2

    # Every node publishes its parameter events and serves its parameters, as in rclpy.
    assert node.get_publisher_names_and_types_by_node("g_talker", "/g_ns") == [
        ("/g_ns/chatter", ["std_msgs/msg/String"]),
        ("/parameter_events", ["rcl_interfaces/msg/ParameterEvent"])]
    services = dict(node.get_service_names_and_types_by_node("g_talker", "/g_ns"))
    assert services["/g_ns/g_talker/add"] == ["example_interfaces/srv/AddTwoInts"]
    assert services["/g_ns/g_talker/set_parameters"] == ["rcl_interfaces/srv/SetParameters"]
    assert node.get_subscriber_names_and_types_by_node("g_talker", "/g_ns") == []
    assert node.get_client_names_and_types_by_node("g_listener", "/") == [
        ("/g_ns/g_talker/add", ["example_interfaces/srv/AddTwoInts"])]
    with pytest.raises(NodeNameNonExistentError):
        node.get_service_names_and_types_by_node("nobody", "/")

    with pytest.raises(TypeError):
        node.count_subscribers(1)
    for bad in ("42", "has space"):
        with pytest.raises(ValueError, match="is invalid"):
            node.count_publishers(bad)
        with pytest.raises(ValueError, match="is invalid"):
            node.get_publishers_info_by_topic(bad)

    extra = node.create_publisher(String, "chatter", 1)
    assert node.count_publishers("chatter") == 2
    assert node.destroy_publisher(extra)
    assert node.count_publishers("chatter") == 1, "a destroyed publisher left the graph"
    with pytest.raises(RuntimeError, match="destroyed"):
        extra.publish(String(data="late"))

    other.destroy_node()
    assert "/g_listener" not in node.get_fully_qualified_node_names()
    assert node.count_subscribers("chatter") == 0
    node.destroy_node()


def test_wait_for_node_wakes_when_the_node_comes_and_times_out_not_early(session):
    watcher = Node("g_watcher")
    made = []
    maker = threading.Timer(0.05, lambda: made.append(Node("g_late", namespace="/g_ns2")))
    maker.start()
    started = time.monotonic()
    assert watcher.wait_for_node("/g_ns2/g_late", LIMIT)
    assert time.monotonic() - started < LIMIT
    maker.join()
    assert watcher.wait_for_node("g_ns2/g_late", 0.0), "a name without '/' is from the root"

    for timeout in (0.0, 0.05):
        started = time.monotonic()
        assert not watcher.wait_for_node("node_does_not_exist", timeout)
        assert time.monotonic() - started >= timeout
    with pytest.raises(ValueError):
        watcher.wait_for_node("/g_ns/9lives", LIMIT)
    watcher.destroy_node()


TALKER = """
import sys, time
import kairos
from kairos.node import Node
from kairos.std_msgs.msg import String
kairos.init()
node = Node("g_remote", namespace="/far")
node.create_publisher(String, "news", 3)
print("up", flush=True)
sys.stdin.readline()
node.destroy_node()
print("down", flush=True)
time.sleep(60)
"""


WATCHER = f"""
import time
import kairos
from kairos.node import Node
kairos.init()
node = Node("g_watcher_far")
assert node.wait_for_node("/far/g_remote", {LIMIT}), "never saw /far/g_remote"
end = time.monotonic() + {LIMIT}
while node.count_publishers("/far/news") != 1 and time.monotonic() < end:
    time.sleep(0.01)
[info] = node.get_publishers_info_by_topic("/far/news")
print(info.node_namespace, info.node_name, info.topic_type, info.qos_profile.depth, flush=True)
while "/far/g_remote" in node.get_fully_qualified_node_names() and time.monotonic() < end:
    time.sleep(0.01)
print("gone" if "/far/g_remote" not in node.get_fully_qualified_node_names() else "still there")
"""


def test_a_node_sees_another_process_and_sees_it_leave(router):
    env = router.env()
    talker = subprocess.Popen([sys.executable, "-c", TALKER], env=env, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    watcher = subprocess.Popen([sys.executable, "-c", WATCHER], env=env, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        lines = queue.Queue()
        threading.Thread(target=lambda: [lines.put(line) for line in watcher.stdout],
                         daemon=True).start()
        assert lines.get(timeout=LIMIT).strip() == "/far g_remote std_msgs/msg/String 3"
        talker.stdin.write("leave\n")
        talker.stdin.flush()
        assert lines.get(timeout=LIMIT).strip() == "gone"
        assert watcher.wait(LIMIT) == 0, watcher.stderr.read()
    finally:
        for process in (talker, watcher):
            process.kill()
            process.wait(10)


def test_an_endpoint_shows_every_policy_it_was_created_with(session):
    from kairos.duration import Duration
    from kairos.qos import LivelinessPolicy

    node = Node("g_policies")
    qos = QoSProfile(depth=3, deadline=Duration(seconds=1, nanoseconds=5),
                     lifespan=Duration(seconds=20), liveliness=LivelinessPolicy.MANUAL_BY_TOPIC,
                     liveliness_lease_duration=Duration(seconds=2))
    node.create_publisher(String, "policies", qos)
    subscription = node.create_subscription(String, "policies", lambda m: None, 1)
    [info] = node.get_publishers_info_by_topic("/policies")
    shown = info.qos_profile
    assert (shown.deadline, shown.lifespan) == (qos.deadline, qos.lifespan)
    assert shown.liveliness == LivelinessPolicy.MANUAL_BY_TOPIC
    assert shown.liveliness_lease_duration == qos.liveliness_lease_duration
    [info] = node.get_subscriptions_info_by_topic("/policies")
    assert info.qos_profile.deadline == Duration(), "a duration not set shows as rclpy's default"

    assert subscription.get_publisher_count() == 1
    second = Node("g_policies_2").create_publisher(String, "/policies", 1)
    assert subscription.get_publisher_count() == 2
    second.destroy()
    assert subscription.get_publisher_count() == 1
    assert node.create_publisher(String, "acked", 1).wait_for_all_acked(Duration(seconds=1))
    with pytest.raises(ValueError, match="greater than or equal to zero"):
        node.create_publisher(String, "policies", -1)
    with pytest.raises(TypeError, match="Expected QoSProfile or int"):
        node.create_subscription(String, "policies", lambda m: None, "reliable")
    node.destroy_node()


def test_qos_overrides_from_parameters_change_an_entity_before_it_exists(tmp_path):
    import kairos
    from kairos.context import Context
    from kairos.qos_overriding_options import InvalidQosOverridesError, QoSOverridingOptions

    params = tmp_path / "qos.yaml"
    params.write_text(
        "/camera:\n  ros__parameters:\n    qos_overrides:\n      /image:\n"
        "        publisher:\n          reliability: best_effort\n          depth: 2\n")
    context = Context()
    kairos.init(args=["prog", "--ros-args", "--params-file", str(params),
                      "-p", "qos_overrides./image.subscription.durability:=transient_local"],
                context=context)
    try:
        node = Node("camera", context=context)
        given = QoSProfile(depth=10)
        publisher = node.create_publisher(
            String, "image", given,
            qos_overriding_options=QoSOverridingOptions.with_default_policies())
        node.create_subscription(
            String, "image", lambda m: None, 10,
            qos_overriding_options=QoSOverridingOptions(
                [kairos.qos.QoSPolicyKind.DURABILITY, kairos.qos.QoSPolicyKind.LIFESPAN]))
        assert given.reliability == ReliabilityPolicy.RELIABLE, "the caller's profile is kept"
        [pub] = node.get_publishers_info_by_topic("/image")
        assert pub.qos_profile.reliability == ReliabilityPolicy.BEST_EFFORT
        assert pub.qos_profile.depth == 2
        [sub] = node.get_subscriptions_info_by_topic("/image")
        assert sub.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL
        overrides = node.get_parameters_by_prefix("qos_overrides")
        assert sorted(overrides) == [
            "/image.publisher.depth", "/image.publisher.history",
            "/image.publisher.reliability", "/image.subscription.durability"], \
            "a subscription has no lifespan to override"
        assert node.describe_parameter("qos_overrides./image.publisher.depth").read_only
        assert publisher.topic_name == "/image"

        bad = Node("camera", namespace="/bad", context=context,
                   parameter_overrides=[kairos.parameter.Parameter(
                       "qos_overrides./bad/image.publisher.reliability", value="sometimes")])
        with pytest.raises(InvalidQosOverridesError, match="sometimes.*best_effort"):
            bad.create_publisher(String, "image", 10,
                                 qos_overriding_options=QoSOverridingOptions.with_default_policies())
        assert bad.get_publishers_info_by_topic("/bad/image") == [], "nothing was created"

        refused = QoSOverridingOptions.with_default_policies(
            callback=lambda qos: kairos.rcl_interfaces.msg.SetParametersResult(
                successful=qos.depth <= 5, reason="depth over 5"))
        with pytest.raises(InvalidQosOverridesError, match="depth over 5"):
            node.create_publisher(String, "image2", 10, qos_overriding_options=refused)
    finally:
        kairos.shutdown(context=context)
