//! QoS across kairos processes on Zenoh (loopback only), as rmw_zenoh maps it: a late
//! joiner on a transient-local topic gets the publisher's cache (zenoh-ext advanced
//! publisher and subscriber), a volatile one does not, and every QoS a process declares is
//! what the others read from its liveliness tokens.

mod zenoh_support;

use std::time::Duration;
use zenoh_support::*;

const LIMIT: Duration = Duration::from_secs(60);

/// A publisher of 5 messages on `/latched` with a cache of 3 that stays alive afterwards.
fn latched_publisher(router: &Router) -> Running {
    let mut publisher = spawn(router.kairos().args([
        "topic",
        "pub",
        "/latched",
        "std_msgs/msg/String",
        "{data: kept}",
        "--times",
        "5",
        "--rate",
        "100",
        "--wait-matching",
        "0",
        "--qos-durability",
        "transient_local",
        "--qos-depth",
        "3",
        "--keep-alive",
        "40",
    ]));
    let mut lines = stdout_lines(&mut publisher);
    lines.wait_for("publishing #5", Duration::from_secs(30));
    publisher
}

/// `kairos topic echo /latched` started after every message was published; it waits for
/// a 4th message that never comes, so it ends on its timeout with what it got.
fn late_echo(router: &Router, durability: &str) -> Running {
    spawn(router.kairos().args([
        "topic",
        "echo",
        "/latched",
        "std_msgs/msg/String",
        "--qos-durability",
        durability,
        "--qos-depth",
        "10",
        "--json",
        "--count",
        "4",
        "--timeout",
        "6",
    ]))
}

#[test]
fn a_late_joiner_on_a_transient_local_topic_gets_the_cached_messages() {
    let router = Router::start();
    let _publisher = latched_publisher(&router);
    // Both start after the last message; only the transient-local one has history.
    let transient = late_echo(&router, "transient_local");
    let volatile = late_echo(&router, "volatile");
    let transient = finish(transient, LIMIT);
    let volatile = finish(volatile, LIMIT);
    let got = String::from_utf8_lossy(&transient.stdout);
    // The publisher's cache holds its depth (3) of the 5 messages, however many the
    // subscription would keep (10).
    assert_eq!(
        got.lines().collect::<Vec<_>>(),
        vec![r#"{"data":"kept"}"#; 3],
        "the transient-local late joiner got:\n{got}\nstderr:\n{}",
        String::from_utf8_lossy(&transient.stderr)
    );
    assert_eq!(
        transient.status.code(),
        Some(1),
        "no 4th message: echo ends on its timeout"
    );
    let stderr = String::from_utf8_lossy(&transient.stderr);
    assert!(
        stderr.contains("3 message(s) before the 6s timeout"),
        "stderr:\n{stderr}"
    );
    let none = String::from_utf8_lossy(&volatile.stdout);
    assert!(
        none.trim().is_empty(),
        "a volatile late joiner gets no history, got:\n{none}"
    );
}

#[test]
fn the_qos_each_process_declares_is_read_from_its_tokens() {
    let router = Router::start();
    let _publisher = latched_publisher(&router);
    let _best_effort_sub = spawn(router.kairos().args([
        "topic",
        "echo",
        "/latched",
        "std_msgs/msg/String",
        "--qos-reliability",
        "best_effort",
        "--qos-history",
        "keep_all",
        "--qos-depth",
        "50",
        "--timeout",
        "40",
    ]));
    // The echo process announces its subscription once it runs: ask again until it does.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let info = loop {
        let out = router
            .kairos()
            .args(["topic", "info", "/latched", "--json", "--spin-time", "1"])
            .output()
            .expect("kairos topic info");
        let info: serde_json::Value =
            serde_json::from_str(&assert_ok("kairos topic info", &out)).expect("JSON");
        let subscribed = info["subscriptions"]
            .as_array()
            .is_some_and(|s| !s.is_empty());
        if subscribed || std::time::Instant::now() > deadline {
            break info;
        }
    };
    assert_eq!(info["types"], serde_json::json!(["std_msgs/msg/String"]));
    let publishers = info["publishers"].as_array().expect("publishers");
    assert_eq!(publishers.len(), 1, "{info:#}");
    assert_eq!(publishers[0]["reliability"], "Reliable");
    assert_eq!(publishers[0]["durability"], "TransientLocal");
    assert_eq!(publishers[0]["history"], "keep last 3");
    let subscriptions = info["subscriptions"].as_array().expect("subscriptions");
    assert_eq!(subscriptions.len(), 1, "{info:#}");
    assert_eq!(subscriptions[0]["reliability"], "BestEffort");
    assert_eq!(subscriptions[0]["durability"], "Volatile");
    assert_eq!(subscriptions[0]["history"], "keep all");
}
