//! `kairos demo delay-race`: story 2, ArduPilot's `delay()` that returned early.
//!
//! The old loop read a millisecond counter and slept 1 ms per turn while
//! `millis() - start < ms`. Started just before a millisecond boundary, `delay(1)` saw the
//! counter tick before its first sleep and returned at once; `delay(100)` started at a
//! random phase returned up to a millisecond early. Here both loops run side by side at
//! random sub-millisecond phases: kairos's `sleep_for` (nanosecond deadline, re-checked
//! after every wake-up) and a faithful copy of the millisecond-counter loop.

use super::Outcome;
use kairos::time::{CancelToken, Clock, Duration};
use kairos_bench::stats::Summary;
use serde_json::json;

/// `millis()` as ArduPilot's Linux HAL computed it: whole milliseconds of a monotonic clock.
fn millis() -> i64 {
    Clock::steady().now().nanos() / 1_000_000
}

/// The buggy delay: loop while fewer than `ms` counter ticks have passed, sleeping 1 ms.
fn ms_counter_delay(ms: i64) {
    let start = millis();
    while millis() - start < ms {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

fn kairos_delay(ms: i64, token: &CancelToken) {
    // The token is never cancelled here; an error would mean a clock mismatch, impossible
    // for a sleep_for on one clock.
    let _ = Clock::steady().sleep_for(Duration::from_millis(ms), token);
}

/// Spins until the monotonic clock is `phase_ns` into a millisecond.
fn align_to_phase(phase_ns: i64) {
    let steady = Clock::steady();
    let start_ms = steady.now().nanos() / 1_000_000;
    loop {
        let now = steady.now().nanos();
        if now / 1_000_000 > start_ms && now.rem_euclid(1_000_000) >= phase_ns {
            return;
        }
    }
}

/// Runs `delay(ms)` at `phase_ns` and returns actual minus requested duration in ns.
fn measure(phase_ns: i64, ms: i64, delay: &dyn Fn(i64)) -> i64 {
    let steady = Clock::steady();
    align_to_phase(phase_ns);
    let start = steady.now();
    delay(ms);
    let took = steady.now().since(start).unwrap_or(Duration::ZERO);
    took.as_nanos() - ms * 1_000_000
}

pub fn run(quick: bool) -> anyhow::Result<Outcome> {
    let (n1, n100) = if quick { (400, 4) } else { (4000, 20) };
    let mut rng = fastrand::Rng::new();
    let token = CancelToken::new();
    // Phases: uniform over the millisecond, and a quarter of the 1 ms samples in the last
    // 2 us before a boundary, where the counter bug lives.
    let mut phases1: Vec<i64> = (0..n1).map(|_| rng.i64(0..1_000_000)).collect();
    for p in phases1.iter_mut().step_by(4) {
        *p = rng.i64(998_000..1_000_000);
    }
    let phases100: Vec<i64> = (0..n100).map(|_| rng.i64(0..1_000_000)).collect();

    let kairos = |ms| kairos_delay(ms, &token);
    let mut k1 = Vec::new();
    let mut c1 = Vec::new();
    for &p in &phases1 {
        k1.push(measure(p, 1, &kairos));
        c1.push(measure(p, 1, &ms_counter_delay));
    }
    let mut k100 = Vec::new();
    let mut c100 = Vec::new();
    for &p in &phases100 {
        k100.push(measure(p, 100, &kairos));
        c100.push(measure(p, 100, &ms_counter_delay));
    }
    let all = |a: &[i64], b: &[i64]| Summary::of_nanos(&[a, b].concat());
    let (k, c) = (all(&k1, &k100), all(&c1, &c100));
    let (k1s, c1s, k100s, c100s) = (
        Summary::of_nanos(&k1),
        Summary::of_nanos(&c1),
        Summary::of_nanos(&k100),
        Summary::of_nanos(&c100),
    );

    let mut report = String::new();
    report.push_str(&format!(
        "{} sleeps of 1 ms and {} of 100 ms at random sub-millisecond phases; lateness = actual - requested\n",
        n1, n100
    ));
    report.push_str(&Summary::header());
    for (name, s) in [
        ("kairos 1ms", &k1s),
        ("ms-counter 1ms", &c1s),
        ("kairos 100ms", &k100s),
        ("ms-counter 100ms", &c100s),
    ] {
        report.push('\n');
        report.push_str(&s.row(name));
    }
    let passed = k.early == 0;
    let verdict = format!(
        "kairos early {}/{}; ms-counter loop early {}/{} ({}){}",
        k.early,
        k.samples,
        c.early,
        c.samples,
        if c.early > 0 {
            "the bug reproduces"
        } else {
            "the bug did not reproduce this run"
        },
        if passed {
            ""
        } else {
            " -- kairos RETURNED EARLY"
        }
    );
    let side = |s: &Summary, one: &Summary, hundred: &Summary| {
        json!({
            "early": s.early, "p50_us": s.p50_us, "p99_us": s.p99_us, "max_us": s.max_us, "min_us": s.min_us,
            "delay_1ms": one, "delay_100ms": hundred,
        })
    };
    let json = json!({
        "samples": k.samples,
        "kairos": side(&k, &k1s, &k100s),
        "ms_counter_loop": side(&c, &c1s, &c100s),
    });
    Ok(Outcome {
        passed,
        verdict,
        report,
        json,
    })
}
