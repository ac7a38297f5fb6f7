//! `kairos bag info` and `kairos bag echo` on bags rosbag2 wrote (its own test bags, kept
//! in kairos-bag's test data with their source), checked against the facts rosbag2's
//! tests state about them; and a path that is no bag fails, naming it.

use std::path::PathBuf;
use std::process::{Command, Output};

fn rosbag2_bag(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../kairos-bag/tests/data/rosbag2")
        .join(path)
}

fn kairos(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kairos"))
        .args(args)
        .output()
        .expect("kairos runs")
}

fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "kairos failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).expect("utf-8")
}

#[test]
fn info_describes_rosbag2_talker_bags_in_both_storages() {
    // rosbag2_py/test/resources/{mcap,sqlite3}/talker: 10 std_msgs/msg/String on /topic,
    // 10 rcl_interfaces/msg/Log on /rosout, none on /parameter_events.
    for storage in ["mcap", "sqlite3"] {
        let bag = rosbag2_bag(&format!("{storage}/talker"));
        let json: serde_json::Value = serde_json::from_str(&stdout(&kairos(&[
            "bag",
            "info",
            "--json",
            bag.to_str().unwrap(),
        ])))
        .expect("json");
        assert_eq!(json["storage"], storage);
        assert_eq!(json["messages"], 20);
        let topics = json["topics"].as_array().expect("topics");
        let topic = |name: &str| {
            topics
                .iter()
                .find(|t| t["name"] == name)
                .unwrap_or_else(|| panic!("{name} in {json}"))
        };
        assert_eq!(topic("/topic")["type"], "std_msgs/msg/String");
        assert_eq!(topic("/topic")["count"], 10);
        assert_eq!(topic("/rosout")["type"], "rcl_interfaces/msg/Log");
        assert_eq!(topic("/rosout")["count"], 10);
        assert_eq!(topic("/parameter_events")["count"], 0);
        assert!(json["size_bytes"].as_u64().unwrap() > 0, "{json}");
        let (start, duration) = (
            json["start_ns"].as_u64().unwrap(),
            json["duration_ns"].as_u64().unwrap(),
        );
        assert_eq!(json["end_ns"].as_u64().unwrap(), start + duration);
    }
    let text = stdout(&kairos(&[
        "bag",
        "info",
        rosbag2_bag("mcap/talker").to_str().unwrap(),
    ]));
    for expected in [
        "Storage id:        mcap",
        "Messages:          20",
        "Topic: /topic | Type: std_msgs/msg/String | Count: 10 | Serialization Format: cdr",
    ] {
        assert!(text.contains(expected), "{expected:?} in:\n{text}");
    }
}

#[test]
fn info_lists_service_calls_apart_as_rosbag2_does() {
    // test_rosbag2_info_end_to_end.cpp states of bag_with_topics_and_service_events: 2
    // messages, 2 services (each with 4 events: 2 requests, 2 responses).
    for storage in ["mcap", "sqlite3"] {
        let bag = rosbag2_bag(&format!("{storage}/bag_with_topics_and_service_events"));
        let text = stdout(&kairos(&["bag", "info", bag.to_str().unwrap()]));
        for expected in [
            "\nMessages:          2\nTopic information: ",
            "Topic: /test_topic1 | Type: test_msgs/msg/Strings | Count: 1 | Serialization Format: cdr\n",
            "\nService:           2\nService information: Service: /test_service1 | Type: test_msgs/srv/BasicTypes | Event Count: 4 | Serialization Format: cdr\n",
            "\n                     Service: /test_service2 | Type: test_msgs/srv/BasicTypes | Event Count: 4 | Serialization Format: cdr\n",
        ] {
            assert!(text.contains(expected), "{expected:?} in:\n{text}");
        }
        assert!(!text.contains("Topic: /test_service1"), "{text}");
    }
    let talker = stdout(&kairos(&[
        "bag",
        "info",
        rosbag2_bag("mcap/talker").to_str().unwrap(),
    ]));
    assert!(
        talker.contains("\nService:           0\nService information: \n"),
        "{talker}"
    );
}

/// `kairos bag info ARGS` in UTC, as rosbag2's tests run `ros2 bag info`.
fn info_utc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kairos"))
        .args(["bag", "info"])
        .args(args)
        .env("TZ", "UTC")
        .output()
        .expect("kairos runs")
}

#[test]
fn info_says_what_rosbag2s_end_to_end_test_expects() {
    // rosbag2_tests/test/rosbag2_tests/test_rosbag2_info_end_to_end.cpp, each expectation
    // in both storages (its regexes' `.*` filled in for UTC).
    for (storage, file) in [("mcap", "cdr_test_0.mcap"), ("sqlite3", "cdr_test_0.db3")] {
        let bag = rosbag2_bag(&format!("{storage}/cdr_test"));
        let bag = bag.to_str().unwrap();
        let text = stdout(&info_utc(&[bag]));
        let expected = format!("\nFiles:             {file}\nBag size:          ");
        assert!(text.contains(&expected), "{expected:?} in:\n{text}");
        let expected = format!(
            "\nStorage id:        {storage}\nROS Distro:        unknown\nDuration:          0.151137181s\nStart:             Apr  9 2020 04:27:36.763032325 (1586406456.763032325)\nEnd:               Apr  9 2020 04:27:36.914169506 (1586406456.914169506)\nMessages:          7\nTopic information: "
        );
        assert!(text.contains(&expected), "{expected:?} in:\n{text}");
        // Sorted by name by default and with --sort name or type; by count, fewest first.
        let by_name = "Topic: /array_topic | Type: test_msgs/msg/Arrays | Count: 4 | Serialization Format: cdr\n                   Topic: /test_topic | Type: test_msgs/msg/BasicTypes | Count: 3 | Serialization Format: cdr";
        let by_count = "Topic: /test_topic | Type: test_msgs/msg/BasicTypes | Count: 3 | Serialization Format: cdr\n                   Topic: /array_topic | Type: test_msgs/msg/Arrays | Count: 4 | Serialization Format: cdr";
        assert!(text.contains(by_name), "{text}");
        for (sort, expected) in [("name", by_name), ("type", by_name), ("count", by_count)] {
            let text = stdout(&info_utc(&[bag, "--sort", sort]));
            assert!(text.contains(expected), "--sort {sort}:\n{text}");
        }
        assert!(stdout(&info_utc(&["-t", bag])).contains("/array_topic\n/test_topic"));
        assert!(
            stdout(&info_utc(&["-t", bag, "--sort", "count"]))
                .contains("/test_topic\n/array_topic")
        );
        let verbose = stdout(&info_utc(&[bag, "--verbose"]));
        for expected in [
            "Topic: /test_topic | Type: test_msgs/msg/BasicTypes | Count: 3 | Size Contribution: 156 B | Serialization Format: cdr\n",
            "Topic: /array_topic | Type: test_msgs/msg/Arrays | Count: 4 | Size Contribution: 2.7 KiB | Serialization Format: cdr",
        ] {
            assert!(verbose.contains(expected), "{expected:?} in:\n{verbose}");
        }
        let wrong = info_utc(&[bag, "--sort", "non_existent"]);
        assert!(!wrong.status.success());
        let stderr = String::from_utf8_lossy(&wrong.stderr);
        assert!(
            stderr.contains("'non_existent'") && stderr.contains("name, type, count"),
            "{stderr}"
        );

        let bag = rosbag2_bag(&format!("{storage}/bag_with_topics_and_service_events"));
        let bag = bag.to_str().unwrap();
        let both = stdout(&info_utc(&[bag, "--verbose", "--topic-name"]));
        assert!(
            both.starts_with("Warning! You have set both the '-t' and '-v' parameters. The '-t' parameter will be ignored.\n"),
            "{both}"
        );
        for expected in [
            "\nDuration:          0.0706",
            "\nStart:             Nov  7 2023 08:30:36.",
            "\nMessages:          2\nTopic information: ",
            "Topic: /events/write_split | Type: rosbag2_interfaces/msg/WriteSplitEvent | Count: 0 | Size Contribution: 0 B | Serialization Format: cdr\n",
            "Topic: /test_topic1 | Type: test_msgs/msg/Strings | Count: 1 | Size Contribution: 217 B | Serialization Format: cdr\n",
            "Topic: /test_topic2 | Type: test_msgs/msg/Strings | Count: 1 | Size Contribution: 217 B | Serialization Format: cdr\n",
            "Service:           2\n",
            "Service: /test_service1 | Type: test_msgs/srv/BasicTypes | Request Count: 2 | Response Count: 2 | Size Contribution: 434 B | Serialization Format: cdr\n",
            "Service: /test_service2 | Type: test_msgs/srv/BasicTypes | Request Count: 2 | Response Count: 2 | Size Contribution: 434 B | Serialization Format: cdr\n",
        ] {
            assert!(both.contains(expected), "{expected:?} in:\n{both}");
        }
        assert!(!both.contains("/_service_event"), "{both}");
    }
}

#[test]
fn info_gives_rosbag2s_own_figures_for_cdr_test() {
    // rosbag2_tests/test/rosbag2_tests/test_rosbag2_info_end_to_end.cpp states these of
    // cdr_test: 7 messages over 0.151137181 s from 1586406456.763032325.
    let json: serde_json::Value = serde_json::from_str(&stdout(&kairos(&[
        "bag",
        "info",
        "--json",
        rosbag2_bag("mcap/cdr_test").to_str().unwrap(),
    ])))
    .expect("json");
    assert_eq!(json["messages"], 7, "{json}");
    assert_eq!(json["duration_ns"], 151_137_181u64, "{json}");
    assert_eq!(json["start_ns"], 1_586_406_456_763_032_325u64, "{json}");
}

#[test]
fn echo_decodes_the_talkers_strings_in_order() {
    // rosbag2_py/test/test_sequential_reader.py: "Hello, world! 0" to "... 9" on /topic.
    for storage in ["mcap", "sqlite3"] {
        let bag = rosbag2_bag(&format!("{storage}/talker"));
        let out = stdout(&kairos(&[
            "bag",
            "echo",
            "--json",
            "--topic",
            "/topic",
            bag.to_str().unwrap(),
        ]));
        let messages: Vec<serde_json::Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect();
        let texts: Vec<&str> = messages
            .iter()
            .map(|m| m["data"]["data"].as_str().expect("a decoded String"))
            .collect();
        let expected: Vec<String> = (0..10).map(|i| format!("Hello, world! {i}")).collect();
        assert_eq!(texts, expected, "{storage}");
        let times: Vec<u64> = messages
            .iter()
            .map(|m| m["log_time_ns"].as_u64().unwrap())
            .collect();
        assert!(
            times.windows(2).all(|w| w[0] <= w[1]),
            "log-time order: {times:?}"
        );
    }
    let two = stdout(&kairos(&[
        "bag",
        "echo",
        "--json",
        "--count",
        "2",
        rosbag2_bag("mcap/talker").to_str().unwrap(),
    ]));
    assert_eq!(two.lines().count(), 2, "{two}");
}

#[test]
fn a_path_that_is_no_bag_fails_naming_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let garbage = dir.path().join("broken.mcap");
    std::fs::write(&garbage, b"not an mcap file at all").expect("written");
    for path in [dir.path().join("missing"), garbage] {
        let output = kairos(&["bag", "info", path.to_str().unwrap()]);
        assert!(!output.status.success(), "{path:?} is no bag");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains(path.file_name().unwrap().to_str().unwrap()),
            "the error names {path:?}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    let output = kairos(&[
        "bag",
        "echo",
        "--topic",
        "/nope",
        rosbag2_bag("mcap/talker").to_str().unwrap(),
    ]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("/nope") && stderr.contains("/topic"),
        "{stderr}"
    );
}
