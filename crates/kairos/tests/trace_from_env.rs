//! `KAIROS_TRACE=<dir>` traces any kairos program, including one that never calls
//! `kairos::trace::init_from_env`: the first node starts the session, and the process's
//! exit writes its end, so babeltrace2 reads the trace whole. A trace that cannot start
//! says why in a sentence, and the program runs on untraced.

use kairos::exec::Executor;
use kairos::graph::{Context, Node, Qos};
use kairos_testkit::babeltrace2_clean;

const CHILD: &str = "KAIROS_TEST_TRACE_FROM_ENV_CHILD";

/// The traced program: a talker and a listener, no tracing code at all.
fn run_child() {
    let context = Context::new();
    let talker = Node::new_in(&context, "env_talker", "/").unwrap();
    let listener = Node::new_in(&context, "env_listener", "/").unwrap();
    let publisher = talker
        .create_publisher::<u32>("numbers", Qos::keep_last(10))
        .unwrap();
    let _subscription = listener
        .create_subscription("numbers", Qos::keep_last(10), |_: &u32| {})
        .unwrap();
    let executor = Executor::single_threaded();
    executor.add_node(&listener).unwrap();
    for n in 0..3 {
        publisher.publish(n);
    }
    while executor.spin_some().unwrap() > 0 {}
    println!("child done");
}

fn run_self_as_child(test: &str, trace_dir: &std::path::Path) -> std::process::Output {
    kairos_testkit::rerun_self(test)
        .arg("--test-threads=1")
        .env(CHILD, "1")
        .env(kairos::trace::ENV_VAR, trace_dir)
        .env(kairos::signal::ENV_VAR, "0")
        .output()
        .unwrap()
}

#[test]
fn a_program_that_never_calls_init_from_env_is_traced_whole() {
    if std::env::var_os(CHILD).is_some() {
        return run_child();
    }
    let traces = tempfile::tempdir().unwrap();
    let out = run_self_as_child(
        "a_program_that_never_calls_init_from_env_is_traced_whole",
        traces.path(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "child failed: {stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("child done"));
    let folders = std::fs::read_dir(traces.path()).unwrap().count();
    assert_eq!(folders, 1, "the process traced into its own folder");
    let text = babeltrace2_clean(&[], traces.path());
    for node in ["env_talker", "env_listener"] {
        assert!(
            text.lines()
                .any(|l| l.contains("ros2:rcl_node_init") && l.contains(node)),
            "node {node} is traced"
        );
    }
    // The last events, written only by the stop at exit, are there: every message taken.
    let count = |event: &str| text.lines().filter(|l| l.contains(event)).count();
    assert_eq!(count("ros2:rcl_publish:"), 3);
    assert_eq!(count("ros2:callback_end:"), 3, "{text}");
}

#[test]
fn a_trace_that_cannot_start_says_why_and_the_program_runs_on() {
    if std::env::var_os(CHILD).is_some() {
        return run_child();
    }
    let dir = tempfile::tempdir().unwrap();
    let not_a_dir = dir.path().join("file");
    std::fs::write(&not_a_dir, "not a directory").unwrap();
    let out = run_self_as_child(
        "a_trace_that_cannot_start_says_why_and_the_program_runs_on",
        &not_a_dir,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the program runs on untraced: {stderr}"
    );
    assert!(
        stderr.contains("kairos: cannot trace this process as KAIROS_TRACE asks: cannot create the trace directory"),
        "{stderr}"
    );
    assert!(!stderr.contains("{ "), "no Debug form: {stderr}");
}

#[test]
fn reusing_a_trace_folder_is_a_sentence_even_in_debug_form() {
    let dir = tempfile::tempdir().unwrap();
    let first = kairos::trace::Session::start(dir.path()).unwrap();
    first.stop().unwrap();
    let err = kairos::trace::Session::start(dir.path()).unwrap_err();
    assert!(matches!(err, kairos::trace::Error::TraceExists { .. }));
    // `fn main() -> Result<(), Box<dyn Error>>` prints the error with Debug.
    let shown = format!("{err:?}");
    assert!(
        shown.contains("already holds a trace") && shown.contains("give a new or empty directory"),
        "{shown}"
    );
    assert!(shown.starts_with("TraceExists: "), "{shown}");
    assert!(!shown.contains("path:"), "no field dump: {shown}");
}
