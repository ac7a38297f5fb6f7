//! Faults across processes, each asserting its promise with a bound far under the
//! caller's own timeout (60 s), so a call that waits for its timeout fails the test:
//! - a server killed (`kill -9`) while a call waits: the call fails within seconds,
//!   saying the server left;
//! - a server stopped (SIGSTOP) while a call waits: once Zenoh's lease on its link runs
//!   out, the server has left the graph and the call fails, long before its timeout;
//! - Ctrl-C on a caller waiting in `call()` from `main` for a server that never answers:
//!   the caller exits at once (not when a transport timeout fires).

mod zenoh_support;

use kairos_testkit::process::Running;
use std::time::{Duration, Instant};
use zenoh_support::*;

/// The bound on every wait for a process in the tests below that are not about timing.
const WAIT: Duration = Duration::from_secs(60);

/// The caller's timeout, in seconds.
const CALL_TIMEOUT: &str = "60";

/// A server (`call-cycle b --mode hang`) whose service never answers, with a caller
/// (`kairos service call`) waiting on it; returns both once the server holds the request.
fn hung_call(router: &Router) -> (Running, Running) {
    let mut server = spawn(
        router
            .kairos()
            .args(["internal", "call-cycle", "b", "--mode", "hang"])
            .env("KAIROS_TRANSPORT", "zenoh"),
    );
    let mut lines = stdout_lines(&mut server);
    lines.wait_for("ready", Duration::from_secs(60));
    let caller = spawn(router.kairos().args([
        "service",
        "call",
        "/cycle_b/add",
        "example_interfaces/srv/AddTwoInts",
        "{a: 1, b: 2}",
        "--timeout",
        CALL_TIMEOUT,
    ]));
    lines.wait_for("serving", Duration::from_secs(60));
    (server, caller)
}

fn pid(child: &Running) -> String {
    child.0.id().to_string()
}

fn signal(child: &Running, name: &str) {
    let status = std::process::Command::new("kill")
        .args([&format!("-{name}"), &pid(child)])
        .status()
        .expect("kill(1)");
    assert!(status.success(), "kill -{name} failed");
}

/// Waits for the caller to exit; returns how long it took and what it said.
fn caller_ends(caller: Running, bound: Duration) -> (Duration, String) {
    let (took, stderr, success) = caller_exits(caller, bound);
    assert!(
        !success,
        "a call to a server that left cannot succeed: {stderr}"
    );
    (took, stderr)
}

/// Waits for the caller to exit within `bound`; returns how long it took, its stderr and
/// whether it succeeded.
fn caller_exits(caller: Running, bound: Duration) -> (Duration, String, bool) {
    let started = Instant::now();
    let out = finish(caller, Duration::from_secs(90));
    let took = started.elapsed();
    eprintln!("the caller ended {took:?} after the fault");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        took < bound,
        "the caller waited {took:?} (bound {bound:?}) after the fault: {stderr}"
    );
    (took, stderr, out.status.success())
}

#[test]
fn a_call_to_a_killed_server_fails_at_once() {
    let router = Router::start(KAIROS);
    let (server, caller) = hung_call(&router);
    signal(&server, "KILL");
    // At once: well before the call's own timeout (CALL_TIMEOUT), within the liveness
    // limit whatever the machine's load.
    let (_, stderr) = caller_ends(caller, Duration::from_secs(30));
    assert!(stderr.contains("left the graph"), "{stderr}");
}

#[test]
fn a_call_to_a_stopped_server_fails_when_its_lease_runs_out() {
    let router = Router::start(KAIROS);
    let (server, caller) = hung_call(&router);
    signal(&server, "STOP");
    // Zenoh's default lease is 10 s: the server is gone from the graph after it.
    let (took, stderr) = caller_ends(caller, Duration::from_secs(40));
    signal(&server, "CONT");
    assert!(stderr.contains("left the graph"), "{stderr}");
    assert!(took > Duration::from_secs(2), "not the lease: {took:?}");
}

#[test]
fn ctrl_c_ends_a_remote_call_made_from_main_at_once() {
    let router = Router::start(KAIROS);
    let (_server, caller) = hung_call(&router);
    signal(&caller, "INT");
    let (_, stderr, success) = caller_exits(caller, Duration::from_secs(30));
    assert!(!success, "an interrupted call is no success: {stderr}");
    assert!(stderr.contains("SIGINT"), "{stderr}");
}

/// `cmd` in Zenoh client mode, connected to `router` only.
fn client(router: &Router, cmd: &mut std::process::Command) {
    cmd.env(
        "ZENOH_CONFIG_OVERRIDE",
        format!("{};mode=\"client\"", router.override_env()),
    );
}

#[test]
fn a_router_restart_in_client_mode_loses_exactly_what_the_subscriber_counts() {
    const SENT: usize = 300;
    let router = Router::start(KAIROS);
    let port = router.port;
    let mut echo_cmd = router.kairos();
    echo_chatter(&mut echo_cmd, &[]);
    client(&router, &mut echo_cmd);
    let mut echo = spawn(&mut echo_cmd);
    let mut echoed = stdout_lines(&mut echo);
    let mut pub_cmd = router.kairos();
    pub_cmd.args([
        "topic",
        "pub",
        "/chatter",
        "std_msgs/msg/String",
        "{data: x}",
        "--times",
        &SENT.to_string(),
        "--rate",
        "50",
        "--wait-matching",
        "30",
    ]);
    client(&router, &mut pub_cmd);
    let mut publisher = spawn(&mut pub_cmd);
    let mut published = stdout_lines(&mut publisher);

    // 20 messages through, then the router is gone for ~1 s (~50 messages at 50 Hz): the
    // outage itself, not a wait for something; the counts below hold however long it is.
    // Clients only: every message goes through the router, none around it.
    echoed.wait_for_count(r#"{"data":"x"}"#, 20, WAIT);
    drop(router);
    std::thread::sleep(Duration::from_secs(1));
    let router = Router::start_on(KAIROS, port);
    // Both clients reconnect by themselves; the last message is published after.
    published.wait_for(&format!("publishing #{SENT}:"), WAIT);
    assert_ok("the publisher", &finish(publisher, WAIT));
    // What is still on its way arrives; then the echo has had all it will get.
    let quiet_from = Instant::now();
    while echoed.next_within(Duration::from_secs(1)).is_some() {
        assert!(quiet_from.elapsed() < WAIT, "the echo never went quiet");
    }

    // Then the network is gone again, and Ctrl-C ends the subscriber (bounded by the
    // liveness limit), with the count of what it missed; what it received is counted
    // from all it printed, up to its end.
    drop(router);
    signal(&echo, "INT");
    let (took, stderr, success) = caller_exits(echo, Duration::from_secs(30));
    assert!(success, "Ctrl-C ends an echo normally: {stderr}");
    let received = echoed
        .rest(WAIT)
        .iter()
        .filter(|l| *l == r#"{"data":"x"}"#)
        .count();
    eprintln!("received {received} of {SENT}, Ctrl-C took {took:?}; stderr:\n{stderr}");
    let lost = SENT - received;
    assert!(
        lost > 0,
        "the router was down for 1 s, yet all {SENT} arrived"
    );
    assert!(
        stderr.contains(&format!("{lost} message(s) lost in sequence gaps")),
        "received {received} of {SENT}: {lost} are lost, and the subscriber says so:\n{stderr}"
    );
}
