//! `kairos bag record` against live processes on Zenoh (loopback only): what kairos and an
//! independent ROS 2 peer (zenoh-ros2-sdk) publish lands in a bag that two readers no one
//! here wrote (rosbags, mcap_ros2) decode; a recorder killed with SIGKILL leaves a bag that
//! reads up to its last complete chunk and that `kairos bag reindex` completes; a full disk
//! stops the recording with an error that says so, and the bag written until then reads.
//!
//! One file for one subject, however many tests it holds: each file under `tests/` is a
//! binary of its own, and each binary links zenoh again into every CI build.

mod zenoh_support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use zenoh_support::*;

const LIMIT: Duration = Duration::from_secs(90);

fn signal(child: &Running, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &child.0.id().to_string()])
        .status()
        .expect("kill(1)");
    assert!(status.success(), "kill -{name} failed");
}

/// Starts `kairos bag record ARGS -o BAG` and waits until it records.
fn record(router: &Router, bag: &Path, args: &[&str]) -> (Running, Lines) {
    let mut recorder = spawn(
        router
            .kairos()
            .args(["bag", "record", "-o", bag.to_str().unwrap()])
            .args(args),
    );
    let mut lines = Lines::of(recorder.0.stderr.take().expect("stderr"));
    lines.wait_for("recording into", LIMIT);
    (recorder, lines)
}

/// Ctrl-C to a recorder: it writes what it queued, closes the bag and says what it lost.
/// Returns what it printed; panics if it failed.
fn stop_recorder(recorder: Running, lines: &mut Lines) -> String {
    signal(&recorder, "INT");
    let out = finish(recorder, LIMIT);
    let stderr = lines.rest(Duration::from_secs(5)).join("\n");
    assert!(out.status.success(), "recorder failed: {stderr}");
    stderr
}

/// `kairos topic pub TOPIC TYPE VALUES` TIMES times at 50 Hz, once the recorder matches.
fn publish(router: &Router, topic: &str, ty: &str, values: &str, times: u32) -> String {
    let out = router
        .kairos()
        .args(["topic", "pub", topic, ty, values])
        .args(["--times", &times.to_string(), "--rate", "50"])
        .args(["--wait-matching", "60"])
        .output()
        .expect("kairos topic pub");
    assert_ok("kairos topic pub", &out)
}

/// The recorder's count `key` in a bag's `custom_data` (`kairos.recorder.KEY`).
fn recorder_count(custom: &std::collections::BTreeMap<String, String>, key: &str) -> u64 {
    custom
        .get(&format!("kairos.recorder.{key}"))
        .unwrap_or_else(|| panic!("no kairos.recorder.{key} in {custom:?}"))
        .parse()
        .unwrap()
}

/// One of kairos-bag's Python readers on `args`, its JSON output.
fn python_reader(script: &str, args: &[&Path]) -> serde_json::Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../kairos-bag/tests/py")
        .join(script);
    let out = Command::new("python3")
        .arg(&script)
        .args(args)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{} failed ({}): {}\n(these tests need `pip install rosbags mcap mcap-ros2-support`; scripts/test installs them)",
        script.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the reader prints JSON")
}

fn mcap_files(bag: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(bag)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "mcap"))
        .collect();
    files.sort();
    files
}

/// Five Twists from zenoh-ros2-sdk, once the recorder subscribes (after `PY_SDK_PRELUDE`).
const PY_TWIST: &str = r#"
HASH = get_type_hash('geometry_msgs/msg/Twist', DEPS['geometry_msgs/msg/Twist'], DEPS)
pub = ROS2Publisher('/py_twist', 'geometry_msgs/msg/Twist', msg_definition=DEPS['geometry_msgs/msg/Twist'], type_hash=HASH, node_name='py_twist', router_port=PORT)
def recorder_subscribed():
    info = get_topic_info('/py_twist', router_port=PORT)
    return info is not None and info.subscriber_count > 0
assert bounded_wait(recorder_subscribed, 60), 'the recorder never subscribed /py_twist'
assert bounded_wait(lambda: pub.pub.matching_status.matching, 60), 'zenoh never matched the recorder'
V3 = T['geometry_msgs/msg/Vector3']
for i in range(5):
    pub.publish(linear=V3(x=0.5 * i, y=0.0, z=0.0), angular=V3(x=0.0, y=0.0, z=-1.0))
    time.sleep(0.02)
time.sleep(1.0)
pub.close()
print('published 5', flush=True)
"#;

#[test]
fn a_recording_of_kairos_and_ros2_publishers_is_decoded_by_independent_readers() {
    require_zenoh_ros2_sdk("zenoh_ros2_sdk");
    let router = Router::start(KAIROS);
    let dir = tempfile::tempdir().unwrap();
    let bag = dir.path().join("system");
    let (recorder, mut lines) = record(
        &router,
        &bag,
        &["-a", "--exclude-regex", "^/(rosout|parameter_events)$"],
    );
    publish(
        &router,
        "/chatter",
        "std_msgs/msg/String",
        "{data: hello from kairos}",
        20,
    );
    publish(
        &router,
        "/pose",
        "geometry_msgs/msg/PoseStamped",
        "{header: {stamp: {sec: 12, nanosec: 34}, frame_id: map}, pose: {position: {x: 1.5}, orientation: {w: 1.0}}}",
        5,
    );
    let mut python = router.python(&format!("{PY_SDK_PRELUDE}{PY_BOUNDED_WAIT}{PY_TWIST}"));
    python.env(
        "MSG_DEFS",
        interface_definitions(&["geometry_msgs/msg/Vector3", "geometry_msgs/msg/Twist"]),
    );
    assert_ok("the Python publisher", &finish(spawn(&mut python), LIMIT));
    // Ctrl-C: the recorder writes what it queued, closes the bag and says what it lost.
    let stderr = stop_recorder(recorder, &mut lines);
    for line in [
        "/chatter: 20 received, 20 written",
        "/pose: 5 received, 5 written",
        "/py_twist: 5 received, 5 written",
        "30 message(s) on 3 topic(s)",
        "lost: 0",
    ] {
        assert!(stderr.contains(line), "{line:?} not in:\n{stderr}");
    }

    // kairos's own reader and `kairos bag info`.
    let info: serde_json::Value = serde_json::from_str(&assert_ok(
        "kairos bag info",
        &kairos()
            .args(["bag", "info", "--json", bag.to_str().unwrap()])
            .output()
            .unwrap(),
    ))
    .unwrap();
    assert_eq!(info["messages"], 30, "{info}");

    // rosbags: every message deserialized from the definitions in the bag, its hashes
    // checked against them.
    let read = python_reader("read_rosbags.py", &[&bag]);
    let messages = read["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), 30, "{read}");
    let on = |topic: &str| -> Vec<&serde_json::Value> {
        messages
            .iter()
            .filter(|m| m["topic"] == topic)
            .map(|m| &m["data"])
            .collect()
    };
    assert!(
        on("/chatter")
            .iter()
            .all(|d| d["data"] == "hello from kairos")
    );
    let poses = on("/pose");
    assert_eq!(poses.len(), 5);
    assert_eq!(poses[0]["header"]["frame_id"], "map");
    assert_eq!(poses[0]["header"]["stamp"]["sec"], 12);
    assert_eq!(poses[0]["pose"]["position"]["x"], 1.5);
    let twists = on("/py_twist");
    let xs: Vec<f64> = twists
        .iter()
        .map(|d| d["linear"]["x"].as_f64().unwrap())
        .collect();
    assert_eq!(xs, [0.0, 0.5, 1.0, 1.5, 2.0], "in the order sent");
    let twist_type = read["connections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["topic"] == "/py_twist")
        .expect("the /py_twist connection")["msgtype"]
        .clone();
    assert_eq!(twist_type, "geometry_msgs/msg/Twist");

    // mcap_ros2: decoders built from the schema text alone.
    let files = mcap_files(&bag);
    let paths: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let read = python_reader("read_mcap_ros2.py", &paths);
    let decoded: usize = read["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["messages"].as_array().unwrap().len())
        .sum();
    assert_eq!(decoded, 30, "{read}");
}

/// A type kairos does not ship, published by zenoh-ros2-sdk (nested names qualified, as
/// it needs; the hash does not change).
const PY_READING: &str = r#"
META = 'uint32 count\n'
READING = '# one reading\nfloat64 value\ndemo_robot_msgs/ReadingMeta meta\n'
session.register_message_type(META, 'demo_robot_msgs/msg/ReadingMeta')
session.register_message_type(READING, 'demo_robot_msgs/msg/Reading')
DEFS = {'demo_robot_msgs/msg/ReadingMeta': META, 'demo_robot_msgs/msg/Reading': READING}
HASH = get_type_hash('demo_robot_msgs/msg/Reading', READING, DEFS)
pub = ROS2Publisher('/reading', 'demo_robot_msgs/msg/Reading', msg_definition=READING, type_hash=HASH, node_name='py_reading', router_port=PORT)
def recorder_subscribed():
    info = get_topic_info('/reading', router_port=PORT)
    return info is not None and info.subscriber_count > 0
assert bounded_wait(recorder_subscribed, 60), 'the recorder never subscribed /reading'
assert bounded_wait(lambda: pub.pub.matching_status.matching, 60), 'zenoh never matched the recorder'
for i in range(3):
    pub.publish(value=1.5 * i, meta=T['demo_robot_msgs/msg/ReadingMeta'](count=i))
    time.sleep(0.02)
time.sleep(1.0)
pub.close()
print('published 3', flush=True)
"#;

#[test]
fn a_type_of_an_installed_package_is_recorded_with_its_files_definition() {
    require_zenoh_ros2_sdk("zenoh_ros2_sdk");
    let dir = tempfile::tempdir().unwrap();
    // A workspace's install/: the package's index marker and its definition files.
    let prefix = dir.path().join("install");
    let share = prefix.join("share/demo_robot_msgs/msg");
    std::fs::create_dir_all(&share).unwrap();
    std::fs::create_dir_all(prefix.join("share/ament_index/resource_index/packages")).unwrap();
    std::fs::write(
        prefix.join("share/ament_index/resource_index/packages/demo_robot_msgs"),
        "",
    )
    .unwrap();
    let reading = "# one reading\nfloat64 value\nReadingMeta meta\n";
    std::fs::write(share.join("Reading.msg"), reading).unwrap();
    std::fs::write(share.join("ReadingMeta.msg"), "uint32 count\n").unwrap();

    let router = Router::start(KAIROS);
    let bag = dir.path().join("readings");
    let mut recorder = spawn(router.kairos().env("AMENT_PREFIX_PATH", &prefix).args([
        "bag",
        "record",
        "-o",
        bag.to_str().unwrap(),
        "/reading",
    ]));
    let mut lines = Lines::of(recorder.0.stderr.take().expect("stderr"));
    lines.wait_for("recording into", LIMIT);
    let mut python = router.python(&format!("{PY_SDK_PRELUDE}{PY_BOUNDED_WAIT}{PY_READING}"));
    python.env("MSG_DEFS", "[]");
    assert_ok("the Python publisher", &finish(spawn(&mut python), LIMIT));
    let stderr = stop_recorder(recorder, &mut lines);
    assert!(
        stderr.contains("/reading: 3 received, 3 written"),
        "{stderr}"
    );
    assert!(!stderr.contains("without its definition"), "{stderr}");

    // The schema is the installed file, comments included, with its dependency: what
    // rosbag2's recorder writes.
    let definitions = kairos_bag::Bag::open(&bag)
        .unwrap()
        .message_definitions()
        .unwrap();
    let definition = definitions
        .iter()
        .find(|d| d.type_name == "demo_robot_msgs/msg/Reading")
        .expect("a definition of the recorded type");
    assert_eq!(definition.encoding, "ros2msg");
    assert_eq!(
        definition.text,
        format!(
            "{reading}\n{}\nMSG: demo_robot_msgs/ReadingMeta\nuint32 count\n",
            "=".repeat(80)
        )
    );
    // rosbags decodes every message from that definition alone.
    let read = python_reader("read_rosbags.py", &[&bag]);
    let values: Vec<(f64, u64)> = read["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| {
            (
                m["data"]["value"].as_f64().unwrap(),
                m["data"]["meta"]["count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(values, [(0.0, 0), (1.5, 1), (3.0, 2)], "{read}");
}

#[test]
fn a_killed_recorder_leaves_a_bag_that_reads_and_reindexes() {
    let router = Router::start(KAIROS);
    let dir = tempfile::tempdir().unwrap();
    let bag = dir.path().join("killed");
    // Small chunks, so most messages are in complete chunks when the recorder dies.
    let (recorder, _lines) = record(&router, &bag, &["/chatter", "--chunk-size", "256"]);
    publish(
        &router,
        "/chatter",
        "std_msgs/msg/String",
        "{data: before the kill}",
        30,
    );
    // Killed once some chunks are on disk (bounded wait).
    let file = bag.join("killed_0.mcap");
    let deadline = std::time::Instant::now() + LIMIT;
    while std::fs::metadata(&file).map_or(0, |m| m.len()) < 1024 {
        assert!(
            std::time::Instant::now() < deadline,
            "the recorder wrote no chunk within {LIMIT:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    signal(&recorder, "KILL");
    drop(recorder);
    assert!(
        !bag.join("metadata.yaml").exists(),
        "a killed recorder wrote metadata"
    );
    // The reader takes the folder as it is: whatever complete chunks hold, nothing made up.
    let echo = |what: &str| {
        let out = kairos()
            .args(["bag", "echo", "--json", bag.to_str().unwrap()])
            .output()
            .unwrap();
        let text = assert_ok(what, &out);
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("JSON"))
            .collect();
        for m in &lines {
            assert_eq!(m["data"]["data"], "before the kill", "{m}");
        }
        lines.len()
    };
    let before = echo("kairos bag echo (no metadata.yaml)");
    assert!((1..=30).contains(&before), "{before} messages recovered");
    let out = kairos()
        .args(["bag", "reindex", bag.to_str().unwrap()])
        .output()
        .unwrap();
    let said = assert_ok("kairos bag reindex", &out);
    assert!(said.contains(&format!("{before} message(s)")), "{said}");
    assert!(bag.join("metadata.yaml").exists());
    assert_eq!(echo("kairos bag echo (reindexed)"), before);
}

#[test]
fn a_full_disk_stops_the_recording_with_an_error_and_the_bag_reads() {
    let unshare = Command::new("unshare")
        .args(["--map-root-user", "--mount", "true"])
        .status();
    assert!(
        unshare.is_ok_and(|s| s.success()),
        "this test needs unshare(1) with user and mount namespaces (util-linux; as root or with unprivileged user namespaces)"
    );
    let router = Router::start(KAIROS);
    let dir = tempfile::tempdir().unwrap();
    let (disk, copy) = (dir.path().join("disk"), dir.path().join("copy"));
    std::fs::create_dir_all(&disk).unwrap();
    // A 2 MiB disk of the recorder's own (a tmpfs in a mount namespace), 64 KiB messages
    // into 256 KiB chunks: the disk fills within the 60 messages; after the recorder
    // stops, the bag is copied out of the namespace as it is.
    let script = format!(
        "mount -t tmpfs -o size=2m tmpfs {disk} && \
         {kairos} bag record /big -o {disk}/bag --duration 120 2>{disk}/../record.log; \
         echo exit=$? >> {disk}/../record.log; cp -r {disk}/bag {copy}",
        disk = disk.display(),
        copy = copy.display(),
        kairos = KAIROS,
    );
    let mut shell = Command::new("unshare");
    shell
        .args(["--map-root-user", "--mount", "sh", "-c", &script])
        .env("ZENOH_CONFIG_OVERRIDE", router.override_env());
    let recorder = spawn(&mut shell);
    let big = "x".repeat(64 * 1024);
    publish(
        &router,
        "/big",
        "std_msgs/msg/String",
        &format!("{{data: {big}}}"),
        60,
    );
    let out = finish(recorder, LIMIT);
    let log = std::fs::read_to_string(dir.path().join("record.log")).unwrap_or_default();
    assert!(out.status.success(), "{log}\n{:?}", out);
    assert!(log.contains("exit=1"), "the recorder did not fail:\n{log}");
    assert!(
        log.contains("No space left on device") || log.contains("os error 28"),
        "the error does not say the disk is full:\n{log}"
    );
    assert!(log.contains("not written"), "{log}");
    let bag = kairos_bag::Bag::open(&copy).expect("the bag up to the full disk opens");
    let mut read = 0;
    for message in bag.messages().expect("messages") {
        let message = message.expect("a message");
        assert_eq!(message.topic.as_ref(), "/big");
        read += 1;
    }
    assert!((1..60).contains(&read), "{read} messages read:\n{log}");
}

/// A flood into a recorder whose queue holds almost nothing: every message the publisher
/// sent is received, every received one is written or counted as dropped, the bag holds
/// exactly the written ones, and the counts printed are the counts stored in the bag's
/// metadata.
///
/// The publisher is reliable and keep-all, which zenoh delivers without loss (it blocks
/// rather than drops), so the only losses are the recorder's. A keep-last publisher may
/// lose the last messages of a burst in transport, and no later message would reveal
/// that gap: gap counting is proven where gaps are made on purpose (`zenoh_losses.rs`).
#[test]
fn a_flood_into_a_tiny_queue_is_written_or_counted_never_lost() {
    const SENT: u64 = 3000;
    let router = Router::start(KAIROS);
    let dir = tempfile::tempdir().unwrap();
    let bag = dir.path().join("flood");
    let (recorder, mut lines) = record(
        &router,
        &bag,
        &["/flood", "--max-cache-size", "1", "--progress"],
    );
    let out = router
        .kairos()
        .args([
            "topic",
            "pub",
            "/flood",
            "std_msgs/msg/String",
            "{data: flood}",
        ])
        .args([
            "--times",
            &SENT.to_string(),
            "--rate",
            "0",
            "--qos-history",
            "keep_all",
            "--wait-matching",
            "60",
        ])
        .output()
        .expect("kairos topic pub");
    assert_ok("kairos topic pub", &out);
    // Until the recorder has heard of every message: received, or counted in a gap (which
    // the assertions below refuse).
    let deadline = std::time::Instant::now() + LIMIT;
    let mut progress = String::new();
    loop {
        let line = lines
            .next_within(deadline.saturating_duration_since(std::time::Instant::now()))
            .unwrap_or_else(|| {
                panic!("the recorder never heard of all {SENT} messages; last: {progress}")
            });
        let Some(rest) = line.strip_prefix("kairos bag record: so far ") else {
            continue;
        };
        let numbers: Vec<u64> = rest
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|n| n.parse().ok())
            .collect();
        if numbers[0] + numbers[3] >= SENT {
            break;
        }
        progress = line;
    }
    let stderr = stop_recorder(recorder, &mut lines);
    let bag = kairos_bag::Bag::open(&bag).expect("the bag opens");
    let custom = &bag.info().custom_data;
    let count = |key: &str| recorder_count(custom, key);
    let (received, written, dropped, not_written, lost) = (
        count("received"),
        count("written"),
        count("dropped_queue"),
        count("not_written"),
        count("lost_in_transport"),
    );
    assert_eq!((received, lost), (SENT, 0), "{custom:?}\n{stderr}");
    assert_eq!(written + dropped + not_written, received, "{custom:?}");
    assert_eq!(not_written, 0);
    assert_eq!(bag.messages().unwrap().count() as u64, written);
    assert_eq!(bag.info().message_count, written);
    let line = format!("/flood: {received} received, {written} written");
    assert!(stderr.contains(&line), "{line:?} not in:\n{stderr}");
    assert!(
        stderr.contains(&format!("lost: {}", dropped + lost)),
        "{stderr}"
    );
}

/// `--use-sim-time`: receive times are stamped on simulation time, from the `/clock` that
/// another process publishes (ROS 2's `use_sim_time`): never on the system clock.
#[test]
fn use_sim_time_stamps_receive_times_on_the_clock_topic() {
    let router = Router::start(KAIROS);
    let dir = tempfile::tempdir().unwrap();
    let bag = dir.path().join("sim");
    let (recorder, mut lines) = record(&router, &bag, &["/chatter", "--use-sim-time"]);
    // Simulation time 1000 s, published at 20 Hz for as long as the test needs it.
    let _clock = spawn(router.kairos().args([
        "topic",
        "pub",
        "/clock",
        "rosgraph_msgs/msg/Clock",
        "{clock: {sec: 1000, nanosec: 0}}",
        "--times",
        "2400",
        "--rate",
        "20",
        "--wait-matching",
        "60",
    ]));
    // /clock flows through the router before the first message is published.
    let heard = router
        .kairos()
        .args(["topic", "echo", "/clock", "rosgraph_msgs/msg/Clock"])
        .args(["--count", "1", "--json", "--timeout", "60"])
        .output()
        .expect("kairos topic echo /clock");
    assert_ok("kairos topic echo /clock", &heard);
    publish(
        &router,
        "/chatter",
        "std_msgs/msg/String",
        "{data: tick}",
        20,
    );
    let stderr = stop_recorder(recorder, &mut lines);
    let bag = kairos_bag::Bag::open(&bag).expect("the bag opens");
    let stamps: Vec<u64> = bag
        .messages()
        .unwrap()
        .map(|m| m.unwrap().log_time)
        .collect();
    assert_eq!(stamps.len(), 20, "{stderr}");
    const SIM: u64 = 1_000_000_000_000;
    // 0 until the first /clock arrives (ROS time before any /clock), then 1000 s.
    assert!(
        stamps.iter().all(|&t| t == 0 || t == SIM),
        "a receive time not on simulation time: {stamps:?}"
    );
    assert!(
        stamps.contains(&SIM),
        "no message stamped on /clock: {stamps:?}"
    );
}

/// A ROS 2 client of the recorder's control services (zenoh-ros2-sdk, after
/// `PY_SDK_PRELUDE`), driven line by line from stdin so that the test decides when each
/// step happens: `pub W...` publishes each word on /chatter, `is_paused`, `pause`,
/// `resume` and `split` call the service, `splits N` waits for N split events and prints
/// them. The SDK computes each service's hash itself: a call that succeeds proves
/// kairos's hash and CDR are rosbag2's.
const PY_RECORDER_CONTROL: &str = r#"
from zenoh_ros2_sdk import ROS2ServiceClient
from zenoh_ros2_sdk.utils import compute_service_type_hash
IFACES = os.environ["IFACES"]
read = lambda p: open(os.path.join(IFACES, p)).read()
EMPTY = "uint8 structure_needs_at_least_one_member\n"
def client(name, path):
    req, res = read(f"rosbag2_interfaces/srv/{name}.srv").split("---\n")
    # rosidl gives an empty message one member, which the hash and the CDR carry.
    req, res = [t if t.strip() else EMPTY for t in (req, res)]
    h = compute_service_type_hash(f"rosbag2_interfaces/srv/{name}", req, res, DEPS)
    return ROS2ServiceClient(f'/rosbag2_recorder/{path}', f'rosbag2_interfaces/srv/{name}', request_definition=req, response_definition=res, type_hash=h, node_name='py_recorder_control', router_port=PORT, timeout=20.0)
E = dict(structure_needs_at_least_one_member=0)
W = 'rosbag2_interfaces/msg/WriteSplitEvent'
splits = []
events = ROS2Subscriber('/events/write_split', W, lambda m: splits.append([m.closed_file, m.opened_file, m.node_name]), msg_definition=DEPS[W], type_hash=get_type_hash(W, DEPS[W], DEPS), node_name='py_recorder_control', router_port=PORT)
S = 'std_msgs/msg/String'
pub = ROS2Publisher('/chatter', S, msg_definition=DEPS[S], type_hash=get_type_hash(S, DEPS[S], DEPS), node_name='py_recorder_control', router_port=PORT)
def recorder_subscribed():
    info = get_topic_info('/chatter', router_port=PORT)
    return info is not None and info.subscriber_count > 0
assert bounded_wait(recorder_subscribed, 60), 'the recorder never subscribed /chatter'
assert bounded_wait(lambda: pub.pub.matching_status.matching, 60), 'zenoh never matched the recorder'
calls = {"is_paused": client("IsPaused", "is_paused"), "pause": client("Pause", "pause"), "resume": client("Resume", "resume"), "split": client("SplitBagfile", "split_bagfile")}
print("ready", flush=True)
for line in sys.stdin:
    cmd, *rest = line.split()
    if cmd == "pub":
        for word in rest:
            pub.publish(data=word)
            time.sleep(0.01)
        print("published", len(rest), flush=True)
    elif cmd in calls:
        answer, end = None, time.monotonic() + 60
        while answer is None and time.monotonic() < end:
            answer = calls[cmd].call(**E)
        print(cmd, answer.paused if cmd == "is_paused" else answer is not None, flush=True)
    elif cmd == "splits":
        bounded_wait(lambda: len(splits) >= int(rest[0]), 60)
        print("splits", json.dumps(splits), flush=True)
# The SDK's session threads would keep the interpreter alive.
os._exit(0)
"#;

/// The Python client's stdin and stdout.
struct Client {
    stdin: std::process::ChildStdin,
    answers: Lines,
}

impl Client {
    /// Sends `command`; returns the answer (the next line with its first word).
    fn ask(&mut self, command: &str) -> String {
        use std::io::Write;
        writeln!(self.stdin, "{command}").expect("write to Python");
        let word = command.split(' ').next().unwrap();
        self.answers.wait_for(word, LIMIT)
    }
}

#[test]
fn a_ros2_client_pauses_resumes_and_splits_the_recording() {
    require_zenoh_ros2_sdk("zenoh_ros2_sdk");
    let router = Router::start(KAIROS);
    let dir = tempfile::tempdir().unwrap();
    let bag = dir.path().join("controlled");
    let (recorder, mut said) = record(&router, &bag, &["--start-paused", "--progress", "/chatter"]);
    let mut python = router.python(&format!(
        "{PY_SDK_PRELUDE}{PY_BOUNDED_WAIT}{PY_RECORDER_CONTROL}"
    ));
    python
        .env(
            "MSG_DEFS",
            interface_definitions(&[
                "std_msgs/msg/String",
                "rosbag2_interfaces/msg/WriteSplitEvent",
            ]),
        )
        .env(
            "IFACES",
            concat!(env!("CARGO_MANIFEST_DIR"), "/../kairos-msgs/interfaces"),
        )
        .stdin(std::process::Stdio::piped());
    let mut py = spawn(&mut python);
    let mut client = Client {
        stdin: py.0.stdin.take().expect("stdin"),
        answers: Lines::of(py.0.stdout.take().expect("stdout")),
    };
    let _errors = Lines::of(py.0.stderr.take().expect("stderr"));
    client.answers.wait_for("ready", LIMIT);
    let progress = |said: &mut Lines, counts: &str| {
        said.wait_for(&format!("kairos bag record: so far {counts}"), LIMIT);
    };

    // Started paused: what arrives is counted, not recorded.
    assert_eq!(client.ask("is_paused"), "is_paused True");
    assert_eq!(client.ask("pub p0 p1 p2"), "published 3");
    progress(
        &mut said,
        "0 received, 0 written, 0 dropped, 0 lost in transport, 3 while paused",
    );
    assert_eq!(client.ask("resume"), "resume True");
    assert_eq!(client.ask("is_paused"), "is_paused False");
    assert_eq!(client.ask("pub a0 a1 a2"), "published 3");
    progress(
        &mut said,
        "3 received, 3 written, 0 dropped, 0 lost in transport, 3 while paused",
    );
    // A split asked for: the next messages go into the next file, and the event says so.
    assert_eq!(client.ask("split"), "split True");
    let file = |n: u32| bag.join(format!("controlled_{n}.mcap"));
    let event = [
        file(0).display().to_string(),
        file(1).display().to_string(),
        "/rosbag2_recorder".to_owned(),
    ];
    let line = client.ask("splits 1");
    let got: Vec<[String; 3]> =
        serde_json::from_str(line.trim_start_matches("splits ")).expect("JSON");
    assert_eq!(got, [event], "one WriteSplitEvent");
    assert_eq!(client.ask("pub b0 b1"), "published 2");
    progress(
        &mut said,
        "5 received, 5 written, 0 dropped, 0 lost in transport, 3 while paused",
    );
    assert_eq!(client.ask("pause"), "pause True");
    assert_eq!(client.ask("is_paused"), "is_paused True");
    assert_eq!(client.ask("pub c0"), "published 1");
    progress(
        &mut said,
        "5 received, 5 written, 0 dropped, 0 lost in transport, 4 while paused",
    );
    drop(py);

    let stderr = stop_recorder(recorder, &mut said);
    assert!(
        stderr.contains("/chatter: 5 received, 5 written, 4 not recorded (arrived while paused)"),
        "{stderr}"
    );
    let recorded = kairos_bag::Bag::open(&bag).expect("the bag");
    let per_file: Vec<u64> = recorded
        .info()
        .files
        .iter()
        .map(|f| f.message_count)
        .collect();
    assert_eq!(per_file, [3, 2], "split where asked");
    let words: Vec<String> = recorded
        .messages()
        .expect("read")
        .map(|m| {
            let data = m.expect("a message").data;
            let len = u32::from_le_bytes(data[4..8].try_into().unwrap()) as usize;
            String::from_utf8(data[8..8 + len - 1].to_vec()).unwrap()
        })
        .collect();
    assert_eq!(words, ["a0", "a1", "a2", "b0", "b1"]);
}

/// `kairos service serve-add-two-ints /add_two_ints` for three calls, with `extra`
/// arguments, once it serves; its stdout after the `serving` line.
fn serve_three_sums(router: &Router, extra: &[&str]) -> (Running, Lines) {
    let mut server = spawn(
        router
            .kairos()
            .args(["service", "serve-add-two-ints", "/add_two_ints"])
            .args(["--count", "3", "--timeout", "90"])
            .args(extra),
    );
    let mut out = Lines::of(server.0.stdout.take().expect("stdout"));
    out.wait_for("serving", LIMIT);
    (server, out)
}

/// A service's calls are recorded as rosbag2 records them: through its introspection
/// events, on `<service>/_service_event`, chosen by `--all-services`. The events are
/// decoded with rosbags' CDR decoder, from a type built out of the `.srv` file alone
/// (rosbag2 stores the `.srv` text as the schema, which neither rosbags' AnyReader nor
/// mcap_ros2 parses, for rosbag2's own bags as for these).
#[test]
fn a_services_calls_are_recorded_through_its_introspection_events() {
    let router = Router::start(KAIROS);
    let dir = tempfile::tempdir().unwrap();
    let bag = dir.path().join("calls");
    let (recorder, mut lines) = record(&router, &bag, &["--all-services"]);
    let (server, _served) = serve_three_sums(
        &router,
        &["--introspection", "contents", "--wait-event-subscriber"],
    );
    let calls = [(2, 3), (40, 2), (-5, 5)];
    for (a, b) in calls {
        let out = router
            .kairos()
            .args(["service", "call", "/add_two_ints"])
            .args([
                "example_interfaces/srv/AddTwoInts",
                &format!("{{a: {a}, b: {b}}}"),
            ])
            .args(["--timeout", "60", "--json"])
            .output()
            .expect("kairos service call");
        let answer = assert_ok("kairos service call", &out);
        assert!(answer.contains(&format!("{}", a + b)), "{answer}");
    }
    assert_ok("the server", &finish(server, LIMIT));
    let stderr = stop_recorder(recorder, &mut lines);
    assert!(
        stderr.contains("/add_two_ints/_service_event: 6 received, 6 written"),
        "{stderr}"
    );

    let srv = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../kairos-msgs/interfaces/example_interfaces/srv/AddTwoInts.srv"
    );
    let read = python_reader(
        "read_service_events.py",
        &[
            &bag,
            Path::new("example_interfaces/srv/AddTwoInts"),
            Path::new(srv),
        ],
    );
    let connection = &read["connections"][0];
    assert_eq!(
        connection["topic"], "/add_two_ints/_service_event",
        "{read}"
    );
    assert_eq!(
        connection["msgtype"], "example_interfaces/srv/AddTwoInts_Event",
        "{read}"
    );
    assert_eq!(
        connection["digest"],
        "RIHS01_32c1d140259c71e5c355115942bcb31df98b4330e4d906b1b75ccb1c9b3ce6c8",
        "the hash ROS 2 gives AddTwoInts_Event"
    );
    let events = read["events"].as_array().expect("events");
    assert_eq!(events.len(), 6, "{read}");
    // Each call: REQUEST_RECEIVED with its request, then RESPONSE_SENT with its sum, both
    // naming the calling client (another process each time) and its sequence number.
    for (pair, (a, b)) in events.chunks(2).zip(calls) {
        let (request, response) = (&pair[0]["data"], &pair[1]["data"]);
        assert_eq!(request["info"]["event_type"], 1, "{pair:?}");
        assert_eq!(request["request"][0]["a"], a);
        assert_eq!(request["request"][0]["b"], b);
        assert_eq!(response["info"]["event_type"], 2, "{pair:?}");
        assert_eq!(response["response"][0]["sum"], a + b);
        assert_eq!(
            request["info"]["client_gid"],
            response["info"]["client_gid"]
        );
        assert_eq!(
            request["info"]["sequence_number"],
            response["info"]["sequence_number"]
        );
    }
    let clients: std::collections::BTreeSet<String> = events
        .iter()
        .map(|e| e["data"]["info"]["client_gid"].to_string())
        .collect();
    assert_eq!(clients.len(), 3, "three callers, three gids: {clients:?}");

    // The schema is the `.srv` text, as rosbag2 writes it.
    let recorded = kairos_bag::Bag::open(&bag).expect("the bag");
    let definitions = recorded.message_definitions().expect("the definitions");
    let event = definitions
        .iter()
        .find(|d| d.type_name == "example_interfaces/srv/AddTwoInts_Event")
        .expect("the event type's definition");
    assert_eq!(
        (event.encoding.as_str(), event.text.as_str()),
        ("ros2msg", std::fs::read_to_string(srv).unwrap().as_str()),
        "the schema rosbag2 stores for a service event topic"
    );

    // Played with --publish-service-requests, the calls (known from the server's side
    // only: its REQUEST_RECEIVED events) reach a new server, once each.
    let (again, mut serving) = serve_three_sums(&router, &[]);
    let played = router
        .kairos()
        .args([
            "bag",
            "play",
            bag.to_str().unwrap(),
            "--publish-service-requests",
        ])
        .args(["--wait-for-subscribers", "60"])
        .output()
        .expect("kairos bag play");
    let played = assert_ok("kairos bag play", &played);
    assert!(
        played.contains(
            "service /add_two_ints: 3 request(s) sent, 3 answered, 0 failed, 0 recorded without their request"
        ),
        "{played}"
    );
    assert_ok("the second server", &finish(again, LIMIT));
    assert!(serving.rest(LIMIT).iter().any(|l| l == "served 3"));
}

/// Reads `--progress` lines until the recorder has received `want` messages.
fn wait_received(lines: &mut Lines, want: u64) {
    let deadline = std::time::Instant::now() + LIMIT;
    let mut last = String::new();
    loop {
        let line = lines
            .next_within(deadline.saturating_duration_since(std::time::Instant::now()))
            .unwrap_or_else(|| panic!("the recorder never received {want}; last: {last}"));
        let Some(rest) = line.strip_prefix("kairos bag record: so far ") else {
            continue;
        };
        let received: u64 = rest
            .split(' ')
            .next()
            .and_then(|n| n.parse().ok())
            .expect("a count");
        if received >= want {
            return;
        }
        last = line;
    }
}

/// `--snapshot-mode`: nothing is written until `/rosbag2_recorder/snapshot` is called;
/// then the latest `--max-cache-size` bytes of messages are, and what arrives after the
/// last snapshot is counted as in no snapshot, never silently gone.
#[test]
fn snapshot_mode_writes_the_latest_messages_when_asked() {
    let router = Router::start(KAIROS);
    let dir = tempfile::tempdir().unwrap();
    let bag = dir.path().join("snap");
    // "first" is 14 bytes of CDR with its header: 56 bytes hold the latest four.
    let (recorder, mut lines) = record(
        &router,
        &bag,
        &[
            "/snap",
            "--snapshot-mode",
            "--max-cache-size",
            "56",
            "--progress",
        ],
    );
    publish(&router, "/snap", "std_msgs/msg/String", "{data: first}", 10);
    wait_received(&mut lines, 10);
    let snapshot = |router: &Router| {
        let out = router
            .kairos()
            .args([
                "service",
                "call",
                "/rosbag2_recorder/snapshot",
                "rosbag2_interfaces/srv/Snapshot",
                "{}",
            ])
            .output()
            .expect("kairos service call");
        assert_ok("kairos service call .../snapshot", &out)
    };
    let answer = snapshot(&router);
    assert!(answer.contains("success: true"), "{answer}");
    publish(&router, "/snap", "std_msgs/msg/String", "{data: second}", 5);
    wait_received(&mut lines, 15);
    let stderr = stop_recorder(recorder, &mut lines);

    let bag = kairos_bag::Bag::open(&bag).expect("the bag opens");
    let custom = &bag.info().custom_data;
    let count = |key: &str| recorder_count(custom, key);
    let (received, written, dropped, not_snapshotted) = (
        count("received"),
        count("written"),
        count("dropped_queue"),
        count("not_snapshotted"),
    );
    assert_eq!(received, 15, "{custom:?}");
    assert_eq!(
        written + dropped + count("not_written") + not_snapshotted,
        received,
        "every message written or counted: {custom:?}"
    );
    let messages: Vec<kairos_bag::BagMessage> =
        bag.messages().unwrap().map(|m| m.unwrap()).collect();
    assert_eq!(messages.len() as u64, written);
    let texts: Vec<String> = messages
        .iter()
        .map(|m| {
            kairos_zenoh::interfaces::message_by_name("std_msgs/msg/String")
                .unwrap()
                .payload_to_json(&m.data)
                .unwrap()["data"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert!(
        texts.iter().all(|t| t == "first"),
        "only what the snapshot held: {texts:?}"
    );
    let sequences: Vec<u32> = messages.iter().map(|m| m.sequence).collect();
    if dropped == 0 {
        // Nothing was refused at the writer's queue: the snapshot held exactly the latest
        // four of the ten, and the five after it were still held at the end.
        assert_eq!(sequences, [7, 8, 9, 10], "{custom:?}");
        assert_eq!(not_snapshotted, 6 + 5, "{custom:?}");
    } else {
        assert!(
            (1..=4).contains(&written) && sequences.windows(2).all(|w| w[0] < w[1]),
            "{sequences:?} {custom:?}"
        );
    }
    assert!(
        stderr.contains("in no snapshot (pushed out of the buffer, or held at the end)"),
        "{stderr}"
    );
}

/// `--topic-types`, `--exclude-topics`, `--exclude-topic-types`: two recorders side by
/// side choose as rosbag2's topic filter does, by type and left out by name or type.
#[test]
fn topics_are_chosen_by_type_and_left_out_by_name_or_type() {
    let router = Router::start(KAIROS);
    let dir = tempfile::tempdir().unwrap();
    let (by_type, by_exclusion) = (dir.path().join("by_type"), dir.path().join("by_exclusion"));
    let (first, mut first_said) = record(
        &router,
        &by_type,
        &[
            "--node-name",
            "by_type",
            "--topic-types",
            "std_msgs/msg/String",
            "geometry_msgs/msg/PoseStamped",
            "--exclude-topics",
            "pose",
        ],
    );
    let (second, mut second_said) = record(
        &router,
        &by_exclusion,
        &[
            "--node-name",
            "by_exclusion",
            "-a",
            "--exclude-topic-types",
            "std_msgs/msg/String",
            "--exclude-regex",
            "^/(rosout|parameter_events)$",
            // The other recorder's split events.
            "--exclude-topics",
            "/events/write_split",
        ],
    );
    // Each topic has one recorder that wants it, so each publisher finds a match.
    let string = "std_msgs/msg/String";
    publish(&router, "/chatter", string, "{data: a}", 3);
    publish(&router, "/chatter2", string, "{data: b}", 3);
    publish(&router, "/pose", "geometry_msgs/msg/PoseStamped", "{}", 3);
    publish(&router, "/count", "std_msgs/msg/Int32", "{data: 7}", 3);
    let recorded = |recorder, said: &mut Lines, bag: &Path| {
        stop_recorder(recorder, said);
        let info = kairos_bag::Bag::open(bag).expect("the bag").info().clone();
        let mut topics: Vec<(String, u64)> = info
            .topics
            .iter()
            .map(|t| (t.name.clone(), t.message_count))
            .collect();
        topics.sort();
        topics
    };
    let pairs = |list: &[(&str, u64)]| {
        list.iter()
            .map(|(t, n)| (t.to_string(), *n))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        recorded(first, &mut first_said, &by_type),
        pairs(&[("/chatter", 3), ("/chatter2", 3)])
    );
    assert_eq!(
        recorded(second, &mut second_said, &by_exclusion),
        pairs(&[("/count", 3), ("/pose", 3)])
    );
}
