//! Every stage of a message is traced with its exact identity (publisher handle and
//! sequence number), and babeltrace2 reads the trace: publish, enqueue, drop (with the
//! queue depth), take, callback start and end.

use kairos::exec::Executor;
use kairos::graph::{Context, Node, Qos};
use kairos::trace::Session;
use std::sync::Arc;

fn field<'a>(line: &'a str, name: &str) -> &'a str {
    let start = line
        .find(&format!("{name} = "))
        .unwrap_or_else(|| panic!("no {name} in {line}"))
        + name.len()
        + 3;
    let rest = &line[start..];
    rest[..rest.find([',', ' ']).unwrap_or(rest.len())].trim_end_matches('}')
}

#[test]
fn a_message_is_traced_through_every_stage_with_its_identity() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace");
    let session = Session::start(&trace).unwrap();

    let context = Context::new();
    let talker = Node::new_in(&context, "talker", "/robot").unwrap();
    let listener = Node::new_in(&context, "listener", "/robot").unwrap();
    let publisher = talker
        .create_publisher::<u32>("scan", Qos::keep_last(10))
        .unwrap();
    let subscription = listener
        .create_subscription("scan", Qos::keep_last(2), |_: Arc<u32>| {})
        .unwrap();
    let executor = Executor::single_threaded();
    executor.add_node(&listener).unwrap();
    for i in 0..5 {
        publisher.publish(i); // a queue of 2: the three oldest are dropped
    }
    let mut ran = 0;
    loop {
        // spin_some runs each ready entity once: one message per turn.
        match executor.spin_some().unwrap() {
            0 => break,
            n => ran += n,
        }
    }
    let stats = subscription.stats();
    session.stop().unwrap();

    assert_eq!((ran, stats.dropped, stats.delivered), (2, 3, 2));
    let text = kairos_testkit::babeltrace2_clean(&[], &trace);
    let events = |name: &str| -> Vec<&str> {
        text.lines()
            .filter(|l| l.contains(&format!(" {name}: ")))
            .collect()
    };
    let publisher_handle =
        field(events("ros2:rcl_publisher_init")[0], "publisher_handle").to_string();
    assert!(events("ros2:rcl_publisher_init")[0].contains("topic_name = \"/robot/scan\""));
    let subscription_handle = field(
        events("ros2:rcl_subscription_init")[0],
        "subscription_handle",
    )
    .to_string();

    let seqs = |name: &str| -> Vec<u64> {
        events(name)
            .iter()
            .inspect(|l| assert_eq!(field(l, "publisher_handle"), publisher_handle, "{l}"))
            .map(|l| field(l, "seq").parse().unwrap())
            .collect()
    };
    assert_eq!(seqs("ros2:rclcpp_publish"), [1, 2, 3, 4, 5]);
    assert_eq!(seqs("kairos:message_enqueue"), [1, 2, 3, 4, 5]);
    assert_eq!(
        seqs("kairos:message_drop"),
        [1, 2, 3],
        "the oldest are dropped, each counted"
    );
    assert_eq!(seqs("ros2:rmw_take"), [4, 5]);
    for drop in events("kairos:message_drop") {
        assert_eq!(field(drop, "subscription_handle"), subscription_handle);
        assert_eq!(field(drop, "queue_depth"), "2");
    }
    let starts = events("ros2:callback_start");
    assert_eq!(starts.len(), 2);
    assert_eq!(events("ros2:callback_end").len(), 2);
    // The callback is linked to its subscription, and started after its take.
    let added = events("ros2:rclcpp_subscription_callback_added")[0];
    assert_eq!(field(starts[0], "callback"), field(added, "callback"));
    let take_at = text.find(events("ros2:rmw_take")[0]).unwrap();
    assert!(
        text.find(starts[0]).unwrap() > take_at,
        "callback_start before its take"
    );
}
