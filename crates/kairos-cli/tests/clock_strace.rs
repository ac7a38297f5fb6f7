//! The kernel only waits on the monotonic clock: under strace, a process that sleeps on the
//! system clock and runs a system-clock and a steady timer makes no futex wait with
//! FUTEX_CLOCK_REALTIME and no clock_nanosleep on CLOCK_REALTIME.

mod cli_support;
use cli_support::{kairos, run_ok};
use kairos_testkit::require_tool;
use std::process::Command;

/// Lines of an `strace -f -e trace=futex,clock_nanosleep` log that wait on the wall clock:
/// a `clock_nanosleep` on `CLOCK_REALTIME`, or a futex wait with `FUTEX_CLOCK_REALTIME` and
/// a timeout (glibc's `pthread_join` sets the flag on an untimed wait, where no clock is
/// involved).
fn realtime_waits(log: &str) -> Vec<&str> {
    log.lines()
        .filter(|l| {
            (l.contains("FUTEX_CLOCK_REALTIME") && !l.contains("NULL"))
                || (l.contains("clock_nanosleep") && l.contains("CLOCK_REALTIME"))
        })
        .collect()
}

fn strace(args: &[&str], program: &mut Command) -> String {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("strace.log");
    let mut cmd = Command::new("strace");
    cmd.args(["-f", "-qq", "-e", "trace=futex,clock_nanosleep", "-o"])
        .arg(&log)
        .args(args);
    cmd.arg(program.get_program()).args(program.get_args());
    run_ok(&mut cmd);
    std::fs::read_to_string(&log).unwrap()
}

#[test]
fn system_and_steady_waits_never_ask_the_kernel_for_realtime() {
    require_tool("strace", "strace");
    let log = strace(&[], kairos().args(["internal", "wait-on-clocks"]));
    let timed_waits = log
        .lines()
        .filter(|l| l.contains("FUTEX_WAIT") && !l.contains("NULL"))
        .count();
    assert!(
        timed_waits > 0,
        "strace saw no timed futex wait at all; the test would prove nothing:\n{log}"
    );
    let bad = realtime_waits(&log);
    assert!(bad.is_empty(), "realtime waits found:\n{}", bad.join("\n"));
}

#[test]
fn the_check_detects_a_realtime_wait_when_there_is_one() {
    require_tool("strace", "strace");
    // coreutils `sleep` goes through clock_nanosleep(CLOCK_REALTIME): the parser must flag it.
    let log = strace(&[], Command::new("sleep").arg("0.01"));
    assert!(
        !realtime_waits(&log).is_empty(),
        "parser missed a realtime wait:\n{log}"
    );
}
