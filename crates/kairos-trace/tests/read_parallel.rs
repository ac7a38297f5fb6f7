//! Decoding streams on worker threads, or in batches on the caller's thread, changes
//! nothing a reader sees: on every real trace (one to sixteen streams, a damaged one
//! among them) the events, their order, every field, the errors and the notices are the
//! same with 0, 1, 2 and 3 decoding threads, with batches of 1, 2, 5 and 32 events, and
//! the same with payloads skipped by plans as decoded in full.

use std::path::{Path, PathBuf};

use kairos_trace::read::{Selection, TraceSet, text};

fn traces() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("../shared/traces holds the real traces")
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 4, "{dirs:?}");
    dirs
}

/// Every event as text, errors and notices in place.
fn read(dir: &Path, select: Selection) -> Vec<String> {
    let set = TraceSet::open(dir).unwrap();
    let mut events = set.events_with(select).unwrap();
    let mut out = Vec::new();
    while let Some(item) = events.next() {
        match item {
            Ok(ev) => {
                let mut line = String::new();
                text::write_event(&mut line, &ev);
                out.push(line);
            }
            Err(e) => out.push(format!("error: {e}")),
        }
        out.extend(events.take_notices().iter().map(|n| format!("notice: {n}")));
    }
    out.push(format!(
        "discarded {} backwards {}",
        events.discarded(),
        events.backwards()
    ));
    out
}

#[test]
fn any_number_of_decoding_threads_gives_the_same_events_in_the_same_order() {
    for dir in traces() {
        let inline = read(&dir, Selection::all().with_threads(0).with_batch(1));
        assert!(inline.len() > 30, "{}", dir.display());
        for n in [1, 2, 3] {
            let threaded = read(&dir, Selection::all().with_threads(n));
            assert_eq!(inline, threaded, "{} with {n} threads", dir.display());
        }
        for n in [2, 5, 32] {
            let batched = read(&dir, Selection::all().with_threads(0).with_batch(n));
            assert_eq!(inline, batched, "{} in batches of {n}", dir.display());
        }
    }
}

#[test]
fn skipped_payloads_leave_every_event_timestamp_error_and_notice_in_place() {
    for dir in traces() {
        // Each event's timestamp, trace label and name: the line up to the first `: `.
        let strip = |lines: Vec<String>| -> Vec<String> {
            lines
                .into_iter()
                .map(|l| match l.split_once(": ") {
                    Some((head, _)) if l.starts_with('[') => head.to_string(),
                    _ => l,
                })
                .collect()
        };
        let full = strip(read(&dir, Selection::all().with_packet_context(false)));
        let skipped = strip(read(&dir, Selection::payloads(|_| false).with_threads(2)));
        assert_eq!(full, skipped, "{}", dir.display());
    }
}

/// Every event as text and every error, read borrowed ([`kairos_trace::read::Events::next_ref`]),
/// then the notices (sorted: a borrowed read takes a stream's later notices in one call
/// later) and the counts.
fn read_borrowed(dir: &Path, select: Selection) -> (Vec<String>, Vec<String>) {
    let set = TraceSet::open(dir).unwrap();
    let mut events = set.events_with(select).unwrap();
    let (mut out, mut notices) = (Vec::new(), Vec::new());
    while let Some(item) = events.next_ref() {
        match item {
            Ok(ev) => {
                let mut line = String::new();
                text::write_event(&mut line, &ev.to_event());
                out.push(line);
            }
            Err(e) => out.push(format!("error: {e}")),
        }
        notices.extend(events.take_notices().iter().map(|n| format!("notice: {n}")));
    }
    out.push(format!(
        "discarded {} backwards {}",
        events.discarded(),
        events.backwards()
    ));
    notices.sort();
    (out, notices)
}

#[test]
fn borrowed_events_are_the_owned_events() {
    for dir in traces() {
        for (select, what) in [
            (Selection::all().with_threads(0), "all, inline"),
            (
                Selection::all().with_threads(0).with_batch(5),
                "all, batches of 5",
            ),
            (Selection::all().with_threads(2), "all, 2 threads"),
            (Selection::payloads(|_| false).with_threads(0), "no payload"),
        ] {
            let owned = read(&dir, select.clone());
            let (events, mut notices): (Vec<String>, Vec<String>) =
                owned.into_iter().partition(|l| !l.starts_with("notice: "));
            notices.sort();
            let borrowed = read_borrowed(&dir, select);
            assert!(events.len() > 30, "{}", dir.display());
            assert_eq!(events, borrowed.0, "{} ({what})", dir.display());
            assert_eq!(notices, borrowed.1, "{} ({what})", dir.display());
        }
    }
}
