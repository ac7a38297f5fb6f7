//! How the reports name threads, processes, nodes and topics: the HTML timeline's rows by
//! the nodes that ran on them and their process (thread id as a detail), the runtime's own
//! nodes and topics marked and last, the Perfetto tracks under the same names, time axes
//! in ms and s; on a trace the kairos writer records and on a real ROS 2 trace.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use kairos_analyze::{Model, Options, analyze, html, logs, perfetto, summary};
use kairos_trace::{Session, tp};
use serde_json::Value;

/// A talker (timer) and a listener (subscription) on threads of their own, and the
/// transport's `_kairos_zenoh_clock` node with a timer on a third, which also publishes
/// the runtime's `/rosout`, and `/clock`, which no user node uses. Returns (talker's, listener's, clock's) thread ids.
fn record(dir: &Path) -> [i64; 3] {
    let session = Session::start(dir).unwrap();
    tp::rcl_node_init(0x10, 0x11, "talker", "/");
    tp::rcl_node_init(0x12, 0x13, "listener", "/");
    tp::rcl_node_init(0x14, 0x15, "_kairos_zenoh_clock", "/");
    tp::rcl_publisher_init(0x20, 0x10, 0x21, "/chatter", 10);
    tp::rcl_publisher_init(0x22, 0x14, 0x23, "/rosout", 10);
    tp::rcl_publisher_init(0x24, 0x14, 0x25, "/clock", 10);
    tp::rcl_subscription_init(0x30, 0x12, 0x31, "/chatter", 10);
    tp::rclcpp_subscription_init(0x30, 0x32);
    tp::rclcpp_subscription_callback_added(0x32, 0x33);
    for (timer, callback, node) in [(0x60, 0x61, 0x10), (0x62, 0x63, 0x14)] {
        tp::rcl_timer_init(timer, 1_000_000);
        tp::rclcpp_timer_callback_added(timer, callback);
        tp::rclcpp_timer_link_node(timer, node);
    }
    // The calling thread's id, as the kernel gives it (`/proc/thread-self` is
    // `PID/task/TID`).
    let tid = || -> i64 {
        let link = std::fs::read_link("/proc/thread-self").unwrap();
        link.file_name().unwrap().to_str().unwrap().parse().unwrap()
    };
    let thread = |name: &str, body: Box<dyn FnOnce() + Send>| {
        std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                body();
                tid()
            })
            .unwrap()
    };
    let (tx, rx) = std::sync::mpsc::channel::<u64>();
    let listener = thread(
        "exec-listener",
        Box::new(move || {
            for seq in rx {
                tp::rmw_take(0x31, 0xBB, 0, 1, 0x20, seq);
                tp::callback_start(0x33, 0);
                tp::callback_end(0x33);
            }
        }),
    );
    let talker = thread(
        "exec-talker",
        Box::new(move || {
            for seq in 0..20 {
                tp::callback_start(0x61, 0);
                tp::rcl_publish(0x20, 0xAA, seq);
                tp::rmw_publish(0xAA, 0x20, seq);
                tp::callback_end(0x61);
                tx.send(seq).unwrap();
            }
            tp::log(0, "talker", 30, "done");
        }),
    );
    let clock = thread(
        "exec-clock",
        Box::new(|| {
            for seq in 0..5 {
                tp::callback_start(0x63, 0);
                tp::rcl_publish(0x22, 0xCC, seq);
                tp::callback_end(0x63);
            }
        }),
    );
    let tids = [
        talker.join().unwrap(),
        listener.join().unwrap(),
        clock.join().unwrap(),
    ];
    session.stop().unwrap();
    tids
}

/// The recorded trace's model and its threads (one session per process: the tests
/// share it).
fn recorded() -> &'static (Model, [i64; 3]) {
    static MODEL: OnceLock<(Model, [i64; 3])> = OnceLock::new();
    MODEL.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("kairos-labels-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let tids = record(&dir);
        let m = analyze(&dir, Options::default()).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        (m, tids)
    })
}

fn real_trace(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces")
        .join(name)
}

/// One timeline row as the page labels it.
#[derive(Debug, PartialEq)]
struct Lane {
    internal: bool,
    title: String,
    detail: String,
}

/// The text of the first `<text ...>...</text>` in `s`, and what follows it.
fn text(s: &str) -> (&str, &str) {
    let start = s.find("<text").expect("a text element");
    let open = start + s[start..].find('>').unwrap() + 1;
    let close = open + s[open..].find("</text>").unwrap();
    (&s[open..close], &s[close..])
}

/// The timeline's rows, top to bottom.
fn lanes(page: &str) -> Vec<Lane> {
    let start = page.find("<section id=\"timeline\">").unwrap();
    let timeline = &page[start..start + page[start..].find("</section>").unwrap()];
    timeline
        .split("<g class=\"lane")
        .skip(1)
        .map(|lane| {
            let (title, rest) = text(lane);
            let (detail, _) = text(rest);
            Lane {
                internal: lane.starts_with(" internal\""),
                title: title.to_string(),
                detail: detail.to_string(),
            }
        })
        .collect()
}

/// The `name` metadata of Perfetto's track for (pid, tid) (`thread_name`) or for a
/// process (`process_name`, tid ignored).
fn track<'a>(export: &'a Value, kind: &str, pid: i64, tid: Option<i64>) -> Option<&'a Value> {
    export["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| {
            e["ph"] == "M"
                && e["name"] == kind
                && e["pid"] == pid
                && tid.is_none_or(|tid| e["tid"] == tid)
        })
        .map(|e| &e["args"])
}

#[test]
fn timeline_rows_are_named_by_node_and_process_with_the_runtime_last() {
    let (m, [talker, listener, clock]) = recorded();
    let pid = m.processes[0].pid;
    let process = &m.processes[0].name;
    let page = html::report(m, "labels");
    assert_eq!(
        lanes(&page),
        [
            Lane {
                internal: false,
                title: "/listener".into(),
                detail: format!("{process} pid {pid} · exec-listener tid {listener}"),
            },
            Lane {
                internal: false,
                title: "/talker".into(),
                detail: format!("{process} pid {pid} · exec-talker tid {talker}"),
            },
            Lane {
                internal: true,
                title: "runtime: /_kairos_zenoh_clock".into(),
                detail: format!("{process} pid {pid} · exec-clock tid {clock}"),
            },
        ]
    );
    // The slowest runs' table says which thread too, the same way.
    assert!(
        page.contains(&format!(
            "<td>{process} pid {pid} · exec-talker tid {talker}</td>"
        )),
        "{page}"
    );
}

#[test]
fn the_runtimes_nodes_and_topics_are_marked_and_listed_after_the_users() {
    let (m, _) = recorded();
    let page = html::report(m, "labels");
    let chatter = page.find("<td>/chatter</td>").expect("the user's topic");
    let rosout = page
        .find("<tr class=internal><td>/rosout <i>(runtime)</i></td>")
        .expect("/rosout marked as the runtime's");
    assert!(chatter < rosout, "the user's topics come first");
    assert!(
        page.contains("<tr class=internal><td>/clock <i>(runtime)</i></td>"),
        "a topic only the runtime's nodes use is the runtime's"
    );
    assert!(
        page.contains("<td class=internal>/_kairos_zenoh_clock</td>"),
        "the internal node in its own column"
    );
    let s = summary::summary(m);
    let internal: Vec<(&str, bool)> = s
        .nodes
        .iter()
        .map(|n| (n.name.as_str(), n.internal))
        .collect();
    assert_eq!(
        internal,
        [
            ("/talker", false),
            ("/listener", false),
            ("/_kairos_zenoh_clock", true)
        ]
    );
    let text = s.to_string();
    assert!(
        text.contains("/_kairos_zenoh_clock  (pid") && text.contains(")  [runtime]"),
        "{text}"
    );
}

#[test]
fn perfetto_tracks_carry_the_same_names() {
    let (m, [talker, listener, clock]) = recorded();
    let pid = m.processes[0].pid;
    let process = &m.processes[0].name;
    let export = perfetto::export(m);
    assert_eq!(
        track(&export, "process_name", pid, None).unwrap()["name"],
        format!("{process}: /listener, /talker")
    );
    for (tid, name, sort) in [
        (talker, "/talker · exec-talker", 0),
        (listener, "/listener · exec-listener", 0),
        (clock, "runtime: /_kairos_zenoh_clock · exec-clock", 1),
    ] {
        assert_eq!(
            track(&export, "thread_name", pid, Some(*tid)).unwrap()["name"],
            name
        );
        assert_eq!(
            track(&export, "thread_sort_index", pid, Some(*tid)).unwrap()["sort_index"],
            sort
        );
    }
}

#[test]
fn log_lines_name_their_thread_by_node() {
    let (m, [talker, ..]) = recorded();
    let pid = m.processes[0].pid;
    let report = logs::report(m, 10);
    let line = &report.lines[0];
    assert_eq!(
        line.thread,
        format!(
            "/talker ({} pid {pid} · exec-talker tid {talker})",
            m.processes[0].name
        )
    );
    assert!(
        report
            .to_string()
            .contains(&format!("(outside callbacks; on {})", line.thread))
    );
}

#[test]
fn a_real_ros2_traces_rows_are_named_by_its_nodes() {
    let m = analyze(real_trace("ros2-sync-one-to-one"), Options::default()).unwrap();
    let page = html::report(&m, "ros2");
    let rows: Vec<(String, String)> = lanes(&page)
        .into_iter()
        .map(|l| {
            assert!(!l.internal);
            (l.title, l.detail)
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("/source", "source pid 427930 · tid 427930"),
            (
                "/sync_one_to_one",
                "sync_one_to_one pid 427932 · tid 427932"
            ),
            ("/sink", "sink pid 427934 · tid 427934"),
        ]
        .map(|(t, d)| (t.to_string(), d.to_string()))
    );
    // rcl's own topics are marked, after the pipeline's.
    let topic_a = page.find("<td>/topic_a</td>").unwrap();
    for runtime in ["/parameter_events", "/rosout"] {
        let at = page
            .find(&format!(
                "<tr class=internal><td>{runtime} <i>(runtime)</i></td>"
            ))
            .unwrap_or_else(|| panic!("{runtime} is not marked"));
        assert!(topic_a < at);
    }
    // Ten seconds read in seconds, not in nanoseconds or with trailing zeros.
    for tick in [">0</text>", ">2 s</text>", ">10 s</text>"] {
        assert!(page.contains(tick), "no {tick} on the time axes");
    }
    let export = perfetto::export(&m);
    assert_eq!(
        track(&export, "process_name", 427932, None).unwrap()["name"],
        "sync_one_to_one: /sync_one_to_one"
    );
    assert_eq!(
        track(&export, "thread_name", 427932, Some(427932)).unwrap()["name"],
        "/sync_one_to_one"
    );
}
