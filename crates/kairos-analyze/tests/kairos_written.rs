//! The analyses on a trace the kairos writer records (a real `Session`, two threads):
//! messages linked by `(publisher_handle, seq)`, queue drops, chains and empty takes.

use kairos_analyze::model::QueueKind;
use kairos_analyze::{Model, Options, analyze, chains, queues};
use kairos_trace::{Session, tp};
use std::sync::OnceLock;

const MESSAGES: u64 = 200;

/// Talker (timer callback) publishes /chatter; listener takes it on another thread;
/// every 10th message is dropped from the listener's queue instead.
fn record(dir: &std::path::Path) {
    let session = Session::start(dir).unwrap();
    tp::rcl_node_init(0x10, 0x11, "talker", "/");
    tp::rcl_node_init(0x12, 0x13, "listener", "/");
    tp::rcl_publisher_init(0x20, 0x10, 0x21, "/chatter", 10);
    tp::rcl_subscription_init(0x30, 0x12, 0x31, "/chatter", 3);
    tp::rclcpp_subscription_init(0x30, 0x32);
    tp::rclcpp_subscription_callback_added(0x32, 0x33);
    tp::rcl_timer_init(0x60, 1_000_000);
    tp::rclcpp_timer_callback_added(0x60, 0x61);
    tp::rclcpp_timer_link_node(0x60, 0x10);
    let (tx, rx) = std::sync::mpsc::channel::<u64>();
    let listener = std::thread::spawn(move || {
        for seq in rx {
            if seq % 10 == 9 {
                tp::message_drop(0x30, 0x20, seq, 0);
                continue;
            }
            tp::rmw_take(0x31, 0xBB, 0, 1, 0x20, seq);
            tp::callback_start(0x33, 0);
            tp::callback_end(0x33);
        }
        tp::rmw_take(0x31, 0xBB, 0, 0, 0, 0);
    });
    for seq in 0..MESSAGES {
        tp::callback_start(0x61, 0);
        if seq == 7 {
            tp::log(0x61, "talker", 30, "tick 7 is late");
        }
        tp::rcl_publish(0x20, 0xAA, seq);
        tp::rmw_publish(0xAA, 0x20, seq);
        tp::message_enqueue(0x30, 0x20, seq, 1);
        tp::callback_end(0x61);
        tx.send(seq).unwrap();
    }
    drop(tx);
    listener.join().unwrap();
    tp::log(0, "talker", 20, "done <all>");
    let stats = session.stop().unwrap();
    assert_eq!(
        stats.events_discarded, 0,
        "the test must not overflow the buffers"
    );
}

/// The recorded trace's model: one session per process, so the tests share one.
fn recorded() -> &'static Model {
    static MODEL: OnceLock<Model> = OnceLock::new();
    MODEL.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("kairos-written-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        record(&dir);
        let m = analyze(&dir, Options::default()).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        m
    })
}

#[test]
fn a_written_kairos_trace_is_analyzed_exactly() {
    let m = recorded();
    assert!(m.read_errors.is_empty(), "{:?}", m.read_errors);
    assert_eq!(m.empty_takes, 1);
    assert_eq!(
        m.unmatched_takes, 0,
        "every take names a published (publisher, seq)"
    );
    assert_eq!(m.messages.len() as u64, MESSAGES);
    let dropped = MESSAGES / 10;
    let q = queues::queues(m);
    let sub =
        q.0.iter()
            .find(|q| q.kind == QueueKind::Subscription)
            .unwrap();
    assert_eq!(sub.drops.len() as u64, dropped);
    assert_eq!((sub.enqueued, sub.dequeued), (MESSAGES, MESSAGES - dropped));
    let ch = chains::chains(m);
    let c =
        ch.0.iter()
            .find(|c| c.name() == "/talker -> /chatter -> /listener")
            .expect("the chain");
    assert_eq!(c.count as u64, MESSAGES - dropped);
    assert!(c.stages.iter().all(|s| s.latency.min_ns >= 0));
}

#[test]
fn log_lines_are_placed_in_the_callbacks_that_wrote_them() {
    let m = recorded();
    let report = kairos_analyze::logs::report(m, 10);
    let rows: Vec<(&str, &str, Option<&str>)> = report
        .lines
        .iter()
        .map(|l| (l.level.as_str(), l.message.as_str(), l.callback.as_deref()))
        .collect();
    assert_eq!(
        rows,
        [
            ("WARN", "tick 7 is late", Some("/talker timer 1.00 ms")),
            ("INFO", "done <all>", None),
        ]
    );
    let warnings = kairos_analyze::logs::report(m, 30);
    assert_eq!((warnings.lines.len(), warnings.below), (1, 1));
    let text = warnings.to_string();
    assert!(
        text.contains("[WARN] [talker]: tick 7 is late    (in /talker timer 1.00 ms;"),
        "{text}"
    );

    // The HTML timeline marks both, escaped; the Perfetto export has them as instants.
    let html = kairos_analyze::html::report(m, "log");
    assert_eq!(html.matches("<path class=\"log\"").count(), 2, "{html}");
    assert!(
        html.contains("[INFO] [talker]: done &lt;all&gt;"),
        "escaped in the page"
    );
    assert!(html.contains("<section id=\"log\">"));
    let perfetto = kairos_analyze::perfetto::export(m);
    let instants: Vec<_> = perfetto["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "log")
        .collect();
    assert_eq!(instants.len(), 2);
    assert_eq!(instants[0]["ph"], "i");
    assert_eq!(instants[0]["name"], "[WARN] tick 7 is late");
    assert_eq!(instants[0]["args"]["callback"], "/talker timer 1.00 ms");
}
