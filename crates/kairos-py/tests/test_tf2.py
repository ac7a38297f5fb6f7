"""tf2 for Python (tf2_py, tf2_ros, tf2_geometry_msgs) on kairos's Rust buffer: tf2's
answers and exception classes, waits that never stall (``WouldDeadlock`` at once where the
transform could never come, an answer as soon as it comes), and transforms across
processes with kairos's Rust tools. Every wait is bounded."""

import math
import subprocess
import sys
import threading

import pytest

import kairos
from kairos.callback_groups import ReentrantCallbackGroup
from kairos.duration import Duration
from kairos.executors import MultiThreadedExecutor, SingleThreadedExecutor
from kairos.geometry_msgs.msg import (
    PointStamped,
    PoseWithCovarianceStamped,
    Quaternion,
    TransformStamped,
)
from kairos.node import Node
from kairos.time import Time
from kairos.tf2_ros import (
    Buffer,
    ConnectivityException,
    ExtrapolationException,
    InvalidArgumentException,
    LookupException,
    StaticTransformBroadcaster,
    TransformBroadcaster,
    TransformException,
    TransformListener,
)

from conftest import LIMIT, kairos_bin, run, spin_in_thread, wait_until

SEC = 1_000_000_000


def transform(parent, child, seconds, x=0.0, rotation=(0.0, 0.0, 0.0, 1.0)):
    t = TransformStamped()
    t.header.frame_id = parent
    t.header.stamp = Time(nanoseconds=int(seconds * SEC)).to_msg()
    t.child_frame_id = child
    t.transform.translation.x = x
    t.transform.rotation.x, t.transform.rotation.y, t.transform.rotation.z, \
        t.transform.rotation.w = rotation
    return t


def test_lookups_interpolate_and_each_failure_raises_tf2s_class_with_the_facts():
    buffer = Buffer()
    buffer.set_transform(transform("odom", "base_link", 1.0, x=1.0), "test")
    buffer.set_transform(transform("odom", "base_link", 2.0, x=2.0), "test")
    buffer.set_transform_static(transform("base_link", "laser", 0.0, x=0.5), "test")

    found = buffer.lookup_transform("odom", "laser", Time(nanoseconds=int(1.5 * SEC)))
    assert math.isclose(found.transform.translation.x, 2.0)
    assert (found.header.frame_id, found.child_frame_id) == ("odom", "laser")
    assert (found.header.stamp.sec, found.header.stamp.nanosec) == (1, 500_000_000)
    # Time() is the latest common time.
    assert buffer.lookup_transform("odom", "laser", Time()).header.stamp.sec == 2

    with pytest.raises(LookupException) as unknown:
        buffer.lookup_transform("odom", "camera", Time())
    assert "camera" in str(unknown.value) and "base_link" in str(unknown.value)
    with pytest.raises(ExtrapolationException) as past:
        buffer.lookup_transform("odom", "laser", Time(nanoseconds=SEC // 2))
    assert "Lookup would require extrapolation into the past" in str(past.value)
    with pytest.raises(ExtrapolationException) as future:
        buffer.lookup_transform("odom", "laser", Time(nanoseconds=3 * SEC))
    assert "Lookup would require extrapolation into the future" in str(future.value)
    buffer.set_transform(transform("map", "other", 1.0), "test")
    with pytest.raises(ConnectivityException):
        buffer.lookup_transform("odom", "other", Time())
    with pytest.raises(InvalidArgumentException):
        buffer.set_transform(transform("odom", "bad", 1.0, x=float("nan")), "test")
    assert all(issubclass(c, TransformException) for c in (
        LookupException, ConnectivityException, ExtrapolationException,
        InvalidArgumentException))
    assert buffer.can_transform("odom", "laser", Time(nanoseconds=int(1.5 * SEC)))
    ok, why = buffer.can_transform("odom", "laser", Time(nanoseconds=3 * SEC),
                                   return_debug_tuple=True)
    assert not ok and "into the future" in why
    assert buffer.get_latest_common_time("odom", "laser") == Time(nanoseconds=2 * SEC)
    yaml = buffer.all_frames_as_yaml()
    assert "base_link: \n  parent: 'odom'" in yaml and "laser: \n  parent: 'base_link'" in yaml


def test_a_geometry_msgs_point_and_covariance_are_transformed_through_the_buffer():
    import kairos.tf2_geometry_msgs as tf2_geometry_msgs

    buffer = Buffer()
    # b in a: 1 m along x, turned half a turn about x.
    buffer.set_transform(transform("a", "b", 2.0, x=1.0, rotation=(1.0, 0.0, 0.0, 0.0)), "test")
    point = PointStamped()
    point.header.frame_id, point.header.stamp = "a", Time(nanoseconds=2 * SEC).to_msg()
    point.point.x, point.point.y, point.point.z = 1.0, 2.0, 3.0
    out = buffer.transform(point, "b", timeout=Duration(seconds=1))
    assert (out.header.frame_id, out.point.x, out.point.y, out.point.z) == ("b", 0, -2, -3)

    pose = PoseWithCovarianceStamped()
    pose.pose.covariance = [float(i % 6 + 1) for i in range(36)]
    pose.pose.pose.orientation = Quaternion(x=1.0, y=0.0, z=0.0, w=0.0)
    moved = tf2_geometry_msgs.do_transform_pose_with_covariance_stamped(
        pose, transform("a", "b", 0.0, rotation=(1.0, 0.0, 0.0, 0.0)))
    o = moved.pose.pose.orientation
    assert (o.x, o.y, o.z, o.w) == (0, 0, 0, 1)
    signs = [1, -1, -1, 1, -1, -1]
    assert list(moved.pose.covariance) == [
        signs[i] * signs[j] * float(j + 1) for i in range(6) for j in range(6)]


def test_a_programs_own_type_is_stamped_converted_and_transformed_as_tf2_kdl_does_it():
    """tf2_kdl's way with a type that has no header (a ``PyKDL.Vector``): ``Stamped`` gives
    it one, and the type's registered conversions and transform are used."""
    from kairos.geometry_msgs.msg import PointStamped as Point
    from kairos.tf2_ros import ConvertRegistration, Stamped, TransformRegistration, convert

    class Vec:
        __slots__ = ("xyz", "header")

        def __init__(self, x, y, z):
            self.xyz = (x, y, z)

    def to_msg(v):
        msg = Point()
        msg.header = v.header
        msg.point.x, msg.point.y, msg.point.z = v.xyz
        return msg

    def from_msg(msg):
        return Stamped(Vec(msg.point.x, msg.point.y, msg.point.z), msg.header.stamp,
                       msg.header.frame_id)

    def moved(v, t):
        d = t.transform.translation
        out = Vec(v.xyz[0] + d.x, v.xyz[1] + d.y, v.xyz[2] + d.z)
        out.header = t.header
        return out

    ConvertRegistration().add_to_msg(Vec, to_msg)
    ConvertRegistration().add_from_msg(Vec, from_msg)
    TransformRegistration().add(Vec, moved)

    p = Stamped(Vec(1.0, 2.0, 3.0), Time(nanoseconds=2 * SEC).to_msg(), "a")
    assert (p.header.frame_id, p.header.stamp.sec) == ("a", 2)
    msg = convert(p, Point)
    back = convert(msg, Vec)
    assert back.xyz == (1.0, 2.0, 3.0) and back.header == p.header
    buffer = Buffer()
    buffer.set_transform(transform("b", "a", 2.0, x=10.0), "test")
    out = buffer.transform(p, "b", timeout=Duration(seconds=1))
    assert (out.header.frame_id, out.xyz) == ("b", (11.0, 2.0, 3.0))


def listening_node(session_name, executor):
    node = Node(session_name)
    buffer = Buffer(node=node)
    listener = TransformListener(buffer, node)
    executor.add_node(node)
    return node, buffer, listener


def test_a_blocking_lookup_in_a_callback_of_a_single_threaded_executor_is_would_deadlock_at_once(
        session):
    # geometry2's blocking example on the executor rclpy warns it stalls: the listener can
    # only run once the timer's callback returns, so the 60 s wait could never succeed.
    executor = SingleThreadedExecutor()
    node, buffer, listener = listening_node("blocking_on_one_thread", executor)
    outcome = []

    def on_timer():
        timer.cancel()
        try:
            buffer.lookup_transform("map", "base_link", Time(), timeout=Duration(seconds=60))
            outcome.append("transform")
        except kairos.WouldDeadlock as error:
            outcome.append(f"WouldDeadlock: {error}")
        except TransformException as error:
            outcome.append(f"timed out: {error}")

    timer = node.create_timer(0.01, on_timer)
    thread = spin_in_thread(executor)
    assert wait_until(lambda: outcome, LIMIT)
    executor.shutdown()
    thread.join(LIMIT)
    assert outcome[0].startswith("WouldDeadlock: "), outcome
    assert "/tf" in outcome[0] and "Fix:" in outcome[0], outcome
    assert buffer._core.waiters() == 0
    del listener


def test_a_blocking_lookup_on_a_multi_threaded_executor_ends_when_the_transform_arrives(session):
    executor = MultiThreadedExecutor(num_threads=2)
    node, buffer, listener = listening_node("blocking_on_two_threads", executor)
    broadcaster = StaticTransformBroadcaster(node)
    outcome = []

    def on_timer():
        timer.cancel()
        found = buffer.lookup_transform("map", "base_link", Time(),
                                        timeout=Duration(seconds=LIMIT))
        outcome.append(found.transform.translation.x)

    timer = node.create_timer(0.01, on_timer)
    thread = spin_in_thread(executor)
    # The transform is sent only once the lookup waits: the wait must be what gets it.
    assert wait_until(lambda: buffer._core.waiters() == 1, LIMIT)
    broadcaster.sendTransform(transform("map", "base_link", 0.0, x=4.0))
    assert wait_until(lambda: outcome, LIMIT)
    executor.shutdown()
    thread.join(LIMIT)
    assert outcome == [4.0]
    del listener


def test_an_awaited_lookup_in_an_async_callback_gets_the_transform_without_blocking(session):
    executor = SingleThreadedExecutor()
    node, buffer, listener = listening_node("awaiting", executor)
    broadcaster = TransformBroadcaster(node)
    outcome, ticks = [], []

    async def on_timer():
        timer.cancel()
        found = await buffer.lookup_transform_async("odom", "base_link", Time())
        outcome.append(found.transform.translation.x)

    timer = node.create_timer(0.01, on_timer)
    # The same single thread keeps running other callbacks while the lookup is awaited
    # (of other groups: the awaiting callback keeps its mutually exclusive group).
    ticker = node.create_timer(0.01, lambda: ticks.append(1),
                               callback_group=ReentrantCallbackGroup())
    thread = spin_in_thread(executor)
    assert wait_until(lambda: len(buffer._async_waits) == 1 and len(ticks) >= 3, LIMIT)
    broadcaster.sendTransform(transform("odom", "base_link", 1.0, x=7.0))
    assert wait_until(lambda: outcome, LIMIT)
    ticker.cancel()
    executor.shutdown()
    thread.join(LIMIT)
    assert outcome == [7.0]
    # Once available, the future is done at once, with the transform (geometry2's result).
    ready = buffer.wait_for_transform_async("odom", "base_link", Time())
    assert ready.done() and ready.result().transform.translation.x == 7.0
    del listener


def test_a_waiting_lookup_ends_when_kairos_shuts_down():
    kairos.init()
    buffer = Buffer()
    ended = []

    def wait():
        try:
            buffer.lookup_transform("map", "base_link", Time(), timeout=Duration(seconds=600))
        except Exception as error:  # noqa: BLE001 (the class is what is asserted)
            ended.append(type(error).__name__)

    waiter = threading.Thread(target=wait, daemon=True)
    waiter.start()
    assert wait_until(lambda: buffer._core.waiters() == 1, LIMIT)
    kairos.shutdown()
    waiter.join(LIMIT)
    assert ended == ["WaitCancelled"]


def test_a_static_broadcaster_resends_every_frame_so_a_late_listener_gets_them_all(session):
    executor = SingleThreadedExecutor()
    talker = Node("static_talker")
    broadcaster = StaticTransformBroadcaster(talker)
    broadcaster.sendTransform(transform("base_link", "laser", 0.0, x=0.1))
    broadcaster.sendTransform([transform("base_link", "camera", 0.0, x=0.2)])
    node, buffer, listener = listening_node("late_listener", executor)
    thread = spin_in_thread(executor)
    assert wait_until(lambda: buffer.can_transform("laser", "camera", Time()), LIMIT)
    executor.shutdown()
    thread.join(LIMIT)
    x = buffer.lookup_transform("laser", "camera", Time()).transform.translation.x
    assert math.isclose(x, 0.1)
    del listener


PYTHON_BROADCASTER = """
import time
import rclpy
from geometry_msgs.msg import TransformStamped
from tf2_ros import StaticTransformBroadcaster

rclpy.init()
node = rclpy.create_node('py_static_broadcaster')
t = TransformStamped()
t.header.frame_id, t.child_frame_id = 'base_link', 'py_laser'
t.transform.translation.x = 0.25
t.transform.rotation.w = 1.0
StaticTransformBroadcaster(node).sendTransform(t)
print('sent', flush=True)
time.sleep(60)
"""

PYTHON_LOOKUP = """
import rclpy
from rclpy.duration import Duration
from rclpy.executors import MultiThreadedExecutor
from rclpy.time import Time
from tf2_ros import Buffer, TransformListener

rclpy.init()
node = rclpy.create_node('py_tf_lookup')
buffer = Buffer()
listener = TransformListener(buffer, node, spin_thread=True)
t = buffer.lookup_transform('base_link', 'rust_laser', Time(), timeout=Duration(seconds=50))
print(round(t.transform.translation.z, 3), flush=True)
rclpy.shutdown()
"""


def as_rclpy(program):
    """The command that runs ``program`` (written for rclpy) as ``python -m kairos.run``
    runs a file: rclpy, tf2_ros and the interfaces mapped to kairos."""
    return [sys.executable, "-c",
            f"import kairos.run; kairos.run.install(); exec({program!r})"]


def test_transforms_cross_processes_between_python_programs_and_kairos_tf(router):
    """A Python program run by ``kairos.run`` as written for rclpy: its static transform
    is looked up by ``kairos tf echo``, and ``kairos tf static``'s is looked up by it."""
    env = router.env()
    broadcaster = subprocess.Popen(as_rclpy(PYTHON_BROADCASTER), env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        echoed = run([kairos_bin(), "tf", "echo", "base_link", "py_laser", "--count", "1",
                      "--timeout", "50"], env)
        assert echoed.returncode == 0, echoed.stderr
        assert "0.25" in echoed.stdout, echoed.stdout
    finally:
        broadcaster.kill()
        broadcaster.wait(LIMIT)

    static = subprocess.Popen([kairos_bin(), "tf", "static", "--frame-id", "base_link",
                               "--child-frame-id", "rust_laser", "--z", "0.75",
                               "--duration", "55"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        looked = run(as_rclpy(PYTHON_LOOKUP), env)
        assert looked.returncode == 0, looked.stderr
        assert looked.stdout.split() == ["0.75"], looked.stdout
    finally:
        static.kill()
        static.wait(LIMIT)


PYTHON_BUFFER_CLIENT = """
import threading
import rclpy
from rclpy.duration import Duration
from rclpy.executors import SingleThreadedExecutor
from geometry_msgs.msg import PointStamped
import tf2_geometry_msgs
import tf2_ros

rclpy.init()
node = rclpy.create_node('py_buffer_client')
executor = SingleThreadedExecutor()
executor.add_node(node)
threading.Thread(target=executor.spin, daemon=True).start()
client = tf2_ros.BufferClient(node, '/tf_action', check_frequency=10.0, timeout_padding=2.0)
assert client.wait_for_server(timeout_sec=50)
p = PointStamped()
p.header.frame_id = 'a'
p.point.x = 1.0
out = client.transform(p, 'b', timeout=Duration(seconds=30))
print(out.header.frame_id, round(out.point.x, 3), flush=True)
try:
    client.lookup_transform('b', 'nowhere', rclpy.time.Time(), Duration(seconds=0.5))
except tf2_ros.LookupException as error:
    print('LookupException', 'nowhere' in str(error), flush=True)
executor.shutdown()
"""


def test_a_buffer_client_looks_up_through_kairos_tf_buffer_server(router):
    """tf2_ros's BufferClient, as geometry2's test_tf2 uses it, against `kairos tf
    buffer-server` and `kairos tf static` in two other processes."""
    env = router.env()
    rust = [subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
            for args in (
                [kairos_bin(), "tf", "static", "--frame-id", "b", "--child-frame-id", "a",
                 "--x", "5", "--duration", "55"],
                [kairos_bin(), "tf", "buffer-server", "--name", "/tf_action",
                 "--duration", "55"])]
    try:
        looked = run(as_rclpy(PYTHON_BUFFER_CLIENT), env)
        assert looked.returncode == 0, looked.stderr
        assert looked.stdout.splitlines() == ["b 6.0", "LookupException True"], looked.stdout
    finally:
        for process in rust:
            process.kill()
            process.wait(LIMIT)
