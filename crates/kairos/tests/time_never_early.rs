//! Never early: for random deadlines at random phases, no sleep returns before its deadline
//! on the clock it was asked about (story 2). Tens of thousands of cases per run.

use kairos::time::{CancelToken, Clock, Duration};
use proptest::prelude::*;

/// Spins until the monotonic clock is at `phase_ns` into its current millisecond, so the
/// sleep starts at a chosen sub-millisecond phase (the ArduPilot bug needed a start just
/// before a millisecond boundary).
fn align_to_phase(phase_ns: i64) {
    let steady = Clock::steady();
    loop {
        let now = steady.now().nanos();
        if now.rem_euclid(1_000_000) >= phase_ns {
            return;
        }
    }
}

fn check_never_early(clock: &Clock, phase_ns: i64, sleep_ns: i64) -> Result<(), TestCaseError> {
    let token = CancelToken::new();
    align_to_phase(phase_ns);
    let start = clock.now();
    let deadline = start + Duration::from_nanos(sleep_ns);
    clock
        .sleep_until(deadline, &token)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let end = clock.now();
    prop_assert!(
        end >= deadline,
        "{} sleep of {sleep_ns} ns started at phase {phase_ns} ns returned {} ns early",
        clock.kind(),
        deadline.since(end).unwrap().as_nanos()
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12_000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn steady_sleep_is_never_early(phase in 0i64..1_000_000, sleep in 0i64..1_200_000) {
        check_never_early(&Clock::steady(), phase, sleep)?;
    }

    #[test]
    fn system_sleep_is_never_early(phase in 0i64..1_000_000, sleep in 0i64..1_200_000) {
        check_never_early(&Clock::system(), phase, sleep)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3_000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn async_sleep_is_never_early(steady in any::<bool>(), sleep in 0i64..1_500_000) {
        let clock = if steady { Clock::steady() } else { Clock::system() };
        let token = CancelToken::new();
        let deadline = clock.now() + Duration::from_nanos(sleep);
        futures::executor::block_on(clock.sleep_until_async(deadline, &token)).unwrap();
        let end = clock.now();
        prop_assert!(end >= deadline, "async {} sleep returned early", clock.kind());
    }
}

#[test]
fn zero_and_past_deadlines_return_at_once() {
    let token = CancelToken::new();
    for clock in [Clock::steady(), Clock::system()] {
        let before = Clock::steady().now();
        clock.sleep_for(Duration::ZERO, &token).unwrap();
        clock.sleep_for(Duration::from_secs(-3600), &token).unwrap();
        clock
            .sleep_until(clock.now() - Duration::from_secs(1), &token)
            .unwrap();
        let took = Clock::steady().now().since(before).unwrap();
        // A sleep that waited for its (hour-old) deadline would never return.
        assert!(took < Duration::from_secs(10), "past deadlines took {took}");
    }
}

#[test]
fn deadline_on_another_clock_is_an_error_not_a_wait() {
    let token = CancelToken::new();
    let err = Clock::steady()
        .sleep_until(Clock::system().now(), &token)
        .unwrap_err();
    assert!(err.to_string().contains("cannot mix clocks"), "{err}");
}
