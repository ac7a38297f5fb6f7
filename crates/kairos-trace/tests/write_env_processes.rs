//! `KAIROS_TRACE=<dir>` traces every process that inherits it.
//!
//! A robot is several processes started together with one environment (a launch file; the
//! reference ROS 2 trace holds three). `Session::from_env` gives each process its own
//! trace under `<dir>` (`<procname>-<pid>-<time>`), as LTTng does, and babeltrace2 reads
//! `<dir>` as one trace; were they to share `<dir>`, every process after the first would
//! fail with `TraceExists`.

mod write_support;

use kairos_trace::{Session, tp};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Stdio};

const CHILD: &str = "KAIROS_TRACE_TEST_ENV_CHILD";

/// A traced process: starts from the environment, says so, traces one event once told
/// to (a line on stdin), and stops.
fn run_child() {
    let session = Session::from_env();
    println!("\nstarted: {}", session.is_ok());
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).unwrap();
    let session = session
        .expect("every process of the robot starts tracing")
        .expect("KAIROS_TRACE is set");
    tp::rcl_node_init(0x1, 0x2, "node", "/");
    session.stop().expect("the session stops cleanly");
}

fn spawn_child(dir: &std::path::Path) -> (Child, BufReader<std::process::ChildStdout>) {
    let mut child = kairos_testkit::rerun_self("processes_sharing_kairos_trace_are_all_traced")
        .env(CHILD, "1")
        .env(kairos_trace::write::ENV_VAR, dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while !line.starts_with("started:") {
        line.clear();
        assert_ne!(stdout.read_line(&mut line).unwrap(), 0, "child ended early");
    }
    (child, stdout)
}

#[test]
fn processes_sharing_kairos_trace_are_all_traced() {
    if std::env::var_os(CHILD).is_some() {
        run_child();
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("robot");
    // Both processes run at once, as a launch starts them.
    let mut children = [spawn_child(&trace), spawn_child(&trace)];
    let mut failures = Vec::new();
    for (child, stdout) in &mut children {
        child.stdin.as_mut().unwrap().write_all(b"go\n").unwrap();
        let mut rest = String::new();
        let _ = std::io::Read::read_to_string(stdout, &mut rest);
        let status = child.wait().unwrap();
        if !status.success() {
            failures.push(rest);
        }
    }
    assert!(
        failures.is_empty(),
        "a process given KAIROS_TRACE could not trace:\n{}",
        failures.join("\n")
    );
    let events = write_support::read_clean(&trace);
    assert_eq!(events.len(), 2, "one event from each process");
    assert_ne!(events[0].vpid, events[1].vpid);
}
