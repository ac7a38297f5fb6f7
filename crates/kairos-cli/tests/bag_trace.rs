//! A traced replay, across processes on Zenoh (loopback only): `kairos bag play` sends a
//! bag's messages to a node in another process that relays each, and `kairos bag record`
//! (a third process) records the relayed messages; each process traces itself
//! (`KAIROS_TRACE`). The traces hold every bag message's play (`kairos:bag_play`, read by
//! babeltrace2) and write (`kairos:bag_write`) and the recorder's split asked for through
//! its service (`kairos:bag_split`), and `kairos trace chains` starts each chain at the
//! player's bag and ends it in the recorder's: bag -> /input -> stage -> /output -> bag,
//! one chain per message.
//!
//! Counts and names only, no timing: the machine may be loaded.

mod zenoh_support;

use kairos_bag::{BagWriter, TopicInfo, WriterOptions};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;
use zenoh_support::{Lines, Router, assert_ok, finish, spawn};

const LIMIT: Duration = Duration::from_secs(90);
const STAGE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../target/release/examples/lockstep_stage"
);
const MESSAGES: u64 = 20;

/// `MESSAGES` std_msgs/msg/String on /input, 5 ms apart.
fn input_bag(dir: &Path) -> PathBuf {
    let path = dir.join("input");
    let mut writer = BagWriter::create(&path, WriterOptions::default()).expect("create");
    writer
        .add_topic(TopicInfo::new("/input", "std_msgs/msg/String"))
        .expect("topic");
    for i in 0..MESSAGES {
        let text = format!("m{i}");
        let mut cdr = vec![0, 1, 0, 0];
        cdr.extend_from_slice(&(text.len() as u32 + 1).to_le_bytes());
        cdr.extend_from_slice(text.as_bytes());
        cdr.push(0);
        let t = 1_700_000_000_000_000_000 + i * 5_000_000;
        writer.write("/input", t, t, i as u32, &cdr).expect("write");
    }
    writer.finish().expect("finish");
    path
}

/// Ends `child` with SIGINT, as Ctrl-C would, and waits for it (its trace is then whole).
fn interrupt(child: zenoh_support::Running, what: &str) -> String {
    let status = Command::new("kill")
        .args(["-INT", &child.0.id().to_string()])
        .status()
        .expect("kill(1)");
    assert!(status.success());
    let out = finish(child, LIMIT);
    assert!(
        out.status.code().is_some(),
        "{what} did not stop on SIGINT within {LIMIT:?}"
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_traced_replay_chains_every_message_from_bag_to_bag() {
    assert!(
        Path::new(STAGE).exists(),
        "{STAGE} is missing: build the examples (cargo build --release --examples)"
    );
    let dir = tempfile::tempdir().unwrap();
    let bag = input_bag(dir.path());
    let trace = dir.path().join("trace");
    let router = Router::start(zenoh_support::KAIROS);

    let mut stage = spawn(
        Command::new(STAGE)
            .arg("stage:/input:/output")
            .env("ZENOH_CONFIG_OVERRIDE", router.override_env())
            .env("KAIROS_TRANSPORT", "zenoh")
            .env("KAIROS_TRACE", trace.join("stage"))
            .env_remove("ROS_DOMAIN_ID")
            .stdin(Stdio::null()),
    );
    let mut said = Lines::of(stage.0.stdout.take().expect("stdout"));
    said.wait_for("ready", LIMIT);

    let out = dir.path().join("out");
    let mut recorder = spawn(
        router
            .kairos()
            .args([
                "bag",
                "record",
                "--progress",
                "-o",
                out.to_str().unwrap(),
                "/output",
            ])
            .env("KAIROS_TRACE", trace.join("recorder")),
    );
    let mut heard = Lines::of(recorder.0.stderr.take().expect("stderr"));
    heard.wait_for("subscribed to /output", LIMIT);

    let player = spawn(
        router
            .kairos()
            .args(["bag", "play", bag.to_str().unwrap()])
            .args(["--wait-for-subscribers", "60"])
            .env("KAIROS_TRACE", trace.join("player")),
    );
    let played = assert_ok("kairos bag play", &finish(player, LIMIT));
    assert!(
        played.contains(&format!("/input: {MESSAGES} sent")),
        "{played}"
    );
    // Every relayed message has been written before the recorder stops (its progress
    // line, once a second, says so).
    heard.wait_for(
        &format!("so far {MESSAGES} received, {MESSAGES} written"),
        LIMIT,
    );
    // A split asked for through rosbag2's service: the recorder traces it.
    let split = finish(
        spawn(router.kairos().args([
            "service",
            "call",
            "/rosbag2_recorder/split_bagfile",
            "rosbag2_interfaces/srv/SplitBagfile",
            "--timeout",
            "60",
        ])),
        LIMIT,
    );
    assert_ok("kairos service call .../split_bagfile", &split);
    let stopped = interrupt(recorder, "kairos bag record");
    interrupt(stage, "lockstep_stage");

    let recorded = kairos_bag::Bag::open(&out).expect("the recorded bag");
    let count = recorded
        .read(&kairos_bag::ReadFilter::all())
        .expect("read")
        .count() as u64;
    assert_eq!(count, MESSAGES, "every relayed message recorded: {stopped}");

    // babeltrace2, an independent CTF reader, sees each play and each write.
    let bt = kairos_testkit::babeltrace2_clean(&[], &trace.join("player"));
    assert_eq!(
        bt.lines().filter(|l| l.contains("kairos:bag_play")).count() as u64,
        MESSAGES,
        "{bt}"
    );
    let bt = kairos_testkit::babeltrace2_clean(&[], &trace.join("recorder"));
    assert_eq!(
        bt.lines()
            .filter(|l| l.contains("kairos:bag_write"))
            .count() as u64,
        MESSAGES,
    );
    let splits: Vec<&str> = bt
        .lines()
        .filter(|l| l.contains("kairos:bag_split"))
        .collect();
    assert_eq!(splits.len(), 1, "{splits:?}");
    let opened = out.join("out_1.mcap").display().to_string();
    assert!(
        splits[0].contains(&format!("opened_file = \"{opened}\""))
            && splits[0].contains("reason = \"asked\""),
        "{splits:?}"
    );

    let chains = assert_ok(
        "kairos trace chains",
        &finish(
            spawn(
                zenoh_support::kairos()
                    .args(["trace", "chains", "--json"])
                    .arg(&trace),
            ),
            LIMIT,
        ),
    );
    let chains: serde_json::Value = serde_json::from_str(&chains).expect("JSON");
    let paths: Vec<(String, u64)> = chains
        .as_array()
        .expect("a list of chains")
        .iter()
        .map(|c| {
            let path: Vec<&str> = c["path"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p.as_str().unwrap())
                .collect();
            (path.join(" -> "), c["count"].as_u64().unwrap())
        })
        .collect();
    let whole = "/rosbag2_player (bag) -> /input -> /stage -> /output -> /rosbag2_recorder (bag)";
    let through: u64 = paths
        .iter()
        .filter(|(p, _)| p == whole)
        .map(|(_, n)| n)
        .sum();
    assert_eq!(through, MESSAGES, "{paths:#?}");
    // Each chain starts with the player's lateness and counts end to end from the due
    // time, on the traces' one time line: a figure on another clock would be off by that
    // clock's offset (years), not by how busy the machine is.
    for chain in chains.as_array().unwrap() {
        let first = &chain["stages"][0];
        assert_eq!(
            first["name"], "/rosbag2_player lateness (due to published)",
            "{chain}"
        );
        let minute = 60_000_000_000i64;
        for figure in [&first["latency"], &chain["total"]] {
            let (min, max) = (
                figure["min_ns"].as_i64().unwrap(),
                figure["max_ns"].as_i64().unwrap(),
            );
            assert!((0..minute).contains(&min) && max < minute, "{chain}");
        }
    }
}
