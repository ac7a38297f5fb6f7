//! Many threads tracing at once: each gets its own stream, whose timestamps never go back,
//! and no event is torn or mixed with another thread's.

mod write_support;

use kairos_trace::write::SessionConfig;
use kairos_trace::{Session, tp};
use std::collections::HashMap;
use std::sync::Barrier;
use std::time::Duration;

#[test]
fn concurrent_threads_give_monotonic_streams_and_whole_events() {
    let _session_lock = write_support::exclusive();
    const THREADS: u64 = 8;
    const EVENTS: u64 = 5_000;
    let dir = tempfile::tempdir().unwrap();
    // Queues large enough for the whole run, drained often while the threads race.
    let config = SessionConfig {
        buffer_events: EVENTS as usize,
        flush_interval: Duration::from_millis(1),
        ..SessionConfig::default()
    };
    let session = Session::start_with(dir.path(), config).unwrap();
    let start = Barrier::new(THREADS as usize);
    std::thread::scope(|scope| {
        for thread in 0..THREADS {
            let start = &start;
            scope.spawn(move || {
                start.wait();
                let publisher = 0x1000 + thread;
                for seq in 0..EVENTS {
                    // Every field derives from (thread, seq): a torn or mixed event shows.
                    tp::rmw_take(
                        !publisher,
                        publisher << 32 | seq,
                        (seq * 3) as i64,
                        (seq % 2) as i32,
                        publisher,
                        seq,
                    );
                }
            });
        }
    });
    let stats = session.stop().unwrap();
    assert_eq!(stats.events_discarded, 0);
    assert_eq!(stats.streams, THREADS);

    let events = write_support::read_clean(dir.path());
    assert_eq!(events.len() as u64, THREADS * EVENTS);
    let mut per_thread: HashMap<i64, Vec<&write_support::Line>> = HashMap::new();
    for event in &events {
        per_thread.entry(event.vtid).or_default().push(event);
    }
    assert_eq!(per_thread.len() as u64, THREADS, "one stream per thread");
    for (vtid, stream) in per_thread {
        let publisher = stream[0].u64("publisher_handle");
        for (expected_seq, event) in (0..).zip(&stream) {
            let seq = event.u64("seq");
            assert_eq!(
                seq, expected_seq,
                "thread {vtid}: events in order, none lost"
            );
            assert_eq!(
                event.u64("publisher_handle"),
                publisher,
                "one publisher per thread"
            );
            assert_eq!(event.u64("rmw_subscription_handle"), !publisher);
            assert_eq!(event.u64("message"), publisher << 32 | seq);
            assert_eq!(event.field("source_timestamp"), (seq * 3).to_string());
            assert_eq!(event.field("taken"), (seq % 2).to_string());
        }
        assert!(
            stream.windows(2).all(|w| w[0].time_ns <= w[1].time_ns),
            "thread {vtid}: timestamps never go back"
        );
    }
}
