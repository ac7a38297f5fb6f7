//! Every message a user reads (error `Display`s, shutdown and stop reports) prints times in
//! human units ("100 ms", "1.5 s", "12 s (sim)"), never a `Debug` form such as
//! `Duration { nanos: 100000000 }`. Each variant that carries a time is formatted here,
//! most of them produced the way a program meets them.

use kairos::exec::{ExecError, Executor, ShutdownReport, StillRunning};
use kairos::graph::{CallError, Context, GraphError, Node, SimStall};
use kairos::thread::ManagedThread;
use kairos::time::{
    CancelToken, Clock, ClockKind, Duration, SimClock, StallPolicy, Time, TimeError, Timer,
    WaitError,
};

/// Checks `message` reads as a sentence with human units in it.
fn assert_human(message: &str, expected: &str) {
    assert!(
        !message.contains("Duration {") && !message.contains("nanos"),
        "a Debug form leaked into: {message}"
    );
    assert!(message.contains(expected), "`{expected}` not in: {message}");
}

#[test]
fn a_call_timeout_says_how_long_it_waited() {
    let context = Context::new();
    let server = Node::new_in(&context, "server", "/").unwrap();
    // No executor runs the service: the call can only time out.
    let _service = server.create_service("slow", |x: u32| x).unwrap();
    let caller = Node::new_in(&context, "caller", "/").unwrap();
    let client = caller.create_client::<fn(u32) -> u32>("slow").unwrap();
    let err = client.call(1, Duration::from_millis(100)).unwrap_err();
    assert!(matches!(err, CallError::Timeout { .. }), "{err:?}");
    assert_human(&err.to_string(), "within 100 ms");
}

#[test]
fn a_spin_timeout_says_how_long_it_waited() {
    let executor = Executor::single_threaded();
    let err = executor
        .spin_until_future_complete(
            std::future::pending::<()>(),
            std::time::Duration::from_millis(1_500),
        )
        .unwrap_err();
    assert!(matches!(err, ExecError::Timeout { .. }), "{err:?}");
    assert_human(&err.to_string(), "within 1.5 s");
}

#[test]
fn shutdown_reports_read_in_human_units() {
    let report = Executor::single_threaded().shutdown(Duration::from_secs(1));
    assert!(report.is_clean());
    assert_human(&report.to_string(), "clean shutdown after ");
    let late = ShutdownReport {
        still_running: vec![StillRunning {
            callback: "timer 100 ms (node /slow)".into(),
            running_for: Duration::from_nanos(1_234_567_890),
        }],
        suspended: Vec::new(),
        live_tasks: 0,
        parked_entities: 0,
        queued_responses: 0,
        waited: Duration::from_nanos(58_356),
    };
    let text = late.to_string();
    assert_human(&text, "after 58.4 us");
    assert_human(&text, "(running for 1.23 s)");
}

#[test]
fn a_stalled_simulation_says_when_and_for_how_long() {
    let sim = SimClock::with_stall_policy(StallPolicy::Fail, std::time::Duration::from_millis(20));
    sim.publish(Time::new(ClockKind::Sim, 12_500_000_000))
        .unwrap();
    let err = sim
        .clock()
        .sleep_for(Duration::from_secs(1), &CancelToken::new())
        .unwrap_err();
    assert!(matches!(err, WaitError::Stalled { .. }), "{err:?}");
    let text = err.to_string();
    assert_human(&text, "stalled at 12.5 s (sim)");
    assert_human(&text, "NodeOptions::sim_stall");
}

#[test]
fn invalid_periods_and_stall_timeouts_name_the_value() {
    let err = Timer::new(Clock::steady(), Duration::from_millis(-5)).unwrap_err();
    assert!(matches!(err, TimeError::InvalidPeriod(_)));
    assert_human(&err.to_string(), "got -5 ms");
    let err =
        Context::with_sim_stall(SimStall::new(StallPolicy::Wait, Duration::ZERO)).unwrap_err();
    assert!(matches!(err, GraphError::InvalidStallTimeout(_)));
    assert_human(&err.to_string(), "got 0 ns");
}

#[test]
fn thread_stop_reports_read_in_human_units() {
    let thread = ManagedThread::spawn("quick", |_cancel| {}).unwrap();
    let report = thread.stop(std::time::Duration::from_secs(5));
    assert!(report.stopped(), "{report}");
    assert_human(&report.to_string(), "thread 'quick' stopped in ");
}
