"""A Python node's logger is its kairos node's: lines in rcutils' console format,
filtered by ``--ros-args --log-level`` per logger, and (in kairos) on ``/rosout`` and in
the trace. /rosout across processes is checked on the Rust side
(``log_lines_reach_rosout_in_another_process``); a Python ``rcl_interfaces.msg.Log``
subscription in the same process does not get them yet (two Rust types for one ROS
type, reported on stderr)."""

import os
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
