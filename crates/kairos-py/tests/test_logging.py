"""A Python node's logger is its kairos node's: lines in rcutils' console format,
filtered by ``--ros-args --log-level`` per logger, and (in kairos) on ``/rosout`` and in
the trace. /rosout across processes is checked on the Rust side
(``log_lines_reach_rosout_in_another_process``); in the same process a Python
``rcl_interfaces.msg.Log`` subscription gets them too (the runtime's line type and the
generated one are twin topics)."""

import os
import queue
import subprocess
import sys
import textwrap

PROGRAM = textwrap.dedent(
    """
    import kairos
    kairos.init()
    talker = kairos.create_node("talker")
    log = talker.get_logger()
    log.debug("a debug line")
    log.info("an info line")
    log.get_child("arm").warning("a warn line")
    kairos.shutdown()
    """
)


def run(*ros_args):
    return subprocess.run(
        [sys.executable, "-c", PROGRAM, *ros_args],
        capture_output=True,
        text=True,
        timeout=60,
        env={k: v for k, v in os.environ.items() if k != "KAIROS_TRANSPORT"},
    )


def test_a_python_nodes_lines_are_its_kairos_loggers():
    done = run()
    assert done.returncode == 0, done.stderr
    err = done.stderr
    assert "[INFO] [" in err and "] [talker]: an info line" in err, err
    assert "] [talker.arm]: a warn line" in err, err
    assert "a debug line" not in err, "debug is below the default level: " + err


def test_a_debug_level_for_one_logger_lets_its_debug_lines_through():
    done = run("--ros-args", "--log-level", "talker:=debug")
    assert done.returncode == 0, done.stderr
    assert "[DEBUG] [" in done.stderr and "] [talker]: a debug line" in done.stderr, done.stderr


def test_log_level_from_the_command_line_filters_python_lines():
    done = run("--ros-args", "--log-level", "warn")
    assert done.returncode == 0, done.stderr
    assert "an info line" not in done.stderr, done.stderr
    assert "] [talker.arm]: a warn line" in done.stderr, done.stderr


def test_a_log_subscription_in_the_same_process_hears_the_lines(session):
    import kairos
    from kairos.executors import SingleThreadedExecutor
    from kairos.rcl_interfaces.msg import Log
    from conftest import LIMIT, spin_in_thread

    listener = kairos.create_node("log_listener")
    heard = queue.Queue()
    listener.create_subscription(Log, "/rosout", heard.put, 100)
    executor = SingleThreadedExecutor()
    executor.add_node(listener)
    spin_in_thread(executor)
    talker = kairos.create_node("py_talker")
    talker.get_logger().warning("heard in the same process")
    line = heard.get(timeout=LIMIT)
    while line.msg != "heard in the same process":
        line = heard.get(timeout=LIMIT)
    assert line.name == "py_talker" and line.level == 30, line
    executor.shutdown()
    talker.destroy_node()
    listener.destroy_node()


LEVELS_PROGRAM = textwrap.dedent(
    """
    import kairos
    from kairos.logging import LoggingSeverity, get_logger
    kairos.init()
    node = kairos.create_node("leveled")
    # A level belongs to the name: set on one object, it holds for another of that name,
    # and for the children that have none of their own.
    get_logger("leveled").set_level(LoggingSeverity.DEBUG)
    assert node.get_logger().debug("node debug line") is True
    assert node.get_logger().get_child("arm").debug("child debug line") is True
    node.get_logger().get_child("arm").set_level(LoggingSeverity.ERROR)
    assert node.get_logger().get_child("arm").warning("hidden warn line") is False
    node.get_logger().get_child("arm").set_level(LoggingSeverity.UNSET)
    assert node.get_logger().get_child("arm").get_effective_level() == LoggingSeverity.DEBUG
    once = [node.get_logger().info("once line", once=True) for _ in range(3)]
    assert once == [True, False, False], once
    skip = [node.get_logger().info("skip line", skip_first=True) for _ in range(3)]
    assert skip == [False, True, True], skip
    kairos.shutdown()
    """
)


def test_a_level_belongs_to_a_loggers_name_and_calls_say_whether_they_logged():
    done = subprocess.run([sys.executable, "-c", LEVELS_PROGRAM], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    err = done.stderr
    assert "] [leveled]: node debug line" in err, err
    assert "] [leveled.arm]: child debug line" in err, err
    assert "hidden warn line" not in err, err
    assert err.count("once line") == 1 and err.count("skip line") == 2, err
