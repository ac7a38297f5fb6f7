//! Every event of the schema, written by a session, is read back by babeltrace2 with the
//! values emitted; sessions refuse what they cannot do with a typed error.

mod write_support;

use kairos_trace::schema::{ClockKind, EVENT_CLASSES};
use kairos_trace::write::{Error, SessionConfig};
use kairos_trace::{Session, tp};
use std::collections::BTreeSet;

/// Calls every tracepoint once, with values the test can recognize.
fn emit_every_event() {
    tp::rcl_init(0xC0, "kairos 0.1");
    tp::rcl_node_init(0x10, 0x11, "talker", "/robot");
    tp::rcl_publisher_init(0x20, 0x10, 0x21, "/chatter", 7);
    tp::rcl_subscription_init(0x30, 0x10, 0x31, "/chatter", 5);
    tp::rclcpp_subscription_init(0x30, 0x32);
    tp::rclcpp_subscription_callback_added(0x32, 0x33);
    tp::rcl_service_init(0x40, 0x10, 0x41, "/add");
    tp::rclcpp_service_callback_added(0x40, 0x42);
    tp::rcl_client_init(0x50, 0x10, 0x51, "/add");
    tp::rcl_timer_init(0x60, 100_000_000);
    tp::rclcpp_timer_callback_added(0x60, 0x61);
    tp::rclcpp_timer_link_node(0x60, 0x10);
    tp::rclcpp_callback_register(0x33, "talker::on_chatter");
    tp::rclcpp_publish(0xAA, 0x20, 3);
    tp::rcl_publish(0x20, 0xAA, 3);
    tp::rmw_publish(0xAA, 0x20, 3);
    tp::message_enqueue(0x30, 0x20, 3, 1);
    tp::message_drop(0x30, 0x20, 2, 5);
    tp::message_loss(0x30, 0x20, 4, 2);
    tp::qos_event(0x40, "liveliness_changed", 2, -1);
    tp::action_server_init(0x80, 0x10, "/fibonacci");
    tp::action_client_init(0x81, 0x10, "/fibonacci");
    tp::goal(0x80, "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9", "succeeded", 4);
    tp::rclcpp_executor_wait_for_work(-1, 0x70);
    tp::executor_wake(0x70, 1);
    tp::rclcpp_executor_execute(0x30, 0x70);
    tp::rmw_take(0x31, 0xBB, 1_000, 1, 0x20, 3);
    tp::rcl_take(0xBB, 0x20, 3);
    tp::rclcpp_take(0xBB, 0x20, 3);
    tp::callback_start(0x33, 1);
    tp::callback_end(0x33);
    tp::timer_fire(0x60, ClockKind::Sim, 5_000, 5_020);
    tp::sleep_start(ClockKind::Steady, 9_000);
    tp::sleep_end(ClockKind::Steady, 9_000, 9_050);
    tp::clock_jump(ClockKind::System, 1_000, -2_000);
    tp::sim_clock_update(77);
    tp::stall(ClockKind::Sim, 77);
    tp::resume(ClockKind::Sim, 78, 1_500);
    tp::sim_settle_timeout(79, 2);
    tp::tf_lookup(
        0x33,
        "lookup_transform",
        "odom",
        "base_link",
        0,
        12_000,
        "found",
    );
    tp::bag_play(0x20, 4, "/chatter", 1_700_000_000_000_000_000, -1);
    tp::bag_write(0x30, 0x20, 4, "/chatter", 1_700_000_000_000_000_123, 24);
    tp::bag_split(
        "/bags/run/run_0.mcap",
        "/bags/run/run_1.mcap",
        "max_bag_size",
    );
    tp::log(0x33, "robot.talker", 30, "battery low");
    tp::shutdown_report(0x30, "/chatter", "dropped", 1);
    tp::access_denied(
        "publisher",
        "/cmd_vel",
        "0/cmd_vel/geometry_msgs::msg::dds_::Twist_/*",
        "/robot/talker",
        "deny_cmd_vel",
        1,
    );
}

#[test]
fn every_event_is_read_back_with_its_values() {
    let _session_lock = write_support::exclusive();
    let dir = tempfile::tempdir().unwrap();
    let session = Session::start(dir.path()).unwrap();
    emit_every_event();
    let stats = session.stop().unwrap();

    let events = write_support::read_clean(dir.path());
    assert_eq!(events.len(), EVENT_CLASSES.len());
    assert_eq!(stats.events_written, EVENT_CLASSES.len() as u64);
    assert_eq!(stats.events_discarded, 0);
    let names: BTreeSet<&str> = events.iter().map(|e| e.name.as_str()).collect();
    let declared: BTreeSet<&str> = EVENT_CLASSES.iter().map(|c| c.name).collect();
    assert_eq!(names, declared, "one event of each class");
    for event in &events {
        let class = EVENT_CLASSES.iter().find(|c| c.name == event.name).unwrap();
        let fields: BTreeSet<&str> = event.fields.keys().map(String::as_str).collect();
        let expected: BTreeSet<&str> = class.fields.iter().map(|f| f.name).collect();
        assert_eq!(fields, expected, "{}", class.name);
        assert_eq!(event.vpid, i64::from(std::process::id()));
        assert!(!event.procname.is_empty());
    }

    let find = |name: &str| events.iter().find(|e| e.name == name).unwrap();
    let node = find("ros2:rcl_node_init");
    assert_eq!(node.field("node_name"), "\"talker\"");
    assert_eq!(node.field("namespace"), "\"/robot\"");
    let publisher = find("ros2:rcl_publisher_init");
    assert_eq!(publisher.u64("publisher_handle"), 0x20);
    assert_eq!(publisher.u64("queue_depth"), 7);
    assert_eq!(publisher.field("topic_name"), "\"/chatter\"");
    let take = find("ros2:rmw_take");
    assert_eq!(take.field("source_timestamp"), "1000");
    assert_eq!(take.field("taken"), "1");
    assert_eq!(take.u64("seq"), 3);
    assert_eq!(take.u64("publisher_handle"), 0x20);
    assert_eq!(find("ros2:rcl_timer_init").field("period"), "100000000");
    assert_eq!(
        find("ros2:rclcpp_callback_register").field("symbol"),
        "\"talker::on_chatter\""
    );
    assert_eq!(
        find("ros2:rclcpp_executor_wait_for_work").field("timeout"),
        "-1"
    );
    let fire = find("kairos:timer_fire");
    assert_eq!(fire.field("clock"), "( \"sim\" : container = 2 )");
    assert_eq!(fire.field("scheduled"), "5000");
    assert_eq!(fire.field("actual"), "5020");
    assert_eq!(find("kairos:clock_jump").field("after"), "-2000");
    let log = find("kairos:log");
    assert_eq!(
        (
            log.field("logger"),
            log.field("severity"),
            log.field("message")
        ),
        ("\"robot.talker\"", "30", "\"battery low\"")
    );
    assert_eq!(find("kairos:message_drop").u64("queue_depth"), 5);
    let play = find("kairos:bag_play");
    assert_eq!(
        (play.u64("seq"), play.field("log_time"), play.field("late")),
        (4, "1700000000000000000", "-1")
    );
    let write = find("kairos:bag_write");
    assert_eq!(
        (write.u64("subscription_handle"), write.u64("size")),
        (0x30, 24)
    );
    let split = find("kairos:bag_split");
    assert_eq!(
        (split.field("opened_file"), split.field("reason")),
        ("\"/bags/run/run_1.mcap\"", "\"max_bag_size\"")
    );
    let loss = find("kairos:message_loss");
    assert_eq!((loss.u64("first_seq"), loss.u64("count")), (4, 2));
    let qos = find("kairos:qos_event");
    assert_eq!(
        (
            qos.field("event"),
            qos.u64("total_count"),
            qos.field("change")
        ),
        ("\"liveliness_changed\"", 2, "-1")
    );

    let goal = find("kairos:goal");
    assert_eq!(
        (
            goal.field("goal_id"),
            goal.field("event"),
            goal.field("status")
        ),
        (
            "\"0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9\"",
            "\"succeeded\"",
            "4"
        )
    );
    assert_eq!(
        find("kairos:action_client_init").field("action_name"),
        "\"/fibonacci\""
    );

    let order: Vec<&str> = events.iter().map(|e| e.name.as_str()).collect();
    let position = |name: &str| order.iter().position(|n| *n == name).unwrap();
    assert!(position("ros2:rcl_init") < position("ros2:rcl_publish"));
    assert!(position("ros2:rcl_publish") < position("ros2:rmw_take"));
    assert!(position("ros2:callback_start") < position("ros2:callback_end"));
}

#[test]
fn timestamps_are_wall_clock_times() {
    let _session_lock = write_support::exclusive();
    let dir = tempfile::tempdir().unwrap();
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    let session = Session::start(dir.path()).unwrap();
    tp::sim_clock_update(1);
    session.stop().unwrap();
    let after = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    let events = write_support::read_clean(dir.path());
    let stamp = events[0].time_ns;
    // The offset is measured once at start; allow for a clock step of a few ms meanwhile.
    let slack = 50_000_000;
    assert!(
        before - slack <= stamp && stamp <= after + slack,
        "{before} <= {stamp} <= {after}"
    );
}

#[test]
fn nothing_is_recorded_without_a_session() {
    let _session_lock = write_support::exclusive();
    assert!(!tp::enabled());
    tp::callback_end(0x1); // must be a no-op, not queued for a later session
    let dir = tempfile::tempdir().unwrap();
    let session = Session::start(dir.path()).unwrap();
    assert!(tp::enabled());
    tp::callback_end(0x2);
    session.stop().unwrap();
    assert!(!tp::enabled());
    tp::callback_end(0x3);
    let events = write_support::read_clean(dir.path());
    let callbacks: Vec<u64> = events.iter().map(|e| e.u64("callback")).collect();
    assert_eq!(callbacks, [0x2]);
}

#[test]
fn an_event_larger_than_a_packet_page_is_written_with_its_string_cut_visibly() {
    let _session_lock = write_support::exclusive();
    let dir = tempfile::tempdir().unwrap();
    let session = Session::start(dir.path()).unwrap();
    let symbol: String = (0..10_000)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    tp::callback_end(0x1);
    tp::rclcpp_callback_register(0x2, &symbol);
    tp::callback_end(0x3);
    session.stop().unwrap();
    let events = write_support::read_clean(dir.path());
    let names: Vec<&str> = events.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "ros2:callback_end",
            "ros2:rclcpp_callback_register",
            "ros2:callback_end"
        ]
    );
    // No packet is larger than a page (so a kill cannot cut one): the symbol is cut to
    // fit, and says so.
    let written = events[1].field("symbol");
    let kept = written
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix("...[truncated]\""))
        .unwrap_or_else(|| panic!("the cut is marked: {written}"));
    assert!(symbol.starts_with(kept), "the symbol's start is kept");
    assert!(
        kept.len() > 3_500,
        "the symbol fills the page: {} bytes",
        kept.len()
    );
    assert_eq!(events[1].u64("callback"), 0x2);
}

#[test]
fn a_thread_traces_into_each_session_in_turn() {
    let _session_lock = write_support::exclusive();
    let first = tempfile::tempdir().unwrap();
    let second = tempfile::tempdir().unwrap();
    let session = Session::start(first.path()).unwrap();
    tp::callback_end(0x1);
    session.stop().unwrap();
    let session = Session::start(second.path()).unwrap();
    tp::callback_end(0x2);
    session.stop().unwrap();
    let callbacks = |dir: &std::path::Path| -> Vec<u64> {
        let events = write_support::read_clean(dir);
        events.iter().map(|e| e.u64("callback")).collect()
    };
    assert_eq!(callbacks(first.path()), [0x1]);
    assert_eq!(callbacks(second.path()), [0x2]);
}

#[test]
fn events_of_a_short_lived_thread_are_kept() {
    let _session_lock = write_support::exclusive();
    let dir = tempfile::tempdir().unwrap();
    let session = Session::start(dir.path()).unwrap();
    let vtid = std::thread::Builder::new()
        .name("executor-7".into())
        .spawn(|| {
            tp::callback_start(0x9, 0);
            rustix::thread::gettid().as_raw_pid()
        })
        .unwrap()
        .join()
        .unwrap();
    tp::callback_end(0x9);
    session.stop().unwrap();
    let events = write_support::read_clean(dir.path());
    assert_eq!(events.len(), 2);
    let start = events
        .iter()
        .find(|e| e.name == "ros2:callback_start")
        .unwrap();
    assert_eq!(start.vtid, i64::from(vtid));
    assert_eq!(start.procname, "executor-7", "the thread's name");
    let end = events
        .iter()
        .find(|e| e.name == "ros2:callback_end")
        .unwrap();
    assert_ne!(end.vtid, start.vtid, "one stream per thread");
}

#[test]
fn flush_makes_events_readable_while_tracing() {
    let _session_lock = write_support::exclusive();
    let dir = tempfile::tempdir().unwrap();
    let config = SessionConfig {
        flush_interval: std::time::Duration::from_secs(3600),
        ..SessionConfig::default()
    };
    let session = Session::start_with(dir.path(), config).unwrap();
    for seq in 0..10 {
        tp::rcl_publish(0x1, 0x100 + seq, seq);
    }
    session.flush().unwrap();
    assert_eq!(write_support::read_clean(dir.path()).len(), 10);
    tp::rcl_publish(0x1, 0x200, 10);
    session.flush().unwrap();
    let events = write_support::read_clean(dir.path());
    let seqs: Vec<u64> = events.iter().map(|e| e.u64("seq")).collect();
    assert_eq!(seqs, (0..11).collect::<Vec<_>>());
    session.stop().unwrap();
}

#[test]
fn a_second_session_or_a_used_directory_is_refused() {
    let _session_lock = write_support::exclusive();
    let dir = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    let session = Session::start(dir.path()).unwrap();
    match Session::start(other.path()) {
        Err(Error::AlreadyActive { dir: active }) => assert_eq!(active, dir.path()),
        other => panic!("expected AlreadyActive, got {other:?}"),
    }
    session.stop().unwrap();
    match Session::start(dir.path()) {
        Err(error @ Error::TraceExists { .. }) => {
            assert!(error.to_string().contains("new or empty directory"))
        }
        other => panic!("expected TraceExists, got {other:?}"),
    }
    let zero = SessionConfig {
        buffer_events: 0,
        ..SessionConfig::default()
    };
    assert!(matches!(
        Session::start_with(other.path(), zero),
        Err(Error::InvalidConfig(_))
    ));
    let huge = SessionConfig {
        buffer_events: kairos_trace::write::MAX_BUFFER_EVENTS + 1,
        ..SessionConfig::default()
    };
    assert!(matches!(
        Session::start_with(other.path(), huge),
        Err(Error::InvalidConfig(_))
    ));
    assert!(!tp::enabled(), "a refused start leaves tracing off");
}

#[test]
fn a_file_in_the_way_is_an_io_error() {
    let _session_lock = write_support::exclusive();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-a-dir");
    std::fs::write(&file, b"x").unwrap();
    match Session::start(&file) {
        Err(error @ Error::Io { .. }) => {
            assert!(error.to_string().contains("create the trace directory"))
        }
        other => panic!("expected Io, got {other:?}"),
    }
    assert!(!tp::enabled());
}

#[test]
fn from_env_starts_a_session_only_when_asked() {
    let _session_lock = write_support::exclusive();
    let dir = tempfile::tempdir().unwrap();
    let trace_dir = dir.path().join("from-env");
    // SAFETY: the lock above serializes this binary's tests, and none of them reads the
    // environment concurrently.
    unsafe { std::env::remove_var(kairos_trace::write::ENV_VAR) };
    assert!(Session::from_env().unwrap().is_none());
    // SAFETY: as above.
    unsafe { std::env::set_var(kairos_trace::write::ENV_VAR, &trace_dir) };
    let session = Session::from_env().unwrap().expect("KAIROS_TRACE is set");
    // SAFETY: as above.
    unsafe { std::env::remove_var(kairos_trace::write::ENV_VAR) };
    // Each process gets a subdirectory of its own: <dir>/<procname>-<pid>-<time>.
    assert_eq!(session.dir().parent(), Some(trace_dir.as_path()));
    let name = session
        .dir()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(
        name.contains(&format!("-{}-", std::process::id())),
        "{name} names the process"
    );
    tp::sim_clock_update(5);
    drop(session); // stops and writes, like `stop`
    let events = write_support::read_clean(&trace_dir);
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].field("time"), "5");
}
