//! A session stamped by a clock of the program's own (simulation time): babeltrace2 reads
//! the trace with exactly the timestamps the clock gave, on a clock of that name; the
//! session after it is back on the monotonic clock; a name TSDL cannot hold is refused.

mod write_support;

use kairos_trace::write::{Error, SessionConfig, TraceClock};
use kairos_trace::{Session, tp};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

fn sim_config(now: Arc<AtomicU64>) -> SessionConfig {
    SessionConfig {
        clock: TraceClock::Custom {
            name: "sim".into(),
            description: "simulation time".into(),
            now: Arc::new(move || now.load(Ordering::SeqCst)),
        },
        ..SessionConfig::default()
    }
}

#[test]
fn events_carry_the_custom_clock_and_the_next_session_the_monotonic_one() {
    let _one_session = write_support::exclusive();
    let dir = tempfile::tempdir().unwrap();
    let sim = Arc::new(AtomicU64::new(0));
    let session = Session::start_with(dir.path().join("sim"), sim_config(sim.clone())).unwrap();
    for (seq, at) in [
        (1, 1_000_000_000u64),
        (2, 1_500_000_000),
        (3, 60_000_000_000),
    ] {
        sim.store(at, Ordering::SeqCst);
        tp::rcl_publish(0x20, 0xAA, seq);
    }
    assert_eq!(session.stop().unwrap().events_written, 3);

    let events = write_support::read_clean(&dir.path().join("sim"));
    let stamps: Vec<u64> = events.iter().map(|e| e.time_ns).collect();
    assert_eq!(stamps, [1_000_000_000, 1_500_000_000, 60_000_000_000]);
    let metadata = std::fs::read_to_string(dir.path().join("sim/metadata")).unwrap();
    assert!(metadata.contains("name = \"sim\";"), "{metadata}");
    assert!(metadata.contains("map = clock.sim.value;"), "{metadata}");

    // The next session stamps with the monotonic clock again (seconds since boot, on
    // the Unix epoch: far beyond the simulated minute).
    let session = Session::start(dir.path().join("mono")).unwrap();
    tp::rcl_publish(0x20, 0xAA, 4);
    session.stop().unwrap();
    let events = write_support::read_clean(&dir.path().join("mono"));
    assert!(
        events[0].time_ns > 1_000_000_000 * 1_000_000_000,
        "monotonic on the epoch again: {} ns",
        events[0].time_ns
    );
}

#[test]
fn a_clock_name_tsdl_cannot_hold_is_refused() {
    let _one_session = write_support::exclusive();
    let dir = tempfile::tempdir().unwrap();
    let mut config = sim_config(Arc::new(AtomicU64::new(0)));
    if let TraceClock::Custom { name, .. } = &mut config.clock {
        *name = "sim time".into();
    }
    let error = Session::start_with(dir.path(), config).unwrap_err();
    assert!(matches!(error, Error::InvalidConfig(_)), "{error}");
    assert!(error.to_string().contains("letters, digits"), "{error}");
}
