//! `kairos bag play --lockstep` (loopback only): a bag replayed twice through nodes in
//! other processes, beside two CPU hogs, gives the same outputs both times: every topic's
//! messages with the same content, in the same order, recorded at the same simulated
//! times. The nodes (`examples/lockstep_stage.rs`) put the simulated time of each callback
//! and what the node had seen by then into every message they send, and cost real,
//! message-dependent work; a replay that moved time before that work settled gives other
//! texts or stamps.
//!
//! Within each replay the test also checks what lock step means: each node heard a bag
//! message at that message's time, and the recorder (another process, on simulation
//! time) received each output at the time its sender stamped it.
//!
//! One test runs a fixed pipeline over three processes of nodes plus the recorder and
//! the player; the other a random topology (`KAIROS_SEED` replays one; the seed is printed).

mod zenoh_support;

use kairos_bag::{Bag, BagWriter, ReadFilter, TopicInfo, WriterOptions};
use kairos_testkit::random::Rng;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;
use zenoh_support::{Lines, Router, Running, spawn};

const LIMIT: Duration = Duration::from_secs(90);
const STAGE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../target/release/examples/lockstep_stage"
);

/// A std_msgs/msg/String in little-endian CDR.
fn string_cdr(text: &str) -> Vec<u8> {
    let mut cdr = vec![0, 1, 0, 0];
    cdr.extend_from_slice(&(text.len() as u32 + 1).to_le_bytes());
    cdr.extend_from_slice(text.as_bytes());
    cdr.push(0);
    cdr
}

fn string_data(cdr: &[u8]) -> String {
    let len = u32::from_le_bytes(cdr[4..8].try_into().unwrap()) as usize;
    String::from_utf8(cdr[8..8 + len - 1].to_vec()).expect("utf-8")
}

/// `n` strings on /input, a random 0 to 12 ms apart (0: two messages at one time), from
/// simulated second 100.
fn input_bag(dir: &Path, n: u64, rng: &mut Rng) -> (PathBuf, Vec<(u64, String)>) {
    let path = dir.join("input");
    let mut writer = BagWriter::create(&path, WriterOptions::default()).expect("create");
    writer
        .add_topic(TopicInfo::new("/input", "std_msgs/msg/String"))
        .expect("topic");
    let mut t = 100_000_000_000u64;
    let mut sent = Vec::new();
    for i in 0..n {
        t += rng.u64(..13) * 1_000_000;
        let text = format!("m{i}");
        writer
            .write("/input", t, t, i as u32, &string_cdr(&text))
            .expect("write");
        sent.push((t, text));
    }
    writer.finish().expect("finish");
    (path, sent)
}

/// Two processes spinning busy loops until dropped: a loaded 2-core machine.
fn cpu_hogs() -> Vec<Running> {
    (0..2)
        .map(|_| {
            spawn(
                Command::new("sh")
                    .args(["-c", "while :; do :; done"])
                    .stdin(Stdio::null()),
            )
        })
        .collect()
}

/// Each output topic's messages as recorded: (log time, text), in the bag's order.
type Outputs = BTreeMap<String, Vec<(u64, String)>>;

/// One replay: the processes of nodes (`processes`: each a list of node specs), a
/// recorder of `outputs` on simulation time, then `kairos bag play --lockstep`.
fn replay(
    router: &Router,
    bag: &Path,
    processes: &[Vec<String>],
    outputs: &[String],
    out: &Path,
) -> Outputs {
    assert!(
        Path::new(STAGE).exists(),
        "{STAGE} is missing: build the examples (cargo build --release --examples)"
    );
    let mut stages = Vec::new();
    for nodes in processes {
        let mut stage = spawn(
            Command::new(STAGE)
                .args(nodes)
                .env("ZENOH_CONFIG_OVERRIDE", router.override_env())
                .env("KAIROS_TRANSPORT", "zenoh")
                .env_remove("ROS_DOMAIN_ID")
                .env_remove("KAIROS_TRACE")
                .stdout(Stdio::piped()),
        );
        let mut lines = Lines::of(stage.0.stdout.take().expect("stdout"));
        let errors = Lines::of(stage.0.stderr.take().expect("stderr"));
        lines.wait_for("ready", LIMIT);
        stages.push((stage, lines, errors));
    }
    let mut recorder = spawn(
        router
            .kairos()
            .args([
                "bag",
                "record",
                "--use-sim-time",
                "-o",
                out.to_str().unwrap(),
            ])
            .args(outputs)
            .stderr(Stdio::piped()),
    );
    let mut said = Lines::of(recorder.0.stderr.take().expect("stderr"));
    let mut waiting: Vec<String> = outputs
        .iter()
        .map(|t| format!("subscribed to {t}"))
        .collect();
    while !waiting.is_empty() {
        let line = said
            .next_within(LIMIT)
            .unwrap_or_else(|| panic!("the recorder did not say {waiting:?}: {:?}", said.seen));
        waiting.retain(|w| !line.ends_with(w.as_str()));
    }
    let play = router
        .kairos()
        .args(["bag", "play", bag.to_str().unwrap(), "--lockstep", "30"])
        .args(["--wait-for-subscribers", "60"])
        .output()
        .expect("kairos bag play");
    let report = String::from_utf8_lossy(&play.stdout).into_owned();
    assert!(
        play.status.success(),
        "kairos bag play --lockstep failed ({}):\n{report}\n{}",
        play.status,
        String::from_utf8_lossy(&play.stderr)
    );
    assert!(report.contains("0 ran out"), "{report}");
    let status = Command::new("kill")
        .args(["-INT", &recorder.0.id().to_string()])
        .status()
        .expect("kill(1)");
    assert!(status.success());
    // Waited for (killed only past the bound): the bag is whole once it exits.
    let stopped = zenoh_support::finish(recorder, LIMIT);
    assert!(
        stopped.status.code().is_some(),
        "the recorder did not stop on SIGINT within {LIMIT:?}"
    );
    drop(stages);
    let bag = Bag::open(out).expect("the recorded bag");
    let mut recorded = Outputs::new();
    for message in bag.read(&ReadFilter::all()).expect("read") {
        let message = message.expect("a message");
        recorded
            .entry(message.topic.to_string())
            .or_default()
            .push((message.log_time, string_data(&message.data)));
    }
    recorded
}

/// What lock step promises within one replay: a node heard each bag message at its time,
/// and the recorder got each output at the time its sender stamped it.
fn assert_in_lock_step(recorded: &Outputs, input: &[(u64, String)]) {
    let stamps: BTreeMap<&str, u64> = input.iter().map(|(t, m)| (m.as_str(), *t)).collect();
    for (topic, messages) in recorded {
        for (log_time, text) in messages {
            // The sender's own time is the last " at " (a text it heard has one inside).
            let at: u64 = text
                .rsplit(" at ")
                .next()
                .and_then(|rest| rest.split(' ').next())
                .and_then(|t| t.parse().ok())
                .unwrap_or_else(|| panic!("{topic}: no time in {text:?}"));
            assert_eq!(
                *log_time, at,
                "{topic}: {text:?} was recorded at {log_time}, not at the time it was sent"
            );
            let heard = text
                .split_once(" heard ")
                .and_then(|(_, r)| r.split(' ').next());
            if let Some(&stamp) = heard.and_then(|m| stamps.get(m)) {
                assert_eq!(
                    at, stamp,
                    "{topic}: {text:?}: heard at another time than its own"
                );
            }
        }
    }
}

fn assert_same(first: &Outputs, second: &Outputs, what: &str) {
    for (topic, messages) in first {
        let again = second.get(topic).map_or(&[][..], Vec::as_slice);
        if let Some(i) =
            (0..messages.len().max(again.len())).find(|&i| messages.get(i) != again.get(i))
        {
            panic!(
                "{what}: {topic} differs at message {i}: {:?} then {:?} ({} and {} messages)",
                messages.get(i),
                again.get(i),
                messages.len(),
                again.len()
            );
        }
    }
    assert_eq!(
        first.keys().collect::<Vec<_>>(),
        second.keys().collect::<Vec<_>>(),
        "{what}: other topics"
    );
}

fn run_twice(rng: &mut Rng, processes: &[Vec<String>], outputs: &[String], n: u64) {
    let dir = tempfile::tempdir().expect("tempdir");
    let (bag, input) = input_bag(dir.path(), n, rng);
    let _hogs = cpu_hogs();
    let router = Router::start(zenoh_support::KAIROS);
    let first = replay(&router, &bag, processes, outputs, &dir.path().join("out1"));
    let second = replay(&router, &bag, processes, outputs, &dir.path().join("out2"));
    for recorded in [&first, &second] {
        assert_in_lock_step(recorded, &input);
    }
    let total: usize = first.values().map(Vec::len).sum();
    assert!(
        total as u64 >= n,
        "{total} outputs for {n} inputs: {first:?}"
    );
    assert_same(&first, &second, "the two replays");
}

#[test]
fn a_lockstep_replay_through_three_processes_gives_the_same_outputs_twice_beside_cpu_hogs() {
    let processes = [
        vec!["stage:/input:/mid:5:800".to_owned()],
        vec!["fuse:/mid:/out:7:300".to_owned()],
        vec![
            "audit:/input:/audit:3".to_owned(),
            "watch:/out:/watch:0:500".to_owned(),
        ],
    ];
    let outputs = ["/mid", "/out", "/audit", "/watch"].map(String::from);
    run_twice(&mut Rng::with_seed(54), &processes, &outputs, 60);
}

#[test]
fn a_lockstep_replay_of_a_random_topology_gives_the_same_outputs_twice() {
    let mut rng = kairos_testkit::random::seeded();
    let nodes = 2 + rng.u64(..4);
    let processes_n = 2 + rng.u64(..2);
    let mut processes = vec![Vec::new(); processes_n as usize];
    let mut outputs = Vec::new();
    for i in 0..nodes {
        // Each node hears the bag or an earlier node: a forest, so no node hears two
        // concurrent paths in one step (the system's own race, which lock step does not
        // order).
        let input = match rng.u64(..i + 1) {
            0 => "/input".to_owned(),
            j => format!("/n{}", j - 1),
        };
        let timer = [0, 3, 7, 10][rng.u64(..4) as usize];
        let cost = rng.u64(..1500);
        let output = format!("/n{i}");
        processes[rng.u64(..processes_n) as usize]
            .push(format!("node{i}:{input}:{output}:{timer}:{cost}"));
        outputs.push(output);
    }
    processes.retain(|p| !p.is_empty());
    println!("topology: {processes:?}");
    run_twice(&mut rng, &processes, &outputs, 40);
}
