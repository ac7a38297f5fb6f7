//! The analyses on the real traces of ../shared/traces, checked against what the raw
//! events say (read independently with the reader).

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use kairos_analyze::model::QueueKind;
use kairos_analyze::{Options, analyze, chains, flow, queues, summary, timers};
use kairos_trace::read::TraceSet;

fn trace(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces")
        .join(name)
}

/// (event name, timestamp) of every event with one of `names`.
fn raw(name: &str, names: &[&str]) -> Vec<(String, i64)> {
    let set = TraceSet::open(trace(name)).unwrap();
    set.events()
        .unwrap()
        .map(Result::unwrap)
        .filter(|e| names.contains(&e.name()))
        .map(|e| (e.name().to_string(), e.timestamp))
        .collect()
}

#[test]
fn ros1_every_recorded_drop_is_reported_with_its_queue() {
    let m = analyze(trace("ros1-pub-sub-10"), Options::default()).unwrap();
    let report = queues::queues(&m);
    let mut reported = BTreeSet::new();
    for q in &report.0 {
        for d in &q.drops {
            reported.insert((q.kind, q.node.clone(), q.topic.clone(), d.at_ns));
        }
    }
    let recorded = raw(
        "ros1-pub-sub-10",
        &[
            "roscpp:subscriber_link_message_dropped",
            "roscpp:subscription_message_dropped",
        ],
    );
    assert_eq!(recorded.len(), 7, "the trace records 7 drops");
    let expected: BTreeSet<_> = recorded
        .iter()
        .map(|(name, ts)| {
            if name == "roscpp:subscriber_link_message_dropped" {
                (
                    QueueKind::Publisher,
                    "/pub_node".to_string(),
                    "/the_topic_name".to_string(),
                    *ts,
                )
            } else {
                (
                    QueueKind::Subscription,
                    "/sub_node".to_string(),
                    "/the_topic_name".to_string(),
                    *ts,
                )
            }
        })
        .collect();
    assert_eq!(reported, expected);
    let sub = report
        .0
        .iter()
        .find(|q| {
            q.kind == QueueKind::Subscription
                && q.node == "/sub_node"
                && q.topic == "/the_topic_name"
        })
        .unwrap();
    assert_eq!((sub.enqueued, sub.dequeued, sub.drops.len()), (5, 3, 2));
}

#[test]
fn ros1_chain_counts_only_messages_that_reached_the_callback() {
    let m = analyze(trace("ros1-pub-sub-10"), Options::default()).unwrap();
    let ch = chains::chains(&m);
    let c =
        ch.0.iter()
            .find(|c| c.name() == "/pub_node -> /the_topic_name -> /sub_node")
            .expect("the pub/sub chain");
    // 10 published, 5 dropped by the publisher, 2 by the subscriber queue.
    let starts = raw("ros1-pub-sub-10", &["roscpp:subscriber_callback_start"]).len();
    assert_eq!(c.count, 3.min(starts));
}

#[test]
fn ros2_chain_source_to_sink_is_found_with_per_stage_latency() {
    let m = analyze(trace("ros2-sync-one-to-one"), Options::default()).unwrap();
    let ch = chains::chains(&m);
    let c =
        ch.0.iter()
            .find(|c| c.name() == "/source -> /topic_a -> /sync_one_to_one -> /topic_b -> /sink")
            .unwrap_or_else(|| {
                panic!(
                    "chain not found; chains: {:?}",
                    ch.0.iter().map(|c| c.name()).collect::<Vec<_>>()
                )
            });
    let names: Vec<&str> = c.stages.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "/topic_a publish",
            "/topic_a transport+queue",
            "/sync_one_to_one dispatch",
            "/sync_one_to_one callback to publish",
            "/topic_b publish",
            "/topic_b transport+queue",
            "/sink dispatch",
            "/sink callback",
        ]
    );
    assert!(c.count > 1900, "{} complete chains", c.count);
    for s in &c.stages {
        assert_eq!(s.latency.count, c.count, "{}", s.name);
        assert!(s.latency.min_ns >= 0, "{} has a negative latency", s.name);
    }
    // The stages are contiguous: their means add up to the end-to-end mean.
    let sum: f64 = c.stages.iter().map(|s| s.latency.mean_ns).sum();
    assert!(
        (sum - c.total.mean_ns).abs() < 1.0,
        "{sum} vs {}",
        c.total.mean_ns
    );
    assert!(c.dominant.is_some());
}

#[test]
fn ros2_empty_takes_create_no_phantom_messages() {
    let m = analyze(trace("ros2-sync-one-to-one"), Options::default()).unwrap();
    let set = TraceSet::open(trace("ros2-sync-one-to-one")).unwrap();
    let mut declared = HashSet::new();
    let (mut empty, mut real_takes) = (0, 0);
    for e in set.events().unwrap().map(Result::unwrap) {
        let pid = e.context_field("vpid").and_then(|v| v.as_i64()).unwrap();
        match e.name() {
            "ros2:rcl_subscription_init" => {
                declared.insert((pid, e.u64("rmw_subscription_handle").unwrap()));
            }
            "ros2:rmw_take" if e.i64("taken") == Some(0) => empty += 1,
            "ros2:rmw_take"
                if declared.contains(&(pid, e.u64("rmw_subscription_handle").unwrap())) =>
            {
                real_takes += 1
            }
            _ => {}
        }
    }
    assert_eq!(empty, 34);
    assert_eq!(m.empty_takes, 34);
    let taken: usize = m
        .messages
        .iter()
        .map(|msg| msg.deliveries.iter().filter(|d| d.taken.is_some()).count())
        .sum();
    assert_eq!(
        taken, real_takes,
        "one delivery per real take, none for an empty one"
    );
    let on_a = m
        .messages
        .iter()
        .filter(|msg| &*msg.topic == "/topic_a")
        .count();
    assert_eq!(on_a, 2031, "every /topic_a message is a published one");
    assert_eq!(summary::summary(&m).empty_takes, 34);
}

#[test]
fn ros2_flow_follows_a_message_to_the_sink() {
    let m = analyze(trace("ros2-sync-one-to-one"), Options::default()).unwrap();
    let f = flow::flow(&m, "/topic_a", flow::Pick::Index(100)).unwrap();
    let d = &f.deliveries[0];
    assert_eq!(d.subscriber, "/sync_one_to_one");
    let b = d
        .children
        .iter()
        .find(|c| c.topic == "/topic_b")
        .expect("the callback published on /topic_b");
    assert_eq!(b.deliveries[0].subscriber, "/sink");
    assert!(b.published_ns > f.published_ns);
    assert!(flow::flow(&m, "/nope", flow::Pick::Index(0)).is_err());
    assert!(flow::flow(&m, "/topic_a", flow::Pick::Index(1_000_000)).is_err());
}

#[test]
fn ros2_timer_period_and_summary() {
    let m = analyze(trace("ros2-sync-one-to-one"), Options::default()).unwrap();
    let t = timers::timers(&m);
    let source =
        t.0.iter()
            .find(|t| t.label.starts_with("/source timer"))
            .unwrap();
    assert_eq!(source.period_ns, Some(5_000_000));
    assert_eq!(source.runs, 2031);
    assert!((source.actual_period.p50_ns - 5_000_000).abs() < 100_000);
    let s = summary::summary(
        &analyze(trace("ros2-sync-one-to-one"), Options { messages: false }).unwrap(),
    );
    assert_eq!(s.events, 99_338);
    let a = s.topics.iter().find(|t| t.name == "/topic_a").unwrap();
    assert_eq!(
        (
            a.publishers.as_slice(),
            a.subscribers.as_slice(),
            a.messages
        ),
        (
            &["/source".to_string()][..],
            &["/sync_one_to_one".to_string()][..],
            2031
        )
    );
    assert_eq!(s.nodes.len(), 3);
}

#[test]
fn hello_lost_summary_reports_discarded_and_backwards() {
    let m = analyze(trace("ctf-hello-lost"), Options { messages: false }).unwrap();
    assert!(m.discarded_events > 0);
    assert!(m.backwards_timestamps > 0);
    assert!(m.read_errors.is_empty());
}
