//! Traces from several hosts whose clocks disagree: the analyzer estimates each host's
//! offset from the messages between them, prints it with its bound, takes it out, and
//! follows every message as if the clocks agreed; no transport stage comes out negative.
//!
//! The traces are real: the pipeline demo's four processes on Zenoh, each traced into
//! its own folder. One of them is then made a second host whose clock reads 30 ms
//! behind: its trace's `hostname` and clock offset are changed, as that host's tracer
//! would have written them.

mod cli_support;
use cli_support::{json_of, kairos, run_ok};

use std::path::Path;

use kairos_analyze::{Builder, Digest};
use kairos_trace::read::TraceSet;

const SKEW_NS: i64 = -30_000_000;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// Chains of `trace` read with no clock correction: what the analyzer saw before.
fn uncorrected_chain_count(trace: &Path) -> u64 {
    let set = TraceSet::open(trace).unwrap();
    let mut events = set.events_with(Builder::selection()).unwrap();
    let mut b = Builder::streaming(Digest::default());
    while let Some(Ok(ev)) = events.next_ref() {
        b.event_ref(ev);
    }
    let (m, d) = b.finish_streaming(0, 0);
    let chains = d.unwrap().chains.report(&m);
    chains.0.iter().map(|c| c.count as u64).max().unwrap_or(0)
}

#[test]
fn a_host_whose_clock_is_behind_is_brought_onto_one_time_line() {
    let dir = tempfile::tempdir().unwrap();
    run_ok(
        kairos()
            .args(["demo", "pipeline", "--processes", "--quick", "--out"])
            .arg(dir.path()),
    );
    let trace = dir.path().join("pipeline-processes/trace");
    let before = json_of(&run_ok(
        kairos().args(["trace", "chains", "--json"]).arg(&trace),
    ));
    let whole = &before[0];
    let count = whole["count"].as_u64().unwrap();
    assert_eq!(whole["path"].as_array().unwrap().len(), 7, "{before}");

    // The filter's process becomes host robot-b, its clock 30 ms behind.
    let skewed = dir.path().join("skewed");
    copy_dir(&trace, &skewed);
    let mut moved = 0;
    for e in std::fs::read_dir(&skewed).unwrap() {
        let folder = e.unwrap().path();
        let summary = json_of(&run_ok(
            kairos().args(["trace", "summary", "--json"]).arg(&folder),
        ));
        let is_filter = summary["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["name"] == "/pipeline/filter");
        if !is_filter {
            continue;
        }
        let md = folder.join("metadata");
        let text = std::fs::read_to_string(&md).unwrap();
        let host = text.find("hostname = \"").expect("a hostname in the env") + 12;
        let end = host + text[host..].find('"').unwrap();
        let mut text = format!("{}robot-b{}", &text[..host], &text[end..]);
        let at = text.find("\toffset = ").expect("a clock offset") + 10;
        let end = at + text[at..].find(';').unwrap();
        let offset: i64 = text[at..end].parse().unwrap();
        text = format!("{}{}{}", &text[..at], offset + SKEW_NS, &text[end..]);
        std::fs::write(&md, text).unwrap();
        moved += 1;
    }
    assert_eq!(moved, 1, "one trace folder holds the filter");
    assert!(
        uncorrected_chain_count(&skewed) < count,
        "with the clocks as recorded, messages into robot-b are taken before they are sent"
    );

    let summary = json_of(&run_ok(
        kairos().args(["trace", "summary", "--json"]).arg(&skewed),
    ));
    let offsets = summary["clock_offsets"].as_array().unwrap();
    assert_eq!(offsets.len(), 1, "{summary}");
    let o = &offsets[0];
    assert_eq!(o["host"], "robot-b");
    let (low, high) = (
        o["low_ns"].as_i64().unwrap(),
        o["high_ns"].as_i64().unwrap(),
    );
    let estimate = o["offset_ns"].as_i64().unwrap();
    assert!(
        low <= SKEW_NS && SKEW_NS <= high,
        "the true offset lies in the interval: {o}"
    );
    assert!(
        high - low < 10_000_000,
        "bounded to a few ms by the messages both ways: {o}"
    );
    assert!((estimate - SKEW_NS).abs() <= (high - low) / 2 + 1, "{o}");
    let text =
        String::from_utf8(run_ok(kairos().args(["trace", "summary"]).arg(&skewed)).stdout).unwrap();
    assert!(text.contains("clock of host robot-b reads"), "{text}");

    let after = json_of(&run_ok(
        kairos().args(["trace", "chains", "--json"]).arg(&skewed),
    ));
    assert_eq!(after[0]["path"], whole["path"], "{after}");
    assert_eq!(after[0]["count"].as_u64().unwrap(), count, "{after}");
    for stage in after[0]["stages"].as_array().unwrap() {
        assert!(
            stage["latency"]["min_ns"].as_i64().unwrap() >= 0,
            "no stage comes out negative: {stage}"
        );
    }
}
