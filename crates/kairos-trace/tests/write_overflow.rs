//! A burst larger than a thread's queue is counted as discarded, written in the packet
//! context, and reported by babeltrace2 with the same count.

mod write_support;

use kairos_trace::write::SessionConfig;
use kairos_trace::{Session, tp};
use std::time::Duration;

const QUEUE: usize = 100;

/// Writes only when asked, so what fits in the queue is exact.
fn manual_flush() -> SessionConfig {
    SessionConfig {
        buffer_events: QUEUE,
        flush_interval: Duration::from_secs(3600),
        ..SessionConfig::default()
    }
}

#[test]
fn a_burst_beyond_the_queue_is_counted_and_reported() {
    let _session_lock = write_support::exclusive();
    let dir = tempfile::tempdir().unwrap();
    let session = Session::start_with(dir.path(), manual_flush()).unwrap();
    let burst = 1_000;
    for seq in 0..burst {
        tp::rcl_publish(0x1, seq, seq);
    }
    session.flush().unwrap();
    // After a drain the queue takes events again.
    for seq in burst..burst + 50 {
        tp::rcl_publish(0x1, seq, seq);
    }
    let stats = session.stop().unwrap();

    let expected_discarded = burst - QUEUE as u64;
    assert_eq!(stats.events_discarded, expected_discarded);
    assert_eq!(stats.events_written, QUEUE as u64 + 50);

    let reading = write_support::read(dir.path());
    assert!(reading.success, "babeltrace2 failed:\n{}", reading.stderr);
    assert_eq!(
        reading.discarded(),
        expected_discarded,
        "babeltrace2's warnings:\n{}",
        reading.stderr
    );
    let seqs: Vec<u64> = reading.events.iter().map(|e| e.u64("seq")).collect();
    let kept: Vec<u64> = (0..QUEUE as u64).chain(burst..burst + 50).collect();
    assert_eq!(
        seqs, kept,
        "the oldest events are kept, later ones discarded"
    );
}

#[test]
fn discards_of_several_threads_add_up() {
    let _session_lock = write_support::exclusive();
    let dir = tempfile::tempdir().unwrap();
    let session = Session::start_with(dir.path(), manual_flush()).unwrap();
    let per_thread = [150u64, 400, 100, 30];
    std::thread::scope(|scope| {
        for (thread, &count) in per_thread.iter().enumerate() {
            scope.spawn(move || {
                for seq in 0..count {
                    tp::rcl_publish(thread as u64, seq, seq);
                }
            });
        }
    });
    let stats = session.stop().unwrap();
    let expected: u64 = per_thread
        .iter()
        .map(|&n| n.saturating_sub(QUEUE as u64))
        .sum();
    assert_eq!(stats.events_discarded, expected);
    let reading = write_support::read(dir.path());
    assert!(reading.success, "babeltrace2 failed:\n{}", reading.stderr);
    assert_eq!(reading.discarded(), expected, "{}", reading.stderr);
    let written: u64 = per_thread.iter().map(|&n| n.min(QUEUE as u64)).sum();
    assert_eq!(reading.events.len() as u64, written);
}
