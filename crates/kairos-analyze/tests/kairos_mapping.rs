//! The kairos mapping on a trace laid out as kairos writes it (ros2_tracing event and
//! field names, plus `publisher_handle`/`seq` on message events and the `kairos:*`
//! queue and timer events), written here byte by byte so the test does not depend on
//! the writer. babeltrace2 reads it too, and `dump` must agree with it.

use std::path::{Path, PathBuf};

use kairos_analyze::model::QueueKind;
use kairos_analyze::{Options, analyze, chains, queues, timers};

mod ctf_writer;
use ctf_writer::{Class, T, V, Writer};

/// The events of this layout beyond the entities both layouts declare alike.
const EVENTS: &[&[Class]] = &[
    ctf_writer::ROS2_ENTITIES,
    &[
        (
            "ros2:rcl_timer_init",
            &[("timer_handle", T::H), ("period", T::I)],
        ),
        (
            "ros2:callback_start",
            &[("callback", T::H), ("is_intra_process", T::N)],
        ),
        ("ros2:callback_end", &[("callback", T::H)]),
        (
            "ros2:rcl_publish",
            &[("publisher_handle", T::H), ("message", T::H), ("seq", T::U)],
        ),
        (
            "ros2:rmw_publish",
            &[("message", T::H), ("publisher_handle", T::H), ("seq", T::U)],
        ),
        (
            "kairos:message_enqueue",
            &[
                ("subscription_handle", T::H),
                ("publisher_handle", T::H),
                ("seq", T::U),
                ("queue_depth", T::U),
            ],
        ),
        (
            "kairos:message_drop",
            &[
                ("subscription_handle", T::H),
                ("publisher_handle", T::H),
                ("seq", T::U),
                ("queue_depth", T::U),
            ],
        ),
        (
            "ros2:rmw_take",
            &[
                ("rmw_subscription_handle", T::H),
                ("message", T::H),
                ("source_timestamp", T::I),
                ("taken", T::N),
                ("publisher_handle", T::H),
                ("seq", T::U),
            ],
        ),
        (
            "kairos:timer_fire",
            &[
                ("timer_handle", T::H),
                ("clock", T::U),
                ("scheduled", T::I),
                ("actual", T::I),
            ],
        ),
    ],
];

const MS: u64 = 1_000_000;
const TALKER: u64 = 0x100;
const LISTENER: u64 = 0x200;
const PUB: u64 = 0x300;
const SUB: u64 = 0x400;
const RMW_SUB: u64 = 0x401;
const RCLCPP_SUB: u64 = 0x402;
const TIMER: u64 = 0x500;
const TIMER_CB: u64 = 0x600;
const SUB_CB: u64 = 0x700;

/// Talker: a 10 ms timer publishes /chatter seq 0..4. Listener: queue of depth 2;
/// seq 2 is dropped, the others are taken and processed.
fn write_trace(dir: &Path) {
    use V::{I, S, U};
    let mut w = Writer::new(
        EVENTS,
        "hostname = \"kairos-test\"; domain = \"kairos\"; procname = \"demo\"; vpid = 42;",
        42,
        "demo",
    );
    w.event(
        1_000,
        1,
        "ros2:rcl_node_init",
        &[U(TALKER), U(1), S("talker"), S("/")],
    );
    w.event(
        1_100,
        1,
        "ros2:rcl_node_init",
        &[U(LISTENER), U(2), S("listener"), S("/")],
    );
    w.event(
        1_200,
        1,
        "ros2:rcl_publisher_init",
        &[U(PUB), U(TALKER), U(0x301), S("/chatter"), U(10)],
    );
    w.event(
        1_300,
        1,
        "ros2:rcl_subscription_init",
        &[U(SUB), U(LISTENER), U(RMW_SUB), S("/chatter"), U(2)],
    );
    w.event(
        1_400,
        1,
        "ros2:rclcpp_subscription_init",
        &[U(SUB), U(RCLCPP_SUB)],
    );
    w.event(
        1_500,
        1,
        "ros2:rclcpp_subscription_callback_added",
        &[U(RCLCPP_SUB), U(SUB_CB)],
    );
    w.event(
        1_600,
        1,
        "ros2:rcl_timer_init",
        &[U(TIMER), I(10 * MS as i64)],
    );
    w.event(
        1_700,
        1,
        "ros2:rclcpp_timer_callback_added",
        &[U(TIMER), U(TIMER_CB)],
    );
    w.event(
        1_800,
        1,
        "ros2:rclcpp_timer_link_node",
        &[U(TIMER), U(TALKER)],
    );
    for seq in 0..5u64 {
        let t = 10 * MS * (seq + 1);
        w.event(
            t,
            1,
            "kairos:timer_fire",
            &[U(TIMER), U(0), I(t as i64 - 5_000), I(t as i64)],
        );
        w.event(t + 10, 1, "ros2:callback_start", &[U(TIMER_CB), I(0)]);
        w.event(t + 20, 1, "ros2:rcl_publish", &[U(PUB), U(0xAB), U(seq)]);
        w.event(t + 30, 1, "ros2:rmw_publish", &[U(0xAB), U(PUB), U(seq)]);
        w.event(
            t + 40,
            1,
            "kairos:message_enqueue",
            &[U(SUB), U(PUB), U(seq), U(1)],
        );
        w.event(t + 50, 1, "ros2:callback_end", &[U(TIMER_CB)]);
        if seq == 2 {
            w.event(
                t + 60,
                1,
                "kairos:message_drop",
                &[U(SUB), U(PUB), U(seq), U(0)],
            );
            continue;
        }
        w.event(
            t + 1_000,
            2,
            "ros2:rmw_take",
            &[U(RMW_SUB), U(0xCD), I(0), I(1), U(PUB), U(seq)],
        );
        w.event(t + 1_100, 2, "ros2:callback_start", &[U(SUB_CB), I(0)]);
        w.event(t + 3_100, 2, "ros2:callback_end", &[U(SUB_CB)]);
    }
    // One take that finds the queue empty: no message.
    w.event(
        60 * MS,
        2,
        "ros2:rmw_take",
        &[U(RMW_SUB), U(0xCD), I(0), I(0), U(0), U(0)],
    );
    w.write(dir, 60 * MS);
}

fn trace_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kairos-mapping-{name}-{}", std::process::id()));
    write_trace(&dir);
    dir
}

#[test]
fn kairos_trace_maps_onto_the_model() {
    let dir = trace_dir("model");
    let m = analyze(&dir, Options::default()).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(m.empty_takes, 1);
    // The empty take is the listener's: counted on its subscription too.
    let takes = m.subscriptions[0].takes;
    assert_eq!((takes.empty, takes.taken), (1, 4), "{takes:?}");
    assert_eq!(
        m.messages.len(),
        5,
        "one message per publication, none for the empty take"
    );

    let q = queues::queues(&m);
    let sub =
        q.0.iter()
            .find(|q| q.kind == QueueKind::Subscription)
            .unwrap();
    assert_eq!(
        (sub.node.as_str(), sub.topic.as_str(), sub.capacity),
        ("/listener", "/chatter", Some(2))
    );
    assert!(!sub.inferred, "kairos traces record their queues");
    assert_eq!(sub.drops.len(), 1);
    assert_eq!(
        sub.drops[0].at_ns,
        1_700_000_000_000_000_000 + 30 * MS as i64 + 60
    );
    let dropped = sub.drops[0].message.unwrap();
    assert_eq!(
        m.messages[dropped].deliveries[0].dropped,
        Some(sub.drops[0].at_ns)
    );

    let ch = chains::chains(&m);
    let c =
        ch.0.iter()
            .find(|c| c.name() == "/talker -> /chatter -> /listener")
            .expect("the chain");
    assert_eq!(c.count, 4, "the dropped message completes no chain");
    let stage = |n: &str| {
        c.stages
            .iter()
            .find(|s| s.name == n)
            .unwrap_or_else(|| panic!("no stage {n}"))
            .latency
            .clone()
    };
    assert_eq!(stage("/chatter publish").p50_ns, 10);
    assert_eq!(stage("/chatter transport").p50_ns, 10);
    assert_eq!(stage("/chatter queue in /listener").p50_ns, 960);
    assert_eq!(stage("/listener dispatch").p50_ns, 100);
    assert_eq!(stage("/listener callback").p50_ns, 2_000);
    assert_eq!(c.total.max_ns, 3_080);

    let t = timers::timers(&m);
    assert_eq!(t.0[0].period_ns, Some(10 * MS as i64));
    assert_eq!(t.0[0].runs, 5);
    assert_eq!(
        t.0[0].lateness.max_ns, 5_000,
        "lateness from kairos:timer_fire"
    );
    assert_eq!(t.0[0].missed_periods, 0);
}

#[test]
fn dump_of_a_kairos_trace_agrees_with_babeltrace2() {
    let dir = trace_dir("dump");
    let theirs = kairos_testkit::babeltrace2_clean(&["--clock-seconds", "--no-delta"], &dir);
    let ours = kairos_trace_dump(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(ours.lines().count(), 53);
    // babeltrace2 labels events with the environment's hostname, procname and vpid.
    assert!(
        ours.lines().all(|l| l.contains("] kairos-test:demo:(42) ")),
        "{ours}"
    );
    for (a, b) in ours.lines().zip(theirs.lines()) {
        assert_eq!(a, b);
    }
    assert_eq!(ours.lines().count(), theirs.lines().count());
}

/// The dump text, produced through the library as `kairos trace dump` does.
fn kairos_trace_dump(dir: &Path) -> String {
    let set = kairos_trace::read::TraceSet::open(dir).unwrap();
    let mut out = String::new();
    for ev in set.events().unwrap() {
        kairos_trace::read::text::write_event(&mut out, &ev.unwrap());
        out.push('\n');
    }
    out
}
