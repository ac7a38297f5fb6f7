//! One ROS type as two Rust types in one process: the runtime's `/rosout` line and the
//! generated `rcl_interfaces/msg/Log`, the runtime's `ClockMsg` and the generated
//! `rosgraph_msgs/msg/Clock`, or two crates that each generated `std_msgs`. Each Rust type
//! gets a topic of its own, linked to the others: what one publishes, all hear, once.
//!
//! The "generated" types here are declared by hand exactly as kairos-msgs-gen writes them
//! (fields in `.msg` order, serde derives, `Message` with the ROS name and description).

use kairos::exec::Executor;
use kairos::graph::{ClockMsg, Context, GraphError, Message, Node, Qos};
use kairos::time::{ClockKind, Time};
use kairos_interface::type_hash::{Field, TypeDescription, type_id};
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex};

/// `std_msgs/msg/String`, as one crate generated it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct StringA {
    data: String,
}

/// `std_msgs/msg/String`, as another crate generated it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct StringB {
    data: String,
}

fn std_string() -> TypeDescription {
    TypeDescription::new(
        "std_msgs/msg/String",
        vec![Field::primitive("data", type_id::STRING)],
    )
}

impl Message for StringA {
    const TYPE_NAME: &'static str = "std_msgs/msg/String";
    fn description() -> TypeDescription {
        std_string()
    }
}

impl Message for StringB {
    const TYPE_NAME: &'static str = "std_msgs/msg/String";
    fn description() -> TypeDescription {
        std_string()
    }
}

/// A `std_msgs/msg/String` of another definition (another hash): not a twin.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct StringOtherVersion {
    data: String,
    extra: u8,
}

impl Message for StringOtherVersion {
    const TYPE_NAME: &'static str = "std_msgs/msg/String";
    fn description() -> TypeDescription {
        TypeDescription::new(
            "std_msgs/msg/String",
            vec![
                Field::primitive("data", type_id::STRING),
                Field::primitive("extra", type_id::UINT8),
            ],
        )
    }
}

/// `rcl_interfaces/msg/Log` as kairos-msgs generates it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct GeneratedLog {
    stamp: GeneratedTime,
    level: u8,
    name: String,
    msg: String,
    file: String,
    function: String,
    line: u32,
}

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
struct GeneratedTime {
    sec: i32,
    nanosec: u32,
}

impl Message for GeneratedLog {
    const TYPE_NAME: &'static str = "rcl_interfaces/msg/Log";
    fn description() -> TypeDescription {
        kairos_interface::builtin::log()
    }
}

/// `rosgraph_msgs/msg/Clock` as kairos-msgs generates it.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
struct GeneratedClock {
    clock: GeneratedTime,
}

impl Message for GeneratedClock {
    const TYPE_NAME: &'static str = "rosgraph_msgs/msg/Clock";
    fn description() -> TypeDescription {
        kairos_interface::builtin::clock()
    }
}

fn collect<T: kairos_interface::Payload + Clone>(
    node: &Node,
    topic: &str,
    qos: Qos,
) -> (kairos::graph::Subscription<T>, Arc<Mutex<Vec<T>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let subscription = node
        .create_subscription(topic, qos, move |m: &T| log.lock().unwrap().push(m.clone()))
        .unwrap();
    (subscription, seen)
}

fn spin(node: &Node) {
    let executor = Executor::single_threaded();
    executor.add_node(node).unwrap();
    while executor.spin_some().unwrap() > 0 {}
}

#[test]
fn two_rust_types_of_one_ros_type_hear_each_other_once() {
    let context = Context::new();
    let node = Node::new_in(&context, "node", "/").unwrap();
    let pub_a = node
        .create_publisher::<StringA>("chatter", Qos::keep_last(10))
        .unwrap();
    let (_sub_a, seen_a) = collect::<StringA>(&node, "chatter", Qos::keep_last(10));
    let (_sub_b, seen_b) = collect::<StringB>(&node, "chatter", Qos::keep_last(10));
    let pub_b = node
        .create_publisher::<StringB>("chatter", Qos::keep_last(10))
        .unwrap();
    assert_eq!(
        pub_a.subscription_count(),
        2,
        "a twin's subscriptions count"
    );
    assert_eq!(pub_b.subscription_count(), 2);

    assert_eq!(pub_a.publish(StringA { data: "a".into() }), 2);
    assert_eq!(pub_b.publish(StringB { data: "b".into() }), 2);
    spin(&node);
    let texts_a: Vec<_> = seen_a
        .lock()
        .unwrap()
        .iter()
        .map(|m| m.data.clone())
        .collect();
    let texts_b: Vec<_> = seen_b
        .lock()
        .unwrap()
        .iter()
        .map(|m| m.data.clone())
        .collect();
    assert_eq!(texts_a, ["a", "b"], "each message once, none echoed back");
    assert_eq!(texts_b, ["a", "b"]);
}

#[test]
fn a_late_twin_gets_the_latched_message_once() {
    let context = Context::new();
    let node = Node::new_in(&context, "node", "/").unwrap();
    let latched = Qos::keep_last(1).transient_local();
    let publisher = node.create_publisher::<StringA>("map", latched).unwrap();
    publisher.publish(StringA {
        data: "the map".into(),
    });
    let (_sub, seen) = collect::<StringB>(&node, "map", latched);
    let (_sub2, seen2) = collect::<StringB>(&node, "map", latched);
    spin(&node);
    for seen in [seen, seen2] {
        let texts: Vec<_> = seen
            .lock()
            .unwrap()
            .iter()
            .map(|m| m.data.clone())
            .collect();
        assert_eq!(texts, ["the map"]);
    }
}

#[test]
fn types_that_are_not_one_ros_type_still_conflict() {
    let context = Context::new();
    let node = Node::new_in(&context, "node", "/").unwrap();
    let _a = node
        .create_publisher::<StringA>("chatter", Qos::keep_last(1))
        .unwrap();
    let other_hash = node.create_publisher::<StringOtherVersion>("chatter", Qos::keep_last(1));
    assert!(
        matches!(other_hash, Err(GraphError::TypeMismatch { .. })),
        "same name, other definition: {other_hash:?}"
    );
    let plain = node.create_publisher::<String>("chatter", Qos::keep_last(1));
    assert!(
        matches!(plain, Err(GraphError::TypeMismatch { .. })),
        "an in-process type is no twin of a message: {plain:?}"
    );
}

#[test]
fn a_generated_log_subscription_hears_the_nodes_log_lines() {
    let context = Context::new();
    let listener = Node::new_in(&context, "console", "/").unwrap();
    let (_sub, seen) =
        collect::<GeneratedLog>(&listener, "/rosout", Qos::keep_last(100).transient_local());
    let talker = Node::new_in(&context, "talker", "/robot").unwrap();
    talker.logger().info("hello from the talker");
    spin(&listener);
    let seen = seen.lock().unwrap();
    let line = seen
        .iter()
        .find(|l| l.msg == "hello from the talker")
        .unwrap_or_else(|| panic!("no line from the talker in {seen:?}"));
    assert_eq!(line.name, "robot.talker");
    assert_eq!(line.level, 20);
}

#[test]
fn a_generated_clock_message_drives_simulated_time_before_its_callbacks_run() {
    let context = Context::new();
    let robot = Node::new_in(&context, "robot", "/").unwrap();
    robot.set_use_sim_time(true).unwrap();
    assert_eq!(robot.clock().kind(), ClockKind::Sim);
    let clock = robot.clock();
    let read = Arc::new(Mutex::new(Vec::new()));
    let log = read.clone();
    let _sub = robot
        .create_subscription("/clock", Qos::keep_last(10), move |m: &GeneratedClock| {
            log.lock().unwrap().push((m.clock.sec, clock.now()));
        })
        .unwrap();
    let simulator = Node::new_in(&context, "simulator", "/").unwrap();
    let publisher = simulator
        .create_publisher::<GeneratedClock>("/clock", Qos::keep_last(10))
        .unwrap();
    for sec in 1..=3 {
        publisher.publish(GeneratedClock {
            clock: GeneratedTime { sec, nanosec: 0 },
        });
        spin(&robot);
    }
    let at = |sec: i64| Time::new(ClockKind::Sim, sec * 1_000_000_000);
    assert_eq!(
        *read.lock().unwrap(),
        [(1, at(1)), (2, at(2)), (3, at(3))],
        "each callback reads the time its message carried"
    );
    // And the other way: the runtime's ClockMsg reaches the generated type's callbacks.
    let runtime = simulator
        .create_publisher::<ClockMsg>("/clock", Qos::keep_last(10))
        .unwrap();
    runtime.publish(ClockMsg { clock: at(4) });
    spin(&robot);
    assert_eq!(read.lock().unwrap().last(), Some(&(4, at(4))));
}

#[test]
fn a_callback_on_a_spinning_executor_never_reads_a_clock_older_than_its_message() {
    let context = Context::new();
    let robot = Node::new_in(&context, "robot", "/").unwrap();
    robot.set_use_sim_time(true).unwrap();
    let clock = robot.clock();
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let _sub = robot
        .create_subscription("/clock", Qos::keep_last(10), move |m: &GeneratedClock| {
            let carried = Time::new(ClockKind::Sim, i64::from(m.clock.nanosec));
            let _ = done_tx.send((carried, clock.now()));
        })
        .unwrap();
    let publisher = robot
        .create_publisher::<GeneratedClock>("/clock", Qos::keep_last(10))
        .unwrap();
    let executor = Executor::multi_threaded(2).unwrap();
    executor.add_node(&robot).unwrap();
    let spinner = {
        let executor = executor.clone();
        std::thread::spawn(move || executor.spin())
    };
    let mut stale = Vec::new();
    for nanosec in 1..=10_000 {
        publisher.publish(GeneratedClock {
            clock: GeneratedTime { sec: 0, nanosec },
        });
        let (carried, read) = done_rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("the callback ran");
        if read < carried {
            stale.push((carried, read));
        }
    }
    executor.shutdown(std::time::Duration::from_secs(5));
    spinner.join().unwrap().unwrap();
    assert!(stale.is_empty(), "callbacks read stale times: {stale:?}");
}
