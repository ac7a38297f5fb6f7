//! Ctrl-C always ends a kairos program: with no executor to shut down, the first SIGINT
//! exits at once with status 130 (128 + SIGINT) and says why, instead of being swallowed
//! by the handler the first node installed.

mod support;

use kairos::graph::{Context, Node};
use rustix::process::Signal;
use std::process::Command;
use std::time::Duration;
use support::{finish_within, send_signal, spawn_until_line};

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
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "--exact",
            "ctrl_c_without_a_spinning_executor_exits_at_once",
            "--nocapture",
        ])
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
