//! `kairos demo pipeline`: story 5, "where did this message spend its time?"
//!
//! Four nodes in a chain, as in the 2019 message-flow analysis: a `source` publishing
//! readings at 10 Hz, a `filter`, a `planner` whose callback deliberately takes 100 ms,
//! and a `printer`, on a multi-threaded executor. The run is traced (into `--trace DIR`,
//! or a temporary folder), then the trace is read back by kairos's own analyzer, which
//! must find the chain source -> filter -> planner -> printer and name the planner's
//! callback as the stage where the time went, with an end-to-end latency that agrees
//! with what the printer measured in-process.

use super::Outcome;
use anyhow::{Context as _, bail};
use kairos::exec::Executor;
use kairos::graph::{Context, Node, Qos};
use kairos::time::{CancelToken, Clock, Duration};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

pub(super) const PLANNER_WORK: Duration = Duration::from_millis(100);
const PERIOD: Duration = Duration::from_millis(200);

/// A reading and the steady time it was born at the source.
#[derive(Debug, Clone, Copy)]
pub(super) struct Reading {
    pub(super) seq: u64,
    pub(super) born_ns: i64,
}

/// The in-process pipeline keeps its readings in the process.
impl kairos::graph::Payload for Reading {}

/// Runs the pipeline for `count` readings while `session` records; returns the
/// end-to-end latencies the printer measured (ns).
fn run_pipeline(count: u64) -> anyhow::Result<Vec<i64>> {
    let context = Context::new();
    let node = |name: &str| Node::new_in(&context, name, "/pipeline");
    let (source, filter, planner, printer) = (
        node("source")?,
        node("filter")?,
        node("planner")?,
        node("printer")?,
    );
    let raw = source.create_publisher::<Reading>("readings", Qos::keep_last(10))?;
    let filtered = filter.create_publisher::<Reading>("filtered", Qos::keep_last(10))?;
    let planned = planner.create_publisher::<Reading>("plans", Qos::keep_last(10))?;

    let sent = Arc::new(Mutex::new(0u64));
    let counter = Arc::clone(&sent);
    let _timer = source.create_timer(PERIOD, move |_| {
        let Ok(mut n) = counter.lock() else { return };
        if *n < count {
            *n += 1;
            raw.publish(Reading {
                seq: *n,
                born_ns: Clock::steady().now().nanos(),
            });
        }
    })?;
    let _filter =
        filter.create_subscription("readings", Qos::keep_last(10), move |r: Arc<Reading>| {
            filtered.publish(*r);
        })?;
    let token = CancelToken::new();
    let work = token.clone();
    let _planner =
        planner.create_subscription("filtered", Qos::keep_last(10), move |r: Arc<Reading>| {
            // The deliberate 100 ms of work the analysis must find.
            let _ = Clock::steady().sleep_for(PLANNER_WORK, &work);
            planned.publish(*r);
        })?;
    let latencies = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&latencies);
    let _printer =
        printer.create_subscription("plans", Qos::keep_last(10), move |r: Arc<Reading>| {
            let e2e = Clock::steady().now().nanos() - r.born_ns;
            if let Ok(mut v) = record.lock() {
                v.push((r.seq, e2e));
            }
        })?;

    let executor = Executor::multi_threaded(4)?;
    for n in [&source, &filter, &planner, &printer] {
        executor.add_node(n)?;
    }
    let spinner = {
        let executor = executor.clone();
        std::thread::spawn(move || executor.spin())
    };
    // Bounded: the readings need count * PERIOD plus the pipeline's own latency.
    let give_up = Clock::steady().now() + PERIOD * (count as i64 + 10);
    while latencies
        .lock()
        .map(|v| (v.len() as u64) < count)
        .unwrap_or(false)
    {
        if Clock::steady().now() >= give_up {
            break;
        }
        Clock::steady().sleep_for(Duration::from_millis(5), &CancelToken::new())?;
    }
    token.cancel();
    let report = executor.shutdown(Duration::from_secs(2));
    if !report.is_clean() {
        bail!("the pipeline did not stop: {report}");
    }
    let _ = spinner.join();
    let mut got = latencies.lock().map(|v| v.clone()).unwrap_or_default();
    got.sort_unstable();
    if (got.len() as u64) < count {
        bail!("the printer got {} of {count} readings", got.len());
    }
    Ok(got.into_iter().map(|(_, e2e)| e2e).collect())
}

/// The marker that says a folder was made by this demo, so the next run may replace it.
const MARKER: &str = ".kairos-demo";

/// Empties `dir` for a new run: a folder this demo made before is replaced; anything else
/// that is not empty is left alone and refused.
pub(super) fn prepare_output(dir: &Path) -> anyhow::Result<()> {
    if dir.join(MARKER).is_file() {
        std::fs::remove_dir_all(dir)
            .with_context(|| format!("cannot replace the previous run in {}", dir.display()))?;
    } else if std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_some()) {
        bail!(
            "{} exists and was not written by `kairos demo`: choose another folder with --out DIR",
            dir.display()
        );
    }
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the demo's output folder {}", dir.display()))?;
    std::fs::write(
        dir.join(MARKER),
        "written by `kairos demo pipeline`; replaced by its next run\n",
    )?;
    Ok(())
}

/// Runs the pipeline, traced into `trace` (or `out/pipeline/trace`), and keeps the trace,
/// the HTML report and the Perfetto file in `out/pipeline`.
pub fn run(quick: bool, trace: Option<&Path>, out: &Path) -> anyhow::Result<Outcome> {
    let count = if quick { 8 } else { 25 };
    let artifacts = out.join("pipeline");
    prepare_output(&artifacts)?;
    let dir: PathBuf = match trace {
        Some(dir) => dir.to_path_buf(),
        None => artifacts.join("trace"),
    };
    let session = super::start_session(&dir)?;
    let measured = run_pipeline(count);
    let stats = session.stop()?;
    let measured = measured?;
    analyze(&dir, &artifacts, &measured, stats.events_written)
}

/// How a user runs `kairos` again: the binary's name, or `cargo run --release --` when it
/// was started from a cargo build folder.
fn kairos_command() -> &'static str {
    let from_cargo = std::env::current_exe()
        .is_ok_and(|exe| exe.components().any(|c| c.as_os_str() == "target"));
    if from_cargo {
        "cargo run --release --"
    } else {
        "kairos"
    }
}

/// Reads the trace back with kairos's analyzer and checks it found where the time went.
pub(super) fn analyze(
    dir: &Path,
    artifacts: &Path,
    measured: &[i64],
    events: u64,
) -> anyhow::Result<Outcome> {
    let model = kairos_analyze::analyze(dir, kairos_analyze::Options::default())
        .with_context(|| format!("cannot analyze the pipeline trace in {}", dir.display()))?;
    let chains = kairos_analyze::chains::chains(&model);
    let chain = chains
        .0
        .iter()
        .filter(|c| {
            c.path.first().is_some_and(|n| n.ends_with("source"))
                && c.path.last().is_some_and(|n| n.ends_with("printer"))
        })
        .max_by_key(|c| c.count)
        .with_context(|| {
            format!(
                "the analyzer found no chain from source to printer in {}; it found: {}",
                dir.display(),
                chains_found(&chains.0)
            )
        })?;
    let measured_mean = measured.iter().sum::<i64>() as f64 / measured.len().max(1) as f64;
    let traced_mean = chain.total.mean_ns;
    let dominant = chain.dominant.clone().unwrap_or_default();
    let planner_found = dominant.contains("planner");
    // The traced interval (publish to the printer's callback start) lies inside the
    // measured one (stamped before the publish, after the callback starts): a loaded
    // machine widens the measured one only.
    let agrees = traced_mean <= measured_mean * 1.05 + 2e6;
    let passed =
        planner_found && agrees && chain.count as usize >= measured.len().saturating_sub(1);

    let ms = |ns: f64| ns / 1e6;
    let mut report = format!(
        "{} readings through {} ({} events traced in {})\n",
        measured.len(),
        chain.name(),
        events,
        dir.display()
    );
    report.push_str("stage                                              mean_ms    p99_ms\n");
    for stage in &chain.stages {
        report.push_str(&format!(
            "{:<48} {:>9.3} {:>9.3}{}\n",
            stage.name,
            ms(stage.latency.mean_ns),
            ms(stage.latency.p99_ns as f64),
            if stage.name == dominant {
                "   <- dominant"
            } else {
                ""
            }
        ));
    }
    report.push_str(&format!(
        "end to end: traced mean {:.3} ms, measured in-process {:.3} ms\n",
        ms(traced_mean),
        ms(measured_mean)
    ));
    let html = artifacts.join("report.html");
    std::fs::write(
        &html,
        kairos_analyze::html::report(&model, "kairos demo pipeline"),
    )
    .with_context(|| format!("cannot write {}", html.display()))?;
    let perfetto = artifacts.join("perfetto.json");
    std::fs::write(
        &perfetto,
        serde_json::to_vec(&kairos_analyze::perfetto::export(&model))?,
    )
    .with_context(|| format!("cannot write {}", perfetto.display()))?;
    let kairos = kairos_command();
    report.push_str(&format!(
        "\nkept in {}:\n  trace        {}\n  report       {}\n  perfetto     {}\nlook at them:\n  \
         {kairos} trace chains {}\n  babeltrace2 {} | less\n  open {} in a browser; load {} in ui.perfetto.dev",
        artifacts.display(),
        dir.display(),
        html.display(),
        perfetto.display(),
        dir.display(),
        dir.display(),
        html.display(),
        perfetto.display(),
    ));
    let verdict = format!(
        "the analyzer followed {} messages source -> printer and found {:.1} of {:.1} ms in '{}'{}",
        chain.count,
        ms(chain
            .stages
            .iter()
            .find(|s| s.name == dominant)
            .map_or(0.0, |s| s.latency.mean_ns)),
        ms(traced_mean),
        dominant,
        if agrees {
            ""
        } else {
            " -- TRACE AND IN-PROCESS LATENCY DISAGREE"
        }
    );
    // A failed run says what else the analyzer followed: which hop lost the messages.
    let verdict = if passed {
        verdict
    } else {
        format!("{verdict}; chains found: {}", chains_found(&chains.0))
    };
    let mut json = json!({
        "chain": chain.path,
        "messages": chain.count,
        "dominant": dominant,
        "traced_e2e_mean_ms": ms(traced_mean),
        "measured_e2e_mean_ms": ms(measured_mean),
        "stages": chain.stages.iter().map(|s| json!({"name": s.name, "mean_ms": ms(s.latency.mean_ns)})).collect::<Vec<_>>(),
        "trace": dir,
        "report": html,
        "perfetto": perfetto,
    });
    if !passed && let Some(fields) = json.as_object_mut() {
        fields.insert("chains_found".into(), chains_found(&chains.0).into());
    }
    Ok(Outcome {
        passed,
        verdict,
        report,
        json,
    })
}

/// Every chain the analyzer followed, with how many messages went its whole way and why
/// it ends where it does.
fn chains_found(chains: &[kairos_analyze::chains::Chain]) -> String {
    if chains.is_empty() {
        return "none".to_owned();
    }
    let found: Vec<String> = chains
        .iter()
        .map(|c| {
            let breaks = if c.breaks.is_empty() {
                String::new()
            } else {
                format!(" (ends: {})", c.breaks.join("; "))
            };
            format!("{} x{}{breaks}", c.name(), c.count)
        })
        .collect();
    found.join(", ")
}
