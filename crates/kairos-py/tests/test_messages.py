"""The interfaces of kairos-msgs as Python classes: generated, rclpy-shaped, and exchanged
with Rust nodes of the same process (geometry_msgs/Twist, sensor_msgs/Imu) field by field."""

import array
import json
import math
import queue
import sys

import numpy

import pytest

import kairos
from conftest import LIMIT, run, spin_in_thread
from kairos import _interfaces
from kairos.node import Node
from kairos.serialization import deserialize_message, serialize_message


def test_every_shipped_package_imports_with_rclpy_names():
    from kairos.builtin_interfaces.msg import Time
    from kairos.example_interfaces.srv import AddTwoInts
    from kairos.geometry_msgs.msg import Twist, Vector3
    from kairos.nav_msgs.msg import Odometry
    from kairos.rcl_interfaces.msg import Log
    from kairos.sensor_msgs.msg import Imu
    from kairos.std_srvs.srv import SetBool

    packages = _interfaces.packages()
    assert sorted(packages) == sorted([
        "action_msgs", "builtin_interfaces", "composition_interfaces", "example_interfaces",
        "geometry_msgs",
        "lifecycle_msgs", "nav_msgs",
        "rcl_interfaces", "rosbag2_interfaces", "rosgraph_msgs", "sensor_msgs", "service_msgs", "std_msgs",
        "std_srvs", "test_msgs", "tf2_msgs", "type_description_interfaces",
        "unique_identifier_msgs"])
    # Every module of every package imports, and holds one class per type.
    count = 0
    for package, kinds in packages.items():
        for kind, names in kinds.items():
            module = __import__(f"kairos.{package}.{kind}", fromlist=names)
            for name in names:
                cls = getattr(module, name)
                assert cls._type == f"{package}/{kind}/{name}"
                count += 1
    assert count >= 150, count
    # An action has rclpy's shape: its messages and the services that carry it.
    from kairos.example_interfaces.action import Fibonacci
    assert Fibonacci.Goal(order=5).order == 5
    assert Fibonacci.Result().sequence == array.array("i")
    assert Fibonacci.Feedback()._type.endswith("_Feedback")
    request = Fibonacci.Impl.SendGoalService.Request(goal=Fibonacci.Goal(order=3))
    assert request.goal.order == 3 and len(request.goal_id.uuid) == 16
    assert Fibonacci.Impl.GetResultService.Response().status == 0
    assert Fibonacci.Impl.CancelGoalService._type == "action_msgs/srv/CancelGoal"
    assert Fibonacci.Impl.GoalStatusMessage._type == "action_msgs/msg/GoalStatusArray"
    assert Twist.__module__ == "kairos.geometry_msgs.msg"
    assert Vector3().x == 0.0 and Time().sec == 0
    covariance = Odometry().pose.covariance
    assert covariance.dtype == numpy.float64 and covariance.tolist() == [0.0] * 36
    assert Log().msg == ""
    assert AddTwoInts.Request(a=1).b == 0 and SetBool.Response().success is False
    from kairos.sensor_msgs.msg import NavSatStatus
    from kairos.std_msgs.msg import Header

    # Constants of the .msg files are class attributes, as in rclpy.
    assert (Log.INFO, Log.FATAL) == (20, 50)
    assert (NavSatStatus.STATUS_NO_FIX, NavSatStatus.STATUS_FIX) == (-1, 0)
    assert not hasattr(Header, "INFO")
    assert Imu.get_fields_and_field_types()["orientation_covariance"] == "double[9]"
    assert Imu.get_fields_and_field_types()["header"] == "std_msgs/Header"
    with pytest.raises(ImportError):
        __import__("kairos.no_such_msgs.msg")


def test_a_packages_modules_are_reached_from_the_package_alone(tmp_path):
    """``import builtin_interfaces`` then ``builtin_interfaces.msg.Time``, as ROS 2 programs
    (geometry2's test_convert.py) write it; checked in a fresh interpreter, where nothing
    imported the submodule before."""
    import os

    script = (
        "import builtin_interfaces\n"
        "assert builtin_interfaces.msg.Time(sec=3).sec == 3\n"
        "import example_interfaces\n"
        "assert example_interfaces.srv.AddTwoInts.Request(a=1).a == 1\n"
        "assert not hasattr(builtin_interfaces, 'nope')\n"
        "print('ok')\n")
    program = tmp_path / "program.py"
    program.write_text(script)
    done = run([sys.executable, "-m", "kairos.run", str(program)], dict(os.environ))
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_numeric_arrays_are_what_rclpy_makes_them():
    """Fixed-size numeric arrays are numpy arrays, numeric sequences array.array, filled
    from any iterable on assignment, checked then; they cross to Rust and back intact."""
    from kairos.example_interfaces.action import Fibonacci
    from kairos.sensor_msgs.msg import Image
    from kairos.test_msgs.msg import BoundedSequences
    from kairos.unique_identifier_msgs.msg import UUID

    uuid = UUID(uuid=range(16))
    assert isinstance(uuid.uuid, numpy.ndarray) and uuid.uuid.dtype == numpy.uint8
    assert bytes(uuid.uuid) == bytes(range(16)) and uuid == UUID(uuid=list(range(16)))
    assert uuid != UUID()
    image = Image(data=b"\x00\x01\xff")
    assert image.data == array.array("B", [0, 1, 255]) and bytes(image.data) == b"\x00\x01\xff"
    result = Fibonacci.Result(sequence=(0, 1, 1))
    result.sequence.append(2)
    assert result.sequence.tolist() == [0, 1, 1, 2]
    kept = array.array("i", [5])
    result.sequence = kept
    assert result.sequence is kept, "an array of the field's own type is kept as it is"
    with pytest.raises(OverflowError, match="'data'"):
        Image(data=[256])
    with pytest.raises(TypeError, match="'sequence'"):
        Fibonacci.Result(sequence=["one"])
    with pytest.raises(ValueError, match="at most 3"):
        BoundedSequences(int32_values=[1, 2, 3, 4])
    with pytest.raises(ValueError, match="exactly 16"):
        uuid.uuid = [1, 2]

    payload = serialize_message(
        Image(height=1, width=3, data=numpy.array([7, 8, 9], dtype=numpy.uint8)))
    back = deserialize_message(payload, Image)
    assert back.data == array.array("B", [7, 8, 9])
    payload = serialize_message(UUID(uuid=numpy.arange(16)))
    assert (deserialize_message(payload, UUID).uuid
            == numpy.arange(16)).all()


def test_constructors_defaults_nesting_and_equality():
    from kairos.geometry_msgs.msg import Twist, Vector3
    from kairos.sensor_msgs.msg import Imu

    twist = Twist(linear=Vector3(x=1.0))
    assert (twist.linear.x, twist.linear.y, twist.angular.z) == (1.0, 0.0, 0.0)
    assert isinstance(twist.angular, Vector3)
    # Each instance gets its own nested values and lists: no shared defaults.
    a, b = Imu(), Imu()
    a.header.frame_id = "a"
    a.orientation_covariance[0] = 5.0
    assert b.header.frame_id == "" and b.orientation_covariance.tolist() == [0.0] * 9
    assert Twist(linear=Vector3(x=1.0)) == twist and Twist() != twist
    assert repr(Vector3(x=2.0)) == "geometry_msgs.msg.Vector3(x=2.0, y=0.0, z=0.0)"
    with pytest.raises(TypeError, match="has no field"):
        Twist(speed=1.0)


@pytest.fixture
def relay_pair(session):
    """A Python node, and what it needs to talk to a Rust relay node of this process."""
    node = Node("py_msgs")
    executor = kairos.SingleThreadedExecutor()
    executor.add_node(node)
    spin_in_thread(executor)
    relays = []
    yield node, relays
    for relay in relays:
        relay.stop()
    executor.shutdown()
    node.destroy_node()


def through_rust(node, relays, msg_type, message, topic):
    """Publishes `message` from Python to a Rust node that republishes it (the same Arc)
    on another topic, and returns what the Python subscription of that topic receives
    and the Rust node's view of it (its serde JSON)."""
    relay = kairos._kairos.RustRelay(msg_type, f"rust_relay_{topic}", f"/{topic}_in",
                                     f"/{topic}_out")
    relays.append(relay)
    heard = queue.Queue()
    node.create_subscription(msg_type, f"/{topic}_out", heard.put, 10)
    publisher = node.create_publisher(msg_type, f"/{topic}_in", 10)
    publisher.publish(message)
    got = heard.get(timeout=LIMIT)
    return got, json.loads(relay.last_json())


def test_twist_from_python_to_a_rust_node_and_back(relay_pair):
    from kairos.geometry_msgs.msg import Twist, Vector3

    sent = Twist(linear=Vector3(x=1.5, y=-2.0), angular=Vector3(z=0.25))
    got, rust = through_rust(*relay_pair, Twist, sent, "twist")
    assert rust == {"linear": {"x": 1.5, "y": -2.0, "z": 0.0},
                    "angular": {"x": 0.0, "y": 0.0, "z": 0.25}}
    assert type(got) is Twist and type(got.linear) is Vector3
    assert got == sent and got is not sent


def test_imu_from_python_to_a_rust_node_and_back(relay_pair):
    from kairos.builtin_interfaces.msg import Time
    from kairos.geometry_msgs.msg import Quaternion, Vector3
    from kairos.sensor_msgs.msg import Imu
    from kairos.std_msgs.msg import Header

    covariance = [0.0] * 9
    covariance[4] = 0.5
    sent = Imu(header=Header(stamp=Time(sec=7, nanosec=9), frame_id="imu_link"),
               orientation=Quaternion(z=0.5, w=0.75),
               orientation_covariance=covariance,
               angular_velocity=Vector3(z=-0.5),
               linear_acceleration=Vector3(z=9.75),
               linear_acceleration_covariance=(-1.0,) + (0.0,) * 8)  # any sequence
    got, rust = through_rust(*relay_pair, Imu, sent, "imu")
    assert rust["header"] == {"stamp": {"sec": 7, "nanosec": 9}, "frame_id": "imu_link"}
    assert rust["orientation"] == {"x": 0.0, "y": 0.0, "z": 0.5, "w": 0.75}
    assert rust["orientation_covariance"][4] == 0.5
    assert rust["linear_acceleration"]["z"] == 9.75
    assert rust["linear_acceleration_covariance"][0] == -1.0
    assert got.header.frame_id == "imu_link" and got.header.stamp.nanosec == 9
    assert got.orientation_covariance.tolist() == covariance
    assert got.linear_acceleration_covariance.tolist() == [-1.0] + [0.0] * 8
    assert type(got.header.stamp) is Time


def test_every_message_type_round_trips_python_rust_python(session):
    """Each of the shipped message types, its default value, through its Rust type and
    back: generated classes and Rust types agree on every field of every type."""
    node = Node("py_all_types")
    executor = kairos.SingleThreadedExecutor()
    executor.add_node(node)
    spin_in_thread(executor)
    heard = queue.Queue()
    sent = {}
    try:
        for package, kinds in _interfaces.packages().items():
            for name in kinds.get("msg", []):
                cls = _interfaces.message_class(f"{package}/msg/{name}")
                topic = f"/all/{package}/{name}"
                node.create_subscription(cls, topic, lambda m, t=topic: heard.put((t, m)), 10)
                sent[topic] = cls()
                assert node.create_publisher(cls, topic, 10).publish(sent[topic]) == 1
        for _ in sent:
            topic, message = heard.get(timeout=LIMIT)
            assert message == sent[topic], topic
    finally:
        executor.shutdown()
        node.destroy_node()
    assert len(sent) > 100


def test_a_wrong_value_names_its_field(session):
    from kairos.geometry_msgs.msg import Twist, Vector3
    from kairos.sensor_msgs.msg import Imu
    from kairos.std_msgs.msg import Header, String

    node = Node("py_wrong")
    twist = node.create_publisher(Twist, "/wrong_twist", 10)
    with pytest.raises(TypeError, match=r"linear\.x: expected a float, got str"):
        twist.publish(Twist(linear=Vector3(x="fast")))
    with pytest.raises(TypeError, match=r"expected a geometry_msgs/msg/Twist, got String"):
        twist.publish(String(data="x"))
    with pytest.raises(TypeError, match=r"angular: expected a geometry_msgs/msg/Vector3"):
        twist.publish(Twist(angular=(0.0, 0.0, 1.0)))
    imu = node.create_publisher(Imu, "/wrong_imu", 10)
    with pytest.raises(TypeError, match=r"header\.stamp\.sec"):
        bad = Imu(header=Header())
        bad.header.stamp.sec = 2 ** 40
        imu.publish(bad)
    with pytest.raises(ValueError, match=r"'orientation_covariance' holds exactly 9"):
        Imu(orientation_covariance=[0.0] * 8)
    # NaN is a float like any other (no JSON in between).
    nan = Imu(orientation_covariance=[math.nan] * 9)
    imu.publish(nan)
    node.destroy_node()


def test_serialize_message_is_the_cdr_payload_on_the_wire():
    from kairos.serialization import deserialize_message, serialize_message
    from kairos.std_msgs.msg import String
    from kairos.test_msgs.msg import BasicTypes

    # Encapsulation header (CDR little endian), then the string's length with its NUL.
    assert serialize_message(String(data="hello")) == (
        b"\x00\x01\x00\x00" + (6).to_bytes(4, "little") + b"hello\x00")
    message = BasicTypes(bool_value=True, int8_value=-128, uint64_value=2**64 - 1,
                         float32_value=1.125, float64_value=-2.5e300, int32_value=-7)
    assert deserialize_message(serialize_message(message), BasicTypes) == message
    # float32 keeps only float32's precision, as in rclpy.
    rounded = deserialize_message(serialize_message(BasicTypes(float32_value=3.14)), BasicTypes)
    assert rounded.float32_value != 3.14 and round(rounded.float32_value, 2) == 3.14
    with pytest.raises(ValueError, match="not a serialized std_msgs/msg/String"):
        deserialize_message(b"\x00\x01\x00\x00\xff\xff\xff\x7f", String)
    with pytest.raises(TypeError):
        serialize_message("not a message")


def test_a_serialized_message_publishes_as_the_message(session):
    from kairos.serialization import serialize_message
    from kairos.executors import SingleThreadedExecutor
    from kairos.std_msgs.msg import String

    node = Node("serialized_talker")
    heard = queue.Queue()
    node.create_subscription(String, "/test/serialized", heard.put, 10)
    publisher = node.create_publisher(String, "/test/serialized", 10)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    spin_in_thread(executor)
    assert publisher.publish(serialize_message(String(data="ñu"))) == 1
    assert heard.get(timeout=LIMIT) == String(data="ñu")
    with pytest.raises(TypeError, match="not a serialized std_msgs/msg/String"):
        publisher.publish(b"\x01\x02")
    executor.shutdown()


def test_type_hash_prints_as_rihs01():
    from kairos.type_hash import TypeHash

    value = bytes(range(32))
    assert str(TypeHash(version=1, value=value)) == "RIHS01_" + value.hex()
    assert str(TypeHash()) == "INVALID"
    assert TypeHash(version=1, value=value) == TypeHash(version=1, value=value)
    assert TypeHash(version=5) != TypeHash()
    with pytest.raises(TypeError):
        TypeHash(version="1")


def test_qos_profiles_check_and_name_as_rclpy():
    import warnings

    from kairos import qos

    assert qos.qos_check_compatible(
        qos.QoSProfile(depth=1, reliability=qos.ReliabilityPolicy.BEST_EFFORT),
        qos.QoSProfile(depth=1)) == (qos.QoSCompatibility.OK, "")
    assert qos.HistoryPolicy.short_keys() == ["system_default", "keep_last", "keep_all",
                                              "unknown"]
    assert qos.HistoryPolicy.get_from_short_key("KEEP_all") == qos.HistoryPolicy.KEEP_ALL
    assert qos.ReliabilityPolicy.BEST_EFFORT.short_key == "best_effort"
    assert (qos.QoSPresetProfiles.get_from_short_key("sensor_data")
            == qos.qos_profile_sensor_data)
    with pytest.raises(qos.InvalidQoSProfileException):
        qos.QoSProfile(history=qos.HistoryPolicy.KEEP_LAST)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        qos.QoSProfile(depth=1).depth = 0
    assert len(caught) == 1 and "zero depth" in str(caught[0].message)
    profile = qos.QoSProfile(depth=3, durability=qos.DurabilityPolicy.TRANSIENT_LOCAL)
    assert qos.QoSProfile(**profile.get_c_qos_profile().to_dict()) == profile


def test_point_clouds_made_and_read_with_sensor_msgs_py_round_trip():
    """ros2/examples' pointcloud_publisher makes its cloud with
    ``sensor_msgs_py.point_cloud2.create_cloud``; what it makes reads back the same, through
    CDR too, and bad input is an error."""
    from kairos.sensor_msgs.msg import PointCloud2, PointField
    from kairos.sensor_msgs_py import point_cloud2
    from kairos.serialization import deserialize_message, serialize_message
    from kairos.std_msgs.msg import Header

    fields = [PointField(name=n, offset=4 * i, datatype=PointField.FLOAT32, count=1)
              for i, n in enumerate(("x", "y", "z", "intensity"))]
    x, y = numpy.meshgrid(numpy.linspace(-2, 2, 10), numpy.linspace(-2, 2, 10))
    z = 0.5 * numpy.sin(2 * x) * numpy.sin(2 * y)
    points = numpy.array([x, y, z, z]).reshape(4, -1).T
    cloud = point_cloud2.create_cloud(Header(frame_id="map"), fields, points)
    assert (cloud.width, cloud.height, cloud.point_step, cloud.row_step) == (100, 1, 16, 1600)
    back = deserialize_message(serialize_message(cloud), PointCloud2)
    read = point_cloud2.read_points_numpy(back)
    assert read.dtype == numpy.float32 and read.shape == (100, 4)
    assert numpy.array_equal(read, points.astype(numpy.float32))
    xy = point_cloud2.read_points(back, field_names=("x", "y"))
    assert xy.dtype.names == ("x", "y") and numpy.array_equal(xy["y"], read[:, 1])

    xyz = point_cloud2.create_cloud_xyz32(Header(), [(1.0, 2.0, 3.0), (math.nan, 0.0, 0.0)])
    assert point_cloud2.read_points_list(xyz, skip_nans=True) == [(1.0, 2.0, 3.0)]
    assert point_cloud2.read_points_list(xyz)[0].z == 3.0

    big = PointCloud2(height=1, width=1, point_step=4, row_step=4, is_bigendian=True,
                      fields=[PointField(name="v", offset=0, datatype=PointField.UINT32,
                                         count=1)],
                      data=b"\x00\x00\x01\x02")
    assert point_cloud2.read_points_list(big) == [(0x102,)]
    with pytest.raises(ValueError, match="datatype 9"):
        point_cloud2.dtype_from_fields([PointField(name="a", datatype=9, count=1)])
    with pytest.raises(ValueError, match="columns"):
        point_cloud2.create_cloud(Header(), fields, numpy.zeros((2, 3)))
    with pytest.raises(ValueError, match="no field 'w'"):
        point_cloud2.read_points(cloud, field_names=("w",))
    short = deserialize_message(serialize_message(cloud), PointCloud2)
    short.data = bytes(cloud.data)[:10]
    with pytest.raises(ValueError, match="holds 10 bytes"):
        point_cloud2.read_points(short)
