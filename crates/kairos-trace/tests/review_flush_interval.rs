//! Review: a flush interval the session accepts must not kill the writer thread.
//!
//! `Session::start_with` rejects only a zero `flush_interval`; a very long one (e.g.
//! `Duration::MAX`, "flush only when asked") is accepted, and the writer thread then
//! panics computing `Instant::now() + interval`: every event is lost and `stop` only says
//! `WriterGone`.

mod write_support;

use kairos_trace::write::{Error, SessionConfig};
use kairos_trace::{Session, tp};
use std::time::Duration;

#[test]
fn a_very_long_flush_interval_is_rejected_or_honoured() {
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
