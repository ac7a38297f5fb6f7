//! `kairos bag play` against live subscribers on Zenoh (loopback only): rosbag2's own talker
//! bag (both storages) reaches an independent rmw_zenoh peer (zenoh-ros2-sdk, Python) and
//! `kairos topic echo` (remapped, at 10x), every message with its recorded content and in
//! its recorded order; the player's report shows no message sent before its planned time;
//! bad input fails with a message that says what is wrong.
//!
//! Nothing here asserts a timing: counts, contents and order only (the machine may be
//! loaded). Each test has its own `kairos router` on a free loopback port; every wait is
//! bounded and children are killed when a test ends.
//!
//! One file for one subject, however many tests it holds: each file under `tests/` is a
//! binary of its own, and each binary links zenoh again into every CI build.

mod zenoh_support;

use kairos::graph::{Context, Node};
use kairos_bag::play::{PlayOptions, Player, Remap};
use kairos_bag::{Bag, BagWriter, ReadFilter, TopicInfo, WriterOptions};
use kairos_testkit::zenoh_session::loopback_config;
use kairos_zenoh::ZenohTransport;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;
use zenoh_support::{
    KAIROS, Lines, Router, Running, assert_fails, assert_ok, finish, kairos, spawn, stdout_lines,
    topic_info_until,
};

const LIMIT: Duration = Duration::from_secs(90);

/// `kairos bag SUBCOMMAND BAG ARGS` (`play` or `burst`) on the router's network, `args`
/// written as on a command line (split at whitespace; no argument here holds a space).
fn spawn_bag(router: &Router, subcommand: &str, bag: &Path, args: &str) -> Running {
    spawn(
        router
            .kairos()
            .args(["bag", subcommand, bag.to_str().unwrap()])
            .args(args.split_whitespace()),
    )
}

/// Ctrl-C to a child: SIGINT, as a terminal sends it.
fn interrupt(child: &Running) {
    let killed = std::process::Command::new("kill")
        .args(["-INT", &child.0.id().to_string()])
        .status()
        .expect("kill -INT");
    assert!(killed.success(), "kill -INT {}", child.0.id());
}

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
    let mut lines = stdout_lines(&mut python);
    lines.wait_for("ready", LIMIT);
    let early = lines.seen.join("\n");
    let kairos_hash = kairos_zenoh::interfaces::message_by_name("std_msgs/msg/String")
        .unwrap()
        .type_hash()
        .to_owned();
    assert!(
        early.contains(&format!("hash {kairos_hash}")),
        "Python's hash of std_msgs/msg/String differs from kairos's {kairos_hash}:\n{early}"
    );
    // The peer listens to /topic only; waiting is for every played topic.
    let exclude = "--exclude-regex ^/(rosout|parameter_events)$";
    let args = format!("--rate 2 {exclude} --wait-for-subscribers 30");
    let player = spawn_bag(&router, "play", &bag, &args);
    let out = assert_ok("kairos bag play", &finish(player, LIMIT));
    assert!(out.contains("/topic: 10 sent"), "{out}");
    assert!(!out.contains("/rosout"), "{out}");
    let status = finish(python, LIMIT);
    let rest = lines.rest(LIMIT).join("\n");
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
    let player = spawn_bag(
        &router,
        "play",
        &bag,
        "--topics /topic --remap /topic:=/replayed --rate 10 --wait-for-subscribers 40",
    );
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

#[test]
fn a_paused_player_plays_next_bursts_and_seeks_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    // One message a second: nothing is due on its own while the test asks.
    let bag = synthetic_bag(dir.path(), 10, Duration::from_secs(1));
    let start = Bag::open(&bag).unwrap().info().starting_time_ns;
    let (transport, node) = loopback_node("bag_play_control");
    let options = PlayOptions {
        start_paused: true,
        ..PlayOptions::default()
    };
    let player = Player::start(transport.clone(), node, &bag, options).expect("play");
    let control = player.control();
    assert!(control.play_next(), "paused: the next message goes out");
    assert_eq!(control.sent(), 1);
    assert_eq!(
        control.bag_time_ns(),
        start,
        "the bag's time is the message's"
    );
    assert_eq!(control.burst(3), 3);
    assert_eq!(control.sent(), 4);
    assert_eq!(control.bag_time_ns(), start + 3_000_000_000);
    assert!(control.is_paused(), "still paused after a burst");
    assert!(!control.set_rate(0.0) && !control.set_rate(f64::NAN));
    assert!(
        control.seek(start - 5),
        "a seek before the start is the start"
    );
    assert!(control.play_next());
    assert_eq!(control.sent(), 5);
    assert_eq!(control.bag_time_ns(), start);
    assert!(control.set_rate(1000.0));
    assert_eq!(control.rate(), 1000.0);
    control.resume();
    assert!(!control.play_next(), "playing: play next is refused");
    assert_eq!(control.burst(2), 0, "playing: burst is refused");
    let report = player.wait();
    assert_eq!(report.total_sent(), 14, "1 + 3 + 1 + the 9 after the seek");
    assert!(!report.stopped);
    // Playing has ended: every request is answered, none waits.
    control.pause();
    assert!(!control.play_next());
    assert_eq!(control.burst(0), 0);
    assert!(!control.seek(start));
}

#[test]
fn playback_duration_and_until_end_the_play_as_rosbag2s_do() {
    let dir = tempfile::tempdir().unwrap();
    // Messages at 0, 10, ..., 90 ms.
    let bag = synthetic_bag(dir.path(), 10, Duration::from_millis(10));
    let start = Bag::open(&bag).unwrap().info().starting_time_ns;
    let (transport, node) = loopback_node("bag_play_until");
    let play = |duration: Option<Duration>, until: Option<u64>| {
        let options = PlayOptions {
            playback_duration: duration,
            playback_until_ns: until,
            rate: 10.0,
            ..PlayOptions::default()
        };
        let player = Player::start(transport.clone(), node.clone(), &bag, options).expect("play");
        let until = player.playback_until_ns();
        (until, player.wait().total_sent())
    };
    assert_eq!(play(None, None), (None, 10));
    let ms = |n: u64| start + n * 1_000_000;
    assert_eq!(
        play(Some(Duration::from_millis(35)), None),
        (Some(ms(35)), 4)
    );
    assert_eq!(
        play(None, Some(ms(50))),
        (Some(ms(50)), 6),
        "at the bound: played"
    );
    assert_eq!(
        play(Some(Duration::from_millis(35)), Some(ms(50))),
        (Some(ms(50)), 6),
        "both: the later"
    );
    assert_eq!(play(Some(Duration::ZERO), None), (Some(0), 0), "0: nothing");
}

/// The player's control services called by an independent ROS 2 client (zenoh-ros2-sdk):
/// it computes each `rosbag2_interfaces` service's hash itself, so a call that succeeds
/// proves kairos's hash and CDR are rosbag2's.
const PY_CONTROL: &str = r#"
import os, time, json
from zenoh_ros2_sdk import ROS2Subscriber, ROS2ServiceClient
from zenoh_ros2_sdk.session import ZenohSession
from zenoh_ros2_sdk.utils import get_type_hash, compute_service_type_hash
PORT = int(os.environ["ROUTER_PORT"])
IFACES = os.environ["IFACES"]
START = int(os.environ["START_NS"])
read = lambda p: open(os.path.join(IFACES, p)).read()
session = ZenohSession.get_instance("127.0.0.1", PORT)
DEPS = {t: read(t + ".msg") for t in ("std_msgs/msg/String", "builtin_interfaces/msg/Time")}
for name, text in DEPS.items():
    session.register_message_type(text, name)
got = []
sub = ROS2Subscriber('/topic', 'std_msgs/msg/String', lambda m: got.append(m.data), msg_definition=DEPS['std_msgs/msg/String'], type_hash=get_type_hash('std_msgs/msg/String', DEPS['std_msgs/msg/String'], DEPS), node_name='py_bag_control', router_port=PORT)
EMPTY = "uint8 structure_needs_at_least_one_member\n"
def client(name, path):
    req, res = read(f"rosbag2_interfaces/srv/{name}.srv").split("---\n")
    # rosidl gives an empty message one member, which the hash and the CDR carry.
    req, res = [t if t.strip() else EMPTY for t in (req, res)]
    h = compute_service_type_hash(f"rosbag2_interfaces/srv/{name}", req, res, DEPS)
    return ROS2ServiceClient(f'/rosbag2_player/{path}', f'rosbag2_interfaces/srv/{name}', request_definition=req, response_definition=res, type_hash=h, node_name='py_bag_control', router_port=PORT, timeout=20.0)
def wait(pred, seconds=30):
    end = time.monotonic() + seconds
    while time.monotonic() < end and not pred():
        time.sleep(0.05)
    return pred()
E = dict(structure_needs_at_least_one_member=0)
is_paused = client("IsPaused", "is_paused")
answer, end = None, time.monotonic() + 60
while answer is None and time.monotonic() < end:
    answer = is_paused.call(**E)
print("is_paused", answer and answer.paused, flush=True)
play_next = client("PlayNext", "play_next")
print("play_next", play_next.call(**E).success, flush=True)
wait(lambda: len(got) >= 1)
set_rate, get_rate = client("SetRate", "set_rate"), client("GetRate", "get_rate")
print("set_rate 0", set_rate.call(rate=0.0).success, flush=True)
print("set_rate 2.5", set_rate.call(rate=2.5).success, flush=True)
print("get_rate", get_rate.call(**E).rate, flush=True)
print("burst", client("Burst", "burst").call(num_messages=3).actually_burst, flush=True)
wait(lambda: len(got) >= 4)
Time = session.store.types['builtin_interfaces/msg/Time']
print("seek", client("Seek", "seek").call(time=Time(sec=START // 10**9, nanosec=START % 10**9)).success, flush=True)
print("play_next", play_next.call(**E).success, flush=True)
wait(lambda: len(got) >= 5)
client("TogglePaused", "toggle_paused").call(**E)
print("is_paused", is_paused.call(**E).paused, flush=True)
wait(lambda: len(got) >= 14, 60)
time.sleep(0.3)
print("got", json.dumps(got), flush=True)
# The SDK's session threads would keep the interpreter alive.
os._exit(0)
"#;

#[test]
fn a_ros2_client_drives_the_player_through_its_control_services() {
    zenoh_support::require_zenoh_ros2_sdk("zenoh_ros2_sdk");
    let bag = rosbag2_bag("mcap/talker");
    let expected = recorded_strings(&bag);
    let start = Bag::open(&bag).unwrap().info().starting_time_ns;
    let router = Router::start(KAIROS);
    let player = spawn_bag(
        &router,
        "play",
        &bag,
        "--topics /topic --start-paused --wait-for-subscribers 60",
    );
    let mut py = router.python(PY_CONTROL);
    py.env(
        "IFACES",
        concat!(env!("CARGO_MANIFEST_DIR"), "/../kairos-msgs/interfaces"),
    )
    .env("START_NS", start.to_string());
    let out = assert_ok(
        "the Python client of the player's services",
        &finish(spawn(&mut py), LIMIT),
    );
    let asked = [
        "is_paused",
        "play_next",
        "set_rate",
        "get_rate",
        "burst",
        "seek",
    ];
    let lines: Vec<&str> = out
        .lines()
        .filter(|l| asked.contains(&l.split(' ').next().unwrap_or("")))
        .collect();
    assert_eq!(
        lines,
        [
            "is_paused True",
            "play_next True",
            "set_rate 0 False",
            "set_rate 2.5 True",
            "get_rate 2.5",
            "burst 3",
            "seek True",
            "play_next True",
            "is_paused False",
        ],
        "{out}"
    );
    let got = out
        .lines()
        .find_map(|l| l.strip_prefix("got "))
        .unwrap_or_else(|| panic!("Python said:\n{out}"));
    let got: Vec<String> = serde_json::from_str(got).expect("a JSON list");
    // The first four, then again from the start (the seek) to the end.
    let want: Vec<String> = expected[..4].iter().chain(&expected).cloned().collect();
    assert_eq!(got, want, "Python received, in order");
    let played = assert_ok("kairos bag play", &finish(player, LIMIT));
    assert!(played.contains("/topic: 14 sent"), "{played}");
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

/// `kairos topic echo /clock --json --count COUNT`, its subscription in the graph before
/// this returns (so a player started next is heard from its first message).
fn echo_clock(router: &Router, count: u32) -> zenoh_support::Running {
    let echo = spawn(router.kairos().args([
        "topic",
        "echo",
        "/clock",
        "rosgraph_msgs/msg/Clock",
        "--json",
        "--count",
        &count.to_string(),
        "--timeout",
        "80",
    ]));
    let subscribed = |text: &str| text.contains("Subscription count: 1");
    let text = topic_info_until(router, "/clock", &[], Duration::from_secs(40), subscribed);
    assert!(
        subscribed(&text),
        "kairos topic echo /clock did not subscribe within 40 s: {text}"
    );
    echo
}

/// The times (ns) of the `/clock` messages an [`echo_clock`] printed, in order.
fn clock_times(echoed: &str) -> Vec<u64> {
    echoed
        .lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).expect("JSON");
            v["clock"]["sec"].as_u64().unwrap() * 1_000_000_000
                + v["clock"]["nanosec"].as_u64().unwrap()
        })
        .collect()
}

#[test]
fn clock_carries_the_bags_time() {
    let bag = rosbag2_bag("mcap/talker");
    let info = Bag::open(&bag).unwrap().info().clone();
    let router = Router::start(KAIROS);
    let echo = echo_clock(&router, 3);
    let player = spawn_bag(
        &router,
        "play",
        &bag,
        "--clock 20 --topics /topic --delay 0.5",
    );
    let played = assert_ok("kairos bag play", &finish(player, LIMIT));
    assert!(played.contains("/clock: "), "{played}");
    let echoed = assert_ok("kairos topic echo /clock", &finish(echo, LIMIT));
    let mut last = 0u64;
    for ns in clock_times(&echoed) {
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
    let player = spawn_bag(&router, "play", &bag, "--loop --rate 4");
    // Playing once its publisher is in the graph (the signal handler is installed by then).
    let announced = |text: &str| text.contains("Publisher count: 1");
    let text = topic_info_until(&router, "/topic", &[], Duration::from_secs(40), announced);
    assert!(
        announced(&text),
        "kairos bag play did not announce /topic within 40 s: {text}"
    );
    interrupt(&player);
    // A looping playback never ends by itself: only the Ctrl-C can have ended it.
    let out = assert_ok("kairos bag play --loop, Ctrl-C", &finish(player, LIMIT));
    assert!(out.contains("(stopped)"), "{out}");
    assert!(out.contains("/topic: "), "{out}");
}

#[test]
fn burst_sends_the_first_messages_at_once_then_stays_paused() {
    // As `ros2 bag burst -n 3`: three messages, then paused until Ctrl-C. At --rate 100 a
    // player that went on playing would have sent all ten long before the question below
    // is answered.
    let bag = rosbag2_bag("mcap/talker");
    let router = Router::start(KAIROS);
    let mut player = spawn_bag(&router, "burst", &bag, "-n 3 --topics /topic --rate 100");
    let mut stderr = Lines::of(player.0.stderr.take().expect("stderr"));
    stderr.wait_for("burst 3 message(s), now paused", LIMIT);
    let out = router
        .kairos()
        .args([
            "service",
            "call",
            "/rosbag2_player/is_paused",
            "rosbag2_interfaces/srv/IsPaused",
            "{}",
        ])
        .output()
        .expect("kairos service call");
    let answer = assert_ok("kairos service call .../is_paused", &out);
    assert!(answer.contains("paused: true"), "{answer}");
    interrupt(&player);
    let out = assert_ok("kairos bag burst, Ctrl-C", &finish(player, LIMIT));
    assert!(out.contains("/topic: 3 sent"), "{out}");

    // -n 0 (the default): every message at once; the bag's end ends the command.
    let all = spawn_bag(&router, "burst", &bag, "--topics /topic");
    let out = assert_ok("kairos bag burst", &finish(all, LIMIT));
    assert!(out.contains("/topic: 10 sent"), "{out}");
}

/// What a `kairos bag play` printed it sent: `topic -> count` from its report lines.
fn sent_counts(out: &str) -> std::collections::BTreeMap<String, u64> {
    out.lines()
        .filter_map(|l| l.strip_prefix("kairos bag play: ")?.strip_suffix(" sent"))
        .filter_map(|l| {
            let (topic, count) = l.rsplit_once(": ")?;
            Some((topic.to_owned(), count.parse().ok()?))
        })
        .collect()
}

/// `--topics`, `--services`, `--regex`, `--exclude-topics`, `--exclude-services` choose
/// what rosbag2's reader filter chooses, on rosbag2's own bag of two topics and two
/// services: topics and services apart, a regex matching whole names.
#[test]
fn topics_and_services_are_chosen_as_ros2_bag_play_chooses_them() {
    let bag = rosbag2_bag("mcap/bag_with_topics_and_service_events");
    let router = Router::start(KAIROS);
    let play = |extra: &[&str]| {
        finish(
            spawn_bag(
                &router,
                "play",
                &bag,
                &format!("--rate 100 {}", extra.join(" ")),
            ),
            LIMIT,
        )
    };
    let (t1, t2, split) = ("/test_topic1", "/test_topic2", "/events/write_split");
    let (s1, s2) = (
        "/test_service1/_service_event",
        "/test_service2/_service_event",
    );
    // (arguments, what each played topic sent)
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, u64)]);
    let cases: [Case; 4] = [
        // Topics listed, no services listed: every service.
        (&["--topics", t1], &[(t1, 1), (s1, 4), (s2, 4)]),
        // Services listed (a relative name too), no topics listed: every topic.
        (
            &["--services", "test_service1"],
            &[(split, 0), (t1, 1), (t2, 1), (s1, 4)],
        ),
        // A regex alone: only what it matches, services included.
        (&["--regex", "/test_topic.*"], &[(t1, 1), (t2, 1)]),
        (
            &[
                "--exclude-topics",
                t2,
                split,
                "--exclude-services",
                "/test_service1",
            ],
            &[(t1, 1), (s2, 4)],
        ),
    ];
    for (args, expected) in cases {
        let out = assert_ok(&format!("kairos bag play {args:?}"), &play(args));
        let expected = expected
            .iter()
            .map(|(topic, n)| (topic.to_string(), *n))
            .collect();
        assert_eq!(sent_counts(&out), expected, "{args:?}: {out}");
    }
    // The whole name, as rosbag2's std::regex_match: `/test_topic` matches no topic.
    let out = play(&["--regex", "/test_topic"]);
    assert_fails("-e /test_topic", &out, &["no topic of the bag is selected"]);
}

/// `--clock-topics`: `/clock` moves just before each message of the topics named, to
/// that message's log time, and only then; the bag's own `/clock` (none here) is not
/// played. It excludes `--clock`, as in ros2 bag play.
#[test]
fn clock_topics_move_the_clock_to_each_of_their_messages() {
    let bag = rosbag2_bag("mcap/talker");
    let expected: Vec<u64> = Bag::open(&bag)
        .unwrap()
        .read(&ReadFilter::all().topics(["/topic"]))
        .unwrap()
        .map(|m| m.unwrap().log_time)
        .collect();
    assert_eq!(expected.len(), 10);
    let router = Router::start(KAIROS);
    let echo = echo_clock(&router, 10);
    let player = spawn_bag(&router, "play", &bag, "--rate 5 --clock-topics topic");
    let played = assert_ok("kairos bag play", &finish(player, LIMIT));
    let sent = sent_counts(&played);
    assert_eq!(
        sent.get("/clock"),
        Some(&10),
        "one per /topic message: {played}"
    );
    assert_eq!(sent.get("/rosout"), Some(&10), "{played}");
    let echoed = assert_ok("kairos topic echo /clock", &finish(echo, LIMIT));
    assert_eq!(
        clock_times(&echoed),
        expected,
        "/clock carried each /topic message's log time"
    );

    let both = kairos()
        .args(["bag", "play", bag.to_str().unwrap(), "--clock", "10"])
        .args(["--clock-topics", "/topic"])
        .output()
        .expect("kairos runs");
    assert_fails(
        "--clock with --clock-topics",
        &both,
        &["cannot be used with"],
    );
    assert_eq!(both.status.code(), Some(2), "a usage error");
}

#[test]
fn a_path_that_is_not_a_bag_fails_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let out = kairos()
        .args(["bag", "play", dir.path().to_str().unwrap()])
        .output()
        .expect("kairos runs");
    assert_fails("a folder that is not a bag", &out, &["not a bag"]);
    let out = kairos()
        .args(["bag", "play", "/no/such/bag"])
        .output()
        .expect("kairos runs");
    assert_fails("no such bag", &out, &["does not exist"]);
}

#[test]
fn a_bad_remap_fails_clearly() {
    let bag = rosbag2_bag("mcap/talker");
    for remap in ["/topic", "/topic:=", "/topic:=/bad name"] {
        let out = kairos()
            .args(["bag", "play", bag.to_str().unwrap(), "--remap", remap])
            .output()
            .expect("kairos runs");
        assert_fails(remap, &out, &["bad remap", "old:=new"]);
    }
}

/// `--publish-service-requests`: rosbag2's own bag of service events (two services, each
/// called twice and recorded on the client's side) sends each recorded call again, with
/// its recorded request, to kairos servers in this process: twice per service, and no
/// response event is sent.
#[test]
fn recorded_service_calls_are_sent_to_the_service_again() {
    use kairos_msgs::test_msgs::srv::{BasicTypesRequest, BasicTypesResponse};
    let router = Router::start(KAIROS);
    let config =
        kairos_testkit::zenoh_session::peer_of_router(zenoh::Config::default(), router.port);
    let transport = ZenohTransport::open_with(config, 0).expect("a session");
    let context = Context::new();
    transport.install(&context).expect("install");
    let node = Node::new_in(&context, "basic_types_server", "/").unwrap();
    let (tx, rx) = mpsc::channel();
    let services: Vec<_> = ["/test_service1", "/test_service2"]
        .into_iter()
        .map(|name| {
            let tx = tx.clone();
            node.create_service(name, move |r: BasicTypesRequest| {
                let _ = tx.send((name, r.clone()));
                BasicTypesResponse {
                    int64_value: r.int64_value + 1,
                    ..BasicTypesResponse::default()
                }
            })
            .unwrap()
        })
        .collect();
    let exec = kairos::exec::Executor::single_threaded();
    exec.add_node(&node).unwrap();
    let spinner = {
        let exec = exec.clone();
        std::thread::spawn(move || exec.spin())
    };

    let bag = rosbag2_bag("mcap/bag_with_topics_and_service_events");
    let out = router
        .kairos()
        .args([
            "bag",
            "play",
            bag.to_str().unwrap(),
            "--publish-service-requests",
        ])
        .args(["--topics", "/test_service1/_service_event"])
        .arg("/test_service2/_service_event")
        .args(["--wait-for-subscribers", "60"])
        .output()
        .expect("kairos bag play");
    let stdout = assert_ok("kairos bag play", &out);
    for service in ["/test_service1", "/test_service2"] {
        let line = format!(
            "service {service}: 2 request(s) sent, 2 answered, 0 failed, 0 recorded without their request"
        );
        assert!(stdout.contains(&line), "{line:?} in:\n{stdout}");
    }
    let mut served: Vec<(&str, BasicTypesRequest)> = Vec::new();
    while served.len() < 4 {
        served.push(rx.recv_timeout(LIMIT).expect("four requests served"));
    }
    assert!(
        rx.recv_timeout(Duration::from_millis(200)).is_err(),
        "no more"
    );
    for service in ["/test_service1", "/test_service2"] {
        let requests: Vec<_> = served.iter().filter(|(s, _)| *s == service).collect();
        assert_eq!(requests.len(), 2, "{service}: {served:?}");
        // As recorded: the request's defaults.
        assert!(
            requests
                .iter()
                .all(|(_, r)| *r == BasicTypesRequest::default()),
            "{served:?}"
        );
    }
    exec.cancel();
    spinner.join().unwrap().unwrap();
    drop(services);
}
