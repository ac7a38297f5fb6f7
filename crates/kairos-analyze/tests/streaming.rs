//! The streaming analyses give the same results as the analyses of a whole model, on
//! every real trace of ../shared/traces and tests/data, and hold only the messages still in flight.

use std::path::{Path, PathBuf};

use kairos_analyze::flow::{FlowAcc, Pick};
use kairos_analyze::{
    Builder, Digest, Model, Options, analyze, callbacks, chains, html, queues, timers,
};
use kairos_trace::read::TraceSet;

const TRACES: [&str; 7] = [
    "ros2-sync-one-to-one",
    "ros1-pub-sub-1",
    "ros1-pub-sub-10",
    "ctf-hello-lost",
    "caret/end_to_end_fastrtps",
    "caret/cyclic_pipeline_intra_process",
    "caret-hook/end_to_end_sample",
];

/// A trace of ../shared/traces, or of tests/data (the CARET samples).
fn trace(name: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    if name.starts_with("caret") {
        root.join("tests/data").join(name)
    } else {
        root.join("../../../shared/traces").join(name)
    }
}

/// Reads `path` through a streaming builder following quiet trees for `horizon_ns`.
fn stream(path: &Path, digest: Digest, horizon_ns: i64) -> (Model, Digest, usize) {
    let set = TraceSet::open(path).unwrap();
    let mut events = set.events_with(Builder::selection()).unwrap();
    let mut b = Builder::streaming(digest).with_horizon(horizon_ns);
    for item in events.by_ref() {
        match item {
            Ok(ev) => b.event(&ev),
            Err(e) => b.read_error(e.to_string()),
        }
    }
    let peak = b.peak_live();
    let (m, d) = b.finish_streaming(events.discarded(), events.backwards());
    (m, d.unwrap(), peak)
}

fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string_pretty(v).unwrap()
}

#[test]
fn streaming_analyses_equal_the_whole_model_s_on_every_real_trace() {
    for name in TRACES {
        let whole = analyze(trace(name), Options::default()).unwrap();
        // The default horizon, and one so short that trees retire while the trace is
        // read (the ros2 trace publishes every 5 ms; its chains take well under 1 ms...
        // the short horizon must still give the same results).
        // The CARET samples hold messages up to 250 ms in queues: 1 s still retires
        // trees while their 10 s are read.
        let short = if name.starts_with("caret") {
            1_000_000_000
        } else {
            50_000_000
        };
        for horizon in [kairos_analyze::build::HORIZON_NS, short] {
            let (m, d, _) = stream(&trace(name), Digest::default(), horizon);
            let what = format!("{name}, horizon {horizon} ns");
            assert_eq!(
                json(&d.chains.report(&m)),
                json(&chains::chains(&whole)),
                "chains: {what}"
            );
            assert_eq!(
                json(&d.callbacks.report(&m)),
                json(&callbacks::callbacks(&whole)),
                "callbacks: {what}"
            );
            assert_eq!(
                json(&d.timers.report(&m)),
                json(&timers::timers(&whole)),
                "timers: {what}"
            );
            assert_eq!(
                json(&d.queues.report(&m)),
                json(&queues::queues(&whole)),
                "queues: {what}"
            );
            assert_eq!(
                html::report_digest(&m, &d, "t"),
                html::report(&whole, "t"),
                "report: {what}"
            );
        }
    }
}

#[test]
fn streaming_flow_follows_the_same_message_as_the_whole_model() {
    let whole = analyze(trace("ros2-sync-one-to-one"), Options::default()).unwrap();
    for pick in [
        Pick::Index(0),
        Pick::Index(100),
        Pick::Index(2030),
        Pick::At(0),
    ] {
        let (m, d, _) = stream(
            &trace("ros2-sync-one-to-one"),
            Digest::with_flow(FlowAcc::new("/topic_a", pick)),
            50_000_000,
        );
        let streamed = d.flow.unwrap().report(&m).unwrap();
        let model = kairos_analyze::flow::flow(&whole, "/topic_a", pick).unwrap();
        assert_eq!(json(&streamed), json(&model), "{pick:?}");
        assert_eq!(streamed.to_string(), model.to_string());
    }
    let (m, d, _) = stream(
        &trace("ros2-sync-one-to-one"),
        Digest::with_flow(FlowAcc::new("/nope", Pick::Index(0))),
        50_000_000,
    );
    assert_eq!(
        d.flow.unwrap().report(&m).unwrap_err().to_string(),
        kairos_analyze::flow::flow(&whole, "/nope", Pick::Index(0))
            .unwrap_err()
            .to_string()
    );
}

#[test]
fn a_streaming_builder_holds_only_the_messages_in_flight() {
    let whole = analyze(trace("ros2-sync-one-to-one"), Options::default()).unwrap();
    assert!(whole.messages.len() > 4000, "{}", whole.messages.len());
    // With a 50 ms horizon only the last 50 ms of messages (and those of the last
    // few thousand events, between two looks) are followed at once.
    let (_, d, peak) = stream(
        &trace("ros2-sync-one-to-one"),
        Digest::default(),
        50_000_000,
    );
    assert!(peak < 400, "{peak} messages followed at once");
    // A message whose callback never came is counted, not kept: the trace ends with
    // messages taken whose callback is not in it, or queued for a subscription.
    let never: u64 = whole
        .messages
        .iter()
        .flat_map(|m| &m.deliveries)
        .filter(|d| {
            d.callback_start.is_none()
                && d.dropped.is_none()
                && (d.taken.is_some() || d.enqueued.is_some())
        })
        .count() as u64;
    assert_eq!(d.never_reached, never);
}

#[test]
fn a_counts_only_digest_gives_summary_the_same_link_counts() {
    for name in TRACES {
        let whole = analyze(trace(name), Options::default()).unwrap();
        let (m, _, _) = stream(
            &trace(name),
            Digest::counts_only(),
            kairos_analyze::build::HORIZON_NS,
        );
        let takes = |m: &Model| -> Vec<String> {
            m.subscriptions
                .iter()
                .map(|s| format!("{} {:?}", s.topic, s.takes))
                .collect()
        };
        assert_eq!(takes(&m), takes(&whole), "{name}");
        assert_eq!(m.links, whole.links, "{name}");
    }
}
