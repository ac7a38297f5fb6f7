//! `kairos demo pipeline --processes`: story 5 as it happened, four processes.
//!
//! The same four nodes (`source` -> `filter` -> `planner`, whose callback takes 100 ms ->
//! `printer`), each in a process of its own, on the Zenoh transport through a `kairos
//! router` on a free loopback port. Every process is traced with `KAIROS_TRACE` into one
//! folder; the analyzer reads the folder and follows each message across the three
//! process boundaries by its publisher gid and sequence number, so the chain table now has
//! the network between processes as its own stage (`transport`).
//!
//! Children are stopped with SIGINT, so each one shuts its executor down and writes its
//! trace whole (kairos's Ctrl-C handling) before the analysis reads it.

use super::Outcome;
use super::pipeline::{PLANNER_WORK, analyze, prepare_output};
use anyhow::{Context as _, bail};
use kairos::exec::Executor;
use kairos::graph::{Node, Qos};
use kairos::time::{CancelToken, Clock, Duration};
use kairos_launch::process::{Running, expect_line, lines_of, signal};
use kairos_launch::router::LocalRouter;
use kairos_zenoh::type_hash::{Field, TypeDescription, type_id};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::process::Stdio;

/// A reading on the wire: its sequence number and the steady time it was born at.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireReading {
    pub seq: u64,
    pub born_ns: i64,
}

impl kairos::graph::Message for WireReading {
    const TYPE_NAME: &'static str = "kairos_demo/msg/Reading";
    fn description() -> TypeDescription {
        TypeDescription::new(
            Self::TYPE_NAME,
            vec![
                Field::primitive("seq", type_id::UINT64),
                Field::primitive("born_ns", type_id::INT64),
            ],
        )
    }
}

/// The four roles, in the order their processes start (sinks first, so every
/// subscription exists before the source publishes).
const ROLES: [&str; 4] = ["printer", "planner", "filter", "source"];

/// The source's period.
const PERIOD: Duration = Duration::from_millis(200);

pub fn run(quick: bool, out: &Path) -> anyhow::Result<Outcome> {
    let count: u64 = if quick { 8 } else { 25 };
    let artifacts = out.join("pipeline-processes");
    prepare_output(&artifacts)?;
    let trace = artifacts.join("trace");
    let exe = std::env::current_exe().context("cannot find the kairos binary")?;

    let router = LocalRouter::start(&exe, std::time::Duration::from_secs(30))?;

    let mut children = Vec::new();
    let mut printer_lines = None;
    for role in ROLES {
        let mut child = router
            .command(&exe)
            .args(["internal", "pipeline-node", role])
            .env("KAIROS_TRACE", &trace)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot start the {role} process"))?;
        let lines = lines_of(&mut child)?;
        expect_line(&lines, "ready", std::time::Duration::from_secs(30), role)?;
        if role == "printer" {
            printer_lines = Some(lines);
        }
        children.push(Running(child));
    }
    let printer_lines = printer_lines.context("no printer")?;

    // The printer says `got <seq> <e2e_ns>` per reading; wait for `count` of them.
    let mut measured = Vec::new();
    let give_up = std::time::Instant::now()
        + std::time::Duration::from_millis((PERIOD.as_millis_f64() as u64 + 50) * (count + 25));
    while (measured.len() as u64) < count {
        let left = give_up.saturating_duration_since(std::time::Instant::now());
        match printer_lines.recv_timeout(left) {
            Ok(line) => {
                if let Some(e2e) = line
                    .strip_prefix("got ")
                    .and_then(|rest| rest.split_whitespace().nth(1))
                    .and_then(|ns| ns.parse::<i64>().ok())
                {
                    measured.push(e2e);
                }
            }
            Err(_) => bail!(
                "the printer got {} of {count} readings across the processes",
                measured.len()
            ),
        }
    }
    // Stopped as a user stops them: each shuts down, prints its report and writes its trace.
    for child in children.iter().rev() {
        signal(&child.0, libc::SIGINT);
    }
    for child in children.iter_mut() {
        let status = child.0.wait()?;
        if !status.success() {
            let mut stderr = String::new();
            if let Some(mut err) = child.0.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut err, &mut stderr);
            }
            bail!("a pipeline process ended with {status}: {stderr}");
        }
    }
    drop(router);

    let model = kairos_analyze::analyze(&trace, kairos_analyze::Options { messages: false })?;
    let processes = model.processes.len();
    let mut outcome = analyze(&trace, &artifacts, &measured, model.events)?;
    outcome.passed &= processes >= ROLES.len();
    outcome.report.push_str(&format!(
        "\n{processes} processes traced into one folder; the chain crosses {} process boundaries \
         through Zenoh (the `transport` stages)",
        ROLES.len() - 1
    ));
    if let Some(json) = outcome.json.as_object_mut() {
        json.insert("processes".into(), processes.into());
    }
    Ok(outcome)
}

/// One pipeline node in a process of its own (`kairos internal pipeline-node ROLE`): it
/// prints `ready` once its node exists, and runs until SIGINT.
pub fn node_main(role: &str) -> anyhow::Result<()> {
    kairos_zenoh::init()?.context("KAIROS_TRANSPORT=zenoh must be set for a pipeline process")?;
    let node = Node::new_in(&kairos::graph::Context::global(), role, "/pipeline")?;
    let qos = Qos::keep_last(10);
    // Kept alive until the process ends.
    let mut keep: Vec<Box<dyn std::any::Any>> = Vec::new();
    match role {
        "source" => {
            // Publishes until stopped: the parent counts what reaches the printer, so a
            // reading sent before the network had matched every subscription costs nothing.
            let raw = node.create_publisher::<WireReading>("readings", qos)?;
            let sent = std::sync::atomic::AtomicU64::new(0);
            keep.push(Box::new(node.create_timer(PERIOD, move |_| {
                raw.publish(WireReading {
                    seq: sent.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1,
                    born_ns: Clock::steady().now().nanos(),
                });
            })?));
        }
        "filter" => {
            let filtered = node.create_publisher::<WireReading>("filtered", qos)?;
            keep.push(Box::new(node.create_subscription(
                "readings",
                qos,
                move |r: &WireReading| {
                    filtered.publish(*r);
                },
            )?));
        }
        "planner" => {
            let planned = node.create_publisher::<WireReading>("plans", qos)?;
            let token = CancelToken::new();
            keep.push(Box::new(node.create_subscription(
                "filtered",
                qos,
                move |r: &WireReading| {
                    // The deliberate 100 ms of work the analysis must find.
                    let _ = Clock::steady().sleep_for(PLANNER_WORK, &token);
                    planned.publish(*r);
                },
            )?));
        }
        "printer" => {
            keep.push(Box::new(node.create_subscription(
                "plans",
                qos,
                move |r: &WireReading| {
                    let e2e = Clock::steady().now().nanos() - r.born_ns;
                    println!("got {} {e2e}", r.seq);
                },
            )?));
        }
        other => bail!("no pipeline role '{other}' (source, filter, planner, printer)"),
    }
    let executor = Executor::single_threaded();
    executor.add_node(&node)?;
    println!("ready");
    // Until SIGINT: kairos's handler shuts the executor down and spin returns.
    let _ = executor.spin();
    drop(keep);
    Ok(())
}
