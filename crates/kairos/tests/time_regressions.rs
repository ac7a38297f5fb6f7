//! Regression tests for defects found in review of time/ and thread/: each names the
//! promise it checks and failed before its fix.

use kairos::thread::PeriodicTask;
use kairos::time::{
    CancelToken, Clock, ClockJump, ClockKind, Duration, JumpThreshold, RosClock, SimClock, Time,
    Timer, WaitError,
};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Instant;

fn sim(ns: i64) -> Time {
    Time::new(ClockKind::Sim, ns)
}

const MS: i64 = 1_000_000;

/// Spins (bounded) until `ready` holds: synchronization on observable state, not a sleep.
fn wait_for(what: &str, ready: impl Fn() -> bool) {
    let give_up = Instant::now() + std::time::Duration::from_secs(10);
    while !ready() {
        assert!(Instant::now() < give_up, "never happened: {what}");
        std::thread::yield_now();
    }
}

/// Never hang: `Timer::cancel` must wake a waiter that is already parked in
/// `Timer::wait`. The existing test cancels before the waiter parks, so it passes; here
/// the waiter is parked (registered on its token) first.
#[test]
fn timer_cancel_wakes_a_waiter_already_parked() {
    let timer = Arc::new(Timer::new(Clock::steady(), Duration::from_secs(3600)).unwrap());
    let token = CancelToken::new();
    let (tx, rx) = mpsc::channel();
    let (waiter, t) = (Arc::clone(&timer), token.clone());
    std::thread::spawn(move || tx.send(waiter.wait(&t)).unwrap());
    wait_for("the waiter parks in Timer::wait", || {
        token.registered_waits() == 1
    });
    timer.cancel();
    let result = rx
        .recv_timeout(std::time::Duration::from_secs(5))
        .expect("Timer::wait still parked 5 s after Timer::cancel (it waits for the hour)");
    assert_eq!(result.unwrap_err(), WaitError::Cancelled);
}

/// Same on a simulated clock that is not advancing: the waiter only wakes on a publish.
#[test]
fn timer_cancel_wakes_a_waiter_on_a_frozen_sim_clock() {
    let clock = SimClock::new();
    clock.publish(sim(0)).unwrap();
    let timer = Arc::new(Timer::new(clock.clock(), Duration::from_millis(10)).unwrap());
    let (tx, rx) = mpsc::channel();
    let waiter = Arc::clone(&timer);
    std::thread::spawn(move || tx.send(waiter.wait(&CancelToken::new())).unwrap());
    wait_for("the waiter parks on the sim clock", || {
        clock.pending_waits() == 1
    });
    timer.cancel();
    let result = rx
        .recv_timeout(std::time::Duration::from_secs(5))
        .expect("Timer::wait still parked 5 s after Timer::cancel on a frozen sim clock");
    assert_eq!(result.unwrap_err(), WaitError::Cancelled);
}

/// ros_clock.rs: "timers restart their period on the new source, as rcl does"; and
/// periodic.rs: the task ends by itself only on a `Fail` stall. A use_sim_time switch
/// must not kill a PeriodicTask on a node clock.
#[test]
fn periodic_task_on_a_node_clock_survives_a_use_sim_time_switch() {
    let sim_clock = SimClock::new();
    sim_clock.publish(sim(0)).unwrap();
    let ros = RosClock::new(sim_clock.clone());
    ros.set_use_sim_time(true);
    let ticks = Arc::new(Mutex::new(0u32));
    let counted = Arc::clone(&ticks);
    let task = PeriodicTask::spawn(
        "review-periodic",
        ros.clock(),
        Duration::from_millis(20),
        move |_| *counted.lock().unwrap() += 1,
    )
    .unwrap();
    wait_for("the task waits on simulation time", || {
        sim_clock.pending_waits() == 1
    });
    ros.set_use_sim_time(false);
    // On system time the period restarts: the body must run again within a generous bound.
    let give_up = Instant::now() + std::time::Duration::from_secs(5);
    while *ticks.lock().unwrap() == 0 && Instant::now() < give_up && !task.is_finished() {
        std::thread::yield_now();
    }
    let ended = task.ended_with();
    let report = task.stop(Duration::from_secs(5));
    assert_eq!(
        ended, None,
        "the periodic task ended on a use_sim_time switch instead of restarting its period"
    );
    assert!(report.stopped());
    assert!(*ticks.lock().unwrap() > 0, "no tick on the new source");
}

/// sim.rs "Deterministic stepping": `step` waits for *the thread it woke*. A thread woken
/// earlier by a plain `publish`, now blocked elsewhere, must not stall `step` for
/// SETTLE_TIMEOUT (2 s).
#[test]
fn step_is_not_stalled_by_a_thread_woken_earlier_by_publish() {
    let clock = SimClock::new();
    clock.publish(sim(0)).unwrap();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let c = clock.clock();
    let a = std::thread::spawn(move || {
        c.sleep_until(sim(10 * MS), &CancelToken::new()).unwrap();
        // Now busy with something else than this clock, for as long as the test runs.
        let _ = release_rx.recv();
    });
    let c = clock.clock();
    let b = std::thread::spawn(move || {
        c.sleep_until(sim(100 * MS), &CancelToken::new()).unwrap();
    });
    wait_for("both threads wait on the clock", || {
        clock.pending_waits() == 2
    });
    clock.publish(sim(10 * MS)).unwrap(); // wakes A only
    let started = Instant::now();
    clock.run_until(sim(200 * MS)); // wakes B, which exits
    let took = started.elapsed();
    b.join().unwrap();
    release_tx.send(()).unwrap();
    a.join().unwrap();
    assert_eq!(
        clock.settle_timeouts(),
        0,
        "run_until took {took:?}: it waited out its settle bound for a thread it never woke"
    );
}

/// sim.rs "Resets": a publish below the previous value is reported as a *backward* jump.
/// With values far apart the delta overflows (wraps in release, panics in debug).
#[test]
fn a_large_simulation_reset_is_reported_as_a_backward_jump() {
    let clock = SimClock::new();
    clock.publish(sim(i64::MAX)).unwrap();
    let heard = Arc::new(Mutex::new(Vec::<ClockJump>::new()));
    let h = Arc::clone(&heard);
    let _handler = clock.clock().create_jump_handler(
        JumpThreshold::ALL,
        || {},
        move |j| h.lock().unwrap().push(*j),
    );
    clock.publish(sim(i64::MIN)).unwrap();
    let heard = heard.lock().unwrap();
    assert_eq!(heard.len(), 1);
    assert!(
        heard[0].delta.is_negative(),
        "a reset from i64::MAX to i64::MIN was reported with delta {}",
        heard[0].delta
    );
}

/// duration.rs: arithmetic "saturates at the bounds instead of wrapping". i64::MIN / -1 is
/// +2^63: it must saturate to MAX, not come back negative.
#[test]
fn duration_min_divided_by_minus_one_saturates_positive() {
    assert_eq!(Duration::from_nanos(i64::MIN) / -1, Duration::MAX);
}

/// sim.rs: the clock reports what the source published (the hold-on-resume floor exists
/// only after a fallback). A first sample below zero must not be held at zero.
#[test]
fn a_negative_first_sample_is_reported_as_published() {
    let clock = SimClock::new();
    clock.publish(sim(-5 * MS)).unwrap();
    assert_eq!(clock.now(), sim(-5 * MS));
    clock.publish(sim(-4 * MS)).unwrap();
    assert_eq!(clock.now(), sim(-4 * MS));
}

/// sim.rs "Stalls": a stall is reported to the jump handlers (and counted) when the policy
/// applies. Under FallbackToSteady a stall nobody happened to observe still moves the
/// clock (the publish after it is held at the fallback value), but is never reported.
#[test]
fn a_fallback_that_moved_the_clock_is_always_reported_as_a_stall() {
    use kairos::time::{ClockChange, StallPolicy};
    let clock =
        SimClock::with_stall_policy(StallPolicy::FallbackToSteady, Duration::from_millis(20));
    let heard = Arc::new(Mutex::new(Vec::<ClockChange>::new()));
    let h = Arc::clone(&heard);
    let _handler = clock.clock().create_jump_handler(
        JumpThreshold::ALL,
        || {},
        move |j| h.lock().unwrap().push(j.change),
    );
    clock.publish(sim(0)).unwrap();
    // Let the source be silent for longer than the stall timeout, with no one looking.
    Clock::steady()
        .sleep_for(Duration::from_millis(60), &CancelToken::new())
        .unwrap();
    clock.publish(sim(10 * MS)).unwrap();
    let now = clock.now();
    assert!(now >= sim(40 * MS), "the fallback did not apply: {now}");
    assert!(
        heard.lock().unwrap().contains(&ClockChange::SimStalled) && clock.stall_count() == 1,
        "the clock fell back to steady time and now holds {now} above the source (10 ms), \
         but no stall was reported: heard {:?}, stall_count {}",
        heard.lock().unwrap(),
        clock.stall_count()
    );
}

/// Bad input returns a typed error, never a panic: a thread name with a NUL byte.
#[test]
fn a_thread_name_with_a_nul_byte_is_an_error_not_a_panic() {
    let spawned = std::panic::catch_unwind(|| {
        kairos::thread::ManagedThread::spawn("bad\0name", |_| {}).map(|t| t.stop(Duration::ZERO))
    });
    assert!(
        matches!(spawned, Ok(Err(_))),
        "ManagedThread::spawn panicked on a name with a NUL byte instead of returning an error"
    );
}

/// timer.rs Skip: "fire once now, then continue on the grid ... never bursts to catch up".
/// After a simulation reset to a far-negative time and back, `now - scheduled` overflows
/// and the timer fires on every evaluation.
#[test]
fn a_timer_never_bursts_after_an_extreme_simulation_reset() {
    let clock = SimClock::new();
    clock.publish(sim(0)).unwrap();
    let timer = Timer::new(clock.clock(), Duration::from_millis(10)).unwrap();
    clock.publish(sim(i64::MIN + 1)).unwrap(); // garbage from the simulator: a reset
    assert_eq!(timer.try_fire(), None);
    clock.publish(sim(1_000 * MS)).unwrap(); // back to sane values (forward)
    let first = timer.try_fire();
    assert!(first.is_some());
    assert_eq!(
        timer.try_fire(),
        None,
        "fired twice at the same instant (first tick: {first:?})"
    );
}
