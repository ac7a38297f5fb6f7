//! Timer semantics on an injected (simulated) clock: deterministic, no real waiting.

use kairos::time::{
    CancelToken, Clock, ClockKind, Duration, MissedPeriods, Rate, SimClock, Time, TimeError, Timer,
};

fn sim_at(ns: i64) -> SimClock {
    let sim = SimClock::new();
    sim.publish(Time::new(ClockKind::Sim, ns)).unwrap();
    sim
}

fn set(sim: &SimClock, ns: i64) {
    sim.publish(Time::new(ClockKind::Sim, ns)).unwrap();
}

#[test]
fn no_drift_over_a_hundred_thousand_periods() {
    // An awkward period (not a divisor of a second) and jittery evaluation times: the
    // deadlines must stay exactly on start + k * period.
    let period = 1_000_003;
    let sim = sim_at(0);
    let timer = Timer::new(sim.clock(), Duration::from_nanos(period)).unwrap();
    for k in 1..=100_000i64 {
        let jitter = (k * 7919) % (period / 2);
        set(&sim, k * period + jitter);
        let tick = timer.try_fire().expect("due");
        assert_eq!(tick.scheduled.nanos(), k * period, "drifted at period {k}");
        assert_eq!(tick.missed, 0);
        assert!(tick.actual >= tick.scheduled);
        assert!(timer.try_fire().is_none(), "fired twice for period {k}");
    }
    assert_eq!(timer.fired_count(), 100_000);
    assert_eq!(timer.missed_count(), 0);
    assert_eq!(timer.next_deadline().nanos(), 100_001 * period);
}

#[test]
fn never_fires_before_its_deadline() {
    let sim = sim_at(0);
    let timer = Timer::new(sim.clock(), Duration::from_millis(10)).unwrap();
    set(&sim, 9_999_999);
    assert!(!timer.is_ready());
    assert!(timer.try_fire().is_none());
    assert_eq!(timer.time_until_trigger(), Duration::from_nanos(1));
    set(&sim, 10_000_000);
    assert!(timer.is_ready());
    assert_eq!(timer.time_until_trigger(), Duration::ZERO);
    assert!(timer.try_fire().is_some());
}

#[test]
fn skip_policy_counts_missed_periods_and_keeps_phase() {
    let sim = sim_at(0);
    let timer = Timer::new(sim.clock(), Duration::from_millis(10)).unwrap();
    assert_eq!(timer.policy(), MissedPeriods::Skip);
    set(&sim, 35_000_000); // deadlines 10, 20, 30 ms passed: one tick, two missed
    let tick = timer.try_fire().unwrap();
    assert_eq!(tick.scheduled.nanos(), 10_000_000);
    assert_eq!(tick.missed, 2);
    assert_eq!(timer.missed_count(), 2);
    assert_eq!(
        timer.next_deadline().nanos(),
        40_000_000,
        "back on the original grid"
    );
    assert!(timer.try_fire().is_none(), "no burst to catch up");
}

#[test]
fn rephase_policy_restarts_the_grid_at_the_late_tick() {
    let sim = sim_at(0);
    let timer = Timer::with_policy(
        sim.clock(),
        Duration::from_millis(10),
        MissedPeriods::Rephase,
    )
    .unwrap();
    set(&sim, 35_000_000);
    let tick = timer.try_fire().unwrap();
    assert_eq!(tick.missed, 2);
    assert_eq!(timer.next_deadline().nanos(), 45_000_000);
}

#[test]
fn cancel_and_reset() {
    let sim = sim_at(0);
    let timer = Timer::new(sim.clock(), Duration::from_millis(10)).unwrap();
    timer.cancel();
    set(&sim, 50_000_000);
    assert!(timer.is_cancelled());
    assert!(!timer.is_ready());
    assert!(timer.try_fire().is_none());
    assert_eq!(timer.time_until_trigger(), Duration::MAX);
    timer.reset();
    assert!(!timer.is_cancelled());
    assert_eq!(
        timer.next_deadline().nanos(),
        60_000_000,
        "reset restarts the period from now"
    );
    assert_eq!(timer.time_until_trigger(), Duration::from_millis(10));
    set(&sim, 60_000_000);
    assert_eq!(timer.try_fire().unwrap().scheduled.nanos(), 60_000_000);
}

#[test]
fn zero_or_negative_period_is_a_typed_error() {
    for p in [Duration::ZERO, Duration::from_millis(-5)] {
        let err = Timer::new(Clock::steady(), p).unwrap_err();
        assert_eq!(err, TimeError::InvalidPeriod(p));
        assert!(err.to_string().contains("must be positive"));
        assert!(Rate::steady(p).is_err());
    }
}

#[test]
fn simulation_reset_restarts_the_period_and_nothing_fires_twice() {
    let sim = sim_at(0);
    let timer = Timer::new(sim.clock(), Duration::from_millis(10)).unwrap();
    set(&sim, 10_000_000);
    assert!(timer.try_fire().is_some());
    set(&sim, 2_000_000); // reset: the simulation went back to 2 ms
    assert!(timer.try_fire().is_none(), "a reset must not fire");
    assert_eq!(
        timer.next_deadline().nanos(),
        12_000_000,
        "period restarts from the reset time"
    );
    set(&sim, 12_000_000);
    assert!(timer.try_fire().is_some());
    assert_eq!(timer.fired_count(), 2);
}

#[test]
fn blocking_wait_on_sim_time_follows_published_time() {
    let sim = sim_at(0);
    let timer = std::sync::Arc::new(Timer::new(sim.clock(), Duration::from_millis(10)).unwrap());
    let t = std::sync::Arc::clone(&timer);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let token = CancelToken::new();
        for _ in 0..3 {
            tx.send(t.wait(&token).unwrap()).unwrap();
        }
    });
    let mut got = Vec::new();
    for step in 1..=30 {
        set(&sim, step * 1_000_000);
        if step % 10 == 0 {
            got.push(
                rx.recv_timeout(std::time::Duration::from_secs(10))
                    .expect("sim timer never fired"),
            );
        }
    }
    let scheduled: Vec<i64> = got.iter().map(|t| t.scheduled.nanos()).collect();
    assert_eq!(scheduled, [10_000_000, 20_000_000, 30_000_000]);
    for tick in &got {
        assert!(tick.actual >= tick.scheduled);
    }
}

#[test]
fn rate_reports_overruns_and_missed_periods() {
    let sim = sim_at(0);
    let mut rate = Rate::new(sim.clock(), Duration::from_millis(10)).unwrap();
    set(&sim, 25_000_000); // the loop body ran 25 ms
    let t = rate.sleep(&CancelToken::new()).unwrap();
    assert!(t.overrun);
    assert_eq!(t.tick.missed, 1);
    assert_eq!(rate.overruns(), 1);
    assert_eq!(rate.missed_periods(), 1);
}
