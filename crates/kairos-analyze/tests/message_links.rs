//! ros2_tracing 6+ shapes no public trace here has: `rmw_publish` with the source
//! `timestamp`, and the `message_link_periodic_async` a node declares so that a chain
//! goes on through its timer. The trace is written byte by byte (event and field names
//! and types as ros2_tracing's `tp_call.h` declares them), and babeltrace2 must read it.

use std::path::{Path, PathBuf};
use std::process::Command;

use kairos_analyze::model::{Link, MessageLink};
use kairos_analyze::{Options, analyze, chains};

mod ctf_writer;
use ctf_writer::{Class, T, V, Writer};

/// The events of this layout beyond the entities both layouts declare alike.
const EVENTS: &[&[Class]] = &[
    ctf_writer::ROS2_ENTITIES,
    &[
        (
            "ros2:rcl_timer_init",
            &[("timer_handle", T::H), ("period", T::U)],
        ),
        (
            "ros2:rcl_publish",
            &[("publisher_handle", T::H), ("message", T::H)],
        ),
        (
            "ros2:rmw_publish",
            &[
                ("rmw_publisher_handle", T::H),
                ("message", T::H),
                ("timestamp", T::U),
            ],
        ),
        (
            "ros2:rmw_take",
            &[
                ("rmw_subscription_handle", T::H),
                ("message", T::H),
                ("source_timestamp", T::U),
                ("taken", T::U),
            ],
        ),
        (
            "ros2:callback_start",
            &[("callback", T::H), ("is_intra_process", T::U)],
        ),
        ("ros2:callback_end", &[("callback", T::H)]),
        (
            "ros2:message_link_periodic_async",
            &[("subs", T::Seq), ("pubs", T::Seq)],
        ),
    ],
];

const MS: u64 = 1_000_000;
const SENSOR: u64 = 0x10;
const FUSER: u64 = 0x20;
const SINK: u64 = 0x30;
const PUB_IN: u64 = 0x100;
const PUB_OUT: u64 = 0x200;
const SUB_IN: u64 = 0x300;
const SUB_OUT: u64 = 0x400;
const SENSOR_TIMER: u64 = 0x500;
const FUSER_TIMER: u64 = 0x600;
const SENSOR_CB: u64 = 0x700;
const FUSER_TIMER_CB: u64 = 0x800;
const IN_CB: u64 = 0x900;
const OUT_CB: u64 = 0xA00;
/// Wall-clock stamps are the trace clock plus this (the trace's clock offset).
const WALL: u64 = 1_700_000_000_000_000_000;

/// sensor: a timer publishes /in. fuser: takes /in and keeps it; its own timer publishes
/// /out from what it kept (declared with message_link_periodic_async when `linked`).
/// sink: takes /out. Two rounds, 100 ms apart.
fn write_trace(dir: &Path, linked: bool) {
    use V::{S, Seq, U};
    let mut w = Writer::new(
        EVENTS,
        "hostname = \"links-test\"; domain = \"ust\"; tracer_name = \"lttng-ust\";",
        7,
        "fusion",
    );
    let mut t = 1_000;
    let mut next = |step: u64| {
        t += step;
        t
    };
    w.event(
        next(0),
        1,
        "ros2:rcl_node_init",
        &[U(SENSOR), U(1), S("sensor"), S("/robot")],
    );
    w.event(
        next(10),
        1,
        "ros2:rcl_node_init",
        &[U(FUSER), U(2), S("fuser"), S("/robot")],
    );
    w.event(
        next(10),
        1,
        "ros2:rcl_node_init",
        &[U(SINK), U(3), S("sink"), S("/robot")],
    );
    for (p, node, topic) in [(PUB_IN, SENSOR, "/in"), (PUB_OUT, FUSER, "/out")] {
        w.event(
            next(10),
            1,
            "ros2:rcl_publisher_init",
            &[U(p), U(node), U(p + 1), S(topic), U(10)],
        );
    }
    for (s, node, topic, cb) in [
        (SUB_IN, FUSER, "/in", IN_CB),
        (SUB_OUT, SINK, "/out", OUT_CB),
    ] {
        w.event(
            next(10),
            1,
            "ros2:rcl_subscription_init",
            &[U(s), U(node), U(s + 1), S(topic), U(10)],
        );
        w.event(
            next(10),
            1,
            "ros2:rclcpp_subscription_init",
            &[U(s), U(s + 2)],
        );
        w.event(
            next(10),
            1,
            "ros2:rclcpp_subscription_callback_added",
            &[U(s + 2), U(cb)],
        );
    }
    for (timer, node, cb, period) in [
        (SENSOR_TIMER, SENSOR, SENSOR_CB, 100 * MS),
        (FUSER_TIMER, FUSER, FUSER_TIMER_CB, 100 * MS),
    ] {
        w.event(next(10), 1, "ros2:rcl_timer_init", &[U(timer), U(period)]);
        w.event(
            next(10),
            1,
            "ros2:rclcpp_timer_callback_added",
            &[U(timer), U(cb)],
        );
        w.event(
            next(10),
            1,
            "ros2:rclcpp_timer_link_node",
            &[U(timer), U(node)],
        );
    }
    if linked {
        w.event(
            next(10),
            1,
            "ros2:message_link_periodic_async",
            &[Seq(&[SUB_IN]), Seq(&[PUB_OUT])],
        );
    }
    for round in 0..2u64 {
        let base = MS + round * 100 * MS;
        let stamp_in = WALL + base + 3_000;
        let stamp_out = WALL + base + 20 * MS + 3_000;
        // sensor's timer publishes /in (thread 2).
        w.event(base, 2, "ros2:callback_start", &[U(SENSOR_CB), U(0)]);
        w.event(base + 1_000, 2, "ros2:rcl_publish", &[U(PUB_IN), U(0xA)]);
        w.event(
            base + 3_000,
            2,
            "ros2:rmw_publish",
            &[U(PUB_IN + 1), U(0xA), U(stamp_in)],
        );
        w.event(base + 5_000, 2, "ros2:callback_end", &[U(SENSOR_CB)]);
        // fuser takes /in 1 ms later and keeps it (thread 3).
        w.event(
            base + MS,
            3,
            "ros2:rmw_take",
            &[U(SUB_IN + 1), U(0xB), U(stamp_in), U(1)],
        );
        w.event(
            base + MS + 2_000,
            3,
            "ros2:callback_start",
            &[U(IN_CB), U(0)],
        );
        w.event(base + MS + 9_000, 3, "ros2:callback_end", &[U(IN_CB)]);
        // fuser's timer publishes /out from it 20 ms after /in.
        w.event(
            base + 20 * MS - 2_000,
            3,
            "ros2:callback_start",
            &[U(FUSER_TIMER_CB), U(0)],
        );
        w.event(base + 20 * MS, 3, "ros2:rcl_publish", &[U(PUB_OUT), U(0xC)]);
        w.event(
            base + 20 * MS + 3_000,
            3,
            "ros2:rmw_publish",
            &[U(PUB_OUT + 1), U(0xC), U(stamp_out)],
        );
        w.event(
            base + 20 * MS + 6_000,
            3,
            "ros2:callback_end",
            &[U(FUSER_TIMER_CB)],
        );
        // sink takes /out (thread 4).
        w.event(
            base + 21 * MS,
            4,
            "ros2:rmw_take",
            &[U(SUB_OUT + 1), U(0xD), U(stamp_out), U(1)],
        );
        w.event(
            base + 21 * MS + 1_000,
            4,
            "ros2:callback_start",
            &[U(OUT_CB), U(0)],
        );
        w.event(
            base + 21 * MS + 50_000,
            4,
            "ros2:callback_end",
            &[U(OUT_CB)],
        );
    }
    let _ = std::fs::remove_dir_all(dir);
    w.write(dir, 400 * MS);
}

fn trace_dir(name: &str, linked: bool) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kairos-links-{name}-{}", std::process::id()));
    write_trace(&dir, linked);
    dir
}

#[test]
fn babeltrace2_reads_the_written_trace() {
    let dir = trace_dir("bt", true);
    let out = Command::new("babeltrace2")
        .arg(&dir)
        .output()
        .expect("babeltrace2 checks the test's trace: apt-get install babeltrace2");
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 2 * 14 + 18, "{text}");
    assert!(text.contains("ros2:message_link_periodic_async"), "{text}");
}

#[test]
fn rmw_publish_timestamps_link_exactly() {
    let dir = trace_dir("stamps", false);
    let m = analyze(&dir, Options::default()).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let links: Vec<Link> = m
        .messages
        .iter()
        .flat_map(|msg| msg.deliveries.iter().filter_map(|d| d.link))
        .collect();
    assert_eq!(links, vec![Link::SourceTimestamp; 4]);
}

#[test]
fn without_the_link_event_the_chain_stops_at_the_timer_and_says_so() {
    let dir = trace_dir("unlinked", false);
    let m = analyze(&dir, Options::default()).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let ch = chains::chains(&m);
    let first =
        ch.0.iter()
            .find(|c| c.path.first().is_some_and(|n| n == "/robot/sensor"))
            .unwrap_or_else(|| panic!("{ch}"));
    assert_eq!(first.path, ["/robot/sensor", "/in", "/robot/fuser"]);
    assert!(
        first
            .breaks
            .iter()
            .any(|b| b.contains("message_link_periodic_async")),
        "{:?}",
        first.breaks
    );
}

#[test]
fn a_declared_periodic_link_carries_the_chain_through_the_timer() {
    let dir = trace_dir("linked", true);
    let m = analyze(&dir, Options::default()).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let out: Vec<_> = m
        .messages
        .iter()
        .filter(|msg| &*msg.topic == "/out")
        .collect();
    assert_eq!(out.len(), 2);
    for msg in &out {
        assert_eq!(msg.cause_link, Some(MessageLink::PeriodicAsync));
        let cause = msg.cause.expect("caused by the /in message the fuser kept");
        assert_eq!(&*m.messages[cause.message].topic, "/in");
    }
    let ch = chains::chains(&m);
    let whole =
        ch.0.iter()
            .find(|c| {
                c.path
                    == [
                        "/robot/sensor",
                        "/in",
                        "/robot/fuser",
                        "/out",
                        "/robot/sink",
                    ]
            })
            .unwrap_or_else(|| panic!("{ch}"));
    assert_eq!(whole.count, 2);
    assert!(whole.breaks.is_empty(), "{:?}", whole.breaks);
    let held = whole
        .stages
        .iter()
        .find(|s| {
            s.name
                .contains("held until published (message_link_periodic_async)")
        })
        .unwrap_or_else(|| panic!("{ch}"));
    // From the fuser's /in callback start (base + 1 ms + 2 us) to the /out publish
    // (base + 20 ms).
    assert_eq!(held.latency.mean_ns, (19 * MS - 2_000) as f64);
    // End to end: sensor's publish (base + 1 us) to the end of the sink's callback
    // (base + 21.05 ms).
    assert_eq!(whole.total.mean_ns, (21 * MS + 50_000 - 1_000) as f64);
}
