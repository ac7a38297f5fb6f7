//! The example programs of `crates/kairos/examples`, run as users run them: each is built
//! with cargo (same profile and target directory as this test) and executed as a child
//! process, so what they print and how they exit is what a user sees.
//!
//! - `sim_stall`: the stall policy of a `use_sim_time` node, chosen per node.
//! - `ctrl_c`: a spinning program gets a real SIGINT, prints its shutdown report, exits 0,
//!   and leaves a trace (started by `KAIROS_TRACE` alone) that babeltrace2 reads whole.

mod example_support;

use example_support::{example, finish_within, send_signal, spawn_until_line};
use kairos_testkit::babeltrace2_clean;
use rustix::process::Signal;
use std::process::Command;
use std::time::Duration;

/// Far beyond what either example needs; a hang fails the test instead of blocking it.
const LIMIT: Duration = Duration::from_secs(60);

#[test]
fn sim_stall_example_shows_each_policy_chosen_per_node() {
    let child = Command::new(example("sim_stall"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = finish_within(child, LIMIT).expect("the sim_stall example ends");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "exit {}: {stdout}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let line = |prefix: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no `{prefix}` line in {stdout}"))
            .to_owned()
    };
    assert!(line("fail:").contains("simulation time stalled at 12 s (sim)"));
    assert!(line("fallback_to_steady:").contains("slept 50 ms of simulated time"));
    assert!(line("wait:").contains("still waiting for the simulator"));
}

#[test]
fn ctrl_c_shuts_the_executor_down_reports_and_leaves_a_whole_trace() {
    let traces = tempfile::tempdir().unwrap();
    let mut command = Command::new(example("ctrl_c"));
    command
        .env(kairos::trace::ENV_VAR, traces.path())
        .env_remove(kairos::signal::ENV_VAR);
    // Ready once messages flow: the first one heard is printed.
    let (child, _) = spawn_until_line(&mut command, "heard the first message");
    send_signal(&child, Signal::INT);
    let out = finish_within(child, LIMIT).expect("SIGINT ends the spinning example");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout: {stdout}\nstderr: {stderr}"
    );
    assert!(
        stdout.contains("spin returned after Ctrl-C"),
        "main went on after spin: {stdout}"
    );
    assert!(
        stderr.contains("kairos: SIGINT: shutting down 1 executor(s)")
            && stderr.contains("kairos: clean shutdown after"),
        "the shutdown report is printed: {stderr}"
    );
    assert!(!stderr.contains("Duration {"), "{stderr}");

    // The trace: one folder for the process, read whole by babeltrace2 (no warning, no
    // truncated packet), holding the talker's callbacks up to the end.
    let folders: Vec<_> = std::fs::read_dir(traces.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(
        folders.len(),
        1,
        "one trace folder per process: {folders:?}"
    );
    let text = babeltrace2_clean(&[], traces.path());
    let node_inits = text
        .lines()
        .filter(|l| l.contains("ros2:rcl_node_init"))
        .count();
    assert_eq!(node_inits, 2, "talker and listener are traced");
    assert!(
        text.lines()
            .filter(|l| l.contains("ros2:callback_end"))
            .count()
            > 0,
        "callbacks are traced"
    );
}

#[test]
fn opting_out_leaves_ctrl_c_its_default_action() {
    let mut command = Command::new(example("ctrl_c"));
    command.env(kairos::signal::ENV_VAR, "0");
    // SIGINT's default action, whatever this test inherited: a shell runs a background
    // job (`scripts/test &`) with SIGINT ignored, and its children would ignore it too.
    use std::os::unix::process::CommandExt;
    // SAFETY: `signal` is async-signal-safe, and the closure touches nothing else between
    // fork and exec.
    unsafe {
        command.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        });
    }
    let (child, _) = spawn_until_line(&mut command, "heard the first message");
    send_signal(&child, Signal::INT);
    let out = finish_within(child, LIMIT).expect("SIGINT ends the example");
    let stderr = String::from_utf8_lossy(&out.stderr);
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        out.status.signal(),
        Some(Signal::INT.as_raw()),
        "killed by SIGINT, as without kairos: {stderr}"
    );
    assert!(!stderr.contains("kairos: SIGINT"), "{stderr}");
}
