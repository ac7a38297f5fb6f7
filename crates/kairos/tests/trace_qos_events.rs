//! QoS events are in the trace, as babeltrace2 reads it: each `kairos:qos_event` names the
//! endpoint by its trace handle, ROS 2's name of the event, the total and the change.

use kairos::exec::Executor;
use kairos::graph::{Context, Node, Qos};
use kairos::time::Duration;
use kairos::trace::Session;
use std::time::Instant;

#[test]
fn deadline_lifespan_and_incompatible_qos_events_are_traced() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace");
    let session = Session::start(&trace).unwrap();

    let node = Node::new_in(&Context::new(), "watcher", "/").unwrap();
    let executor = Executor::single_threaded();
    executor.add_node(&node).unwrap();
    let asks = Qos::keep_last(5).with_deadline(Duration::from_millis(20));
    let subscription = node
        .create_subscription("scan", asks, |_: &u32| {})
        .unwrap();
    let offers = Qos::keep_last(5)
        .best_effort()
        .with_deadline(Duration::from_millis(20))
        .with_lifespan(Duration::from_millis(1));
    let publisher = node.create_publisher::<u32>("scan", offers).unwrap();
    publisher.publish(1);
    // Past the 1 ms lifespan before anything takes it: waiting is the point here.
    std::thread::sleep(std::time::Duration::from_millis(5));
    let start = Instant::now();
    while subscription.qos_events().requested_deadline_missed == 0
        && start.elapsed() < std::time::Duration::from_secs(10)
    {
        executor.spin_once(Duration::from_millis(5)).unwrap();
    }
    let events = subscription.qos_events();
    session.stop().unwrap();
    assert!(events.requested_deadline_missed > 0);
    assert_eq!(events.message_expired, 1, "1 ms lifespan, taken after 5 ms");

    let text = kairos_testkit::babeltrace2_clean(&[], &trace);
    let qos_events: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(" kairos:qos_event: "))
        .collect();
    let id = subscription.callback_handle();
    let handle = |line: &str| {
        line.contains(&format!("handle = 0x{id:X}")) || line.contains(&format!("handle = 0x{id:x}"))
    };
    let named = |event: &str| {
        qos_events
            .iter()
            .filter(|l| l.contains(&format!("event = \"{event}\"")))
            .copied()
            .collect::<Vec<_>>()
    };
    let missed = named("requested_deadline_missed");
    assert!(!missed.is_empty(), "{text}");
    assert!(missed.iter().all(|l| handle(l)), "{missed:?}, {id:#x}");
    assert_eq!(named("message_expired").len(), 1, "{qos_events:?}");
    assert_eq!(
        named("requested_incompatible_qos").len(),
        1,
        "{qos_events:?}"
    );
    assert_eq!(named("offered_incompatible_qos").len(), 1, "{qos_events:?}");
    assert!(
        !named("offered_deadline_missed").is_empty(),
        "{qos_events:?}"
    );
}
