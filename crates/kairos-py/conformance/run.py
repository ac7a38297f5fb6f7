"""Runs rclpy's (or geometry2's, or rosbag2_py's) own test suite against kairos, with
only the imports mapped.

    python3 crates/kairos-py/conformance/run.py CHECKOUT
        [--suite rclpy|geometry2|rosbag2|launch|launch_ros|launch_testing] [--timeout S]
        [--only FILE...]

``CHECKOUT`` is a checkout of ros2/rclpy (its ``rclpy/test`` is what runs) or, with
``--suite geometry2``, of ros2/geometry2 (the Python tests of ``tf2_py``, ``tf2_ros_py``,
``tf2_geometry_msgs`` and ``test_tf2``) or, with ``--suite rosbag2``, of ros2/rosbag2
(``rosbag2_py/test``, with its test bags as ``ROSBAG2_PY_TEST_RESOURCES_DIR``), or, with
``--suite launch``, of ros2/launch (``launch/test``, ``launch_xml/test``,
``launch_yaml/test``, every level; they import ``osrf_pycommon``) or, with ``--suite
launch_ros``, of ros2/launch_ros (``test_launch_ros/test``) or, with ``--suite
launch_testing``, of ros2/launch (``launch_testing/test/launch_testing`` and its
examples); their linter tests
(copyright, flake8, pep257, xmllint, mypy) do not run, nor their packages' doctests. Each
test file runs in its own ``python -m kairos.run -m pytest`` (``rclpy`` and the interface
packages resolve to kairos, nothing else changes), bounded by ``--timeout`` seconds, and
the per-file counts come from pytest's JUnit report. It prints a Markdown table (file,
tests, passed, failed, errors, skipped, and the first error of a file that did not run)
and the totals; CONFORMANCE.md keeps the last measured table.

kairos must be importable (PYTHONPATH pointing at a staged build, as scripts/test makes).

A test file that its suite runs from a launch file, beside other programs, gets those
programs as kairos's own commands (``COMPANIONS``), all on a ``kairos router`` of their
own on loopback; ``--kairos`` names the binary (default: this checkout's release build).

A launch test (a file with ``generate_test_description()``, which ROS 2 runs with
``launch_test``) runs with ``kairos launch-test FILE --junit-xml REPORT`` on a router of
its own, with the launch arguments its package's pytest.ini gives (``LAUNCH_ARGUMENTS``)
and the executables its launch file starts installed in a prefix of ament's layout
(``LAUNCH_TEST_PACKAGES``): the suite's own programs as they are, and each C++ program as
the kairos command that does its job (a stand-in that says so).

launch_ros' tests start ROS 2's ``demo_nodes_py`` (``talker_qos``, ``listener_qos``):
``--demos CHECKOUT`` installs it from a ros2/demos checkout as colcon would (its console
scripts, running the checkout's modules unchanged) for the run.
"""

import argparse
import os
import pathlib
import re
import socket
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET


#: The folders of each suite whose test_*.py files run.
SUITES = {
    "rclpy": ["rclpy/test"],
    "geometry2": ["tf2_py/test", "tf2_ros_py/test", "tf2_geometry_msgs/test", "test_tf2/test"],
    "rosbag2": ["rosbag2_py/test"],
    "launch": ["launch/test", "launch_xml/test", "launch_yaml/test"],
    "launch_ros": ["test_launch_ros/test"],
    "launch_testing": ["launch_testing/test/launch_testing"],
}

#: Folders of a suite's checkout its tests import helpers from (launch's tests import
#: ``temporary_environment`` from ``launch/test``, as its test environment makes possible).
SUITE_PATHS = {"launch": ["launch/test"]}

#: Suites whose tests are in subfolders of their folders too.
RECURSIVE = {"launch", "launch_ros", "launch_testing"}

#: Launch tests a suite has under other names than test_*.py.
LAUNCH_TEST_GLOBS = {"launch_testing": ["examples/*.py"]}

#: The launch arguments a suite gives its launch tests (launch_testing's pytest.ini:
#: ``addopts = --launch-args dut_arg:=test``).
LAUNCH_ARGUMENTS = {"launch_testing": ["dut_arg:=test"]}

#: What a suite's launch tests start, installed as packages: PACKAGE -> {EXECUTABLE: the
#: checkout's file, or ["kairos", ...] for a C++ program kairos stands in for}.
LAUNCH_TEST_PACKAGES = {
    "launch_testing": {"launch_testing": {
        name: f"launch_testing/example_processes/{name}"
        for name in ("good_proc.py", "terminating_proc.py", "exit_code_proc.py")}},
    "geometry2": {
        "test_tf2": {
            "test_buffer_client.py": "test_tf2/test/test_buffer_client.py",
            # test_tf2's C++ buffer server, serving tf_action.
            "test_buffer_server": ["tf", "buffer-server", "--name", "tf_action"],
        },
        # tf2_ros's C++ static_transform_publisher: kairos tf static takes its arguments.
        "tf2_ros": {"static_transform_publisher": ["tf", "static"]},
    },
}

#: A stand-in for a C++ program: a Python executable (run under kairos.run, as launch_ros
#: runs Python executables) that becomes the kairos command, with the arguments before
#: --ros-args.
STAND_IN = """#!/usr/bin/env python3
# A stand-in for a C++ program of ROS 2 that kairos has a command for: {command}.
import os, sys
args = sys.argv[1:]
if "--ros-args" in args:
    args = args[:args.index("--ros-args")]
os.execv({kairos!r}, [{kairos!r}, *{command!r}, *args])
"""

#: Tests of a suite's code style, not of what it does.
LINTERS = {"test_copyright.py", "test_flake8.py", "test_pep257.py", "test_xmllint.py",
           "test_mypy.py"}

#: pytest's options for a suite: launch's pytest.ini adds --doctest-modules (doctests of
#: its own package, not kairos's), and its conftest.py only tunes that collection (with a
#: hook argument pytest 9 no longer has).
PYTEST_OPTIONS = {"launch": ["--noconftest", "-o", "addopts="],
                  "launch_ros": ["--noconftest", "-o", "addopts="],
                  "launch_testing": ["--noconftest", "-o", "addopts="]}


#: What a test file's launch file starts beside it, as kairos commands (the file's path
#: from the checkout, then each program's arguments to `kairos`).
COMPANIONS = {
    # test_tf2/test/test_buffer_client.launch.py: tf2_ros's static_transform_publisher
    # a -> b at (5, 6, 7) and test_tf2's C++ buffer server on "tf_action".
    "test_tf2/test/test_buffer_client.py": [
        ["tf", "static", "--x", "5", "--y", "6", "--z", "7", "--frame-id", "a",
         "--child-frame-id", "b"],
        ["tf", "buffer-server", "--name", "tf_action"],
    ],
    # rosbag2_py's transport tests record and play: a router for kairos bag record/play.
    "rosbag2_py/test/test_transport.py": [],
}


class Companions:
    """``kairos router`` on a free loopback port and the programs a test file needs beside
    it, all ended when the file has run."""

    def __init__(self, kairos, programs):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.env = dict(
            KAIROS_TRANSPORT="zenoh",
            ZENOH_CONFIG_OVERRIDE=f'connect/endpoints=["tcp/127.0.0.1:{port}"];'
                                  'listen/endpoints=["tcp/127.0.0.1:0"]')
        env = dict(os.environ, **self.env)
        env.pop("ROS_DOMAIN_ID", None)
        self.processes = [subprocess.Popen([kairos, "router", "--listen", f"tcp/127.0.0.1:{port}"],
                                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                           text=True)]
        self.processes[0].stdout.readline()  # listening
        for program in programs:
            self.processes.append(subprocess.Popen([kairos] + program, env=env,
                                                   stdout=subprocess.DEVNULL,
                                                   stderr=subprocess.DEVNULL))

    def close(self):
        for process in reversed(self.processes):
            process.kill()
            process.wait(10)


def run_file(path, timeout, workdir, extra_env=None, options=()):
    # Two suites may have files of one name (tf2_ros_py/test and test_tf2/test both have
    # test_buffer_client.py): the report is named after the whole path.
    report = pathlib.Path(workdir) / ("_".join(path.parts[-4:]) + ".xml")
    args = [sys.executable, "-m", "kairos.run", "-m", "pytest", "-q", "-p", "no:cacheprovider",
            *options, f"--junitxml={report}", "-o", "junit_family=xunit2", str(path)]
    env = dict(os.environ, PYTHONUNBUFFERED="1", **(extra_env or {}))
    # What rclpy/test/__init__.py imports besides rclpy: rpyutils (it only adds Windows
    # DLL directories) and test_rclpy (an empty package CMake makes for C test helpers);
    # tf2_py's tests import the extension as test_tf2_py._tf2_py (a copy CMake makes).
    env["PYTHONPATH"] = os.pathsep.join(
        [str(pathlib.Path(__file__).parent / "shims")] + env.get("PYTHONPATH", "").split(os.pathsep))
    started = time.monotonic()
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=env,
                              cwd=path.parent)
        output = done.stdout + done.stderr
    except subprocess.TimeoutExpired:
        output = f"E timed out after {timeout:.0f} s (killed)"
    elapsed = time.monotonic() - started
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    if report.exists():
        try:
            suite = ET.parse(report).getroot()
            suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
            for key in counts:
                counts[key] = int(suite.get(key, 0))
        except ET.ParseError:
            pass
    passed = counts["tests"] - counts["failures"] - counts["errors"] - counts["skipped"]
    note = ""
    if passed <= 0 or "timed out" in output[:40]:
        lines = [line[2:].strip() for line in output.splitlines()
                 if line.startswith("E ") or "timed out" in line]
        lines = lines or output.strip().splitlines()[-1:] or [""]
        note = lines[0][:120]
    return dict(counts, passed=passed, elapsed=elapsed, note=note)


def install_executables(checkout, packages, prefix, kairos):
    """The executables of ``packages`` (see ``LAUNCH_TEST_PACKAGES``) under ``prefix``,
    registered in ament's index."""
    index = prefix / "share" / "ament_index" / "resource_index" / "packages"
    index.mkdir(parents=True, exist_ok=True)
    for package, executables in packages.items():
        (index / package).write_text("")
        (prefix / "share" / package).mkdir(parents=True, exist_ok=True)
        lib = prefix / "lib" / package
        lib.mkdir(parents=True, exist_ok=True)
        for name, source in executables.items():
            target = lib / name
            if isinstance(source, list):
                target.write_text(STAND_IN.format(command=source, kairos=kairos))
            else:
                target.write_bytes((checkout / source).read_bytes())
            target.chmod(0o755)


def is_launch_test(path):
    return re.search(r"^def generate_test_description", path.read_text(errors="replace"),
                     re.MULTILINE) is not None


def run_launch_test(path, timeout, workdir, kairos, extra_env, arguments):
    """Runs the launch test ``path`` with ``kairos launch-test``; the counts as run_file's."""
    report = pathlib.Path(workdir) / ("_".join(path.parts[-4:]) + ".xml")
    args = [kairos, "launch-test", str(path), *arguments, "--no-router",
            "--junit-xml", str(report), "--timeout", str(timeout)]
    env = dict(os.environ, PYTHONUNBUFFERED="1", **(extra_env or {}))
    started = time.monotonic()
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=timeout + 30,
                              env=env, cwd=path.parent)
        output = done.stdout + done.stderr
    except subprocess.TimeoutExpired:
        output = f"E timed out after {timeout:.0f} s (killed)"
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    if report.exists():
        try:
            for suite in ET.parse(report).getroot().iter("testsuite"):
                for key in counts:
                    counts[key] += int(suite.get(key, 0))
        except ET.ParseError:
            pass
    passed = counts["tests"] - counts["failures"] - counts["errors"] - counts["skipped"]
    note = ""
    if passed <= 0:
        lines = [line.strip() for line in output.splitlines()
                 if "kairos launch-test:" in line or line.startswith("E ")]
        note = (lines or output.strip().splitlines()[-1:] or [""])[0][:120]
        if not counts["tests"]:
            counts["tests"] = counts["errors"] = 1
    return dict(counts, passed=passed, elapsed=time.monotonic() - started, note=note)


def install_demo_nodes_py(demos, prefix):
    """ROS 2's ``demo_nodes_py`` of a ros2/demos checkout, as colcon installs it: each
    console script of its ``setup.py`` an executable in ``lib/demo_nodes_py`` that runs
    the checkout's module unchanged; registered in ament's index. The executables that
    launch_ros' tests start (``talker_qos``, ...)."""
    source = demos / "demo_nodes_py"
    scripts = re.findall(r"'([\w-]+)\s*=\s*([\w.]+):(\w+)'",
                         (source / "setup.py").read_text())
    if not scripts:
        sys.exit(f"no console scripts in {source / 'setup.py'}: give a ros2/demos checkout")
    index = prefix / "share" / "ament_index" / "resource_index" / "packages"
    index.mkdir(parents=True, exist_ok=True)
    (index / "demo_nodes_py").write_text("")
    (prefix / "share" / "demo_nodes_py").mkdir(parents=True, exist_ok=True)
    lib = prefix / "lib" / "demo_nodes_py"
    lib.mkdir(parents=True, exist_ok=True)
    for name, module, function in scripts:
        (lib / name).write_text(
            f"#!/usr/bin/env python3\nimport sys\nsys.path.insert(0, {str(source)!r})\n"
            f"from {module} import {function}\nsys.exit({function}())\n")
        (lib / name).chmod(0o755)
    return [name for name, _, _ in scripts]


def install_packages(checkout, names, prefix):
    """The interface packages ``names`` of ``checkout`` in ament's layout under ``prefix``,
    as colcon installs their definition files (``share/PKG/{msg,srv}`` and the index's
    marker); what the build would generate (``.idl`` files from ``.msg`` ones) is not
    made. Returns the packages found."""
    found = []
    for name in names:
        source = checkout / name
        if not (source / "package.xml").is_file():
            continue
        share = prefix / "share" / name
        for kind in ("msg", "srv", "action"):
            for f in sorted((source / kind).glob("*.*")) if (source / kind).is_dir() else []:
                (share / kind).mkdir(parents=True, exist_ok=True)
                (share / kind / f.name).write_bytes(f.read_bytes())
        (share / "package.xml").write_bytes((source / "package.xml").read_bytes())
        index = prefix / "share" / "ament_index" / "resource_index" / "packages"
        index.mkdir(parents=True, exist_ok=True)
        (index / name).write_text("")
        found.append(name)
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=pathlib.Path)
    parser.add_argument("--suite", choices=sorted(SUITES), default="rclpy")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--demos", type=pathlib.Path,
                        help="a ros2/demos checkout: its demo_nodes_py, installed for the "
                        "launch_ros suite (the programs its tests start)")
    parser.add_argument("--kairos", default=str(pathlib.Path(__file__).resolve().parents[3]
                                                / "target" / "release" / "kairos"))
    args = parser.parse_args()
    folders = SUITES[args.suite]
    pattern = "**/test_*.py" if args.suite in RECURSIVE else "test_*.py"
    tests = [t for folder in folders for t in sorted((args.checkout / folder).glob(pattern))
             if t.name not in LINTERS]
    tests += [t for folder in folders for glob in LAUNCH_TEST_GLOBS.get(args.suite, [])
              for t in sorted((args.checkout / folder).glob(glob)) if t not in tests]
    if args.only:
        tests = [t for t in tests if t.name in args.only]
    if args.suite == "launch" and subprocess.run(
            [sys.executable, "-c", "import osrf_pycommon"], capture_output=True).returncode:
        sys.exit("ros2/launch's tests import osrf_pycommon: pip install osrf-pycommon")
    if not tests:
        sys.exit(f"no test_*.py under {', '.join(folders)} of {args.checkout}: give a ros2/"
                 f"{args.suite} checkout")
    totals = {"tests": 0, "passed": 0, "failures": 0, "errors": 0, "skipped": 0}
    print("| file | tests | passed | failed | errors | skipped | why none ran |")
    print("|---|---:|---:|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory() as workdir:
        prefix_env = {}
        if args.suite == "rosbag2":
            # rosbag2_py's definition tests read rosbag2's test package from an install.
            prefix = pathlib.Path(workdir) / "install"
            if install_packages(args.checkout, ["rosbag2_test_msgdefs"], prefix):
                prefix_env["AMENT_PREFIX_PATH"] = os.pathsep.join(
                    p for p in (str(prefix), os.environ.get("AMENT_PREFIX_PATH", "")) if p)
        if args.demos is not None:
            prefix = pathlib.Path(workdir) / "demos-install"
            install_demo_nodes_py(args.demos, prefix)
            prefix_env["AMENT_PREFIX_PATH"] = os.pathsep.join(
                p for p in (str(prefix), os.environ.get("AMENT_PREFIX_PATH", "")) if p)
        launch_prefix = {}
        if args.suite in LAUNCH_TEST_PACKAGES:
            prefix = pathlib.Path(workdir) / "launch-test-install"
            install_executables(args.checkout, LAUNCH_TEST_PACKAGES[args.suite], prefix,
                                args.kairos)
            launch_prefix = {"AMENT_PREFIX_PATH": os.pathsep.join(
                p for p in (str(prefix), os.environ.get("AMENT_PREFIX_PATH", "")) if p)}
        for test in tests:
            if is_launch_test(test):
                companions = Companions(args.kairos, [])
                try:
                    r = run_launch_test(test, args.timeout, workdir, args.kairos,
                                        dict(companions.env, **launch_prefix),
                                        LAUNCH_ARGUMENTS.get(args.suite, []))
                finally:
                    companions.close()
                for key in totals:
                    totals[key] += r[key]
                note = r["note"].replace("|", "\\|")
                print(f"| {test.relative_to(args.checkout)} | {r['tests']} | {r['passed']} | "
                      f"{r['failures']} | {r['errors']} | {r['skipped']} | {note} |",
                      flush=True)
                continue
            programs = COMPANIONS.get(test.relative_to(args.checkout).as_posix())
            companions = Companions(args.kairos, programs) if programs is not None else None
            extra = dict(companions.env) if companions else {}
            extra.update(prefix_env)
            extra.update(launch_prefix)
            # LaunchService, rosbag2_py's Player and Recorder run this kairos binary.
            extra["KAIROS_BIN"] = args.kairos
            helpers = [str(args.checkout / p) for p in SUITE_PATHS.get(args.suite, [])]
            if helpers:
                extra["PYTHONPATH"] = os.pathsep.join(
                    helpers + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                               if p])
            if args.suite == "rosbag2":
                # rosbag2_py's tests find their bags here; Player and Recorder run kairos.
                extra["ROSBAG2_PY_TEST_RESOURCES_DIR"] = str(
                    args.checkout / "rosbag2_py" / "test" / "resources")
            try:
                r = run_file(test, args.timeout, workdir, extra,
                             PYTEST_OPTIONS.get(args.suite, ()))
            finally:
                if companions:
                    companions.close()
            for key in totals:
                totals[key] += r[key]
            note = r["note"].replace("|", "\\|")
            print(f"| {test.relative_to(args.checkout)} | {r['tests']} | {r['passed']} | {r['failures']} | "
                  f"{r['errors']} | {r['skipped']} | {note} |", flush=True)
    print(f"| **total** | {totals['tests']} | {totals['passed']} | {totals['failures']} | "
          f"{totals['errors']} | {totals['skipped']} | |")


if __name__ == "__main__":
    main()
