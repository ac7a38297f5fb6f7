//! A lookup that could wait is traced (`kairos:tf_lookup`): its frames, how long it
//! waited on the buffer's clock and how it ended, in the callback it ran in. babeltrace2
//! reads the events, and the analyzer's summary names the frames and the waits. Each
//! outcome is made to happen (a transform sent once the lookup waits, a timeout, a
//! `WouldDeadlock`), never raced for.

use kairos::exec::Executor;
use kairos::graph::{Context, Node};
use kairos::time::Duration;
use kairos_tf2::{Quaternion, Stamp, Transform, TransformStamped, Vector3};
use kairos_tf2_ros::{Buffer, TransformError, TransformListener};
use std::sync::mpsc;

/// Far longer than the test: a lookup that waits this long has hung.
const FOREVER: Duration = Duration::from_secs(3600);
/// How long the test waits for anything before it calls it hung.
const HUNG: std::time::Duration = std::time::Duration::from_secs(60);
/// The timeout of the lookup that must time out.
const SHORT: Duration = Duration::from_millis(20);

fn odom_base() -> TransformStamped {
    let t = Transform::new(Vector3::new(1.0, 0.0, 0.0), Quaternion::IDENTITY);
    TransformStamped::new("odom", "base_link", Stamp::from_secs(1), t)
}

#[test]
fn waiting_lookups_are_traced_with_their_frames_waits_and_outcomes() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace");
    let session = kairos::trace::Session::start(&trace).unwrap();
    let context = Context::new();
    let robot = Node::new_in(&context, "robot", "/").unwrap();
    let buffer = Buffer::new(robot.clock());
    let _listener = TransformListener::new(&robot, buffer.clone()).unwrap();

    // Found, after waiting on a thread of its own (in no callback).
    let waiting = buffer.clone();
    let waiter = std::thread::spawn(move || {
        waiting.lookup_transform_timeout("odom", "base_link", Stamp::LATEST, FOREVER)
    });
    let give_up = std::time::Instant::now() + HUNG;
    while buffer.waiters() != 1 {
        assert!(
            std::time::Instant::now() < give_up,
            "the lookup never waited"
        );
        std::thread::yield_now();
    }
    buffer.set_transform(&odom_base(), "test", false).unwrap();
    waiter.join().unwrap().unwrap();

    // Timed out: no 'camera' frame ever comes.
    let timed_out = buffer.lookup_transform_timeout("odom", "camera", Stamp::LATEST, SHORT);
    assert!(
        matches!(timed_out, Err(TransformError::Tf2(_))),
        "{timed_out:?}"
    );

    // WouldDeadlock: in a timer of the single-threaded executor that runs the listener.
    let executor = Executor::single_threaded();
    executor.add_node(&robot).unwrap();
    let (tx, rx) = mpsc::channel();
    let tx = parking_lot::Mutex::new(Some(tx));
    let in_timer = buffer.clone();
    let _timer = robot
        .create_timer(Duration::from_millis(1), move |_| {
            if let Some(tx) = tx.lock().take() {
                let _ = tx.send(in_timer.lookup_transform_timeout(
                    "map",
                    "odom",
                    Stamp::LATEST,
                    FOREVER,
                ));
            }
        })
        .unwrap();
    let outcome = loop {
        executor.spin_some().unwrap();
        if let Ok(outcome) = rx.try_recv() {
            break outcome;
        }
        assert!(std::time::Instant::now() < give_up, "the timer never ran");
        std::thread::yield_now();
    };
    assert!(
        matches!(outcome, Err(TransformError::WouldDeadlock(_))),
        "{outcome:?}"
    );
    session.stop().unwrap();

    let text = kairos_testkit::babeltrace2_clean(&[], &trace);
    let events: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(" kairos:tf_lookup: "))
        .collect();
    assert_eq!(events.len(), 3, "{text}");
    for (event, (source, outcome)) in events.iter().zip([
        ("base_link", "found"),
        ("camera", "timeout"),
        ("odom", "would_deadlock"),
    ]) {
        assert!(
            event.contains(&format!("source_frame = \"{source}\"")),
            "{event}"
        );
        assert!(
            event.contains(&format!("outcome = \"{outcome}\"")),
            "{event}"
        );
    }

    let model = kairos_analyze::analyze(&trace, kairos_analyze::Options::default()).unwrap();
    let summary = kairos_analyze::summary::summary(&model);
    let pair = |target: &str, source: &str| {
        summary
            .tf_lookups
            .iter()
            .find(|l| l.target == target && l.source == source)
            .unwrap_or_else(|| panic!("no lookups from {source} to {target}: {summary}"))
    };
    let found = pair("odom", "base_link");
    assert_eq!((found.lookups, found.outcomes["found"]), (1, 1));
    assert_eq!(found.longest_in, None);
    let timeout = pair("odom", "camera");
    assert_eq!(timeout.outcomes["timeout"], 1);
    // Never early: the traced wait is at least the timeout.
    assert!(
        timeout.longest_ns >= SHORT.as_nanos(),
        "{}",
        timeout.longest_ns
    );
    let deadlock = pair("map", "odom");
    assert_eq!(deadlock.outcomes["would_deadlock"], 1);
    let callback = deadlock.longest_in.as_deref().unwrap_or("");
    assert!(
        callback.contains("robot") && callback.contains("timer"),
        "{callback}"
    );
    let shown = summary.to_string();
    assert!(
        shown.contains("from 'odom' to 'map': 1 (1 would_deadlock)"),
        "{shown}"
    );
}
