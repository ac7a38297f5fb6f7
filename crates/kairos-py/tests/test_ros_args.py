"""``--ros-args`` on a Python program's command line reach its nodes, as with rclpy:
``__node``/``__ns`` and topic remaps, ``-p`` values and a parameter file; code-given
overrides win over them; a bad ROS argument stops node creation with what to write."""

import os
import subprocess
import sys
import textwrap

import pytest

import kairos

PROGRAM = textwrap.dedent(
    """
    import kairos
    from kairos.parameter import Parameter
    from kairos.std_msgs.msg import String
    kairos.init()
    node = kairos.create_node("talker", parameter_overrides=[Parameter("frame", value="code")])
    pub = node.create_publisher(String, "chatter", 10)
    rate = node.declare_parameter("rate", 1.0).value
    speed = node.declare_parameter("limits.speed", 0.5).value
    frame = node.declare_parameter("frame", "base").value
    print("node", node.get_fully_qualified_name())
    print("topic", pub.topic_name)
    print("rate", rate, "speed", speed, "frame", frame)
    print("sim", node.get_parameter("use_sim_time").value)
    kairos.shutdown()
    """
)


def run(*ros_args):
    return subprocess.run(
        [sys.executable, "-c", PROGRAM, *ros_args],
        capture_output=True,
        text=True,
        timeout=60,
        env=os.environ,
    )


def test_ros_arguments_reach_a_python_node(tmp_path):
    params = tmp_path / "params.yaml"
    params.write_text(
        "/robot/speaker:\n  ros__parameters:\n    limits:\n      speed: 1.5\n"
        "    use_sim_time: true\n    frame: file\n"
    )
    done = run("--ros-args", "-r", "__ns:=/robot", "-r", "talker:__node:=speaker",
               "-r", "chatter:=news", "-p", "rate:=2.5", "--params-file", str(params))
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert "node /robot/speaker" in out, done.stdout
    assert "topic /robot/news" in out, done.stdout
    # The code's own override of `frame` wins over the parameter file's.
    assert "rate 2.5 speed 1.5 frame code" in out, done.stdout
    assert "sim True" in out, done.stdout


def test_a_bad_ros_argument_says_what_to_write():
    done = run("--ros-args", "--remapp", "a:=b")
    assert done.returncode != 0
    assert "unknown ROS argument '--remapp'" in done.stderr, done.stderr


def test_init_refuses_ros_arguments_it_cannot_read():
    from kairos.context import Context
    from kairos.exceptions import RCLInvalidROSArgsError, UnknownROSArgsError

    with pytest.raises(UnknownROSArgsError, match=r"\['--bogus'\]"):
        kairos.init(context=Context(), args=["prog", "--ros-args", "--bogus"])
    with pytest.raises(RCLInvalidROSArgsError, match="needs a value"):
        kairos.init(context=Context(), args=["prog", "--ros-args", "-p"])
    # Arguments after `--` are the program's own.
    context = Context()
    kairos.init(context=context, args=["prog", "--ros-args", "-p", "a:=1", "--", "--bogus"])
    kairos.shutdown(context=context)


def test_type_support_checks_and_waitables_say_what_kairos_does():
    from kairos import type_support
    from kairos.std_msgs.msg import String
    from kairos.std_srvs.srv import Trigger

    type_support.check_is_valid_msg_type(String)
    type_support.check_is_valid_srv_type(Trigger)
    with pytest.raises(RuntimeError):
        type_support.check_is_valid_msg_type(Trigger)
    with pytest.raises(RuntimeError):
        type_support.check_is_valid_srv_type(String)
    with pytest.raises(AttributeError):
        type_support.check_for_type_support(object())


def test_a_waitable_is_refused_with_what_to_use_instead():
    from kairos.node import Node
    from kairos.waitable import NumberOfEntities, Waitable

    kairos.init()
    try:
        node = Node("waitable_host")
        with pytest.raises(NotImplementedError, match="guard condition"):
            node.add_waitable(Waitable(None))
        assert NumberOfEntities(1, 2) + NumberOfEntities(1) == NumberOfEntities(2, 2)
    finally:
        kairos.shutdown()
