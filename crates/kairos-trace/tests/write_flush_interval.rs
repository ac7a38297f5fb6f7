//! A flush interval the session accepts does not kill the writer thread.
//!
//! A very long one (e.g. `Duration::MAX`, "flush only when asked") would overflow the
//! writer's `Instant` arithmetic, losing every event with only `WriterGone` to show:
//! `Session::start_with` refuses intervals outside 1 ms ..= a day with `InvalidConfig`.

mod write_support;

use kairos_trace::write::{Error, SessionConfig};
use kairos_trace::{Session, tp};
use std::time::Duration;

#[test]
fn a_very_long_flush_interval_is_rejected_or_honoured() {
    let _session_lock = write_support::exclusive();
    let dir = tempfile::tempdir().unwrap();
    let config = SessionConfig {
        flush_interval: Duration::MAX,
        ..SessionConfig::default()
    };
    let session = match Session::start_with(dir.path(), config) {
        // A typed refusal is an acceptable answer.
        Err(Error::InvalidConfig(_)) => return,
        other => other.expect("start either refuses the config or works"),
    };
    tp::rcl_publish(0x1, 0x2, 0);
    session
        .flush()
        .expect("flush works with a long periodic interval");
    let stats = session
        .stop()
        .expect("stop works with a long periodic interval");
    assert_eq!(stats.events_written, 1);
    let events = write_support::read_clean(dir.path());
    assert_eq!(events.len(), 1);
}

#[test]
fn a_sub_millisecond_flush_interval_is_refused() {
    let _session_lock = write_support::exclusive();
    let dir = tempfile::tempdir().unwrap();
    let config = SessionConfig {
        flush_interval: Duration::from_micros(999),
        ..SessionConfig::default()
    };
    match Session::start_with(dir.path(), config) {
        Err(error @ Error::InvalidConfig(_)) => {
            assert!(error.to_string().contains("at least 1 ms"), "{error}")
        }
        other => panic!("expected InvalidConfig, got {other:?}"),
    }
    assert!(!tp::enabled(), "a refused start leaves tracing off");
}
