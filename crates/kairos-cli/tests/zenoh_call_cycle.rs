//! A call cycle across processes is `WouldDeadlock`, as in one process (issue: the
//! deadlock check saw no callbacks for a remote service, so both sides blocked until a
//! transport timeout). Two kairos processes on a router of the test's own, each one node
//! whose default group holds its service; the calls' own timeout is 60 s, so a detector
//! that misses the cycle makes the test fail on its bound, not pass late.

mod zenoh_support;

use std::io::Write;
use std::time::Duration;
use zenoh_support::*;

/// Far under the calls' 60 s timeout, far over what detection takes on a loaded machine.
const BOUND_MS: f64 = 10_000.0;
const LIMIT: Duration = Duration::from_secs(60);

struct Call {
    who: String,
    outcome: String,
    ms: f64,
    detail: String,
}

fn parse(line: &str) -> Option<Call> {
    let rest = line.strip_prefix("call ")?;
    let mut parts = rest.splitn(4, ' ');
    Some(Call {
        who: parts.next()?.to_owned(),
        outcome: parts.next()?.to_owned(),
        ms: parts.next()?.parse().ok()?,
        detail: parts.next().unwrap_or_default().to_owned(),
    })
}

/// Starts both roles in `mode` and returns each one's call lines once its `done` lines came.
/// In `race`, both timers hold their groups (each says `holding`) before the test tells
/// both to call, one right after the other: the cycle is certain on any machine.
fn run(mode: &str, dones: [usize; 2]) -> Vec<Call> {
    let router = Router::start(KAIROS);
    let mut children = Vec::new();
    for role in ["a", "b"] {
        let mut child = spawn(
            router
                .kairos()
                .args(["internal", "call-cycle", role, "--mode", mode])
                .arg("--go-on-stdin")
                .env("KAIROS_TRANSPORT", "zenoh")
                .stdin(std::process::Stdio::piped()),
        );
        let mut lines = stdout_lines(&mut child);
        lines.wait_for("ready", LIMIT);
        children.push((child, lines));
    }
    if mode == "race" {
        for (_, lines) in children.iter_mut() {
            lines.wait_for("holding", LIMIT);
        }
        for (child, _) in children.iter_mut() {
            let stdin = child.0.stdin.as_mut().expect("the child's stdin");
            stdin.write_all(b"go\n").expect("tell the child to call");
            stdin.flush().unwrap();
        }
    }
    let mut calls = Vec::new();
    for ((_, lines), dones) in children.iter_mut().zip(dones) {
        lines.wait_for_count("done", dones, LIMIT);
        calls.extend(lines.seen_now().iter().filter_map(|l| parse(l)));
    }
    calls
}

#[test]
fn a_service_that_calls_back_into_its_callers_held_group_gets_would_deadlock() {
    // a's timer -> b's service -> a's service (in the group a's timer holds).
    let calls = run("chain", [1, 1]);
    let inner = calls
        .iter()
        .find(|c| c.who == "b-service")
        .expect("b's service reported its call");
    assert_eq!(inner.outcome, "would_deadlock", "{}", inner.detail);
    assert!(inner.ms < BOUND_MS, "detected late: {} ms", inner.ms);
    // The error names both callbacks and both processes.
    for name in ["/cycle_a/add", "/cycle_b/add", "timer", "pid"] {
        assert!(
            inner.detail.contains(name),
            "'{name}' missing: {}",
            inner.detail
        );
    }
    let outer = calls
        .iter()
        .find(|c| c.who == "a-timer")
        .expect("a's timer reported its call");
    assert_eq!(
        (outer.outcome.as_str(), outer.detail.as_str()),
        ("completed", "sum -1"),
        "a's call completes with b's answer once b's callback returns"
    );
    assert!(outer.ms < BOUND_MS, "a waited {} ms", outer.ms);
}

#[test]
fn two_timers_calling_each_other_at_once_one_gives_way() {
    let calls = run("race", [1, 1]);
    let outcomes: Vec<(&str, &str)> = calls
        .iter()
        .map(|c| (c.who.as_str(), c.outcome.as_str()))
        .collect();
    let deadlocks = calls
        .iter()
        .filter(|c| c.outcome == "would_deadlock")
        .count();
    let completed = calls.iter().filter(|c| c.outcome == "completed").count();
    assert_eq!(
        (deadlocks, completed),
        (1, 1),
        "exactly one call gives way and the other completes: {outcomes:?}"
    );
    for call in &calls {
        assert!(
            call.ms < BOUND_MS,
            "{} took {} ms: {}",
            call.who,
            call.ms,
            call.detail
        );
    }
}
