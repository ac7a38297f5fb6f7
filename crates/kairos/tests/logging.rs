//! Logging as a ROS 2 node logs: `log::info!` in a callback is a line of the callback's
//! node, on `/rosout` as `rcl_interfaces/msg/Log`, on the console in rcutils' format, and
//! in the trace beside the callback that wrote it; levels come from `--log-level`.

use kairos::exec::Executor;
use kairos::graph::{Context, LogMsg, Node, Qos, ROSOUT_TOPIC, RosArgs};
use kairos::logging::Severity;
use kairos::time::Duration;
use std::sync::{Arc, Mutex};

/// The lines `/rosout` carried, in order.
fn rosout(listener: &Node) -> (Arc<Mutex<Vec<LogMsg>>>, kairos::graph::Subscription<LogMsg>) {
    let got = Arc::new(Mutex::new(Vec::new()));
    let sink = got.clone();
    let subscription = listener
        .create_subscription(ROSOUT_TOPIC, Qos::keep_last(100), move |m: &LogMsg| {
            sink.lock().unwrap().push(m.clone())
        })
        .unwrap();
    (got, subscription)
}

#[test]
fn log_lines_of_a_callback_reach_rosout_with_the_node_name_and_the_trace() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace");
    let session = kairos::trace::Session::start(&trace).unwrap();

    let context = Context::new();
    let talker = Node::new_in(&context, "talker", "/robot").unwrap();
    let listener = Node::new_in(&context, "console", "/").unwrap();
    let (got, _subscription) = rosout(&listener);
    let timer = talker
        .create_timer(Duration::from_millis(1), |_| {
            log::info!("publishing scan {}", 7);
            log::debug!("below the default level: not logged");
        })
        .unwrap();
    let executor = Executor::single_threaded();
    executor.add_node(&talker).unwrap();
    executor.add_node(&listener).unwrap();
    assert!(executor.spin_once(Duration::from_secs(30)).unwrap());
    drop(timer);
    talker.logger().warn("battery low");
    talker.logger().child("planner").error("no path");
    while executor.spin_some().unwrap() > 0 {}
    session.stop().unwrap();

    let lines = got.lock().unwrap().clone();
    let summary: Vec<(u8, &str, &str)> = lines
        .iter()
        .map(|l| (l.level, l.name.as_str(), l.msg.as_str()))
        .collect();
    assert_eq!(
        summary,
        [
            (20, "robot.talker", "publishing scan 7"),
            (30, "robot.talker", "battery low"),
            (40, "robot.talker.planner", "no path"),
        ]
    );
    assert!(
        lines[1].file.ends_with("logging.rs") && lines[1].line > 0,
        "{:?}",
        lines[1]
    );
    assert!(
        lines[0].stamp.sec > 1_600_000_000,
        "stamped with system time"
    );

    let text = kairos_testkit::babeltrace2_clean(&[], &trace);
    // Other tests of this binary log into the same session: only this node's lines.
    let logged: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(" kairos:log: ") && l.contains("logger = \"robot.talker"))
        .collect();
    assert_eq!(logged.len(), 3, "{text}");
    assert!(logged[0].contains("severity = 20") && logged[0].contains("publishing scan 7"));
    // The first line was written by the timer's callback, the others outside any.
    let timer_handle = text
        .lines()
        .find(|l| {
            l.contains(" ros2:rclcpp_callback_register: ")
                && l.contains("timer")
                && l.contains("/robot/talker")
        })
        .and_then(|l| l.split("callback = ").nth(1))
        .map(|rest| rest.split([',', ' ']).next().unwrap().to_owned())
        .unwrap_or_else(|| panic!("the timer's callback_register in {text}"));
    assert!(
        logged[0].contains(&format!("callback = {timer_handle},")),
        "{}",
        logged[0]
    );
    assert!(logged[1].contains("callback = 0x0,"), "{}", logged[1]);
}

#[test]
fn log_levels_come_from_the_ros_arguments() {
    let (args, _) = RosArgs::parse([
        "prog",
        "--ros-args",
        "--log-level",
        "quiet.node:=error",
        "--log-level",
        "chatty.node:=debug",
    ])
    .unwrap();
    let context = Context::with_ros_args(args);
    let quiet = Node::new_in(&context, "node", "/quiet").unwrap();
    let chatty = Node::new_in(&context, "node", "/chatty").unwrap();
    assert_eq!(quiet.logger().level(), Severity::Error);
    assert_eq!(chatty.logger().level(), Severity::Debug);
    let (got, _subscription) = rosout(&quiet);
    let executor = Executor::single_threaded();
    executor.add_node(&quiet).unwrap();
    quiet.logger().warn("dropped: below error");
    chatty.logger().debug("kept: chatty logs debug");
    let site = |logger: &kairos::logging::Logger| {
        for _ in 0..3 {
            kairos::log_once!(logger, Severity::Error, "once");
            kairos::log_skip_first!(logger, Severity::Error, "skip first");
        }
    };
    site(quiet.logger());
    while executor.spin_some().unwrap() > 0 {}
    let msgs: Vec<String> = got.lock().unwrap().iter().map(|l| l.msg.clone()).collect();
    assert_eq!(
        msgs,
        [
            "kept: chatty logs debug",
            "once",
            "skip first",
            "skip first"
        ]
    );
}

const CONSOLE_CHILD: &str = "KAIROS_TEST_LOG_CONSOLE_CHILD";

#[test]
fn the_console_line_is_rcutils_and_its_format_variable_is_honoured() {
    if std::env::var_os(CONSOLE_CHILD).is_some() {
        let node = Node::new_in(&Context::new(), "talker", "/robot").unwrap();
        node.logger().info("hello");
        return;
    }
    let run = |format: Option<&str>| {
        let mut command = kairos_testkit::rerun_self(
            "the_console_line_is_rcutils_and_its_format_variable_is_honoured",
        );
        command.env(CONSOLE_CHILD, "1");
        match format {
            Some(f) => command.env("RCUTILS_CONSOLE_OUTPUT_FORMAT", f),
            None => command.env_remove("RCUTILS_CONSOLE_OUTPUT_FORMAT"),
        };
        let out = command.output().unwrap();
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let default = run(None);
    let line = default
        .lines()
        .find(|l| l.starts_with("[INFO]"))
        .unwrap_or_else(|| panic!("{default}"));
    let (stamp, rest) = line["[INFO] [".len()..].split_once("] ").unwrap();
    let (secs, nanos) = stamp.split_once('.').unwrap();
    assert!(secs.parse::<u64>().is_ok() && nanos.len() == 9, "{line}");
    assert_eq!(rest, "[robot.talker]: hello");
    let custom = run(Some("{severity}:{name}:{line_number}:{message}"));
    assert!(
        custom
            .lines()
            .any(|l| l.starts_with("INFO:robot.talker:") && l.ends_with(":hello")),
        "{custom}"
    );
}
