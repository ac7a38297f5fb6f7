//! `kairos bag play` against live subscribers on Zenoh (loopback only): rosbag2's own talker
//! bag (both storages) reaches an independent rmw_zenoh peer (zenoh-ros2-sdk, Python) and
//! `kairos topic echo` (remapped, at 10x), every message with its recorded content and in
//! its recorded order; the player's report shows no message sent before its planned time;
//! bad input fails with a message that says what is wrong.
//!
//! Nothing here asserts a timing: counts, contents and order only (the machine may be
//! loaded). Each test has its own `kairos router` on a free loopback port; every wait is
//! bounded and children are killed when a test ends.

mod zenoh_support;

use kairos::graph::{Context, Node};
use kairos_bag::play::{PlayOptions, Player, Remap};
use kairos_bag::{Bag, BagWriter, ReadFilter, TopicInfo, WriterOptions};
use kairos_testkit::zenoh_session::loopback_config;
use kairos_zenoh::ZenohTransport;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;
use zenoh_support::{KAIROS, Router, assert_ok, finish, kairos, spawn};

const LIMIT: Duration = Duration::from_secs(90);

fn rosbag2_bag(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../kairos-bag/tests/data/rosbag2")
        .join(path)
}

/// The `data` of a std_msgs/msg/String in little-endian CDR.
fn string_data(cdr: &[u8]) -> String {
    assert_eq!(&cdr[..4], &[0, 1, 0, 0], "little-endian CDR header");
    let len = u32::from_le_bytes(cdr[4..8].try_into().unwrap()) as usize;
    // The length counts the terminating NUL.
    String::from_utf8(cdr[8..8 + len - 1].to_vec()).expect("utf-8")
}

/// The strings of `/topic` in the bag, in log-time order, read with kairos-bag.
fn recorded_strings(bag: &PathBuf) -> Vec<String> {
    let bag = Bag::open(bag).expect("the test bag");
    bag.read(&ReadFilter::all().topics(["/topic"]))
        .expect("read")
        .map(|m| string_data(&m.expect("a message").data))
        .collect()
}

fn play_to_python(storage: &str) {
    zenoh_support::require_zenoh_ros2_sdk("zenoh_ros2_sdk");
    let bag = rosbag2_bag(&format!("{storage}/talker"));
    let expected = recorded_strings(&bag);
    assert_eq!(expected.len(), 10, "rosbag2's talker bag: {expected:?}");
    let router = Router::start(KAIROS);
    let script = r#"
import os, sys, time, json
sys.stderr = sys.stdout
from zenoh_ros2_sdk import ROS2Subscriber
from zenoh_ros2_sdk.session import ZenohSession
from zenoh_ros2_sdk.utils import get_type_hash
PORT = int(os.environ["ROUTER_PORT"])
DEFS = json.loads(os.environ["MSG_DEFS"])
DEPS = dict(DEFS)
session = ZenohSession.get_instance("127.0.0.1", PORT)
for name, text in DEFS:
    session.register_message_type(text, name)
TYPE = 'std_msgs/msg/String'
HASH = get_type_hash(TYPE, DEPS[TYPE], DEPS)
got = []
sub = ROS2Subscriber('/topic', TYPE, lambda m: got.append(m.data), msg_definition=DEPS[TYPE], type_hash=HASH, node_name='py_bag_listener', router_port=PORT)
print('hash', HASH, flush=True)
print('ready', flush=True)
end = time.monotonic() + 60
while len(got) < 10 and time.monotonic() < end:
    time.sleep(0.05)
time.sleep(0.3)
print('got', json.dumps(got), flush=True)
sub.close()
"#;
    let mut py = router.python(script);
    py.env(
        "MSG_DEFS",
        zenoh_support::interface_definitions(&["std_msgs/msg/String"]),
    );
    let mut python = spawn(&mut py);
    let stdout = python.0.stdout.take().expect("python stdout");
    let (tx, rx) = mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line.clone());
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let mut early = String::new();
    loop {
        let line = rx
            .recv_timeout(LIMIT)
            .unwrap_or_else(|_| panic!("Python did not get ready within 90 s:\n{early}"));
        early.push_str(&line);
        early.push('\n');
        if line == "ready" {
            break;
        }
    }
    let kairos_hash = kairos_zenoh::interfaces::message_by_name("std_msgs/msg/String")
        .unwrap()
        .type_hash()
        .to_owned();
    assert!(
        early.contains(&format!("hash {kairos_hash}")),
        "Python's hash of std_msgs/msg/String differs from kairos's {kairos_hash}:\n{early}"
    );
    let player = spawn(router.kairos().args([
        "bag",
        "play",
        bag.to_str().unwrap(),
        "--rate",
        "2",
        // The peer listens to /topic only; waiting is for every played topic.
        "--exclude-regex",
        "^/(rosout|parameter_events)$",
        "--wait-for-subscribers",
        "30",
    ]));
    let out = assert_ok("kairos bag play", &finish(player, LIMIT));
    assert!(out.contains("/topic: 10 sent"), "{out}");
    assert!(!out.contains("/rosout"), "{out}");
    let status = finish(python, LIMIT);
    let rest = reader.join().unwrap_or_default();
    assert!(
        status.status.success(),
        "the Python subscriber failed: {rest}"
    );
    let got = rest
        .lines()
        .find_map(|l| l.strip_prefix("got "))
        .unwrap_or_else(|| panic!("Python said:\n{rest}"));
    let got: Vec<String> = serde_json::from_str(got).expect("a JSON list");
    assert_eq!(got, expected, "Python received, in order");
}

#[test]
fn talker_mcap_plays_to_a_ros2_peer_in_order() {
    play_to_python("mcap");
}

#[test]
fn talker_sqlite3_plays_to_a_ros2_peer_in_order() {
    play_to_python("sqlite3");
}

#[test]
fn remapped_playback_at_10x_reaches_kairos_topic_echo_in_order() {
    let bag = rosbag2_bag("mcap/talker");
    let expected = recorded_strings(&bag);
    let router = Router::start(KAIROS);
    let echo = spawn(router.kairos().args([
        "topic",
        "echo",
        "/replayed",
        "std_msgs/msg/String",
        "--json",
        "--count",
        "10",
        "--timeout",
        "80",
    ]));
    let player = spawn(router.kairos().args([
        "bag",
        "play",
        bag.to_str().unwrap(),
        "--topics",
        "/topic",
        "--remap",
        "/topic:=/replayed",
        "--rate",
        "10",
        "--wait-for-subscribers",
        "40",
    ]));
    let played = assert_ok("kairos bag play", &finish(player, LIMIT));
    assert!(played.contains("/replayed: 10 sent"), "{played}");
    assert!(
        !played.contains("/rosout"),
        "only /topic is played: {played}"
    );
    let echoed = assert_ok("kairos topic echo", &finish(echo, LIMIT));
    let got: Vec<String> = echoed
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("a JSON message per line");
            v["data"].as_str().expect("data").to_owned()
        })
        .collect();
    assert_eq!(got, expected, "kairos topic echo received, in order");
}

/// A bag of `n` std_msgs/msg/String on /ticks, one every `period`, written with BagWriter.
fn synthetic_bag(dir: &std::path::Path, n: u64, period: Duration) -> PathBuf {
    let path = dir.join("ticks");
    let mut writer = BagWriter::create(&path, WriterOptions::default()).expect("create");
    writer
        .add_topic(TopicInfo::new("/ticks", "std_msgs/msg/String"))
        .expect("topic");
    let start = 1_700_000_000_000_000_000u64;
    for i in 0..n {
        let text = format!("tick {i}");
        let mut cdr = vec![0, 1, 0, 0];
        cdr.extend_from_slice(&(text.len() as u32 + 1).to_le_bytes());
        cdr.extend_from_slice(text.as_bytes());
        cdr.push(0);
        let t = start + i * period.as_nanos() as u64;
        writer.write("/ticks", t, t, i as u32, &cdr).expect("write");
    }
    writer.finish().expect("finish");
    path
}

#[test]
fn no_message_is_sent_before_its_planned_time() {
    let dir = tempfile::tempdir().unwrap();
    let bag = synthetic_bag(dir.path(), 50, Duration::from_millis(4));
    let (transport, node) = loopback_node("bag_play_timing");
    let options = PlayOptions {
        clock_hz: Some(100.0),
        remaps: vec!["/ticks:=/ticks_replayed".parse::<Remap>().unwrap()],
        loop_playback: false,
        ..PlayOptions::default()
    };
    let player = Player::start(transport.clone(), node, &bag, options).expect("play");
    let report = player.wait();
    assert!(!report.stopped);
    assert_eq!(report.sent.get("/ticks_replayed"), Some(&50), "{report:?}");
    assert_eq!(report.lateness_ns.len(), 50);
    let early: Vec<i64> = report
        .lateness_ns
        .iter()
        .copied()
        .filter(|&l| l < 0)
        .collect();
    assert!(
        early.is_empty(),
        "sent before their planned time by {early:?} ns"
    );
    let l = report.lateness();
    assert!(l.min <= l.p50 && l.p50 <= l.p99 && l.p99 <= l.max, "{l:?}");
    assert!(report.clock_published >= 1, "/clock was published");
}

#[test]
fn a_paused_player_sends_nothing_until_resumed() {
    let dir = tempfile::tempdir().unwrap();
    let bag = synthetic_bag(dir.path(), 10, Duration::from_millis(1));
    let (transport, node) = loopback_node("bag_play_pause");
    let options = PlayOptions {
        start_paused: true,
        ..PlayOptions::default()
    };
    let player = Player::start(transport.clone(), node, &bag, options).expect("play");
    assert!(player.is_paused());
    let frozen = player.bag_time_ns();
    std::thread::sleep(Duration::from_millis(300));
    assert!(!player.is_finished(), "paused: the bag is not played");
    assert_eq!(player.bag_time_ns(), frozen, "the bag's time stands still");
    assert!(!player.toggle(), "toggled: playing");
    let report = player.wait();
    assert_eq!(report.total_sent(), 10, "{report:?}");
    assert!(report.lateness_ns.iter().all(|&l| l >= 0));
}

/// A transport on a loopback session of its own (timestamping on, as kairos's own
/// configuration has it, for transient-local publishers), with a node of a fresh context.
fn loopback_node(name: &str) -> (std::sync::Arc<ZenohTransport>, Node) {
    let mut config = loopback_config("peer", None, 0);
    config
        .insert_json5(
            "timestamping/enabled",
            "{router: true, peer: true, client: true}",
        )
        .expect("timestamping on");
    let transport = ZenohTransport::open_with(config, 0).expect("a loopback session");
    let context = Context::new();
    transport.install(&context).expect("install");
    let node = Node::new_in(&context, name, "/").expect("a node");
    (transport, node)
}

#[test]
fn start_offset_skips_the_first_seconds_and_loop_plays_again() {
    let dir = tempfile::tempdir().unwrap();
    // Messages at 0, 100, ..., 900 ms.
    let bag = synthetic_bag(dir.path(), 10, Duration::from_millis(100));
    let (transport, node) = loopback_node("bag_play_offset");
    let options = PlayOptions {
        start_offset: Duration::from_millis(450),
        rate: 20.0,
        ..PlayOptions::default()
    };
    let report = Player::start(transport.clone(), node, &bag, options)
        .expect("play")
        .wait();
    assert_eq!(report.sent["/ticks"], 5, "500..900 ms: {report:?}");

    let (transport, node) = loopback_node("bag_play_loop");
    let options = PlayOptions {
        loop_playback: true,
        rate: 20.0,
        ..PlayOptions::default()
    };
    let player = Player::start(transport.clone(), node, &bag, options).expect("play");
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while player.sent() < 25 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    player.stop();
    let report = player.wait();
    assert!(report.stopped);
    assert!(report.loops >= 2, "{report:?}");
    assert!(report.total_sent() >= 25, "{report:?}");
    assert!(report.lateness_ns.iter().all(|&l| l >= 0));
}

#[test]
fn qos_follows_the_recording_unless_overridden() {
    // In rosbag2's talker bag, /rosout was offered transient local, /topic volatile.
    let bag = rosbag2_bag("mcap/talker");
    let (transport, node) = loopback_node("bag_play_qos");
    let overrides = kairos_bag::play::qos_overrides_from_yaml(
        "/topic:\n  reliability: best_effort\n  durability: transient_local\n  history: keep_last\n  depth: 5\n",
    )
    .expect("overrides");
    let options = PlayOptions {
        qos_overrides: overrides,
        start_paused: true,
        ..PlayOptions::default()
    };
    let player = Player::start(transport.clone(), node, &bag, options).expect("play");
    let topic = |name: &str| {
        player
            .topics()
            .iter()
            .find(|t| t.name == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} played"))
    };
    let rosout = topic("/rosout");
    assert!(rosout.reliable && rosout.transient_local, "{rosout:?}");
    assert_eq!(rosout.type_name, "rcl_interfaces/msg/Log");
    assert!(rosout.type_hash.starts_with("RIHS01_"), "{rosout:?}");
    let replayed = topic("/topic");
    assert!(
        !replayed.reliable && replayed.transient_local,
        "{replayed:?}"
    );
    player.stop();
    assert!(player.wait().stopped);
}

#[test]
fn clock_carries_the_bags_time() {
    let bag = rosbag2_bag("mcap/talker");
    let info = Bag::open(&bag).unwrap().info().clone();
    let router = Router::start(KAIROS);
    let echo = spawn(router.kairos().args([
        "topic",
        "echo",
        "/clock",
        "rosgraph_msgs/msg/Clock",
        "--json",
        "--count",
        "3",
        "--timeout",
        "80",
    ]));
    // The echo's subscription is in the graph before playing starts.
    let deadline = std::time::Instant::now() + Duration::from_secs(40);
    loop {
        let out = router
            .kairos()
            .args(["topic", "info", "/clock", "--spin-time", "1"])
            .output()
            .expect("kairos topic info");
        let text = String::from_utf8_lossy(&out.stdout);
        if text.contains("Subscription count: 1") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "kairos topic echo /clock did not subscribe within 40 s: {text}"
        );
    }
    let player = spawn(router.kairos().args([
        "bag",
        "play",
        bag.to_str().unwrap(),
        "--clock",
        "20",
        "--topics",
        "/topic",
        "--delay",
        "0.5",
    ]));
    let played = assert_ok("kairos bag play", &finish(player, LIMIT));
    assert!(played.contains("/clock: "), "{played}");
    let echoed = assert_ok("kairos topic echo /clock", &finish(echo, LIMIT));
    let mut last = 0u64;
    for line in echoed.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("JSON");
        let ns = v["clock"]["sec"].as_u64().unwrap() * 1_000_000_000
            + v["clock"]["nanosec"].as_u64().unwrap();
        assert!(
            (info.starting_time_ns..=info.end_time_ns()).contains(&ns),
            "/clock {ns} outside the bag's {}..{}",
            info.starting_time_ns,
            info.end_time_ns()
        );
        assert!(ns >= last, "/clock never goes back");
        last = ns;
    }
    assert_eq!(echoed.lines().count(), 3, "{echoed}");
}

#[test]
fn ctrl_c_stops_a_looping_playback_and_prints_the_report() {
    let bag = rosbag2_bag("mcap/talker");
    let router = Router::start(KAIROS);
    let player = spawn(router.kairos().args([
        "bag",
        "play",
        bag.to_str().unwrap(),
        "--loop",
        "--rate",
        "4",
    ]));
    // Playing once its publisher is in the graph (the signal handler is installed by then).
    let deadline = std::time::Instant::now() + Duration::from_secs(40);
    loop {
        let out = router
            .kairos()
            .args(["topic", "info", "/topic", "--spin-time", "1"])
            .output()
            .expect("kairos topic info");
        if String::from_utf8_lossy(&out.stdout).contains("Publisher count: 1") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "kairos bag play did not announce /topic within 40 s"
        );
    }
    let killed = std::process::Command::new("kill")
        .args(["-INT", &player.0.id().to_string()])
        .status()
        .expect("kill -INT");
    assert!(killed.success());
    // A looping playback never ends by itself: only the Ctrl-C can have ended it.
    let out = assert_ok("kairos bag play --loop, Ctrl-C", &finish(player, LIMIT));
    assert!(out.contains("(stopped)"), "{out}");
    assert!(out.contains("/topic: "), "{out}");
}

#[test]
fn a_path_that_is_not_a_bag_fails_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let out = kairos()
        .args(["bag", "play", dir.path().to_str().unwrap()])
        .output()
        .expect("kairos runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("not a bag"), "{err}");
    let out = kairos()
        .args(["bag", "play", "/no/such/bag"])
        .output()
        .expect("kairos runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("does not exist"), "{err}");
}

#[test]
fn a_bad_remap_fails_clearly() {
    let bag = rosbag2_bag("mcap/talker");
    for remap in ["/topic", "/topic:=", "/topic:=/bad name"] {
        let out = kairos()
            .args(["bag", "play", bag.to_str().unwrap(), "--remap", remap])
            .output()
            .expect("kairos runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{remap}: {err}");
        assert!(err.contains("bad remap"), "{remap}: {err}");
        assert!(err.contains("old:=new"), "{remap}: {err}");
    }
}
