//! `kairos bench trace`: what one trace event costs.
//!
//! Side by side in one run: a kairos tracepoint with a session recording, the same
//! tracepoint with no session (the one relaxed load), and the same event through the
//! `tracing` crate with the subscriber a Rust user would reach for (`tracing-subscriber`'s
//! fmt layer writing to a buffered file through `tracing-appender`'s non-blocking writer,
//! set not to drop lines, like kairos in this bench; built with `--features baselines`).
//! [`e2e_overhead_us`] measures what tracing adds to a whole pub/sub round.
//!
//! The enabled kairos figure is the cost on the traced thread. The session's queues are
//! drained between timed batches (untimed), so no event is discarded and the figure is
//! not flattered by cheap failed pushes; the writer thread's own cost per event is shown
//! in the human report.

use kairos_trace::write::SessionConfig;
use kairos_trace::{Session, tp};
use serde_json::json;
use std::hint::black_box;
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print {"results":[...]} as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Fewer events (used by the test suite).
    #[arg(long)]
    pub quick: bool,
}

/// Events per timed batch: half the session queue, so a batch always fits.
const BATCH: u64 = 32 * 1024;
/// Timed repetitions of each measurement; the median is reported.
const REPEATS: usize = 5;

/// One measured figure: median ns per event over the repetitions.
fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

#[inline(always)]
fn kairos_event(seq: u64) {
    tp::rcl_publish(black_box(0x7), black_box(0x1000 + seq), seq);
}

fn disabled_ns(events: u64) -> f64 {
    let samples = (0..REPEATS)
        .map(|_| {
            let start = Instant::now();
            for seq in 0..events {
                kairos_event(seq);
            }
            start.elapsed().as_nanos() as f64 / events as f64
        })
        .collect();
    median(samples)
}

/// Per-event cost on the traced thread, and the writer's drain cost per event.
struct Enabled {
    traced_ns: f64,
    writer_ns: f64,
    discarded: u64,
}

fn enabled_ns(events: u64) -> anyhow::Result<Enabled> {
    let dir = super::ScratchDir::new("trace")?;
    let config = SessionConfig {
        buffer_events: 2 * BATCH as usize,
        flush_interval: Duration::from_secs(3600),
        ..SessionConfig::default()
    };
    let session = Session::start_with(dir.path(), config)?;
    let (mut traced, mut writer) = (Vec::new(), Duration::ZERO);
    let batches = events.div_ceil(BATCH);
    for _ in 0..REPEATS {
        let mut elapsed = Duration::ZERO;
        for batch in 0..batches {
            let start = Instant::now();
            for seq in batch * BATCH..(batch + 1) * BATCH {
                kairos_event(seq);
            }
            elapsed += start.elapsed();
            let start = Instant::now();
            session.flush()?;
            writer += start.elapsed();
        }
        traced.push(elapsed.as_nanos() as f64 / (batches * BATCH) as f64);
    }
    let stats = session.stop()?;
    Ok(Enabled {
        traced_ns: median(traced),
        writer_ns: writer.as_nanos() as f64 / stats.events_written.max(1) as f64,
        discarded: stats.events_discarded,
    })
}

/// `None` when built without the `baselines` feature.
#[cfg(not(feature = "baselines"))]
fn tracing_crate_ns(_events: u64) -> anyhow::Result<Option<f64>> {
    Ok(None)
}

#[cfg(feature = "baselines")]
fn tracing_crate_ns(events: u64) -> anyhow::Result<Option<f64>> {
    use anyhow::Context;
    let dir = super::ScratchDir::new("tracing-crate")?;
    let file = std::fs::File::create(dir.path().join("events.log"))
        .context("create the tracing-crate log file")?;
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .lossy(false)
        .finish(std::io::BufWriter::new(file));
    let subscriber = tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(false)
        .with_thread_ids(true)
        .finish();
    let samples = tracing::subscriber::with_default(subscriber, || {
        (0..REPEATS)
            .map(|_| {
                let start = Instant::now();
                for seq in 0..events {
                    tracing::info!(
                        target: "ros2",
                        publisher_handle = black_box(0x7u64),
                        message = black_box(0x1000 + seq),
                        seq,
                        "rcl_publish"
                    );
                }
                start.elapsed().as_nanos() as f64 / events as f64
            })
            .collect()
    });
    drop(guard); // writes what is still queued
    Ok(Some(median(samples)))
}

/// What tracing adds to one pub/sub round, in µs: `round` runs one round; it is timed
/// `rounds` times with no session and `rounds` times with a session recording, in
/// alternating blocks so that drift in machine load hits both alike.
pub fn e2e_overhead_us(rounds: u64, mut round: impl FnMut()) -> anyhow::Result<f64> {
    const BLOCKS: u64 = 8;
    let (mut off, mut on) = (Vec::new(), Vec::new());
    for block in 0..BLOCKS {
        // Exactly `rounds` in all, spread over the blocks.
        let count = rounds / BLOCKS + u64::from(block < rounds % BLOCKS);
        if count == 0 {
            continue;
        }
        let time = |round: &mut dyn FnMut()| {
            let start = Instant::now();
            for _ in 0..count {
                round();
            }
            start.elapsed().as_nanos() as f64 / count as f64
        };
        off.push(time(&mut round));
        let dir = super::ScratchDir::new("e2e")?;
        let session = Session::start(dir.path())?;
        on.push(time(&mut round));
        session.stop()?;
    }
    if off.is_empty() {
        anyhow::bail!("e2e_overhead_us needs at least one round");
    }
    Ok((median(on) - median(off)) / 1000.0)
}

/// [`e2e_overhead_us`] on a real kairos pub/sub round: publish a message to a
/// subscription whose single-threaded executor spins in another thread, and wait until
/// its callback has run. With a session recording, the round passes every tracepoint a
/// message passes (publish, enqueue, take, callback start and end, dispatch).
fn kairos_e2e_us(rounds: u64) -> anyhow::Result<f64> {
    use kairos::exec::Executor;
    use kairos::graph::{Context, Node, Qos};
    use std::sync::atomic::{AtomicU64, Ordering};
    let context = Context::new();
    let talker = Node::new_in(&context, "talker", "/")?;
    let listener = Node::new_in(&context, "listener", "/")?;
    let publisher = talker.create_publisher::<u64>("e2e", Qos::keep_last(16))?;
    let handled = std::sync::Arc::new(AtomicU64::new(0));
    let counter = handled.clone();
    let _subscription = listener.create_subscription(
        "e2e",
        Qos::keep_last(16),
        move |_: std::sync::Arc<u64>| {
            counter.fetch_add(1, Ordering::Release);
        },
    )?;
    let executor = Executor::single_threaded();
    executor.add_node(&listener)?;
    let spinner = {
        let executor = executor.clone();
        std::thread::spawn(move || executor.spin())
    };
    let mut sent = 0u64;
    let overhead = e2e_overhead_us(rounds, || {
        sent += 1;
        publisher.publish(sent);
        while handled.load(Ordering::Acquire) < sent {
            std::hint::spin_loop();
        }
    });
    let report = executor.shutdown(kairos::time::Duration::from_secs(2));
    anyhow::ensure!(report.is_clean(), "executor did not stop: {report}");
    spinner
        .join()
        .map_err(|_| anyhow::anyhow!("spinner panicked"))??;
    overhead
}

/// Every figure of one run.
struct Figures {
    events: u64,
    disabled_ns: f64,
    enabled: Enabled,
    /// `None` when built without the `baselines` feature.
    tracing_ns: Option<f64>,
    e2e_us: f64,
}

fn measure(quick: bool) -> anyhow::Result<Figures> {
    let events = if quick { BATCH } else { 32 * BATCH };
    Ok(Figures {
        events,
        disabled_ns: disabled_ns(events),
        enabled: enabled_ns(events)?,
        tracing_ns: tracing_crate_ns(events)?,
        e2e_us: kairos_e2e_us(if quick { 2_000 } else { 40_000 })?,
    })
}

/// The `--json` report.
fn json_report(figures: &Figures) -> serde_json::Value {
    json!({
        "results": [
            {
                "name": "kairos",
                "enabled_ns_per_event": figures.enabled.traced_ns,
                "disabled_ns_per_event": figures.disabled_ns,
                "e2e_overhead_us": figures.e2e_us,
            },
            {
                "name": "tracing_crate",
                "enabled_ns_per_event": figures.tracing_ns,
                "built": figures.tracing_ns.is_some(),
            },
        ]
    })
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let figures = measure(args.quick)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&json_report(&figures))?);
        return Ok(ExitCode::SUCCESS);
    }
    let row = |label: &str, value: f64| println!("{label:<44} {value:>10.2}");
    println!(
        "one event, {} events x {REPEATS} runs, median ns per event",
        figures.events
    );
    row(
        "kairos, session recording (traced thread)",
        figures.enabled.traced_ns,
    );
    row(
        "kairos, writer thread (encode + write)",
        figures.enabled.writer_ns,
    );
    row("kairos, no session", figures.disabled_ns);
    match figures.tracing_ns {
        Some(ns) => row("tracing crate, fmt to file (non-blocking)", ns),
        None => println!("tracing crate: {}", super::BASELINES_NOT_BUILT),
    }
    println!("kairos events discarded: {}", figures.enabled.discarded);
    println!(
        "added per message, kairos pub/sub round publish -> callback (2 threads): {:.2} us",
        figures.e2e_us
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// A process has one trace session at a time: these tests take turns.
    static SESSION: Mutex<()> = Mutex::new(());

    #[test]
    fn e2e_times_the_round_with_tracing_off_and_on() {
        let _turn = SESSION
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let (mut off, mut on) = (0, 0);
        e2e_overhead_us(100, || if tp::enabled() { on += 1 } else { off += 1 }).unwrap();
        assert_eq!((off, on), (100, 100));
        assert!(!tp::enabled(), "the session is stopped afterwards");
    }

    #[test]
    fn json_report_has_every_figure() {
        let _turn = SESSION
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let figures = measure(true).unwrap();
        assert_eq!(figures.enabled.discarded, 0, "batches fit the queues");
        let report = json_report(&figures);
        let results = report["results"].as_array().unwrap();
        assert_eq!(results[0]["name"], "kairos");
        for key in ["enabled_ns_per_event", "disabled_ns_per_event"] {
            let value = results[0][key].as_f64().unwrap();
            assert!(value.is_finite() && value > 0.0, "{key}: {value}");
        }
        assert!(results[0]["e2e_overhead_us"].is_number());
        assert_eq!(results[1]["name"], "tracing_crate");
        if cfg!(feature = "baselines") {
            assert!(results[1]["enabled_ns_per_event"].as_f64().unwrap() > 0.0);
        } else {
            assert!(results[1]["enabled_ns_per_event"].is_null());
            assert_eq!(results[1]["built"], false);
        }
    }
}
