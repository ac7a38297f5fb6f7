//! Never hang: an hour-long sleep on any clock wakes with `Cancelled` when its token is
//! cancelled (asserted against a ceiling of seconds that only a missed wake-up reaches; the
//! wake-up latency itself is a benchmark figure), and a cancelled timer stops its waiter.

use kairos::time::{CancelToken, Clock, Duration, SimClock, Time, Timer, WaitError};
use std::sync::mpsc;
use std::thread;

const HOUR: Duration = Duration::from_secs(3600);
const BOUND: std::time::Duration = std::time::Duration::from_secs(10);

/// Runs `wait` on a thread, cancels once it is parked, and returns how long after the
/// cancellation the waiter returned, with its result.
fn cancel_after_start(
    wait: impl FnOnce(&CancelToken) -> Result<(), WaitError> + Send + 'static,
) -> (std::time::Duration, Result<(), WaitError>) {
    let token = CancelToken::new();
    let (started_tx, started_rx) = mpsc::channel();
    let (done_tx, done_rx) = mpsc::channel();
    let t = token.clone();
    thread::spawn(move || {
        started_tx.send(()).unwrap();
        let result = wait(&t);
        done_tx.send((std::time::Instant::now(), result)).unwrap();
    });
    started_rx.recv().unwrap();
    // Cancel only once the wait has registered on the token, so the test exercises waking
    // a parked waiter rather than a wait that sees the flag before it starts.
    let spin_until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while token.registered_waits() == 0 && std::time::Instant::now() < spin_until {
        thread::yield_now();
    }
    assert_eq!(
        token.registered_waits(),
        1,
        "the waiter never registered on its token"
    );
    let cancelled_at = std::time::Instant::now();
    token.cancel();
    let (done_at, result) = done_rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("the cancelled sleep never returned: the wait hangs");
    (done_at.saturating_duration_since(cancelled_at), result)
}

fn assert_cancelled_quickly(
    name: &str,
    (took, result): (std::time::Duration, Result<(), WaitError>),
) {
    assert_eq!(result, Err(WaitError::Cancelled), "{name}");
    assert!(
        took < BOUND,
        "{name}: returned {took:?} after cancel, bound {BOUND:?}"
    );
}

#[test]
fn hour_long_steady_sleep_is_cancelled_promptly() {
    assert_cancelled_quickly(
        "steady",
        cancel_after_start(|t| Clock::steady().sleep_for(HOUR, t)),
    );
}

#[test]
fn hour_long_system_sleep_is_cancelled_promptly() {
    assert_cancelled_quickly(
        "system",
        cancel_after_start(|t| Clock::system().sleep_for(HOUR, t)),
    );
}

#[test]
fn sim_sleep_with_frozen_clock_is_cancelled_promptly() {
    let sim = SimClock::new();
    sim.publish(Time::new(kairos::time::ClockKind::Sim, 1_000))
        .unwrap();
    let clock = sim.clock();
    assert_cancelled_quickly("sim", cancel_after_start(move |t| clock.sleep_for(HOUR, t)));
}

#[test]
fn sim_sleep_before_first_sample_is_cancelled_promptly() {
    let clock = SimClock::new().clock();
    assert_cancelled_quickly(
        "sim, no sample",
        cancel_after_start(move |t| clock.sleep_for(HOUR, t)),
    );
}

#[test]
fn async_hour_long_sleep_is_cancelled_promptly() {
    assert_cancelled_quickly(
        "async steady",
        cancel_after_start(|t| {
            futures::executor::block_on(Clock::steady().sleep_for_async(HOUR, t))
        }),
    );
}

#[test]
fn cancelling_a_timer_wakes_its_waiter() {
    let timer = std::sync::Arc::new(Timer::new(Clock::steady(), HOUR).unwrap());
    let waiter = std::sync::Arc::clone(&timer);
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || tx.send(waiter.wait(&CancelToken::new())).unwrap());
    timer.cancel();
    let result = rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("timer waiter hangs");
    assert_eq!(result.unwrap_err(), WaitError::Cancelled);
}
