//! The reader on the real traces of ../shared/traces: event counts babeltrace2 agrees
//! with, and the problems of ctf-hello-lost reported while reading goes on.

use std::path::{Path, PathBuf};

use kairos_trace::read::{Notice, TraceSet};

fn trace(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces")
        .join(name)
}

fn count(name: &str) -> usize {
    let set = TraceSet::open(trace(name)).unwrap();
    set.events()
        .unwrap()
        .inspect(|e| assert!(e.is_ok(), "{e:?}"))
        .count()
}

#[test]
fn event_counts_match_babeltrace2() {
    assert_eq!(count("ros2-sync-one-to-one"), 99_338);
    assert_eq!(count("ros1-pub-sub-10"), 1_549);
}

#[test]
fn a_session_folder_yields_its_kernel_and_user_space_traces() {
    let set = TraceSet::open(trace("ros1-pub-sub-10")).unwrap();
    let paths: Vec<String> = set
        .traces
        .iter()
        .map(|t| t.path.display().to_string())
        .collect();
    assert_eq!(set.traces.len(), 2, "{paths:?}");
    assert!(paths.iter().any(|p| p.ends_with("kernel")));
    assert!(paths.iter().any(|p| p.ends_with("64-bit")));
}

#[test]
fn events_come_out_in_timestamp_order() {
    let set = TraceSet::open(trace("ros2-sync-one-to-one")).unwrap();
    let mut last = i64::MIN;
    for ev in set.events().unwrap() {
        let ev = ev.unwrap();
        assert!(ev.timestamp >= last);
        last = ev.timestamp;
    }
}

#[test]
fn hello_lost_reports_discarded_events_and_backwards_time_and_reads_on() {
    let set = TraceSet::open(trace("ctf-hello-lost")).unwrap();
    let mut events = set.events().unwrap();
    let mut n = 0;
    for ev in events.by_ref() {
        ev.unwrap();
        n += 1;
    }
    assert!(n > 30_000, "read {n} events");
    assert!(
        events.discarded() > 100_000,
        "discarded {}",
        events.discarded()
    );
    assert!(events.backwards() > 0);
    let first_overlap = events
        .notices()
        .iter()
        .find_map(|notice| match notice {
            Notice::PacketOverlap {
                packet_offset,
                begin,
                previous_end,
                ..
            } => Some((*packet_offset, *begin, *previous_end)),
            _ => None,
        })
        .expect("a packet overlap is reported");
    // The very timestamps babeltrace2 2.0.4 stops at.
    assert_eq!(
        first_overlap,
        (4096, 1_376_592_664_828_645_723, 1_376_592_664_828_650_370)
    );
}
