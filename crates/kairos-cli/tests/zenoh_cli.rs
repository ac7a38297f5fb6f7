//! The ros2-shaped graph tools against live kairos processes on Zenoh (loopback only):
//! `topic hz` measures a publisher's rate, `topic info` names both ends with their types,
//! `node info` lists a node's entities as `ros2 node info` does, and `topic echo` of a
//! type this process does not know prints size and hex.

mod zenoh_support;

use std::time::Duration;
use zenoh_support::*;

const LIMIT: Duration = Duration::from_secs(60);

#[test]
fn topic_hz_measures_a_publishers_rate() {
    let router = Router::start(KAIROS);
    let _publisher = spawn(router.kairos().args([
        "topic",
        "pub",
        "/hz_topic",
        "std_msgs/msg/String",
        "{data: tick}",
        "--times",
        "200",
        "--rate",
        "20",
        "--wait-matching",
        "30",
    ]));
    let out = router
        .kairos()
        .args([
            "topic",
            "hz",
            "/hz_topic",
            "--count",
            "11",
            "--json",
            "--timeout",
            "40",
        ])
        .output()
        .expect("kairos topic hz");
    let hz: serde_json::Value =
        serde_json::from_str(assert_ok("kairos topic hz", &out).trim()).expect("JSON");
    assert_eq!(hz["topic"], "/hz_topic");
    assert_eq!(hz["window"], 10, "11 messages, 10 intervals: {hz}");
    let rate = hz["rate_hz"].as_f64().unwrap();
    let (min, max) = (hz["min_s"].as_f64().unwrap(), hz["max_s"].as_f64().unwrap());
    // The rate is the mean interval's inverse, so it lies between the extremes.
    assert!(
        min <= 1.0 / rate && 1.0 / rate <= max,
        "rate {rate} outside its own min {min} / max {max}"
    );
    // 20 Hz asked; a loaded machine stretches intervals but cannot make 20 Hz look like
    // 2 or 200.
    assert!(
        (2.0..200.0).contains(&rate),
        "rate {rate} Hz for 20 Hz published"
    );
}

#[test]
fn topic_info_names_publisher_and_subscription_with_their_nodes() {
    let router = Router::start(KAIROS);
    let _echo = spawn(router.kairos().args([
        "topic",
        "echo",
        "/info_topic",
        "std_msgs/msg/String",
        "--timeout",
        "40",
    ]));
    let _publisher = spawn(router.kairos().args([
        "topic",
        "pub",
        "/info_topic",
        "std_msgs/msg/String",
        "{data: x}",
        "--times",
        "1",
        "--wait-matching",
        "30",
        "--keep-alive",
        "40",
    ]));
    let text = topic_info_until(
        &router,
        "/info_topic",
        &[],
        Duration::from_secs(30),
        |text| text.contains("Publisher count: 1") && text.contains("Subscription count: 1"),
    );
    assert!(text.contains("Type: std_msgs/msg/String"), "{text}");
    assert!(text.contains("Publisher count: 1"), "{text}");
    assert!(text.contains("Subscription count: 1"), "{text}");
    let publisher = text
        .lines()
        .find(|l| l.trim_start().starts_with("Publisher: node /kairos_pub_"))
        .unwrap_or_else(|| panic!("no publisher line naming its node:\n{text}"));
    assert!(
        publisher.contains("(Reliable, Volatile, keep last 10)"),
        "{publisher}"
    );
    assert!(
        text.lines().any(|l| l
            .trim_start()
            .starts_with("Subscription: node /kairos_echo_")),
        "no subscription line naming its node:\n{text}"
    );
}

#[test]
fn node_info_lists_what_a_node_does_and_what_access_control_did_to_its_process() {
    let router = Router::start(KAIROS);
    let publisher = spawn(router.kairos().args([
        "topic",
        "pub",
        "/node_info_topic",
        "std_msgs/msg/String",
        "{data: x}",
        "--times",
        "1",
        "--keep-alive",
        "600",
    ]));
    // The publisher is in the graph before its node is asked about. The waits below are
    // generous: what is asserted is what the node shows, not how fast a loaded machine
    // answers.
    topic_info_until(
        &router,
        "/node_info_topic",
        &[],
        Duration::from_secs(30),
        |text| text.contains("Publisher count: 1"),
    );
    let node = format!("/kairos_pub_{}", publisher.0.id());
    let out = router
        .kairos()
        .args([
            "node",
            "info",
            &node,
            "--spin-time",
            "30",
            "--timeout",
            "30",
        ])
        .output()
        .expect("kairos node info");
    let text = assert_ok("kairos node info", &out);
    // ros2 node info's headings, in its order, then kairos's access control.
    let headings: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .collect();
    assert_eq!(
        headings[..headings.len().min(6)],
        [
            "  Subscribers:",
            "  Publishers:",
            "  Service Servers:",
            "  Service Clients:",
            "  Action Servers:",
            "  Action Clients:",
        ],
        "{text}"
    );
    assert_eq!(headings.len(), 7, "{text}");
    assert!(
        headings[6].starts_with("  Access control (this process, process "),
        "{text}"
    );
    assert!(text.starts_with(&format!("{node}\n")), "{text}");
    assert!(
        text.contains("  Publishers:\n    /node_info_topic: std_msgs/msg/String\n"),
        "{text}"
    );
    assert!(
        text.contains("    Rules: none: zenoh lets every operation through"),
        "{text}"
    );
    let json = router
        .kairos()
        .args([
            "node",
            "info",
            &node,
            "--json",
            "--spin-time",
            "30",
            "--timeout",
            "30",
        ])
        .output()
        .expect("kairos node info --json");
    let json: serde_json::Value =
        serde_json::from_str(&assert_ok("kairos node info --json", &json)).expect("JSON");
    assert_eq!(json["publishers"][0]["name"], "/node_info_topic", "{json}");
    assert_eq!(
        json["access"][0]["report"]["denials"],
        serde_json::json!([])
    );

    let unknown = router
        .kairos()
        .args(["node", "info", "/nobody_here", "--spin-time", "1"])
        .output()
        .expect("kairos node info of no node");
    kairos_testkit::process::assert_fails(
        "node info of a node not in the graph",
        &unknown,
        &["Unable to find node '/nobody_here'"],
    );
}

#[test]
fn topic_echo_of_an_unknown_type_prints_size_and_hex() {
    let router = Router::start(KAIROS);
    // The pipeline demo's source publishes kairos_demo/msg/Reading {uint64 seq, int64
    // born_ns}, a type only the pipeline processes register.
    let mut source = spawn(
        router
            .kairos()
            .args(["internal", "pipeline-node", "source"])
            .env("KAIROS_TRANSPORT", "zenoh"),
    );
    stdout_lines(&mut source).wait_for("ready", Duration::from_secs(30));
    let echo = spawn(router.kairos().args([
        "topic",
        "echo",
        "/pipeline/readings",
        "--count",
        "2",
        "--json",
        "--timeout",
        "40",
    ]));
    let out = assert_ok("kairos topic echo", &finish(echo, LIMIT));
    let samples: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    assert_eq!(samples.len(), 2, "{out}");
    let mut seqs = Vec::new();
    for sample in &samples {
        // CDR header (little endian), then seq and born_ns, 8 bytes each.
        assert_eq!(sample["size"], 20, "{sample}");
        let hex = sample["hex"].as_str().unwrap();
        assert_eq!(hex.len(), 40, "{sample}");
        assert!(
            hex.starts_with("00010000"),
            "CDR little-endian header: {hex}"
        );
        let seq = u64::from_str_radix(&hex[8..24], 16).unwrap().swap_bytes();
        seqs.push(seq);
    }
    assert_eq!(seqs[1], seqs[0] + 1, "two readings in a row: {seqs:?}");
}

/// Every command that takes seconds or a rate refuses a negative, NaN or astronomically
/// large one with an error naming the flag: never a panic (std's `Duration` panics on
/// them, and `Instant + 1e30 s` overflows), never a silent negative wait.
#[test]
fn bad_seconds_and_rates_are_refused_naming_the_flag() {
    let router = Router::start(KAIROS);
    let string = ["std_msgs/msg/String", "{data: x}"];
    let cases: &[(&str, Vec<&str>)] = &[
        (
            "--timeout",
            vec!["topic", "echo", "/x", string[0], "--timeout=1e30"],
        ),
        ("--timeout", vec!["topic", "hz", "/x", "--timeout=nan"]),
        (
            "--keep-alive",
            [&["topic", "pub", "/x"][..], &string, &["--keep-alive=-1"]].concat(),
        ),
        (
            "--rate",
            [&["topic", "pub", "/x"][..], &string, &["--rate=nan"]].concat(),
        ),
        (
            "--wait-matching",
            [
                &["topic", "pub", "/x"][..],
                &string,
                &["--wait-matching=inf"],
            ]
            .concat(),
        ),
        (
            "--timeout",
            vec!["param", "get", "/n", "p", "--timeout=1e30"],
        ),
        ("--timeout", vec!["param", "serve", "/n", "--timeout=-1"]),
        (
            "--timeout",
            vec![
                "service",
                "call",
                "/s",
                "example_interfaces/srv/AddTwoInts",
                "{a: 1, b: 2}",
                "--timeout=-1",
            ],
        ),
        ("--rate", vec!["tf", "echo", "a", "b", "--rate=0"]),
        ("--timeout", vec!["tf", "echo", "a", "b", "--timeout=1e300"]),
        ("--spin-time", vec!["node", "list", "--spin-time=-0.5"]),
        (
            "--sigterm-timeout",
            vec!["launch", "x.yaml", "--sigterm-timeout=-1"],
        ),
        (
            "--post-shutdown-timeout",
            vec!["launch-test", "x.py", "--post-shutdown-timeout=-1"],
        ),
        (
            "--max-bag-duration",
            vec!["bag", "record", "-a", "--max-bag-duration=nan"],
        ),
        ("--delay", vec!["bag", "play", "nowhere", "--delay=-2"]),
        (
            "--duration",
            vec!["bridge", "foxglove", "--port=0", "--duration=1e30"],
        ),
    ];
    for (flag, args) in cases {
        let out = finish(spawn(router.kairos().args(args)), LIMIT);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(2),
            "kairos {}: wanted kairos's error exit (2); stderr: {stderr}",
            args.join(" ")
        );
        assert!(
            stderr.contains(flag) && !stderr.contains("panicked"),
            "kairos {}: the error should name {flag}, not panic: {stderr}",
            args.join(" ")
        );
    }
}
