"""rosidl_runtime_py on kairos (``kairos.rosidl_runtime_py``): classes by name, messages
as dicts, YAML and CSV in the forms ROS 2's tools print, and filled from dicts, with
errors that name what is wrong."""

import subprocess
import sys

import pytest

from kairos.geometry_msgs.msg import PoseStamped
from kairos.rosidl_runtime_py import (message_to_csv, message_to_ordereddict, message_to_yaml,
                                      set_message_fields)
from kairos.rosidl_runtime_py.utilities import (get_action, get_interface, get_message,
                                                get_service)
from kairos.sensor_msgs.msg import JointState

from conftest import LIMIT


def test_classes_by_name():
    assert get_message("std_msgs/msg/String")._type == "std_msgs/msg/String"
    assert get_message("std_msgs/String") is get_message("std_msgs/msg/String")
    assert get_service("std_srvs/srv/Trigger").Request is not None
    assert get_action("example_interfaces/action/Fibonacci").Goal is not None
    assert get_interface("std_srvs/srv/Empty") is get_service("std_srvs/Empty")
    with pytest.raises(ValueError, match="Invalid message type"):
        get_message("std_msgs/srv/String")
    with pytest.raises(ValueError):
        get_interface("String")
    with pytest.raises(ModuleNotFoundError, match="no_such_pkg/msg/Thing"):
        get_message("no_such_pkg/msg/Thing")


def test_a_message_as_ros2_topic_echo_prints_it():
    pose = PoseStamped()
    set_message_fields(pose, {"header": {"frame_id": "map", "stamp": {"sec": 3}},
                              "pose": {"position": {"x": 1, "y": 2.5}}})
    assert pose.pose.position.x == 1.0 and isinstance(pose.pose.position.x, float)
    assert message_to_yaml(pose) == (
        "header:\n  stamp:\n    sec: 3\n    nanosec: 0\n  frame_id: map\n"
        "pose:\n  position:\n    x: 1.0\n    y: 2.5\n    z: 0.0\n"
        "  orientation:\n    x: 0.0\n    y: 0.0\n    z: 0.0\n    w: 1.0\n")
    joints = JointState()
    set_message_fields(joints, {"name": ["a", "b"], "position": [1, 2]})
    as_dict = message_to_ordereddict(joints)
    assert list(as_dict) == ["header", "name", "position", "velocity", "effort"]
    assert as_dict["position"] == [1.0, 2.0] and as_dict["name"] == ["a", "b"]
    assert message_to_csv(joints) == "0,0,,a,b,1.0,2.0"
    assert message_to_ordereddict(joints, truncate_length=1)["name"] == ["a", "..."]
    with pytest.raises(AttributeError, match="no field 'nope'.*header, pose"):
        set_message_fields(pose, {"nope": 1})


def test_importable_under_kairos_run(tmp_path):
    script = tmp_path / "script.py"
    script.write_text("from rosidl_runtime_py.utilities import get_message\n"
                      "from rosidl_runtime_py import message_to_yaml\n"
                      "print(message_to_yaml(get_message('std_msgs/msg/String')(data='hi')))\n")
    out = subprocess.run([sys.executable, "-m", "kairos.run", str(script)], capture_output=True,
                         text=True, timeout=LIMIT, check=True).stdout
    assert out.strip() == "data: hi"
