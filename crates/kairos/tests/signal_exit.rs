//! Ctrl-C always ends a kairos program: with no executor to shut down, the first SIGINT
//! exits at once with status 130 (128 + SIGINT) and says why, instead of being swallowed
//! by the handler the first node installed; while a shutdown waits for a stuck callback,
//! a second SIGINT exits at once.

mod example_support;

use example_support::{finish_within, send_signal, spawn_until_line};
use kairos::exec::Executor;
use kairos::graph::{Context, Node};
use rustix::process::Signal;
use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::Duration;

const CHILD: &str = "KAIROS_TEST_SIGNAL_EXIT_CHILD";

#[test]
fn ctrl_c_without_a_spinning_executor_exits_at_once() {
    if std::env::var_os(CHILD).is_some() {
        let _node = Node::new_in(&Context::new(), "idle", "/").unwrap();
        println!("ready");
        // Idle until the signal ends the process (the parent kills it after a minute).
        loop {
            std::thread::park();
        }
    }
    let mut command =
        kairos_testkit::rerun_self("ctrl_c_without_a_spinning_executor_exits_at_once");
    command
        .env(CHILD, "1")
        .env_remove(kairos::signal::ENV_VAR)
        .env_remove(kairos::trace::ENV_VAR);
    let (child, _) = spawn_until_line(&mut command, "ready");
    send_signal(&child, Signal::INT);
    let out = finish_within(child, Duration::from_secs(60)).expect("SIGINT ends the child");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("kairos: SIGINT: no executor runs a node; exiting"),
        "{stderr}"
    );
}

const STUCK_CHILD: &str = "KAIROS_TEST_SIGNAL_STUCK_CHILD";

#[test]
fn a_second_ctrl_c_exits_while_the_shutdown_waits_for_a_stuck_callback() {
    if std::env::var_os(STUCK_CHILD).is_some() {
        // The shutdown would wait a minute for this callback, which never returns.
        kairos::signal::set_shutdown_deadline(Duration::from_secs(60));
        let node = Node::new_in(&Context::new(), "stuck", "/").unwrap();
        let _timer = node
            .create_timer(Duration::from_millis(1), |_| {
                eprintln!("stuck in a callback");
                loop {
                    std::thread::park();
                }
            })
            .unwrap();
        let executor = Executor::multi_threaded(2).unwrap();
        executor.add_node(&node).unwrap();
        let _ = executor.spin();
        return;
    }
    let mut child = kairos_testkit::rerun_self(
        "a_second_ctrl_c_exits_while_the_shutdown_waits_for_a_stuck_callback",
    )
    .env(STUCK_CHILD, "1")
    .env_remove(kairos::signal::ENV_VAR)
    .env_remove(kairos::trace::ENV_VAR)
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut seen = Vec::new();
    let mut wait_for = |prefix: &str| loop {
        let mut line = String::new();
        assert_ne!(
            stderr.read_line(&mut line).unwrap(),
            0,
            "the child ended before `{prefix}`: {seen:?}"
        );
        seen.push(line.clone());
        if line.starts_with(prefix) {
            return;
        }
    };
    wait_for("stuck in a callback");
    send_signal(&child, Signal::INT);
    wait_for("kairos: SIGINT: shutting down 1 executor(s), deadline 60 s");
    send_signal(&child, Signal::INT);
    wait_for("kairos: SIGINT again: exiting now");
    child.stderr = Some(stderr.into_inner());
    // Well within the minute the shutdown would wait.
    let out = finish_within(child, Duration::from_secs(20)).expect("the second SIGINT exits");
    assert_eq!(out.status.code(), Some(130));
}

const CALLER_CHILD: &str = "KAIROS_TEST_SIGNAL_CALLER_CHILD";

/// A `call()` made from `main` (no executor of its own to shut down) ends on Ctrl-C,
/// where it would wait for its own hour-long timeout.
#[test]
fn ctrl_c_ends_a_call_made_from_main() {
    if std::env::var_os(CALLER_CHILD).is_some() {
        kairos::signal::set_shutdown_deadline(Duration::from_millis(100));
        let context = Context::new();
        let server = Node::new_in(&context, "server", "/").unwrap();
        // The service never answers: its callback waits for ever.
        let _service = server
            .create_service("slow", |_: i64| -> i64 {
                println!("ready");
                loop {
                    std::thread::park();
                }
            })
            .unwrap();
        let executor = Executor::multi_threaded(2).unwrap();
        executor.add_node(&server).unwrap();
        std::thread::spawn(move || executor.spin());
        let caller = Node::new_in(&context, "caller", "/").unwrap();
        let client = caller.create_client::<fn(i64) -> i64>("slow").unwrap();
        let result = client.call(1, Duration::from_secs(3600));
        eprintln!("call ended: {result:?}");
        std::process::exit(0);
    }
    let mut command = kairos_testkit::rerun_self("ctrl_c_ends_a_call_made_from_main");
    command
        .env(CALLER_CHILD, "1")
        .env_remove(kairos::signal::ENV_VAR)
        .env_remove(kairos::trace::ENV_VAR);
    let (child, _) = spawn_until_line(&mut command, "ready");
    send_signal(&child, Signal::INT);
    let out = finish_within(child, Duration::from_secs(60)).expect("SIGINT ends the call");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("call ended: Err(ProgramShutDown"),
        "{stderr}"
    );
}

const ORPHAN_CHILD: &str = "KAIROS_TEST_SIGNAL_ORPHAN_CHILD";

/// A program whose stdout and stderr are closed pipes (its launcher died, or `| head`
/// ended) still stops on SIGINT: what the handler says cannot be written, and saying it
/// must not cost the shutdown (an `eprintln!` panic there left the program deaf to every
/// later signal).
#[test]
fn ctrl_c_stops_a_program_whose_output_pipes_are_closed() {
    if std::env::var_os(ORPHAN_CHILD).is_some() {
        let node = Node::new_in(&Context::new(), "orphan", "/").unwrap();
        let _timer = node
            .create_timer(Duration::from_millis(10), |_| {})
            .unwrap();
        let executor = Executor::single_threaded();
        executor.add_node(&node).unwrap();
        println!("ready");
        let _ = executor.spin();
        // Spin returned: the shutdown worked. Exit without the test harness's report,
        // which would write to the closed stdout.
        std::process::exit(0);
    }
    let mut command =
        kairos_testkit::rerun_self("ctrl_c_stops_a_program_whose_output_pipes_are_closed");
    command
        .env(ORPHAN_CHILD, "1")
        .env_remove(kairos::signal::ENV_VAR)
        .env_remove(kairos::trace::ENV_VAR);
    let (mut child, _) = spawn_until_line(&mut command, "ready");
    drop(child.stdout.take());
    drop(child.stderr.take());
    send_signal(&child, Signal::INT);
    let out = finish_within(child, Duration::from_secs(60))
        .expect("SIGINT stops a program whose stderr is a closed pipe");
    assert_eq!(out.status.code(), Some(0));
}
