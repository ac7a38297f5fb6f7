//! `kairos launch-test`: launch tests written as ROS 2's `launch_testing` has users write
//! them (a description with `ReadyToTest`, tests during the launch and after it), run on
//! the kairos launcher. Each run ends, whatever its tests or processes do: a launch that
//! ends first, a `ReadyToTest` never reached, a test that never returns, post-shutdown
//! tests that never return; and the exit status says how the tests went.

mod zenoh_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};
use zenoh_support::{finish, spawn};

/// Far past what any run here takes; a run that reaches it has hung.
const LIMIT: Duration = Duration::from_secs(120);

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write a launch test");
    path
}

fn launch_test(file: &Path, extra: &[&str]) -> Command {
    let mut cmd = zenoh_support::kairos();
    cmd.arg("launch-test")
        .arg(file)
        .args(extra)
        .arg("--no-router")
        .env("PYTHONPATH", zenoh_support::kairos_python_path());
    cmd
}

/// Runs `cmd`; returns its output, its standard output and error as text, and how long it
/// took.
fn run(cmd: &mut Command) -> (Output, String, String, Duration) {
    let started = Instant::now();
    let out = finish(spawn(cmd), LIMIT);
    let took = started.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out, stdout, stderr, took)
}

const PASSING: &str = r#"
import sys
import unittest

import launch
import launch.actions
import launch_testing
import launch_testing.actions
import launch_testing.asserts

COUNTER = """
import signal
# Blocked before the first line: the launch's SIGINT may come while the loops are still
# printed, and stays pending until sigwait takes it. (A handler that sets a
# threading.Event deadlocks when the signal lands while the main thread holds the
# Event's lock, on its way into wait: the launch then ends the process with SIGTERM.)
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
print('Starting Up', flush=True)
for n in range(5):
    print('Loop', n, flush=True)
signal.sigwait({signal.SIGINT})
print('Shutting Down', flush=True)
"""


def generate_test_description():
    counter = launch.actions.ExecuteProcess(
        cmd=[sys.executable, '-c', COUNTER, launch.substitutions.LaunchConfiguration('word')],
        name='counter', output='screen')
    return launch.LaunchDescription([
        launch.actions.DeclareLaunchArgument('word', default_value='none'),
        counter,
        launch_testing.actions.ReadyToTest(),
    ]), {'counter': counter, 'answer': 42}


class TestDuringTheLaunch(unittest.TestCase):

    def test_counts_to_three(self, proc_output, counter):
        proc_output.assertWaitFor('Loop 3', process=counter, timeout=60, stream='stdout')

    def test_is_running(self, proc_info, counter):
        proc_info.assertWaitForStartup(process=counter, timeout=60)

    def test_context_and_arguments(self, answer, test_args):
        self.assertEqual(answer, 42)
        self.assertEqual(test_args, {'word': 'hello'})


@launch_testing.post_shutdown_test()
class TestAfterShutdown(unittest.TestCase):

    def test_exit_codes(self, proc_info):
        launch_testing.asserts.assertExitCodes(proc_info)

    def test_output_in_order(self, proc_output, counter):
        with launch_testing.asserts.assertSequentialStdout(proc_output, counter) as cm:
            cm.assertInStdout('Starting Up')
            for n in range(4):
                cm.assertInStdout(f'Loop {n}')
            cm.assertInStdout('Shutting Down')

    def test_the_process_got_its_argument(self, counter):
        self.assertEqual(counter.process_details['cmd'][-1], 'hello')
        self.assertTrue(counter.process_details['name'].startswith('counter'))
"#;

/// A launch test whose tests pass: the tests during the launch wait for its output, the
/// launch is then stopped, and the post-shutdown tests read what was recorded; the exit
/// status is 0 and the JUnit report counts every test.
#[test]
fn a_passing_launch_test_runs_its_tests_during_and_after_the_launch() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "counter_launch_test.py", PASSING);
    let junit = dir.path().join("report.xml");
    let (out, stdout, stderr, _) = run(launch_test(&file, &["word:=hello"])
        .arg("--junit-xml")
        .arg(&junit));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    for test in [
        "test_counts_to_three",
        "test_is_running",
        "test_context_and_arguments",
        "test_exit_codes",
        "test_output_in_order",
        "test_the_process_got_its_argument",
    ] {
        assert!(
            stderr.contains(&format!("{test} (")) && !stderr.contains("FAIL"),
            "{test} did not pass:\n{stderr}"
        );
    }
    assert!(
        stderr.contains("passed: 6 passed, 0 failed, 0 errors, 0 skipped"),
        "{stderr}"
    );
    // The tests being done is what stopped the launch, on SIGINT, cleanly.
    assert!(stdout.contains("(the tests are done)"), "{stdout}");
    assert!(stdout.contains("[counter-1] Shutting Down"), "{stdout}");
    let report = std::fs::read_to_string(&junit).expect("the JUnit report");
    assert!(
        report.contains(r#"tests="6""#) && report.contains(r#"failures="0""#),
        "{report}"
    );
}

/// A failing test fails the run (exit 1) and the report says which and why.
#[test]
fn a_failing_test_fails_the_run_and_says_which() {
    let dir = tempfile::tempdir().unwrap();
    let text = PASSING.replace(
        "self.assertEqual(answer, 42)",
        "self.assertEqual(answer, 43, 'the answer is wrong')",
    );
    let file = write(dir.path(), "failing_launch_test.py", &text);
    let (out, stdout, stderr, _) = run(&mut launch_test(&file, &["word:=hello"]));
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("FAIL: test_context_and_arguments")
            && stderr.contains("the answer is wrong"),
        "{stderr}"
    );
    assert!(
        stderr.contains("FAILED: 5 passed, 1 failed, 0 errors"),
        "{stderr}"
    );
}

/// Processes that all end before the tests are done (and no `keep_alive`) end the
/// launch: the run fails at once, saying so and quoting the failed process's output,
/// instead of waiting for the test's own timeout.
#[test]
fn a_launch_that_ends_before_its_tests_fails_the_run_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "early_launch_test.py",
        r#"
import unittest
import launch
import launch.actions
import launch_testing.actions


def generate_test_description():
    return launch.LaunchDescription([
        launch.actions.ExecuteProcess(cmd=['sh', '-c', 'echo about to fail; exit 4'],
                                      name='quitter'),
        launch_testing.actions.ReadyToTest(),
    ])


class TestNeverSatisfied(unittest.TestCase):

    def test_waits_for_what_never_comes(self, proc_output):
        proc_output.assertWaitFor('never printed', timeout=600)
"#,
    );
    let (out, stdout, stderr, took) = run(&mut launch_test(&file, &[]));
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("Processes under test stopped before tests completed"),
        "{stderr}"
    );
    assert!(
        stderr.contains("Process 'quitter-1' exited with 4") && stderr.contains("about to fail"),
        "{stderr}"
    );
    assert!(
        stderr.contains("FAILED: the launch ended before its tests"),
        "{stderr}"
    );
    assert!(
        took < Duration::from_secs(300),
        "the run waited for the test's own 600 s timeout ({took:?})"
    );
}

/// A `ReadyToTest` that is never reached fails the run once its timeout has passed
/// (`ready_to_test_action_timeout`), and the launch is stopped.
#[test]
fn a_ready_to_test_never_reached_fails_the_run_after_its_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "never_ready_launch_test.py",
        r#"
import unittest
import launch
from launch.actions import TimerAction
import launch_testing
import launch_testing.util
from launch_testing.actions import ReadyToTest


@launch_testing.ready_to_test_action_timeout(1)
def generate_test_description():
    return launch.LaunchDescription([
        launch_testing.util.KeepAliveProc(),
        TimerAction(period=3600.0, actions=[ReadyToTest()]),
    ])


class TestNeverRuns(unittest.TestCase):

    def test_nothing(self):
        pass
"#,
    );
    let (out, stdout, stderr, _) = run(&mut launch_test(&file, &[]));
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains(
            "Timed out waiting for processes to start up: ReadyToTest was not reached within 1 s"
        ),
        "{stderr}"
    );
    assert!(
        stdout.contains("stopping every process"),
        "the launch was not stopped: {stdout}"
    );
}

/// `--timeout` bounds a run whose test never returns: the launch is stopped as Ctrl-C
/// stops it, and the run fails.
#[test]
fn the_timeout_bounds_a_test_that_never_returns() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "stuck_launch_test.py",
        r#"
import threading
import unittest
import launch
import launch_testing.actions
import launch_testing.markers
import launch_testing.util


@launch_testing.markers.keep_alive
def generate_test_description():
    return launch.LaunchDescription([
        launch_testing.util.KeepAliveProc(),
        launch_testing.actions.ReadyToTest(),
    ])


class TestStuck(unittest.TestCase):

    def test_never_returns(self):
        threading.Event().wait()
"#,
    );
    let (out, stdout, stderr, took) = run(launch_test(&file, &[]).args(["--timeout", "3"]));
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("the run reached its deadline (--timeout): stopping every process"),
        "{stdout}"
    );
    assert!(
        stderr.contains("Processes under test stopped before tests completed"),
        "{stderr}"
    );
    assert!(took < LIMIT, "{took:?}");
}

/// Post-shutdown tests that never return are cut off after `--post-shutdown-timeout`:
/// the driver is killed and the run fails, saying so.
#[test]
fn post_shutdown_tests_that_never_return_are_cut_off() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "stuck_after_launch_test.py",
        r#"
import threading
import unittest
import launch
import launch_testing
import launch_testing.actions
import launch_testing.util


def generate_test_description():
    return launch.LaunchDescription([
        launch_testing.util.KeepAliveProc(),
        launch_testing.actions.ReadyToTest(),
    ])


@launch_testing.post_shutdown_test()
class TestStuckAfter(unittest.TestCase):

    def test_never_returns(self):
        threading.Event().wait()
"#,
    );
    let (out, stdout, stderr, _) =
        run(launch_test(&file, &[]).args(["--post-shutdown-timeout", "2"]));
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains(
            "the post-shutdown tests did not end within 2.0 s: the test driver was killed"
        ),
        "{stderr}"
    );
}

/// A parametrized description is one launch per value, each with its own tests, and one
/// JUnit report of them all.
#[test]
fn a_parametrized_description_is_one_launch_per_value() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "param_launch_test.py",
        r#"
import unittest
import launch
import launch.actions
import launch_testing
import launch_testing.actions
import launch_testing.util


@launch_testing.parametrize('word', ['alpha', 'beta'])
def generate_test_description(word):
    echo = launch.actions.ExecuteProcess(cmd=['echo', 'said ' + word])
    return launch.LaunchDescription([
        echo, launch_testing.util.KeepAliveProc(), launch_testing.actions.ReadyToTest(),
    ]), {'echo': echo}


class TestSaid(unittest.TestCase):

    def test_said_the_word(self, proc_output, echo, word):
        proc_output.assertWaitFor('said ' + word, process=echo, timeout=60, stream='stdout')
"#,
    );
    let junit = dir.path().join("report.xml");
    let (out, stdout, stderr, _) = run(launch_test(&file, &[]).arg("--junit-xml").arg(&junit));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    for word in ["alpha", "beta"] {
        assert!(
            stderr.contains(&format!(
                "param_launch_test.py [word={word}]: passed: 1 passed"
            )),
            "{stderr}"
        );
    }
    let report = std::fs::read_to_string(&junit).expect("the JUnit report");
    assert_eq!(report.matches("<testsuite ").count(), 2, "{report}");
}

/// A test can launch a process of its own into the running launch
/// (`launch_testing.tools.launch_process`) and watch it to its end.
#[test]
fn a_test_launches_and_watches_a_process_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "tools_launch_test.py",
        r#"
import sys
import unittest
import launch
import launch.actions
import launch_testing.actions
import launch_testing.asserts
import launch_testing.markers
import launch_testing.tools


@launch_testing.markers.keep_alive
def generate_test_description():
    return launch.LaunchDescription([launch_testing.actions.ReadyToTest()])


class TestOwnProcess(unittest.TestCase):

    def test_runs_a_process(self, launch_service, proc_info, proc_output):
        action = launch.actions.ExecuteProcess(
            cmd=[sys.executable, '-c', 'print("working", flush=True); raise SystemExit(3)'],
            name='worker')
        with launch_testing.tools.launch_process(
                launch_service, action, proc_info, proc_output) as worker:
            self.assertTrue(worker.wait_for_shutdown(timeout=60))
        self.assertEqual(worker.exit_code, 3)
        self.assertIn('working', worker.stdout)
        launch_testing.asserts.assertExitCodes(proc_info, [3], process=action)
"#,
    );
    let (out, stdout, stderr, _) = run(&mut launch_test(&file, &[]));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("[INFO] [worker-1]"), "{stdout}");
}

/// A file that cannot be a launch test names the reason and starts nothing (exit 2).
#[test]
fn a_file_that_is_no_launch_test_starts_nothing() {
    let cases = [
        (
            "import launch\n\ndef generate_launch_description():\n    return launch.LaunchDescription([])\n",
            "is not a launch test: it has no generate_test_description()",
        ),
        (
            "import launch\nimport launch.actions\n\ndef generate_test_description():\n    return launch.LaunchDescription([launch.actions.ExecuteProcess(cmd=['sleep', '100'])])\n",
            "must return a LaunchDescription containing a ReadyToTest action",
        ),
    ];
    for (text, expected) in cases {
        let dir = tempfile::tempdir().unwrap();
        let file = write(dir.path(), "bad_launch_test.py", text);
        let (out, stdout, stderr, _) = run(&mut launch_test(&file, &[]));
        assert_eq!(out.status.code(), Some(2), "{text}\n{stdout}\n{stderr}");
        assert!(stderr.contains(expected), "{text}\n{stderr}");
        assert!(stderr.contains("nothing was started"), "{stderr}");
        assert!(!stdout.contains("process started"), "{stdout}");
    }
}
