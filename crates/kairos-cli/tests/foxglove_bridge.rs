//! `kairos bridge foxglove` against a client no one here wrote: `@foxglove/ws-protocol`'s
//! `FoxgloveClient` under Node, decoding CDR with `@foxglove/rosmsg2-serialization` from the
//! `ros2msg` schema the bridge advertises. Processes meet on a private Zenoh router on
//! loopback; the bridge listens on a free loopback port.
//!
//! The client (tests/foxglove/client.mjs) needs Node and its packages: `npm ci` in
//! crates/kairos-cli/tests/foxglove (scripts/test does this).

mod zenoh_support;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use zenoh_support::*;

const LIMIT: Duration = Duration::from_secs(120);

fn client_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/foxglove")
}

/// Fails the test, saying what to install, unless Node and the client's packages are there.
fn require_node_client() {
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        node,
        "Node.js is required for the Foxglove client: install node (v18 or later) and npm"
    );
    for package in [
        "@foxglove/ws-protocol",
        "@foxglove/rosmsg",
        "@foxglove/rosmsg2-serialization",
        "ws",
    ] {
        assert!(
            client_dir().join("node_modules").join(package).exists(),
            "the npm package {package} is missing: run `npm ci` in {} (scripts/test does this)",
            client_dir().display()
        );
    }
}

fn signal(child: &Running, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &child.0.id().to_string()])
        .status()
        .expect("kill(1)");
    assert!(status.success(), "kill -{name} failed");
}

/// Starts `kairos bridge foxglove --port 0 ARGS`; returns it, its stderr, and its URL.
fn bridge(router: &Router, args: &[&str]) -> (Running, Lines, String) {
    let mut bridge = spawn(
        router
            .kairos()
            .args(["bridge", "foxglove", "--port", "0"])
            .args(args),
    );
    let mut lines = Lines::of(bridge.0.stderr.take().expect("stderr"));
    let line = lines.wait_for("serving ws://", LIMIT);
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("ws://"))
        .expect("a ws:// URL")
        .to_owned();
    assert!(
        url.starts_with("ws://127.0.0.1:"),
        "loopback by default: {line}"
    );
    (bridge, lines, url)
}

/// The Node client on `url` with `args` (see client.mjs).
fn node_client(url: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new("node");
    cmd.current_dir(client_dir())
        .arg("client.mjs")
        .arg(url)
        .args(args)
        .env(
            "KAIROS_INTERFACES",
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../kairos-msgs/interfaces"),
        );
    cmd
}

/// Runs the Node client on `url` with `args` to its end; its events and stdout. Fails
/// the test if it fails, or if the server does not list `capability`.
fn client_run(url: &str, args: &[&str], capability: &str) -> (Vec<Value>, String) {
    let out = finish(spawn(&mut node_client(url, args)), LIMIT);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "the Node client failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let events = events(&stdout);
    let info = events.iter().find(|e| e["event"] == "serverInfo").unwrap();
    assert!(
        info["capabilities"]
            .as_array()
            .unwrap()
            .contains(&capability.into()),
        "{info}"
    );
    (events, stdout)
}

/// The client's JSON lines.
fn events(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn of<'a>(events: &'a [Value], kind: &str, topic: &str) -> Vec<&'a Value> {
    events
        .iter()
        .filter(|e| e["event"] == kind && e["topic"] == topic)
        .collect()
}

#[test]
fn a_foxglove_client_decodes_kairos_topics_by_their_schema_and_publishes_into_kairos() {
    require_node_client();
    let router = Router::start(KAIROS);
    // Two publishers in two other processes; they run until the test drops them.
    let talk = |topic: &str, ty: &str, values: &str| {
        spawn(
            router
                .kairos()
                .args(["topic", "pub", topic, ty, values])
                .args(["--times", "100000", "--rate", "20", "--wait-matching", "0"]),
        )
    };
    let _chatter = talk("/chatter", "std_msgs/msg/String", "{data: hello foxglove}");
    let _pose = talk(
        "/pose",
        "geometry_msgs/msg/PoseStamped",
        "{header: {stamp: {sec: 12, nanosec: 34}, frame_id: map}, pose: {position: {x: 1.5}, orientation: {w: 1.0}}}",
    );
    let (bridge_process, mut bridge_log, url) = bridge(&router, &[]);
    // A kairos subscriber for what the client publishes.
    let echo = spawn(
        router
            .kairos()
            .args(["topic", "echo", "/from_foxglove", "std_msgs/msg/String"])
            .args(["--json", "--count", "3", "--timeout", "110"]),
    );
    let (events, stdout) = client_run(
        &url,
        &[
            "--subscribe",
            "/chatter:3",
            "--subscribe",
            "/pose:2",
            "--publish",
            r#"/from_foxglove:std_msgs/msg/String:{"data":"hello from foxglove"}:300"#,
            "--timeout",
            "110",
        ],
        "clientPublish",
    );
    let info = events.iter().find(|e| e["event"] == "serverInfo").unwrap();
    assert_eq!(info["supportedEncodings"], serde_json::json!(["cdr"]));

    let chatter = of(&events, "advertise", "/chatter");
    let chatter = chatter.first().expect("/chatter advertised");
    assert_eq!(chatter["encoding"], "cdr");
    assert_eq!(chatter["schemaName"], "std_msgs/msg/String");
    assert_eq!(chatter["schemaEncoding"], "ros2msg");
    assert!(
        chatter["schema"].as_str().unwrap().contains("string data"),
        "{chatter}"
    );
    let pose = of(&events, "advertise", "/pose");
    let schema = pose.first().expect("/pose advertised")["schema"]
        .as_str()
        .unwrap();
    for part in [
        "std_msgs/Header header",
        "MSG: geometry_msgs/Pose",
        "MSG: std_msgs/Header",
    ] {
        assert!(
            schema.contains(part),
            "{part:?} not in the schema:\n{schema}"
        );
    }

    let said: Vec<&Value> = of(&events, "message", "/chatter")
        .iter()
        .map(|m| &m["data"]["data"])
        .collect();
    assert!(said.len() >= 3, "{stdout}");
    assert!(said.iter().all(|d| *d == "hello foxglove"), "{said:?}");
    let poses = of(&events, "message", "/pose");
    assert!(poses.len() >= 2, "{stdout}");
    for p in &poses {
        assert_eq!(p["data"]["header"]["frame_id"], "map");
        assert_eq!(p["data"]["header"]["stamp"]["sec"], 12);
        // Foxglove's decoder reads builtin_interfaces/Time as its own {sec, nsec}.
        assert_eq!(p["data"]["header"]["stamp"]["nsec"], 34, "{p}");
        assert_eq!(p["data"]["pose"]["position"]["x"], 1.5);
        assert_eq!(p["data"]["pose"]["orientation"]["w"], 1.0);
    }

    // What the client published reached a kairos subscription in another process.
    let echoed = assert_ok("kairos topic echo /from_foxglove", &finish(echo, LIMIT));
    let echoed: Vec<&str> = echoed.lines().collect();
    assert_eq!(echoed.len(), 3, "{echoed:?}");
    assert!(
        echoed.iter().all(|l| l.contains("hello from foxglove")),
        "{echoed:?}"
    );

    // The client left: the bridge stops subscribing; Ctrl-C ends it with its counts.
    signal(&bridge_process, "INT");
    let out = finish(bridge_process, LIMIT);
    let log = bridge_log.rest(Duration::from_secs(5)).join("\n");
    assert!(out.status.success(), "bridge failed: {log}");
    for line in [
        "advertising /chatter (std_msgs/msg/String)",
        "subscribed to /chatter",
        "publishes on /from_foxglove",
        "no client wants /chatter now; unsubscribed",
        "stopped; 0 client(s)",
    ] {
        assert!(log.contains(line), "{line:?} not in:\n{log}");
    }
}

/// A `kairos param serve /sensor` (parameters `rate_hz` 10.0 and `frame_id` "base_link"),
/// the bridge, and the Node client run with `args` to its end. Fails the test if the
/// client fails, or if the server does not list `capability`.
fn against_a_sensor(args: &[&str], capability: &str) -> SensorRun {
    require_node_client();
    let router = Router::start(KAIROS);
    let mut sensor = spawn(
        router
            .kairos()
            .args(["param", "serve", "/sensor", "--timeout", "110"]),
    );
    stdout_lines(&mut sensor).wait_for("ready", LIMIT);
    let (bridge_process, bridge_log, url) = bridge(&router, &[]);
    let (events, stdout) = client_run(&url, &[args, &["--timeout", "110"]].concat(), capability);
    SensorRun {
        router,
        _sensor: sensor,
        bridge: bridge_process,
        _bridge_log: bridge_log,
        events,
        stdout,
    }
}

/// What [`against_a_sensor`] ran: the processes still run.
struct SensorRun {
    router: Router,
    _sensor: Running,
    bridge: Running,
    _bridge_log: Lines,
    events: Vec<Value>,
    stdout: String,
}

impl SensorRun {
    /// Stops the bridge with Ctrl-C; it must exit cleanly.
    fn stop_bridge(self) {
        signal(&self.bridge, "INT");
        assert!(finish(self.bridge, LIMIT).status.success());
    }
}

/// `kairos param get /sensor rate_hz`'s output.
fn rate_hz_by_kairos(router: &Router) -> String {
    let got = router
        .kairos()
        .args(["param", "get", "/sensor", "rate_hz", "--timeout", "30"])
        .output()
        .unwrap();
    assert_ok("kairos param get", &got)
}

/// The graph's services are advertised with request and response schemas; a client
/// encodes its requests with them, and decodes the answers: it reads a kairos node's
/// parameters and sets one through its ROS 2 parameter services, which kairos's own
/// `param get` then sees.
#[test]
fn a_foxglove_client_calls_kairos_services_and_sets_a_parameter() {
    let get = r#"/sensor/get_parameters:{"names":["rate_hz","frame_id"]}"#;
    let set = r#"/sensor/set_parameters:{"parameters":[{"name":"rate_hz","value":{"type":3,"double_value":20.5}}]}"#;
    // Bound whole: the sensor and the bridge run until the end of the test.
    let run = against_a_sensor(&["--call", get, "--call", set, "--call", get], "services");
    let (events, stdout) = (&run.events, &run.stdout);
    let advertised = events
        .iter()
        .find(|e| e["event"] == "advertiseService" && e["name"] == "/sensor/get_parameters")
        .expect("/sensor/get_parameters advertised");
    assert_eq!(advertised["type"], "rcl_interfaces/srv/GetParameters");
    let (request, response) = (&advertised["request"], &advertised["response"]);
    assert_eq!(request["encoding"], "cdr");
    assert_eq!(
        request["schemaName"],
        "rcl_interfaces/srv/GetParameters_Request"
    );
    assert!(
        request["schema"]
            .as_str()
            .unwrap()
            .contains("string[] names"),
        "{request}"
    );
    assert_eq!(
        response["schemaName"],
        "rcl_interfaces/srv/GetParameters_Response"
    );
    assert!(
        response["schema"]
            .as_str()
            .unwrap()
            .contains("MSG: rcl_interfaces/ParameterValue"),
        "{response}"
    );

    let answers: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"] == "serviceResponse" || e["event"] == "serviceFailure")
        .collect();
    assert_eq!(answers.len(), 3, "{stdout}");
    assert!(
        answers.iter().all(|a| a["event"] == "serviceResponse"),
        "{stdout}"
    );
    let values = &answers[0]["data"]["values"];
    assert_eq!(values[0]["double_value"], 10.0, "{values}");
    assert_eq!(values[1]["string_value"], "base_link", "{values}");
    assert_eq!(
        answers[1]["data"]["results"][0]["successful"], true,
        "{}",
        answers[1]
    );
    assert_eq!(
        answers[2]["data"]["values"][0]["double_value"], 20.5,
        "{}",
        answers[2]
    );

    // The parameter was set in the node itself: kairos's own tool reads it back.
    assert!(rate_hz_by_kairos(&run.router).contains("20.5"));

    run.stop_bridge();
}

/// The protocol's parameters: a client lists every node's parameters by `<node>.<name>`,
/// sets one (the node's own `param get` sees it, and the client's update subscription
/// hears it), and is told, not ignored, when the node refuses a value of another type.
#[test]
fn a_foxglove_client_reads_and_sets_parameters_by_node_and_name() {
    // Bound whole: the sensor and the bridge run until the end of the test.
    let run = against_a_sensor(
        &[
            "--param-get",
            "",
            "--param-set",
            "/sensor.rate_hz=30.25",
            "--param-set",
            "/sensor.frame_id=42",
            "--param-get",
            "/sensor.rate_hz,/sensor.frame_id",
            "--param-subscribe",
            "/sensor.rate_hz,/sensor.frame_id",
            "--want-param-updates",
            "1",
        ],
        "parametersSubscribe",
    );
    let (events, stdout) = (&run.events, &run.stdout);
    let answers: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"] == "parameterValues")
        .collect();
    assert_eq!(answers.len(), 4, "{stdout}");
    let value = |answer: &Value, name: &str| -> Value {
        answer["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("{name} not in {answer}"))
            .clone()
    };
    // Every node's parameters, by <node>.<name>; the bridge's own node is not asked.
    let all = answers[0];
    let rate = value(all, "/sensor.rate_hz");
    // JSON writes 10.0 as 10; the type says it is a double.
    assert_eq!(rate["value"].as_f64(), Some(10.0), "{rate}");
    assert_eq!(rate["type"], "float64", "{rate}");
    assert_eq!(value(all, "/sensor.frame_id")["value"], "base_link");
    assert!(
        all["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["name"].as_str().unwrap().starts_with("/sensor.")),
        "{all}"
    );
    assert_eq!(value(answers[1], "/sensor.rate_hz")["value"], 30.25);
    // A string parameter given an integer: the node refuses, the client is told why.
    assert_eq!(value(answers[2], "/sensor.frame_id")["value"], "base_link");
    let refused = events
        .iter()
        .find(|e| {
            e["event"] == "status"
                && e["message"]
                    .as_str()
                    .unwrap()
                    .contains("/sensor.frame_id was not set")
        })
        .unwrap_or_else(|| panic!("no status for the refused set:\n{stdout}"));
    assert_eq!(refused["level"], 1, "a warning: {refused}");
    let last = answers[3];
    assert_eq!(value(last, "/sensor.rate_hz")["value"], 30.25);
    assert_eq!(value(last, "/sensor.frame_id")["value"], "base_link");

    // The subscribed parameters' updates, as /sensor announced them: the set that took,
    // not the one refused.
    let updates: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"] == "parameterUpdate")
        .flat_map(|e| e["parameters"].as_array().unwrap())
        .collect();
    assert!(
        updates
            .iter()
            .any(|p| p["name"] == "/sensor.rate_hz" && p["value"] == 30.25),
        "{stdout}"
    );
    assert!(
        updates.iter().all(|p| p["name"] != "/sensor.frame_id"),
        "{stdout}"
    );
    assert!(rate_hz_by_kairos(&run.router).contains("30.25"));
    run.stop_bridge();
}

/// The connection graph: a client that subscribes to it learns which node serves and
/// publishes what, named as ROS 2 names nodes.
#[test]
fn a_foxglove_client_sees_the_connection_graph() {
    let run = against_a_sensor(
        &["--graph-want", "/sensor/get_parameters"],
        "connectionGraph",
    );
    let updates: Vec<&Value> = run
        .events
        .iter()
        .filter(|e| e["event"] == "graph")
        .collect();
    let entry = |list: &str, name: &str| -> Option<Value> {
        updates
            .iter()
            .flat_map(|u| u[list].as_array().unwrap())
            .find(|e| e["name"] == name)
            .cloned()
    };
    let service = entry("advertisedServices", "/sensor/get_parameters")
        .unwrap_or_else(|| panic!("no /sensor/get_parameters: {}", run.stdout));
    assert_eq!(
        service["providerIds"],
        serde_json::json!(["/sensor"]),
        "{service}"
    );
    let events = entry("publishedTopics", "/parameter_events")
        .unwrap_or_else(|| panic!("no /parameter_events: {}", run.stdout));
    assert!(
        events["publisherIds"]
            .as_array()
            .unwrap()
            .contains(&"/sensor".into()),
        "{events}"
    );
    run.stop_bridge();
}

/// A bag played with `kairos bag play` is live data to a Foxglove client: rosbag2's own
/// test bag (a talker's ten strings), each decoded by the client from the schema the
/// bridge advertises, in the recorded order.
#[test]
fn a_played_bag_reaches_a_foxglove_client_as_live_data() {
    require_node_client();
    let bag =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../kairos-bag/tests/data/rosbag2/mcap/talker");
    let router = Router::start(KAIROS);
    let (bridge_process, _bridge_log, url) = bridge(&router, &[]);
    let client = spawn(&mut node_client(
        &url,
        &["--subscribe", "/topic:10", "--timeout", "110"],
    ));
    // The player waits for a subscriber: the bridge's, made once the client subscribed
    // to the topic the player's publisher announced.
    let player = spawn(router.kairos().args([
        "bag",
        "play",
        bag.to_str().unwrap(),
        "--topics",
        "/topic",
        "--rate",
        "10",
        "--wait-for-subscribers",
        "60",
    ]));
    let played = assert_ok("kairos bag play", &finish(player, LIMIT));
    assert!(played.contains("/topic: 10 sent"), "{played}");
    let out = finish(client, LIMIT);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "the Node client failed:\n{stdout}");
    let events = events(&stdout);
    let got: Vec<&str> = of(&events, "message", "/topic")
        .iter()
        .map(|m| m["data"]["data"].as_str().expect("a decoded string"))
        .collect();
    let expected: Vec<String> = (0..10).map(|i| format!("Hello, world! {i}")).collect();
    assert_eq!(got, expected, "{stdout}");
    signal(&bridge_process, "INT");
    assert!(finish(bridge_process, LIMIT).status.success());
}

#[test]
fn a_stalled_client_costs_bounded_memory_is_told_what_it_lost_and_holds_up_no_one() {
    require_node_client();
    let router = Router::start(KAIROS);
    const QUEUE_BYTES: u64 = 1_000_000;
    let (bridge_process, mut bridge_log, url) = bridge(
        &router,
        &["--queue-bytes", &QUEUE_BYTES.to_string(), "--progress"],
    );
    // One client subscribes and then stops reading its socket for 10 s; another reads.
    let stalled = spawn(&mut node_client(
        &url,
        &[
            "--subscribe",
            "/big:0",
            "--stall",
            "10",
            "--linger",
            "3",
            "--quiet",
            "--timeout",
            "110",
        ],
    ));
    let healthy = spawn(&mut node_client(
        &url,
        &["--subscribe", "/big:50", "--quiet", "--timeout", "110"],
    ));
    // 800 messages of 60 kB at 100 Hz (48 MB): more than the socket buffers and the
    // stalled client's queue hold.
    let payload = "x".repeat(60_000);
    let published = finish(
        spawn(
            router
                .kairos()
                .args([
                    "topic",
                    "pub",
                    "/big",
                    "std_msgs/msg/String",
                    &format!("{{data: {payload}}}"),
                ])
                .args(["--times", "800", "--rate", "100", "--wait-matching", "60"]),
        ),
        LIMIT,
    );
    assert_ok(
        "the publisher (not held up by the stalled client)",
        &published,
    );

    let healthy = finish(healthy, LIMIT);
    let healthy_out = String::from_utf8_lossy(&healthy.stdout).to_string();
    assert!(healthy.status.success(), "healthy client: {healthy_out}");

    let stalled = finish(stalled, LIMIT);
    let stalled_out = String::from_utf8_lossy(&stalled.stdout).to_string();
    assert!(stalled.status.success(), "stalled client: {stalled_out}");
    let done = events(&stalled_out)
        .into_iter()
        .find(|e| e["event"] == "done")
        .expect("the stalled client's summary");
    let received = done["received"]["/big"].as_u64().unwrap_or(0);
    assert!(received < 800, "the stalled client lost messages: {done}");
    let told = done["statuses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["message"].as_str().unwrap_or("").contains("dropped"))
        .unwrap_or_else(|| panic!("no drop status reached the stalled client: {done}"));
    assert_eq!(told["level"], 1, "a warning: {told}");
    assert!(
        told["message"].as_str().unwrap().contains("on /big"),
        "{told}"
    );

    signal(&bridge_process, "INT");
    let out = finish(bridge_process, LIMIT);
    let log = bridge_log.rest(Duration::from_secs(5)).join("\n");
    assert!(out.status.success(), "bridge failed: {log}");
    assert!(
        log.contains("reads slower than the messages arrive"),
        "the drops are in the kairos log:\n{log}"
    );
    let summary = log
        .lines()
        .find(|l| l.contains("stopped;"))
        .expect("the bridge's final counts");
    let dropped: u64 = summary
        .split(", ")
        .find_map(|part| part.strip_suffix(" dropped for slow clients"))
        .and_then(|n| n.split_whitespace().last())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no drop count in {summary:?}"));
    assert!(dropped > 0, "{summary}");
    // Every progress line: the bytes waiting for clients stayed within the budget of the
    // clients connected (two at most).
    for line in log.lines().filter(|l| l.contains("bytes queued")) {
        let queued: u64 = line
            .split(", ")
            .find_map(|p| p.strip_suffix(" bytes queued"))
            .and_then(|n| n.split_whitespace().last())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no queued bytes in {line:?}"));
        assert!(queued <= 2 * QUEUE_BYTES, "over the budget: {line}");
    }
}

#[test]
fn on_simulation_time_the_bridge_serves_clock_as_server_time() {
    require_node_client();
    let router = Router::start(KAIROS);
    let _clock = spawn(
        router
            .kairos()
            .args([
                "topic",
                "pub",
                "/clock",
                "rosgraph_msgs/msg/Clock",
                "{clock: {sec: 5, nanosec: 250}}",
            ])
            .args(["--times", "100000", "--rate", "20", "--wait-matching", "0"]),
    );
    let (_bridge, _log, url) = bridge(&router, &["--use-sim-time"]);
    let out = finish(
        spawn(&mut node_client(
            &url,
            &["--subscribe", "/clock:2", "--want-time", "--timeout", "110"],
        )),
        LIMIT,
    );
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "the Node client failed: {stdout}");
    let events = events(&stdout);
    let info = events.iter().find(|e| e["event"] == "serverInfo").unwrap();
    assert!(
        info["capabilities"]
            .as_array()
            .unwrap()
            .contains(&"time".into()),
        "{info}"
    );
    let time = events.iter().find(|e| e["event"] == "time").unwrap();
    assert_eq!(time["timestamp"], "5000000250", "{time}");
    // Messages are stamped on the same clock (simulation time, not the wall clock's
    // 1.7e18 ns).
    for m in of(&events, "message", "/clock") {
        let stamp: u64 = m["timestamp"].as_str().unwrap().parse().unwrap();
        assert!(stamp <= 5_000_000_250, "{m}");
    }
}
