//! `use_sim_time` set from another process switches a kairos node's clock: a node serving
//! ROS 2's parameter services (`kairos param serve`) is listed, read and set by
//! `kairos param` in other processes; after `set use_sim_time true` its clock follows
//! `/clock` published by yet another process (zenoh-ros2-sdk, as a ROS 2 simulator would),
//! and a refused set changes nothing.
//!
//! One `kairos router` on a free loopback port; every wait is bounded, children are killed
//! when the test ends.

mod zenoh_support;

use std::process::{Command, Stdio};
use std::time::Duration;
use zenoh_support::{KAIROS, Lines, Router, Running, assert_ok, finish, spawn, stdout_lines};

const LIMIT: Duration = Duration::from_secs(60);

/// Waits (bounded) for a line equal to `want`; returns the lines that came before it.
fn expect(lines: &mut Lines, want: &str) -> Vec<String> {
    let mut before = Vec::new();
    loop {
        match lines.next_within(LIMIT) {
            Some(line) if line == want => return before,
            Some(line) => before.push(line),
            None => panic!("no line '{want}' within {LIMIT:?}; got {before:?}"),
        }
    }
}

/// A node serving ROS 2's parameter services for `/sensor`, once it says it is ready.
fn parameter_node(router: &Router) -> (Running, Lines) {
    let mut node = spawn(
        router
            .kairos()
            .args(["param", "serve", "/sensor", "--timeout", "50"]),
    );
    let mut lines = stdout_lines(&mut node);
    expect(&mut lines, "ready");
    expect(&mut lines, "use_sim_time=false");
    (node, lines)
}

#[test]
fn use_sim_time_set_from_another_process_switches_the_node_clock() {
    let router = Router::start(KAIROS);
    let (_node, mut node_lines) = parameter_node(&router);

    let kairos = |args: &[&str]| finish(spawn(router.kairos().args(args)), LIMIT);
    let listed = assert_ok("param list", &kairos(&["param", "list", "/sensor"]));
    assert_eq!(
        listed.lines().collect::<Vec<_>>(),
        ["  frame_id", "  rate_hz", "  use_sim_time"],
        "{listed}"
    );
    let got = assert_ok(
        "param get",
        &kairos(&["param", "get", "/sensor", "use_sim_time"]),
    );
    assert_eq!(got.trim(), "Boolean value is: false");

    // A refused set (wrong type) changes nothing and says why.
    let refused = kairos(&["param", "set", "/sensor", "use_sim_time", "maybe"]);
    assert_eq!(refused.status.code(), Some(1));
    let reason = String::from_utf8_lossy(&refused.stderr);
    assert!(
        reason.contains("Setting parameter failed") && reason.contains("bool"),
        "{reason}"
    );

    let set = assert_ok(
        "param set",
        &kairos(&["param", "set", "/sensor", "use_sim_time", "true"]),
    );
    assert_eq!(set.trim(), "Set parameter successful");
    // The node's clock is simulation time now: no /clock yet, so it reads 0 s.
    let before = expect(&mut node_lines, "use_sim_time=true sim_sec=0");
    assert!(before.is_empty(), "unexpected reports: {before:?}");
    let got = assert_ok(
        "param get",
        &kairos(&["param", "get", "/sensor", "use_sim_time"]),
    );
    assert_eq!(got.trim(), "Boolean value is: true");

    // /clock from another process (a ROS 2 simulator's, here zenoh-ros2-sdk's) drives it.
    let script = r#"
import os, time
from zenoh_ros2_sdk import ROS2Publisher
from zenoh_ros2_sdk.session import ZenohSession
PORT = int(os.environ["ROUTER_PORT"])
session = ZenohSession.get_instance("127.0.0.1", PORT)
session.register_message_type("int32 sec\nuint32 nanosec\n", "builtin_interfaces/msg/Time")
pub = ROS2Publisher('/clock', 'rosgraph_msgs/msg/Clock', msg_definition="builtin_interfaces/Time clock\n", type_hash="RIHS01_692f7a66e93a3c83e71765d033b60349ba68023a8c689a79e48078bcb5c58564", node_name='py_sim', router_port=PORT)
Time = session.store.types['builtin_interfaces/msg/Time']
for i in range(30):
    pub.publish(clock=Time(sec=42, nanosec=5 + i))
    time.sleep(0.1)
pub.close()
"#;
    zenoh_support::require_zenoh_ros2_sdk("zenoh_ros2_sdk");
    let simulator = Running(
        Command::new("python3")
            .args(["-c", script])
            .env("ROUTER_PORT", router.port.to_string())
            .env_remove("ROS_DOMAIN_ID")
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the Python /clock publisher"),
    );
    expect(&mut node_lines, "use_sim_time=true sim_sec=42");
    drop(simulator);

    assert_ok(
        "param set",
        &kairos(&["param", "set", "/sensor", "use_sim_time", "false"]),
    );
    expect(&mut node_lines, "use_sim_time=false");

    let missing = kairos(&["param", "list", "/nobody", "--timeout", "1"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&missing.stderr).contains("offers no list_parameters service"),
        "{}",
        String::from_utf8_lossy(&missing.stderr)
    );
}

/// zenoh-ros2-sdk's client, given rcl_interfaces' definitions (with package-qualified
/// nested names, which it needs and which do not change the hash), computes the
/// `SetParameters` hash itself, calls the kairos node's `set_parameters`, and the node
/// switches to simulation time.
const PY_SET_USE_SIM_TIME: &str = r#"
import os
import numpy as np
from zenoh_ros2_sdk import ROS2ServiceClient
from zenoh_ros2_sdk.session import ZenohSession
from zenoh_ros2_sdk.utils import compute_service_type_hash
PORT = int(os.environ["ROUTER_PORT"])
I = os.environ["IFACES"]
read = lambda p: open(os.path.join(I, p)).read()
session = ZenohSession.get_instance("127.0.0.1", PORT)
deps = {"rcl_interfaces/msg/ParameterValue": read("msg/ParameterValue.msg"),
        "rcl_interfaces/msg/Parameter": read("msg/Parameter.msg").replace("ParameterValue value", "rcl_interfaces/ParameterValue value"),
        "rcl_interfaces/msg/SetParametersResult": read("msg/SetParametersResult.msg")}
for name, text in deps.items():
    session.register_message_type(text, name)
req, res = read("srv/SetParameters.srv").replace("Parameter[]", "rcl_interfaces/Parameter[]").replace("SetParametersResult[]", "rcl_interfaces/SetParametersResult[]").split("---\n")
h = compute_service_type_hash("rcl_interfaces/srv/SetParameters", req, res, deps)
print("hash", h, flush=True)
client = ROS2ServiceClient('/sensor/set_parameters', 'rcl_interfaces/srv/SetParameters', request_definition=req, response_definition=res, type_hash=h, node_name='py_param', router_port=PORT, timeout=20.0)
T = session.store.types
empty = lambda t: np.zeros(0, dtype=t)
value = T['rcl_interfaces/msg/ParameterValue'](type=1, bool_value=True, integer_value=0, double_value=0.0, string_value='', byte_array_value=empty(np.uint8), bool_array_value=empty(bool), integer_array_value=empty(np.int64), double_array_value=empty(np.float64), string_array_value=[])
r = client.call(parameters=[T['rcl_interfaces/msg/Parameter'](name='use_sim_time', value=value)])
print("result", [(x.successful, x.reason) for x in r.results], flush=True)
client.close()
"#;

#[test]
fn a_ros2_client_sets_use_sim_time_on_a_kairos_node() {
    use kairos::graph::ServiceType;
    let router = Router::start(KAIROS);
    let (_node, mut node_lines) = parameter_node(&router);
    let mut python = Command::new("python3");
    python
        .args(["-c", PY_SET_USE_SIM_TIME])
        .env("ROUTER_PORT", router.port.to_string())
        .env(
            "IFACES",
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../kairos-msgs/interfaces/rcl_interfaces"
            ),
        )
        .env_remove("ROS_DOMAIN_ID");
    let out = assert_ok(
        "the Python set_parameters client (pip install zenoh-ros2-sdk==0.1.8)",
        &finish(spawn(&mut python), LIMIT),
    );
    let hash = kairos_msgs::rcl_interfaces::srv::SetParameters::type_hash().to_string();
    assert!(
        out.contains(&format!("hash {hash}")),
        "Python's SetParameters hash differs from kairos's {hash}:\n{out}"
    );
    assert!(out.contains("result [(True, '')]"), "{out}");
    expect(&mut node_lines, "use_sim_time=true sim_sec=0");
}

#[test]
fn parameters_are_dumped_and_loaded_from_another_process() {
    let router = Router::start(KAIROS);
    let (_node, _lines) = parameter_node(&router);
    let kairos = |args: &[&str]| finish(spawn(router.kairos().args(args)), LIMIT);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sensor.yaml");
    std::fs::write(
        &file,
        "/**:\n  ros__parameters:\n    rate_hz: 25.0\n/sensor:\n  ros__parameters:\n    frame_id: 'map'\n",
    )
    .unwrap();
    let loaded = assert_ok(
        "param load",
        &kairos(&["param", "load", "/sensor", file.to_str().unwrap()]),
    );
    assert_eq!(
        loaded.lines().collect::<Vec<_>>(),
        [
            "Set parameter frame_id successful",
            "Set parameter rate_hz successful"
        ],
        "{loaded}"
    );
    let dumped = assert_ok("param dump", &kairos(&["param", "dump", "/sensor"]));
    assert_eq!(
        dumped,
        "/sensor:\n  ros__parameters:\n    frame_id: 'map'\n    rate_hz: 25.0\n    use_sim_time: false\n"
    );
    // A file giving a parameter the wrong type: that one fails, with the reason.
    std::fs::write(&file, "/sensor:\n  ros__parameters:\n    rate_hz: fast\n").unwrap();
    let refused = kairos(&["param", "load", "/sensor", file.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(1));
    let reason = String::from_utf8_lossy(&refused.stderr);
    assert!(
        reason.contains("Setting parameter rate_hz failed") && reason.contains("double"),
        "{reason}"
    );
}
