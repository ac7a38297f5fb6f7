//! The stall policy of a `use_sim_time` node is a setting, per node ([`NodeOptions`]) or
//! per context ([`Context::with_sim_stall`]), as rclcpp users set it per node; each
//! policy is checked here through that setting, on nodes that follow `/clock`.

use kairos::graph::{ClockMsg, Context, Node, NodeOptions, Publisher, Qos, SimStall};
use kairos::time::{
    CancelToken, ClockChange, ClockKind, DEFAULT_STALL_TIMEOUT, JumpThreshold, StallPolicy, Time,
    WaitError,
};
use std::sync::mpsc;

const STALL_AFTER: std::time::Duration = std::time::Duration::from_millis(20);
/// Far beyond any wait here; reaching it fails the test instead of hanging it.
const LONG: std::time::Duration = std::time::Duration::from_secs(30);

fn sim(secs: i64) -> Time {
    Time::new(ClockKind::Sim, secs * 1_000_000_000)
}

fn sim_node(context: &Context, name: &str, policy: StallPolicy) -> Node {
    let options = NodeOptions::new()
        .use_sim_time(true)
        .sim_stall(SimStall::new(policy, STALL_AFTER));
    Node::with_options(context, name, options).unwrap()
}

fn clock_publisher(context: &Context) -> Publisher<ClockMsg> {
    Node::new_in(context, "simulator", "/")
        .unwrap()
        .create_publisher("/clock", Qos::keep_last(1))
        .unwrap()
}

#[test]
fn fail_chosen_per_node_makes_a_stalled_wait_fail() {
    let context = Context::new();
    let node = sim_node(&context, "failing", StallPolicy::Fail);
    clock_publisher(&context).publish(ClockMsg { clock: sim(3) });
    assert_eq!(node.clock().now(), sim(3), "the node follows /clock");
    let result = node
        .clock()
        .sleep_for(std::time::Duration::from_secs(1), &CancelToken::new());
    assert!(
        matches!(result, Err(WaitError::Stalled { last, .. }) if last == sim(3)),
        "{result:?}"
    );
}

#[test]
fn fallback_chosen_per_node_keeps_simulated_time_moving() {
    let context = Context::new();
    let node = sim_node(&context, "falling_back", StallPolicy::FallbackToSteady);
    clock_publisher(&context).publish(ClockMsg { clock: sim(3) });
    let nap = std::time::Duration::from_millis(30);
    node.clock()
        .sleep_for(nap, &CancelToken::new())
        .expect("the frozen simulator does not stop the sleep");
    assert!(node.clock().now() >= sim(3) + nap.into());
}

#[test]
fn wait_chosen_per_node_waits_through_the_stall_until_cancelled() {
    let context = Context::new();
    let node = sim_node(&context, "waiting", StallPolicy::Wait);
    clock_publisher(&context).publish(ClockMsg { clock: sim(3) });
    let (stalled_tx, stalled_rx) = mpsc::channel();
    let _handler = node.clock().create_jump_handler(
        JumpThreshold::ALL,
        || {},
        move |jump| {
            if jump.change == ClockChange::SimStalled {
                let _ = stalled_tx.send(());
            }
        },
    );
    let cancel = CancelToken::new();
    let sleeper = {
        let (clock, cancel) = (node.clock(), cancel.clone());
        std::thread::spawn(move || clock.sleep_for(std::time::Duration::from_millis(1), &cancel))
    };
    stalled_rx
        .recv_timeout(LONG)
        .expect("the stall is reported");
    assert!(!sleeper.is_finished(), "Wait keeps waiting after the stall");
    cancel.cancel();
    assert_eq!(sleeper.join().unwrap(), Err(WaitError::Cancelled));
}

#[test]
fn nodes_with_different_policies_read_the_same_simulated_time() {
    let context = Context::new();
    let waiting = sim_node(&context, "waiting", StallPolicy::Wait);
    let publisher = clock_publisher(&context);
    publisher.publish(ClockMsg { clock: sim(5) });
    // Made after /clock spoke: starts at the last sample, not at zero.
    let failing = sim_node(&context, "failing", StallPolicy::Fail);
    assert_eq!(failing.clock().now(), sim(5));
    publisher.publish(ClockMsg { clock: sim(6) });
    assert_eq!(waiting.clock().now(), sim(6));
    assert_eq!(failing.clock().now(), sim(6));
    let policy = |node: &Node| node.clock().as_ros().unwrap().sim().policy();
    assert_eq!(policy(&waiting), StallPolicy::Wait);
    assert_eq!(policy(&failing), StallPolicy::Fail);
}

#[test]
fn the_context_setting_is_the_default_of_its_nodes() {
    let context = Context::with_sim_stall(SimStall::new(StallPolicy::Fail, STALL_AFTER)).unwrap();
    let node = Node::new_in(&context, "planner", "/").unwrap();
    assert_eq!(
        node.sim_stall(),
        SimStall::new(StallPolicy::Fail, STALL_AFTER)
    );
    node.set_use_sim_time(true).unwrap();
    clock_publisher(&context).publish(ClockMsg { clock: sim(1) });
    let result = node
        .clock()
        .sleep_for(std::time::Duration::from_secs(1), &CancelToken::new());
    assert!(
        matches!(result, Err(WaitError::Stalled { .. })),
        "{result:?}"
    );
    // A node's own choice wins over the context's.
    let own = sim_node(&context, "own", StallPolicy::FallbackToSteady);
    assert_eq!(own.sim_stall().policy, StallPolicy::FallbackToSteady);
}

#[test]
fn the_default_is_what_ros_does_wait_after_one_second() {
    let node = Node::new_in(&Context::new(), "plain", "/").unwrap();
    assert_eq!(
        node.sim_stall(),
        SimStall::new(StallPolicy::Wait, DEFAULT_STALL_TIMEOUT)
    );
    assert_eq!(
        Context::new().sim_clock().unwrap().policy(),
        StallPolicy::Wait
    );
}
