//! `kairos demo pipeline --sim`: the same four-node pipeline on simulation time, stepped
//! as fast as the callbacks allow, twice, to show that a simulated run is deterministic:
//! the two traces are the same events in the same order at the same simulated times.
//!
//! The simulator advances `/clock` in 1 ms steps (a simulator's usual 1 kHz) and, after
//! each step, runs everything the step made due (`while executor.spin_some()? > 0 {}`):
//! the lock-step loop of a simulated robot, all on one thread. The planner's 100 ms of work is a 100 ms sleep on
//! the node clock inside an async callback: simulated time, not wall time. The trace is
//! stamped with simulated time ([`TraceClock::Custom`]), so the analyzer reads exact
//! simulated latencies, and two runs can be compared timestamp for timestamp.
//!
//! Two traces are "the same" when their events, read back in order, are equal once
//! thread ids, process ids and addresses are renamed in order of first appearance
//! (they differ between runs by nature, not by behaviour).

use super::Outcome;
use super::pipeline::{PLANNER_WORK, Reading, analyze, prepare_output};
use anyhow::{Context as _, bail};
use kairos::exec::Executor;
use kairos::graph::{Context, Node, Qos};
use kairos::time::{CancelToken, ClockKind, Duration, Time};
use kairos_trace::write::{SessionConfig, TraceClock};
use serde_json::json;
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

/// The simulator's step.
const STEP: Duration = Duration::from_millis(1);
/// Steps between two trace flushes (a simulated second).
const FLUSH_EVERY: i64 = 1_000;
/// The source's period (as in the wall-clock pipeline).
const PERIOD: Duration = Duration::from_millis(200);

/// What one simulated run measured.
#[derive(Debug)]
struct SimRun {
    /// Wall time the simulated run took.
    wall: std::time::Duration,
    events: u64,
    /// End-to-end latencies the printer measured, in simulated ns.
    latencies: Vec<i64>,
}

/// Runs the pipeline for `robot_time` of simulated time, traced into `dir`.
fn run_once(dir: &Path, robot_time: Duration) -> anyhow::Result<SimRun> {
    // The trace clock mirrors the simulated time the simulator publishes (a trace clock
    // must not take the sim clock's own lock: tracepoints fire under it). The session
    // starts before the nodes, so it sees them made.
    let now = Arc::new(AtomicI64::new(0));
    let stamp = Arc::clone(&now);
    let session = kairos::trace::Session::start_with(
        dir,
        SessionConfig {
            clock: TraceClock::Custom {
                name: "sim".into(),
                description: "kairos simulation time".into(),
                now: Arc::new(move || stamp.load(Ordering::Acquire).max(0) as u64),
            },
            ..SessionConfig::default()
        },
    )?;

    let context = Context::new();
    let node = |name: &str| -> anyhow::Result<Node> {
        let node = Node::new_in(&context, name, "/pipeline")?;
        node.set_use_sim_time(true)?;
        Ok(node)
    };
    let (source, filter, planner, printer) = (
        node("source")?,
        node("filter")?,
        node("planner")?,
        node("printer")?,
    );
    let sim = context.sim_clock()?;
    let raw = source.create_publisher::<Reading>("readings", Qos::keep_last(10))?;
    let filtered = filter.create_publisher::<Reading>("filtered", Qos::keep_last(10))?;
    let planned = Arc::new(planner.create_publisher::<Reading>("plans", Qos::keep_last(10))?);
    let source_clock = source.clock();
    // The last reading leaves one period before the end, so none is in flight when the
    // run stops.
    let last = robot_time.as_nanos() - PERIOD.as_nanos();
    let seq = std::sync::atomic::AtomicU64::new(0);
    let _timer = source.create_timer(PERIOD, move |_| {
        let born_ns = source_clock.now().nanos();
        if born_ns <= last {
            raw.publish(Reading {
                seq: seq.fetch_add(1, Ordering::Relaxed) + 1,
                born_ns,
            });
        }
    })?;
    let _filter =
        filter.create_subscription("readings", Qos::keep_last(10), move |r: Arc<Reading>| {
            filtered.publish(*r);
        })?;
    let token = CancelToken::new();
    let planner_clock = planner.clock();
    let work = token.clone();
    let _planner = planner.create_subscription_async(
        "filtered",
        Qos::keep_last(10),
        move |r: Arc<Reading>| {
            // The deliberate 100 ms of work, in simulated time.
            let (sleep, planned) = (
                planner_clock.sleep_for_async(PLANNER_WORK, &work),
                Arc::clone(&planned),
            );
            async move {
                if sleep.await.is_ok() {
                    planned.publish(*r);
                }
            }
        },
    )?;
    let latencies = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&latencies);
    let printer_clock = printer.clock();
    let _printer =
        printer.create_subscription("plans", Qos::keep_last(10), move |r: Arc<Reading>| {
            let e2e = printer_clock.now().nanos() - r.born_ns;
            if let Ok(mut v) = record.lock() {
                v.push(e2e);
            }
        })?;

    let executor = Executor::single_threaded();
    for n in [&source, &filter, &planner, &printer] {
        executor.add_node(n)?;
    }
    let started = std::time::Instant::now();
    // Lock-step: the simulator's thread runs everything each step made due before the
    // next step, so the whole run is one thread's program order.
    while executor.spin_some()? > 0 {}
    let steps = robot_time.as_nanos() / STEP.as_nanos();
    for step in 1..=steps {
        let t = step * STEP.as_nanos();
        now.store(t, Ordering::Release);
        sim.publish_settled(Time::new(ClockKind::Sim, t))?;
        while executor.spin_some()? > 0 {}
        // Steps outrun the writer's periodic flush: write each simulated second out so
        // no thread's queue overflows.
        if step % FLUSH_EVERY == 0 {
            session.flush()?;
        }
    }
    let wall = started.elapsed();
    token.cancel();
    let report = executor.shutdown(Duration::from_secs(2));
    let stats = session.stop()?;
    if !report.is_clean() {
        bail!("the simulated pipeline did not stop: {report}");
    }
    let latencies = latencies.lock().map(|v| v.clone()).unwrap_or_default();
    Ok(SimRun {
        wall,
        events: stats.events_written,
        latencies,
    })
}

/// The trace as text, with thread ids, process ids and hexadecimal values (handles and
/// addresses) renamed in order of first appearance.
fn canonical_trace(dir: &Path) -> anyhow::Result<Vec<String>> {
    let set = kairos_trace::read::TraceSet::open(dir)?;
    let mut names: HashMap<String, usize> = HashMap::new();
    let mut lines = Vec::new();
    for event in set.events()? {
        let event = event.with_context(|| format!("reading {}", dir.display()))?;
        let mut line = String::new();
        kairos_trace::read::text::write_event(&mut line, &event);
        lines.push(rename_volatile(&line, &mut names));
    }
    Ok(lines)
}

/// Fields whose values differ between runs by nature: the CPU a packet was written on,
/// thread and process ids, thread names (they number executors process-wide), and a
/// message's address in memory.
const VOLATILE_FIELDS: [&str; 5] = [
    "cpu_id = ",
    "vtid = ",
    "vpid = ",
    "procname = ",
    "message = ",
];

/// Of those, the ones not even stable per object (a packet's CPU; an address the
/// allocator reuses for later messages): dropped, not renamed. A message is known by its
/// publisher and sequence number, which stay.
const DROPPED_FIELDS: [&str; 2] = ["cpu_id = ", "message = "];

/// Renames `0x…` values and the values of [`VOLATILE_FIELDS`] in order of first
/// appearance (`#0`, `#1`, …).
fn rename_volatile(line: &str, names: &mut HashMap<String, usize>) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    loop {
        let hex = rest.find("0x");
        let field = VOLATILE_FIELDS
            .iter()
            .filter_map(|key| rest.find(key).map(|at| at + key.len()))
            .min();
        // Where the value starts, and how long it is.
        let (at, len) = match (hex, field) {
            (Some(h), f) if f.is_none_or(|f| h < f) => {
                let digits = rest[h + 2..]
                    .find(|c: char| !c.is_ascii_hexdigit())
                    .unwrap_or(rest.len() - h - 2);
                (h, 2 + digits)
            }
            (_, Some(f)) => {
                let value = &rest[f..];
                let len = if let Some(quoted) = value.strip_prefix('"') {
                    quoted.find('"').map_or(value.len(), |end| end + 2)
                } else {
                    value.find([',', ' ', '}']).unwrap_or(value.len())
                };
                (f, len)
            }
            _ => break,
        };
        out.push_str(&rest[..at]);
        if DROPPED_FIELDS.iter().any(|f| rest[..at].ends_with(f)) {
            out.push('#');
            rest = &rest[at + len..];
            continue;
        }
        let next = names.len();
        let n = *names.entry(rest[at..at + len].to_owned()).or_insert(next);
        out.push_str(&format!("#{n}"));
        rest = &rest[at + len..];
    }
    out.push_str(rest);
    out
}

pub fn run(quick: bool, out: &Path) -> anyhow::Result<Outcome> {
    let robot_time = if quick {
        Duration::from_secs(10)
    } else {
        Duration::from_secs(60)
    };
    let artifacts = out.join("pipeline-sim");
    prepare_output(&artifacts)?;
    let (first, second) = (artifacts.join("trace"), artifacts.join("trace-again"));
    let run1 = run_once(&first, robot_time)?;
    let run2 = run_once(&second, robot_time)?;
    let (a, b) = (canonical_trace(&first)?, canonical_trace(&second)?);
    let first_difference = a.iter().zip(&b).position(|(x, y)| x != y);
    let identical = a.len() == b.len() && first_difference.is_none();

    let mut outcome = analyze(&first, &artifacts, &run1.latencies, run1.events)?;
    let robot_s = robot_time.as_nanos() as f64 / 1e9;
    let speedup = |wall: std::time::Duration| robot_s / wall.as_secs_f64().max(1e-9);
    let exact = run1.latencies.iter().all(|&l| l == PLANNER_WORK.as_nanos());
    outcome.report.push_str(&format!(
        "\n\nsimulation time: {robot_s:.0} s of robot time in {:.3} s and {:.3} s of wall time \
         ({:.0}x and {:.0}x real time), in 1 ms steps\n\
         two runs: {} events and {} events, {}",
        run1.wall.as_secs_f64(),
        run2.wall.as_secs_f64(),
        speedup(run1.wall),
        speedup(run2.wall),
        a.len(),
        b.len(),
        if identical {
            "identical: same events, same order, same simulated timestamps".to_string()
        } else {
            format!(
                "DIFFERENT from event {}:\n  {}\n  {}",
                first_difference.unwrap_or(a.len().min(b.len())),
                first_difference.map_or("(ended)", |i| a[i].as_str()),
                first_difference.map_or("(ended)", |i| b[i].as_str()),
            )
        }
    ));
    outcome.passed &= identical && exact;
    outcome.verdict = format!(
        "{robot_s:.0} s of robot time in {:.2} s of wall time ({:.0}x), two runs {}; {}",
        run1.wall.as_secs_f64(),
        speedup(run1.wall),
        if identical {
            "traced identically"
        } else {
            "TRACED DIFFERENTLY"
        },
        outcome.verdict
    );
    if let Some(json) = outcome.json.as_object_mut() {
        json.insert(
            "sim".into(),
            json!({
                "robot_time_s": robot_s,
                "wall_s": [run1.wall.as_secs_f64(), run2.wall.as_secs_f64()],
                "speedup": speedup(run1.wall),
                "events": [a.len(), b.len()],
                "identical": identical,
                "latencies_exactly_planner_work": exact,
                "second_trace": second,
            }),
        );
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn volatile_values_are_renamed_in_order_of_appearance() {
        let mut names = HashMap::new();
        let line = "[0.2] h ros2:x: { cpu_id = 1 }, { vtid = 77, vpid = 70, procname = \"kairos-exec13-s\" }, { handle = 0xA, executor = 0xD, n = 5, message = 0x5555 }";
        assert_eq!(
            rename_volatile(line, &mut names),
            "[0.2] h ros2:x: { cpu_id = # }, { vtid = #0, vpid = #1, procname = #2 }, { handle = #3, executor = #4, n = 5, message = # }"
        );
        let again = "{ vtid = 77, procname = \"kairos-exec13-s\" }, { handle = 0xD }";
        assert_eq!(
            rename_volatile(again, &mut names),
            "{ vtid = #0, procname = #2 }, { handle = #4 }"
        );
    }
}
