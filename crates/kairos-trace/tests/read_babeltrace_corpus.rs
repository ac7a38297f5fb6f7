//! Differential test over babeltrace2's own CTF test traces (`tests/data/babeltrace-ctf-traces`,
//! see its README.md): every trace folder is read by kairos's reader and printed with its
//! text format, and by `babeltrace2 --clock-seconds --no-delta` run at test time. The two
//! outputs must be byte-identical, both must succeed or both fail, and the events and
//! packets the tracer discarded must be reported alike, except for the differences listed
//! in [`EXPECTED`], each with its reason. Anything else that differs fails the test.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use kairos_trace::read::{MetadataFault, Notice, ReadError, TraceSet, text};

/// How the kairos reader's result on a trace is known to differ from babeltrace2's.
#[derive(Debug)]
enum Difference {
    /// babeltrace2 refuses the whole trace before printing anything; kairos prints the
    /// `events` events decoded before the damage, then reports the damaged stream.
    KairosReadsUpToTheDamage { events: usize },
    /// babeltrace2 aborts on an internal assertion; kairos reads the trace, and both
    /// print the same events (none).
    Babeltrace2Aborts,
}

/// Every known difference: the trace (folder under the data folder), what differs, why.
const EXPECTED: [(&str, Difference, &str); 2] = [
    (
        "fail/invalid-packet-size",
        Difference::KairosReadsUpToTheDamage { events: 10 },
        "the stream file ends inside its only packet (packet_size 4096 bytes, file 2533 \
         bytes); babeltrace2 refuses the trace when it indexes the packets, kairos reads \
         the events the packet holds before the file ends and then reports the stream as \
         damaged (by design: a reader keeps every event it can still decode)",
    ),
    (
        "succeed/meta-ctx-sequence",
        Difference::Babeltrace2Aborts,
        "babeltrace2 2.0.4 aborts on `Assertion tgt_fc failed` \
         (ctf-meta-update-value-storing-indexes.c) for an event context sequence whose \
         length is in the stream event context, a bug of that version; babeltrace's own \
         test suite expects this trace to be read (it is in `succeed/`, its expected \
         output is empty: the stream file is empty)",
    ),
];

/// How many trace folders the corpus holds: a folder lost from the copy fails the test.
const TRACES: usize = 56;

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/babeltrace-ctf-traces")
}

/// Every `<category>/<name>` folder of the corpus, sorted.
fn trace_folders() -> Vec<String> {
    let mut out = Vec::new();
    for cat in std::fs::read_dir(data_dir()).expect("the corpus is in tests/data") {
        let cat = cat.unwrap().path();
        if !cat.is_dir() {
            continue;
        }
        for t in std::fs::read_dir(&cat).unwrap() {
            let t = t.unwrap().path();
            if t.is_dir() {
                let rel = t.strip_prefix(data_dir()).unwrap();
                out.push(rel.to_string_lossy().into_owned());
            }
        }
    }
    out.sort();
    out
}

/// What kairos made of a trace: its text, the first error, and the notices.
struct Ours {
    text: String,
    events: usize,
    error: Option<ReadError>,
    notices: Vec<Notice>,
}

fn read_with_kairos(dir: &Path) -> Ours {
    let mut ours = Ours {
        text: String::new(),
        events: 0,
        error: None,
        notices: Vec::new(),
    };
    let set = match TraceSet::open(dir) {
        Ok(set) => set,
        Err(e) => {
            ours.error = Some(e);
            return ours;
        }
    };
    let mut events = match set.events() {
        Ok(events) => events,
        Err(e) => {
            ours.error = Some(e);
            return ours;
        }
    };
    for item in events.by_ref() {
        match item {
            Ok(ev) => {
                text::write_event(&mut ours.text, &ev);
                ours.text.push('\n');
                ours.events += 1;
            }
            Err(e) => {
                ours.error.get_or_insert(e);
            }
        }
    }
    ours.notices = events.take_notices();
    ours
}

/// Discards per stream file and kind ("events" or "packets"): the count and, for
/// packets, the time range, as babeltrace2 prints them.
type Discards = BTreeMap<(PathBuf, &'static str), (u64, Vec<String>)>;

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The discards babeltrace2 warned about: `WARNING: Tracer discarded 2 packets between
/// [a] and [b] in trace ... within stream "path" ...`.
fn their_discards(stderr: &str) -> Discards {
    let mut out = Discards::new();
    for line in stderr.lines() {
        let Some(rest) = line.split_once("Tracer discarded ").map(|(_, r)| r) else {
            continue;
        };
        let mut words = rest.split(' ');
        let count: u64 = words.next().and_then(|n| n.parse().ok()).unwrap_or(0);
        let kind = match words.next() {
            Some("packet" | "packets") => "packets",
            _ => "events",
        };
        let Some(stream) = rest
            .split_once("within stream \"")
            .and_then(|(_, r)| r.split_once('"'))
            .map(|(p, _)| canonical(Path::new(p)))
        else {
            continue;
        };
        let entry = out.entry((stream, kind)).or_default();
        entry.0 += count;
        if kind == "packets"
            && let Some((_, r)) = rest.split_once("between [")
            && let Some((a, r)) = r.split_once("] and [")
            && let Some((b, _)) = r.split_once(']')
        {
            entry.1.push(format!("{a}..{b}"));
        }
    }
    out
}

fn our_discards(notices: &[Notice]) -> Discards {
    let mut out = Discards::new();
    for n in notices {
        match n {
            Notice::Discarded { path, count, .. } => {
                out.entry((canonical(path), "events")).or_default().0 += count;
            }
            Notice::DiscardedPackets {
                path,
                count,
                after,
                before,
                ..
            } => {
                let entry = out.entry((canonical(path), "packets")).or_default();
                entry.0 += count;
                if let (Some(a), Some(b)) = (after, before) {
                    entry
                        .1
                        .push(format!("{}..{}", text::seconds(*a), text::seconds(*b)));
                }
            }
            _ => {}
        }
    }
    out
}

fn babeltrace(dir: &Path) -> Output {
    kairos_testkit::babeltrace2_output(&["--clock-seconds", "--no-delta"], dir)
}

/// The first line where two texts differ, to show in a failure.
fn first_difference(ours: &str, theirs: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (ours.lines().collect(), theirs.lines().collect());
    match (0..a.len().max(b.len())).find(|&i| a.get(i) != b.get(i)) {
        Some(i) => format!(
            "line {i} differs\n   kairos:      {:?}\n   babeltrace2: {:?} ({} and {} lines)",
            a.get(i),
            b.get(i),
            a.len(),
            b.len()
        ),
        None => "the texts differ only in their last newline".into(),
    }
}

/// Checks one trace, or returns what is wrong with it.
fn check(name: &str, dir: &Path) -> Result<(), String> {
    let theirs = babeltrace(dir);
    let their_text = String::from_utf8_lossy(&theirs.stdout);
    let their_stderr = String::from_utf8_lossy(&theirs.stderr);
    let ours = read_with_kairos(dir);
    let expected = EXPECTED.iter().find(|(t, ..)| *t == name);
    match expected.map(|(_, d, _)| d) {
        None => {
            if ours.text != their_text {
                return Err(first_difference(&ours.text, &their_text));
            }
            match (&ours.error, theirs.status.success()) {
                (None, false) => {
                    return Err(format!(
                        "babeltrace2 fails ({}) where kairos reports no error: {their_stderr}",
                        theirs.status
                    ));
                }
                (Some(e), true) => {
                    return Err(format!("kairos fails where babeltrace2 does not: {e}"));
                }
                _ => {}
            }
            let (a, b) = (our_discards(&ours.notices), their_discards(&their_stderr));
            if a != b {
                return Err(format!(
                    "discarded events or packets differ\n   kairos:      {a:?}\n   babeltrace2: {b:?}"
                ));
            }
        }
        Some(Difference::KairosReadsUpToTheDamage { events }) => {
            if theirs.status.success() || !their_text.is_empty() {
                return Err(format!(
                    "babeltrace2 was expected to refuse the trace, it printed {} lines ({})",
                    their_text.lines().count(),
                    theirs.status
                ));
            }
            if ours.events != *events || !matches!(ours.error, Some(ReadError::Damaged { .. })) {
                return Err(format!(
                    "kairos was expected to read {events} events then report damage, it read {} ({:?})",
                    ours.events,
                    ours.error.map(|e| e.to_string())
                ));
            }
        }
        Some(Difference::Babeltrace2Aborts) => {
            if theirs.status.code().is_some() && !their_stderr.contains("Assertion") {
                return Err(format!(
                    "babeltrace2 was expected to abort, it exited with {}: remove the expectation if it reads the trace now",
                    theirs.status
                ));
            }
            if let Some(e) = &ours.error {
                return Err(format!("kairos fails: {e}"));
            }
            if ours.text != their_text {
                return Err(first_difference(&ours.text, &their_text));
            }
        }
    }
    Ok(())
}

#[test]
fn every_babeltrace2_test_trace_reads_as_babeltrace2_prints_it_but_the_listed_differences() {
    let traces = trace_folders();
    assert_eq!(
        traces.len(),
        TRACES,
        "trace folders in {}: {traces:?}",
        data_dir().display()
    );
    for (t, ..) in &EXPECTED {
        assert!(
            traces.iter().any(|n| n == t),
            "{t} is listed as a known difference but is not in the corpus"
        );
    }
    let failures: Vec<String> = traces
        .iter()
        .filter_map(|name| {
            check(name, &data_dir().join(name))
                .err()
                .map(|why| format!("{name}: {why}"))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} traces differ from babeltrace2 beyond the listed differences:\n{}",
        failures.len(),
        traces.len(),
        failures.join("\n")
    );
}

#[test]
fn metadata_babeltrace2_refuses_is_refused_with_a_typed_error_naming_the_event_and_field() {
    let cases = [
        (
            "fail/invalid-sequence-length-field-class",
            MetadataFault::SequenceLengthNotUnsigned,
            "event `ze_event` (id 1 of stream class 0), payload: sequence `x` takes its length from `len`, which is a structure, not an unsigned integer",
        ),
        (
            "fail/invalid-variant-selector-field-class",
            MetadataFault::VariantTagNotEnum,
            "event `ze_event` (id 1 of stream class 0), payload: variant `v` takes its tag from `selector`, which is a structure, not an enumeration",
        ),
    ];
    for (trace, fault, message) in cases {
        let dir = data_dir().join(trace);
        let theirs = babeltrace(&dir);
        assert!(!theirs.status.success(), "babeltrace2 refuses {trace}");
        let err = TraceSet::open(&dir).expect_err(trace);
        let ReadError::Metadata { path, cause } = &err else {
            panic!("{trace}: expected a metadata error, got {err}");
        };
        assert_eq!(path, &dir.join("metadata"));
        assert_eq!(cause.fault, fault, "{trace}: {err}");
        assert_eq!(cause.line, Some(16), "the event block's line: {err}");
        assert_eq!(cause.message, message);
        assert!(
            err.to_string()
                .contains("bad metadata at line 16: event `ze_event`"),
            "{err}"
        );
    }
}

#[test]
fn character_constants_in_metadata_are_integers() {
    // succeed3 declares `test3 = '\n';` in its stream block: babeltrace2 reads it.
    let dir = data_dir().join("succeed/succeed3");
    let set = TraceSet::open(&dir).expect("a character constant is an integer value");
    assert_eq!(set.traces[0].metadata.streams.len(), 1);
}
