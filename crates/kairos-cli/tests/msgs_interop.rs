//! Generated interface types cross to and from `zenoh-ros2-sdk` (a Python implementation of
//! rmw_zenoh's format no one here wrote): `sensor_msgs/msg/Imu` and `geometry_msgs/msg/Twist`
//! published by `kairos topic pub` reach a Python subscriber, and published by Python reach
//! `kairos topic echo`, field by field.
//!
//! Python is given the same `.msg` files kairos-msgs generates from (so it fetches nothing)
//! and computes the type hashes itself, with its own implementation of rosidl's algorithm:
//! the test checks them against kairos's before any message flows.
//!
//! Each test has its own `kairos router` on a free loopback port; every wait is bounded and
//! children are killed when a test ends, however it ends.

mod zenoh_support;

use kairos::graph::Message;
use std::process::Command;
use std::time::Duration;
use zenoh_support::{
    KAIROS, PY_BOUNDED_WAIT, PY_SDK_PRELUDE, Router, assert_ok, finish, spawn, stdout_lines,
};

const LIMIT: Duration = Duration::from_secs(60);

/// `python3 -c script`, pointed at `router`, with the definitions of the shipped types.
fn python(router: &Router, script: &str) -> Command {
    let mut cmd = router.python(script);
    cmd.env("MSG_DEFS", definitions());
    cmd
}

/// The definitions Python needs, dependencies first.
fn definitions() -> String {
    zenoh_support::interface_definitions(&[
        "builtin_interfaces/msg/Time",
        "std_msgs/msg/Header",
        "geometry_msgs/msg/Vector3",
        "geometry_msgs/msg/Quaternion",
        "sensor_msgs/msg/Imu",
        "geometry_msgs/msg/Twist",
    ])
}

/// After `PY_SDK_PRELUDE` and `PY_BOUNDED_WAIT`: numpy, and each type's hash as Python
/// computes it, printed for `check_hashes`.
const PY_PRELUDE: &str = r#"
import numpy as np
HASH = {name: get_type_hash(name, DEPS[name], DEPS) for name in ("sensor_msgs/msg/Imu", "geometry_msgs/msg/Twist")}
for name, value in HASH.items():
    print("hash", name, value, flush=True)
"#;

/// Python computed the same hashes as kairos, from the same files.
fn check_hashes(python_out: &str) {
    for (name, hash) in [
        (
            "sensor_msgs/msg/Imu",
            kairos_msgs::sensor_msgs::msg::Imu::type_hash().to_string(),
        ),
        (
            "geometry_msgs/msg/Twist",
            kairos_msgs::geometry_msgs::msg::Twist::type_hash().to_string(),
        ),
    ] {
        assert!(
            python_out.contains(&format!("hash {name} {hash}")),
            "Python's hash of {name} differs from kairos's {hash}:\n{python_out}"
        );
    }
}

const IMU_VALUES: &str = "{header: {stamp: {sec: 7, nanosec: 9}, frame_id: imu_link}, \
    orientation: {x: 0.0, y: 0.0, z: 0.5, w: 0.75}, \
    orientation_covariance: [1.0, 0, 0, 0, 2.0, 0, 0, 0, 3.0], \
    angular_velocity: {z: 0.25}, linear_acceleration: {x: -1.5, z: 9.81}, \
    linear_acceleration_covariance: [-1, 0, 0, 0, 0, 0, 0, 0, 0.125]}";
const TWIST_VALUES: &str = "{linear: {x: 0.5, y: -0.25}, angular: {z: 1.5}}";

#[test]
fn kairos_imu_and_twist_reach_a_python_subscriber_field_by_field() {
    zenoh_support::require_zenoh_ros2_sdk("zenoh_ros2_sdk, numpy");
    let router = Router::start(KAIROS);
    let script = format!(
        "{PY_SDK_PRELUDE}{PY_BOUNDED_WAIT}{PY_PRELUDE}
got = {{'imu': [], 'twist': []}}
def on_imu(m):
    got['imu'].append([m.header.stamp.sec, m.header.stamp.nanosec, m.header.frame_id,
        m.orientation.z, m.orientation.w, list(m.orientation_covariance),
        m.angular_velocity.z, m.linear_acceleration.x, m.linear_acceleration.z,
        list(m.linear_acceleration_covariance)])
def on_twist(m):
    got['twist'].append([m.linear.x, m.linear.y, m.linear.z, m.angular.z])
subs = [
    ROS2Subscriber('/k_imu', 'sensor_msgs/msg/Imu', on_imu, msg_definition=DEPS['sensor_msgs/msg/Imu'], type_hash=HASH['sensor_msgs/msg/Imu'], node_name='py_imu_listener', router_port=PORT),
    ROS2Subscriber('/k_twist', 'geometry_msgs/msg/Twist', on_twist, msg_definition=DEPS['geometry_msgs/msg/Twist'], type_hash=HASH['geometry_msgs/msg/Twist'], node_name='py_twist_listener', router_port=PORT),
]
print('ready', flush=True)
assert bounded_wait(lambda: len(got['imu']) >= 3 and len(got['twist']) >= 3, 45), 'python got %r' % got
print('imu', json.dumps(got['imu'][0]))
print('twist', json.dumps(got['twist'][0]))
for s in subs:
    s.close()
"
    );
    let mut python = spawn(&mut python(&router, &script));
    // Wait for Python's subscribers before publishing (the publishers also wait for zenoh's
    // matching, bounded).
    let mut lines = stdout_lines(&mut python);
    lines.wait_for("ready", LIMIT);
    check_hashes(&lines.seen.join("\n"));
    for (topic, ty, values) in [
        ("/k_imu", "sensor_msgs/msg/Imu", IMU_VALUES),
        ("/k_twist", "geometry_msgs/msg/Twist", TWIST_VALUES),
    ] {
        let publisher = spawn(router.kairos().args([
            "topic",
            "pub",
            topic,
            ty,
            values,
            "--times",
            "5",
            "--rate",
            "20",
            "--wait-matching",
            "30",
        ]));
        assert_ok("kairos topic pub", &finish(publisher, LIMIT));
    }
    let status = finish(python, LIMIT);
    let rest = lines.rest(LIMIT).join("\n");
    assert!(
        status.status.success(),
        "the Python subscriber failed: {rest}\n{}",
        String::from_utf8_lossy(&status.stderr)
    );
    assert!(
        rest.contains(
            "imu [7, 9, \"imu_link\", 0.5, 0.75, [1.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 3.0], \
             0.25, -1.5, 9.81, [-1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.125]]"
        ),
        "python said:\n{rest}"
    );
    assert!(
        rest.contains("twist [0.5, -0.25, 0.0, 1.5]"),
        "python said:\n{rest}"
    );
}

#[test]
fn python_imu_and_twist_reach_kairos_topic_echo_field_by_field() {
    zenoh_support::require_zenoh_ros2_sdk("zenoh_ros2_sdk, numpy");
    let router = Router::start(KAIROS);
    let echo = |topic: &str, ty: &str| {
        spawn(router.kairos().args([
            "topic",
            "echo",
            topic,
            ty,
            "--count",
            "3",
            "--json",
            "--timeout",
            "45",
        ]))
    };
    let imu_echo = echo("/py_imu", "sensor_msgs/msg/Imu");
    let twist_echo = echo("/py_twist", "geometry_msgs/msg/Twist");
    let script = format!(
        "{PY_SDK_PRELUDE}{PY_BOUNDED_WAIT}{PY_PRELUDE}
imu_pub = ROS2Publisher('/py_imu', 'sensor_msgs/msg/Imu', msg_definition=DEPS['sensor_msgs/msg/Imu'], type_hash=HASH['sensor_msgs/msg/Imu'], node_name='py_imu', router_port=PORT)
twist_pub = ROS2Publisher('/py_twist', 'geometry_msgs/msg/Twist', msg_definition=DEPS['geometry_msgs/msg/Twist'], type_hash=HASH['geometry_msgs/msg/Twist'], node_name='py_twist', router_port=PORT)
def subscribers(topic):
    # Subscribers only: the topic itself is listed as soon as its publisher exists.
    info = get_topic_info(topic, router_port=PORT)
    return 0 if info is None else info.subscriber_count
def kairos_subs_seen():
    return subscribers('/py_imu') > 0 and subscribers('/py_twist') > 0
assert bounded_wait(kairos_subs_seen, 30), 'python does not see the kairos subscriptions'
assert bounded_wait(lambda: imu_pub.pub.matching_status.matching and twist_pub.pub.matching_status.matching, 30), 'zenoh never matched the publishers with the kairos subscriptions'
V3, Q = T['geometry_msgs/msg/Vector3'], T['geometry_msgs/msg/Quaternion']
cov = np.zeros(9, dtype=np.float64)
cov[4] = 0.5
for i in range(3):
    imu_pub.publish(
        header=T['std_msgs/msg/Header'](stamp=T['builtin_interfaces/msg/Time'](sec=100 + i, nanosec=42), frame_id='py_imu_link'),
        orientation=Q(x=0.0, y=0.0, z=0.0, w=1.0),
        orientation_covariance=cov,
        angular_velocity=V3(x=0.0, y=0.0, z=-0.5),
        angular_velocity_covariance=np.zeros(9, dtype=np.float64),
        linear_acceleration=V3(x=0.0, y=0.0, z=9.75),
        linear_acceleration_covariance=np.zeros(9, dtype=np.float64))
    twist_pub.publish(linear=V3(x=1.25, y=0.0, z=0.0), angular=V3(x=0.0, y=0.0, z=-0.75 * i))
def kairos_subs_gone():
    return subscribers('/py_imu') == 0 and subscribers('/py_twist') == 0
assert bounded_wait(kairos_subs_gone, 30), 'the kairos echoes did not take their 3 messages and leave'
imu_pub.close()
twist_pub.close()
print('published 3 + 3')
"
    );
    let python = spawn(&mut python(&router, &script));
    let python_out = assert_ok("the Python publishers", &finish(python, LIMIT));
    check_hashes(&python_out);
    let imu = assert_ok("kairos topic echo (Imu)", &finish(imu_echo, LIMIT));
    let twist = assert_ok("kairos topic echo (Twist)", &finish(twist_echo, LIMIT));
    let imu: Vec<serde_json::Value> = imu
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON message per line"))
        .collect();
    assert_eq!(imu.len(), 3, "{imu:?}");
    for (i, m) in imu.iter().enumerate() {
        assert_eq!(m["header"]["stamp"]["sec"], 100 + i as i64, "{m}");
        assert_eq!(m["header"]["stamp"]["nanosec"], 42, "{m}");
        assert_eq!(m["header"]["frame_id"], "py_imu_link", "{m}");
        assert_eq!(m["orientation"]["w"], 1.0, "{m}");
        assert_eq!(m["orientation_covariance"][4], 0.5, "{m}");
        assert_eq!(m["angular_velocity"]["z"], -0.5, "{m}");
        assert_eq!(m["linear_acceleration"]["z"], 9.75, "{m}");
    }
    let twist: Vec<serde_json::Value> = twist
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON message per line"))
        .collect();
    assert_eq!(twist.len(), 3, "{twist:?}");
    for (i, m) in twist.iter().enumerate() {
        assert_eq!(m["linear"]["x"], 1.25, "{m}");
        assert_eq!(m["angular"]["z"], -0.75 * i as f64, "{m}");
    }
}
