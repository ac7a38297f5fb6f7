//! Messages of real ROS 2 traces recorded by others are followed from publisher to
//! callback, and each link says what it rests on. Ground truth comes from babeltrace2's
//! text output, parsed here without kairos's reader.
//!
//! Traces: tests/data/caret (CARET's LTTng samples, two tracepoint generations), and
//! ../shared/traces/ros2-sync-one-to-one (ros2_tracing 4.1 with Cyclone DDS's
//! `dds:write`). See tests/data/README.md for their sources.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use kairos_analyze::model::{Link, Model};
use kairos_analyze::{Builder, Options, analyze, chains, summary};
use kairos_trace::read::TraceSet;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn shared(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces")
        .join(name)
}

/// The CARET traces: (folder, generation with `ros2_hook` take/dispatch events).
const CARET: [&str; 9] = [
    "caret/end_to_end_cyclonedds",
    "caret/end_to_end_fastrtps",
    "caret/talker_listener",
    "caret/multi_talker_listener",
    "caret/cyclic_pipeline_intra_process",
    "caret-hook/end_to_end_sample",
    "caret-hook/talker_listener",
    "caret-hook/multi_talker_listener",
    "caret-hook/cyclic_pipeline_intra_process",
];

/// babeltrace2's text for `path`, one line per event.
fn babeltrace2(path: &Path) -> Vec<String> {
    let out = Command::new("babeltrace2")
        .arg(path)
        .output()
        .expect("babeltrace2 is needed for ground truth: apt-get install babeltrace2");
    assert!(out.status.success(), "babeltrace2 failed on {path:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// One event of babeltrace2's text: its name and a field's value as text.
struct Line<'a>(&'a str);

impl<'a> Line<'a> {
    fn name(&self) -> &'a str {
        self.0
            .split_whitespace()
            .nth(3)
            .unwrap_or("")
            .trim_end_matches(':')
    }

    fn field(&self, key: &str) -> Option<&'a str> {
        let pat = format!(" {key} = ");
        let at = self.0.find(&pat)? + pat.len();
        let rest = &self.0[at..];
        let end = rest.find([',', ' ']).unwrap_or(rest.len());
        Some(&rest[..end])
    }

    fn num(&self, key: &str) -> u64 {
        let v = self
            .field(key)
            .unwrap_or_else(|| panic!("{key} in {}", self.0));
        match v.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16).unwrap(),
            None => v.parse().unwrap(),
        }
    }
}

/// Per callback (pid, address): messages dispatched to it, and how many of those the
/// trace lets one link exactly (their stamp or address was published earlier).
fn ground_truth(path: &Path) -> HashMap<(u64, u64), (u64, u64)> {
    let lines = babeltrace2(path);
    let mut stamps = HashSet::new();
    let mut intra = HashSet::new();
    let mut taken_stamp: HashMap<(u64, u64), u64> = HashMap::new();
    let mut out: HashMap<(u64, u64), (u64, u64)> = HashMap::new();
    for text in &lines {
        let l = Line(text);
        let name = l.name();
        let short = name.split_once(':').map_or(name, |(_, s)| s);
        let pid = || l.num("vpid");
        let mut count = |cb: u64, linkable: bool| {
            let e = out.entry((pid(), cb)).or_default();
            e.0 += 1;
            e.1 += u64::from(linkable);
        };
        match short {
            "dds_bind_addr_to_stamp" => {
                stamps.insert(l.num("source_stamp"));
            }
            "rclcpp_intra_publish" => {
                intra.insert((pid(), l.num("message")));
            }
            "dispatch_subscription_callback" => {
                let linkable = stamps.contains(&l.num("source_stamp"));
                count(l.num("callback"), linkable);
            }
            "take_type_erased" => {
                taken_stamp.insert((pid(), l.num("vtid")), l.num("source_stamp"));
            }
            "dispatch" => {
                let stamp = taken_stamp.remove(&(pid(), l.num("vtid")));
                let linkable = stamp.is_some_and(|s| stamps.contains(&s));
                count(l.num("callback"), linkable);
            }
            "dispatch_intra_process_subscription_callback" | "dispatch_intra_process" => {
                let linkable = intra.contains(&(pid(), l.num("message")));
                count(l.num("callback"), linkable);
            }
            _ => {}
        }
    }
    out
}

/// Per callback (pid, address): deliveries it processed, and how many are linked exactly.
fn per_callback(m: &Model) -> HashMap<(u64, u64), (u64, u64)> {
    let mut out: HashMap<(u64, u64), (u64, u64)> = HashMap::new();
    for msg in &m.messages {
        for d in &msg.deliveries {
            let Some(cb) = d.callback else { continue };
            let c = &m.callbacks[cb];
            let e = out.entry((c.pid as u64, c.handle)).or_default();
            e.0 += 1;
            e.1 += u64::from(d.link.is_some_and(Link::is_exact));
        }
    }
    out
}

#[test]
fn every_message_a_caret_trace_links_is_linked_exactly_to_its_callback() {
    for name in CARET {
        let path = data(name);
        let truth = ground_truth(&path);
        let m = analyze(&path, Options::default()).unwrap();
        let got = per_callback(&m);
        let dispatched: u64 = truth.values().map(|v| v.0).sum();
        let linkable: u64 = truth.values().map(|v| v.1).sum();
        assert!(dispatched > 0, "{name}: no dispatch in the ground truth");
        assert_eq!(
            got, truth,
            "{name}: per callback (dispatched, linked exactly)"
        );
        let exact: u64 = m.subscriptions.iter().map(|s| s.takes.exact).sum();
        assert_eq!(exact, linkable, "{name}: exact links in the summary counts");
        // Every exact link joins a publication and a delivery of one topic.
        for msg in &m.messages {
            for d in &msg.deliveries {
                if let (Some(s), Some(true)) = (d.subscription, d.link.map(Link::is_exact)) {
                    assert_eq!(m.subscriptions[s].topic, msg.topic, "{name}");
                    assert!(
                        msg.publisher.is_some(),
                        "{name}: an exact link has a publisher"
                    );
                }
            }
        }
    }
}

#[test]
fn caret_end_to_end_chain_is_found_and_says_where_it_breaks() {
    for name in ["caret/end_to_end_cyclonedds", "caret/end_to_end_fastrtps"] {
        let m = analyze(data(name), Options::default()).unwrap();
        let ch = chains::chains(&m);
        let main =
            ch.0.iter()
                .find(|c| {
                    c.path
                        == [
                            "/sensor_dummy_node",
                            "/topic1",
                            "/filter_node",
                            "/topic2",
                            "/message_driven_node",
                        ]
                })
                .unwrap_or_else(|| panic!("{name}: the sensor chain in {ch}"));
        assert!(main.count > 30, "{name}: {}", main.count);
        // It stops at the node whose /topic3 comes from another subscription's
        // callback: the output says so and names the missing link event.
        assert!(
            main.breaks
                .iter()
                .any(|b| b.contains("/topic3") && b.contains("message_link_partial_sync")),
            "{name}: {:?}",
            main.breaks
        );
        let timer =
            ch.0.iter()
                .find(|c| c.path.last().is_some_and(|n| n == "/timer_driven_node"))
                .unwrap_or_else(|| panic!("{name}: a chain to the timer-driven node in {ch}"));
        assert!(
            timer.breaks.iter().any(|b| b.contains("/topic4")
                && b.contains("timer")
                && b.contains("message_link_periodic_async")),
            "{name}: {:?}",
            timer.breaks
        );
    }
}

#[test]
fn a_ring_of_intra_process_nodes_gives_one_chain_per_lap() {
    let m = analyze(
        data("caret/cyclic_pipeline_intra_process"),
        Options::default(),
    )
    .unwrap();
    let ch = chains::chains(&m);
    let lap =
        ch.0.iter()
            .find(|c| c.path.last().is_some_and(|p| p.contains("again: a cycle")))
            .unwrap_or_else(|| panic!("a lap in {ch}"));
    assert_eq!(
        lap.path[..5],
        ["/pipe1", "/topic2", "/pipe2", "/topic1", "/pipe1"]
    );
    // Each node waits 1 s before publishing on: a lap takes 2 s.
    assert!(
        (lap.total.mean_ns - 2e9).abs() < 0.05e9,
        "{}",
        lap.total.mean_ns
    );
    assert!(lap.count >= 3, "{}", lap.count);
}

#[test]
fn namespaced_nodes_and_their_rosout_stay_apart() {
    for name in [
        "caret/multi_talker_listener",
        "caret-hook/multi_talker_listener",
    ] {
        let path = data(name);
        let m = analyze(&path, Options::default()).unwrap();
        let s = summary::summary(&m);
        let names: HashSet<&str> = s.nodes.iter().map(|n| n.name.as_str()).collect();
        for n in [
            "/ns1/talker",
            "/ns2/talker",
            "/ns1/listener",
            "/ns2/listener",
        ] {
            assert!(names.contains(n), "{name}: {n} in {names:?}");
        }
        // Every /rosout line is published by a node, not by an unknown handle: rcl
        // copies each node's /rosout publisher to an address no init event names.
        let rosout_publishes = babeltrace2(&path)
            .iter()
            .filter(|l| {
                let l = Line(l);
                l.name() == "ros2:rcl_publish"
            })
            .count() as u64
            - m.publishers
                .iter()
                .filter(|p| &*p.topic != "/rosout")
                .map(|p| p.published)
                .sum::<u64>();
        let attributed: u64 = m
            .publishers
            .iter()
            .filter(|p| &*p.topic == "/rosout" && p.node.is_some())
            .map(|p| p.published)
            .sum();
        assert!(rosout_publishes > 0, "{name}");
        assert_eq!(attributed, rosout_publishes, "{name}: /rosout publishes");
        let rosout = s.topics.iter().find(|t| t.name == "/rosout").unwrap();
        assert!(
            rosout.publishers.iter().all(|p| p.starts_with("/ns")),
            "{name}: {:?}",
            rosout.publishers
        );
        assert!(m.undeclared.is_empty(), "{name}: {:?}", m.undeclared);
    }
}

/// Reads `path` with every event named in `skip` left out.
fn analyze_without(path: &Path, skip: &[&str]) -> Model {
    let set = TraceSet::open(path).unwrap();
    let mut events = set.events_with(Builder::selection()).unwrap();
    let mut b = Builder::new(Options::default());
    while let Some(item) = events.next_ref() {
        let ev = item.unwrap();
        if !skip.contains(&ev.name()) {
            b.event_ref(ev);
        }
    }
    b.finish(0, 0)
}

/// (subscription, take time) -> publish time of the message taken.
fn links(m: &Model, want: impl Fn(Link) -> bool) -> HashMap<(usize, i64), i64> {
    let mut out = HashMap::new();
    for msg in &m.messages {
        for d in &msg.deliveries {
            if let (Some(s), Some(t), Some(p), Some(l)) =
                (d.subscription, d.taken, msg.published, d.link)
                && want(l)
            {
                out.insert((s.0, t), p);
            }
        }
    }
    out
}

#[test]
fn without_publisher_stamps_links_are_inferred_marked_so_and_agree_with_the_exact_ones() {
    let path = shared("ros2-sync-one-to-one");
    let exact = links(&analyze(&path, Options::default()).unwrap(), |l| {
        l == Link::SourceTimestamp
    });
    // The same real trace as a publisher without `dds:write` records it (ros2_tracing
    // before 6 with Fast DDS): only the take's source timestamp is left.
    let m = analyze_without(&path, &["dds:write"]);
    let inferred = links(&m, |l| l == Link::NearestPublish);
    assert!(
        links(&m, |l| l == Link::SourceTimestamp).is_empty(),
        "nothing can be exact without publisher stamps"
    );
    let agree = inferred
        .iter()
        .filter(|(k, p)| exact.get(k) == Some(p))
        .count();
    eprintln!(
        "inferred {} of {} exact links; {agree} agree",
        inferred.len(),
        exact.len()
    );
    assert!(inferred.len() * 100 >= exact.len() * 99, "too few inferred");
    assert!(
        agree * 1000 >= inferred.len() * 999,
        "inferred links disagree"
    );
    let text = summary::summary(&m).to_string();
    assert!(text.contains("inferred: nearest publish"), "{text}");
}

#[test]
fn a_session_folder_of_symbolic_links_is_read_whole_and_once() {
    let dir = std::env::temp_dir().join(format!("kairos-links-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let a = data("caret/talker_listener");
    let b = data("caret/multi_talker_listener");
    std::os::unix::fs::symlink(&a, dir.join("a")).unwrap();
    std::os::unix::fs::symlink(&b, dir.join("b")).unwrap();
    // The same trace twice, and a loop back to the session folder.
    std::os::unix::fs::symlink(&a, dir.join("a-again")).unwrap();
    std::os::unix::fs::symlink(&dir, dir.join("loop")).unwrap();
    let whole = analyze(&dir, Options::default()).unwrap();
    let separate: u64 = [&a, &b]
        .iter()
        .map(|p| analyze(p, Options::default()).unwrap().events)
        .sum();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(whole.events, separate);
    assert_eq!(whole.nodes.len(), 6);
}

#[test]
fn flow_index_n_follows_and_prints_the_nth_message() {
    let m = analyze(data("caret/end_to_end_cyclonedds"), Options::default()).unwrap();
    let nth = m
        .messages
        .iter()
        .filter(|msg| &*msg.topic == "/topic1" && msg.published.is_some())
        .nth(5)
        .unwrap();
    let found =
        kairos_analyze::flow::flow(&m, "/topic1", kairos_analyze::flow::Pick::Index(5)).unwrap();
    assert_eq!(found.index, Some(5));
    assert_eq!(found.published_ns, nth.published);
    assert!(
        found.to_string().starts_with("/topic1 message 5 "),
        "{found}"
    );
    // It reaches the filter node, and the /topic2 message the filter published.
    let d = &found.deliveries[0];
    assert!(d.link.is_some_and(Link::is_exact));
    assert_eq!(d.children[0].topic, "/topic2");
}

#[test]
fn takes_by_the_middleware_s_own_subscriptions_are_counted_not_dropped() {
    let path = shared("ros2-sync-one-to-one");
    let lines = babeltrace2(&path);
    let declared = |event: &str| -> HashSet<(u64, u64)> {
        lines
            .iter()
            .map(|t| Line(t))
            .filter(|l| l.name() == event)
            .map(|l| (l.num("vpid"), l.num("rmw_subscription_handle")))
            .collect()
    };
    let (rmw, rcl) = (
        declared("ros2:rmw_subscription_init"),
        declared("ros2:rcl_subscription_init"),
    );
    let expected = lines
        .iter()
        .map(|t| Line(t))
        .filter(|l| l.name() == "ros2:rmw_take" && l.num("taken") == 1)
        .map(|l| (l.num("vpid"), l.num("rmw_subscription_handle")))
        .filter(|h| rmw.contains(h) && !rcl.contains(h))
        .count() as u64;
    let m = analyze(&path, Options::default()).unwrap();
    assert!(expected > 0);
    assert_eq!(m.middleware_takes, expected);
    assert!(m.undeclared.is_empty(), "{:?}", m.undeclared);
    let text = summary::summary(&m).to_string();
    assert!(text.contains(&format!("graph discovery), no ROS message: {expected}")));
}

#[test]
fn callback_runs_of_caret_traces_are_exact() {
    for name in CARET {
        let path = data(name);
        // Per callback: (runs, total duration), pairing each end with the open start
        // of the same callback on the same thread.
        let mut truth: HashMap<(u64, u64), (usize, i64)> = HashMap::new();
        let mut open: HashMap<(u64, u64, u64), i64> = HashMap::new();
        let set = TraceSet::open(&path).unwrap();
        for ev in set.events().unwrap().map(Result::unwrap) {
            let ctx = |f: &str| ev.context_field(f).and_then(|v| v.as_u64()).unwrap();
            let (pid, tid) = (ctx("vpid"), ctx("vtid"));
            match ev.name() {
                "ros2:callback_start" => {
                    open.insert((pid, tid, ev.u64("callback").unwrap()), ev.timestamp);
                }
                "ros2:callback_end" => {
                    let cb = ev.u64("callback").unwrap();
                    if let Some(start) = open.remove(&(pid, tid, cb)) {
                        let e = truth.entry((pid, cb)).or_default();
                        e.0 += 1;
                        e.1 += ev.timestamp - start;
                    }
                }
                _ => {}
            }
        }
        let m = analyze(&path, Options::default()).unwrap();
        let got: HashMap<(u64, u64), (usize, i64)> = m
            .callbacks
            .iter()
            .filter(|c| !c.runs.is_empty())
            .map(|c| {
                let total = c.runs.iter().map(|r| r.1).sum();
                ((c.pid as u64, c.handle), (c.runs.len(), total))
            })
            .collect();
        assert_eq!(got, truth, "{name}");
    }
}

#[test]
fn packets_the_tracer_discarded_are_reported() {
    // babeltrace2's own test traces with gaps in packet_seq_num (its warnings count
    // 2, 2 and 7 packets there; see kairos-trace's corpus test).
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../kairos-trace/tests/data/babeltrace-ctf-traces/packet-seq-num");
    for (name, lost) in [
        ("no-lost", 0),
        ("2-lost-before-last", 2),
        ("7-lost-between-2-with-index", 7),
    ] {
        let m = analyze(corpus.join(name), Options::default()).unwrap();
        assert_eq!(m.discarded_packets, lost, "{name}");
        let text = summary::summary(&m).to_string();
        assert_eq!(
            text.contains(&format!("{lost} whole packets")),
            lost > 0,
            "{name}: {text}"
        );
    }
}

#[test]
fn publishes_on_handles_no_init_event_declared_are_counted() {
    // The real trace as a tracing session started after the publishers were made
    // records it: no rcl_publisher_init.
    let path = shared("ros2-sync-one-to-one");
    let lines = babeltrace2(&path);
    let publishes: Vec<(u64, u64)> = lines
        .iter()
        .map(|t| Line(t))
        .filter(|l| l.name() == "ros2:rcl_publish")
        .map(|l| (l.num("vpid"), l.num("publisher_handle")))
        .collect();
    let handles: HashSet<&(u64, u64)> = publishes.iter().collect();
    let m = analyze_without(&path, &["ros2:rcl_publisher_init"]);
    assert_eq!(
        m.undeclared.get("rcl_publish"),
        Some(&(publishes.len() as u64, handles.len() as u64))
    );
    let text = summary::summary(&m).to_string();
    assert!(
        text.contains(&format!(
            "rcl_publish: {} events on {} handles no init event declared",
            publishes.len(),
            handles.len()
        )),
        "{text}"
    );
}
