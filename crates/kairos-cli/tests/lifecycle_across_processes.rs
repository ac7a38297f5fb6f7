//! A managed node across processes, on a router of the test's own: `kairos lifecycle
//! nodes|get|list|set` find and drive a `kairos_lifecycle::LifecycleNode` of another
//! Zenoh session, whose publisher publishes only once the CLI activated it.

mod zenoh_support;

use kairos::exec::Executor;
use kairos::graph::{Context, Node, Qos};
use kairos_lifecycle::{LifecycleNode, NoCallbacks, State};
use kairos_msgs::std_msgs::msg::String as StringMsg;
use kairos_testkit::zenoh_session::loopback_config;
use kairos_zenoh::ZenohTransport;
use std::time::Duration as StdDuration;
use zenoh_support::{KAIROS, Router, spawn};

const LIMIT: StdDuration = StdDuration::from_secs(60);

#[test]
fn kairos_lifecycle_finds_reads_and_drives_a_managed_node() {
    let router = Router::start(KAIROS);
    let mut config = loopback_config("peer", Some(router.port), 0);
    config
        .insert_json5("scouting/multicast/enabled", "false")
        .unwrap();
    let transport = ZenohTransport::open_with(config, 0).expect("open a session");
    let context = Context::new();
    transport.install(&context).expect("install the transport");
    let node = Node::new_in(&context, "camera", "/robot").unwrap();
    let camera = LifecycleNode::new(node.clone(), NoCallbacks).unwrap();
    let images = camera
        .create_publisher::<StringMsg>("image", Qos::keep_last(10))
        .unwrap();
    let executor = Executor::multi_threaded(2).unwrap();
    executor.add_node(&node).unwrap();
    let spinning = executor.clone();
    let spinner = std::thread::spawn(move || spinning.spin().unwrap());
    let run = |args: &[&str]| {
        let out = zenoh_support::finish(spawn(router.kairos().args(args)), LIMIT);
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, nodes, _) = run(&[
        "lifecycle",
        "nodes",
        "--spin-time",
        "30",
        "--wait-for",
        "/robot/camera/get_state",
    ]);
    assert_eq!((code, nodes.as_str()), (Some(0), "/robot/camera\n"));
    let (code, state, _) = run(&["lifecycle", "get", "/robot/camera"]);
    assert_eq!((code, state.as_str()), (Some(0), "unconfigured [1]\n"));
    let (code, list, _) = run(&["lifecycle", "list", "/robot/camera"]);
    assert_eq!(code, Some(0));
    assert_eq!(
        list,
        "- configure [1]\n\tStart: unconfigured\n\tGoal: configuring\n\
         - shutdown [5]\n\tStart: unconfigured\n\tGoal: shuttingdown\n"
    );
    let (code, refused, why) = run(&["lifecycle", "set", "/robot/camera", "activate"]);
    assert_eq!(
        code,
        Some(2),
        "activate is not allowed from unconfigured: {refused}"
    );
    assert!(
        why.contains("it allows: configure [1], shutdown [5]"),
        "{why}"
    );
    assert_eq!(images.publish(StringMsg::default()), 0);
    for transition in ["configure", "activate"] {
        let (code, out, err) = run(&["lifecycle", "set", "/robot/camera", transition]);
        assert_eq!(
            (code, out.as_str()),
            (Some(0), "Transitioning successful\n"),
            "{err}"
        );
    }
    assert_eq!(camera.state(), State::Active);
    assert!(images.is_activated());
    let (code, state, _) = run(&["lifecycle", "get", "/robot/camera"]);
    assert_eq!((code, state.as_str()), (Some(0), "active [3]\n"));
    let (code, all, _) = run(&["lifecycle", "list", "/robot/camera", "--all"]);
    assert_eq!(code, Some(0));
    assert_eq!(all.matches("\tStart: ").count(), 25, "{all}");
    assert_eq!(images.dropped_while_inactive(), 1);
    assert!(executor.shutdown(LIMIT).is_clean());
    spinner.join().unwrap();
}
