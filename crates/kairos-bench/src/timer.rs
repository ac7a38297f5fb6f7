//! `kairos bench timer`: a 1 kHz periodic wake-up, measured as lateness (actual minus
//! scheduled wake-up, in us), for kairos's `Timer`, a naive `std::thread::sleep(period)`
//! loop, `tokio::time::interval`, and `cyclictest` as the machine's own floor. All run
//! without real-time priority, for the same number of loops, one after the other.
//!
//! Then the executor's side: `--timers` callback timers at the same period on one node
//! clock (system time), run by a single-threaded executor spinning on its own thread,
//! measured as callback start minus scheduled tick, beside one such timer in the same run
//! (its floor: the cost of many timers is what the ratio shows), the two alternating in
//! five segments of the run.

use crate::stats::Summary;
use anyhow::{Context, bail};
use clap::Args as ClapArgs;
use kairos::exec::Executor;
use kairos::graph::{Context as GraphContext, Node};
use kairos::time::{CancelToken, Clock, Duration, Timer};
use serde_json::json;
use std::process::{Command, ExitCode};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

#[derive(Debug, ClapArgs)]
pub struct Args {
    /// Wake-ups per contender.
    #[arg(long, default_value_t = 10_000)]
    pub loops: u64,
    /// Period in microseconds.
    #[arg(long, default_value_t = 1000)]
    pub period_us: u64,
    /// Callback timers on one node clock for the executor rows (beside one such timer).
    #[arg(long, default_value_t = 1000)]
    pub timers: usize,
    /// Periods the node-clock timers run for [default: --loops, at most 2000].
    #[arg(long)]
    pub timer_periods: Option<u64>,
    /// Only the node-clock timer rows (skip the single-thread contenders and cyclictest).
    #[arg(long)]
    pub node_clock_only: bool,
    #[arg(long)]
    pub json: bool,
}

struct Result {
    name: &'static str,
    summary: Summary,
    /// Last wake-up minus its ideal time `start + loops * period`; `None` where the tool
    /// does not expose it.
    drift_us: Option<f64>,
}

fn steady_ns() -> i64 {
    Clock::steady().now().nanos()
}

fn kairos_timer(loops: u64, period: i64) -> anyhow::Result<Result> {
    std::thread::spawn(move || -> anyhow::Result<Result> {
        let token = CancelToken::new();
        let timer = Timer::new(Clock::steady(), Duration::from_nanos(period))?;
        let start = timer.next_deadline().nanos() - period;
        let mut lateness = Vec::with_capacity(loops as usize);
        let mut last = start;
        for _ in 0..loops {
            let tick = timer.wait(&token)?;
            last = steady_ns();
            lateness.push(last - tick.scheduled.nanos());
        }
        // The ideal time of the last wake-up is its grid point: the timer skips (and
        // counts) periods it missed instead of shifting its grid.
        let ideal = start + (timer.fired_count() + timer.missed_count()) as i64 * period;
        let drift = (last - ideal) as f64 / 1e3;
        Ok(Result {
            name: "kairos",
            summary: Summary::of_nanos(&lateness),
            drift_us: Some(drift),
        })
    })
    .join()
    .map_err(|_| anyhow::anyhow!("kairos timer thread panicked"))?
}

/// Ticks of each timer left out of the figures: the first ones follow the creation of
/// all the timers and their first run, which may take longer than a period (a start-up
/// cost, not the steady-state wake-up this measures).
const WARM_UP_TICKS: u64 = 2;

/// What one timer recorded: the ticks of its warm-up it has seen, then its samples.
struct Recorded {
    warm_up: u64,
    samples: Samples,
}

/// `timers` callback timers of `period` on one node clock, a single-threaded executor
/// spinning on its own thread, for `periods` periods after their warm-up: lateness of
/// every callback start, and the periods the timers skipped because they ran late
/// (counted, never silent).
fn node_clock_timers(timers: usize, periods: u64, period: i64) -> anyhow::Result<Samples> {
    let node = Node::new_in(&GraphContext::new(), "timers", "/")?;
    let clock = node.clock();
    let fired = Arc::new(AtomicU64::new(0));
    let target = timers as u64 * periods;
    let handles = (0..timers)
        .map(|_| {
            let samples = Arc::new(Mutex::new(Recorded {
                warm_up: 0,
                samples: Samples {
                    lateness: Vec::with_capacity(periods as usize),
                    missed: 0,
                },
            }));
            let (clock, fired, recorded) = (clock.clone(), fired.clone(), samples.clone());
            let timer = node.create_timer(Duration::from_nanos(period), move |tick| {
                let late = clock.now().nanos() - tick.scheduled.nanos();
                let mut recorded = recorded.lock().unwrap_or_else(PoisonError::into_inner);
                if recorded.warm_up < WARM_UP_TICKS {
                    recorded.warm_up += 1;
                } else if (recorded.samples.lateness.len() as u64) < periods {
                    recorded.samples.lateness.push(late);
                    recorded.samples.missed += tick.missed;
                    fired.fetch_add(1, Ordering::Relaxed);
                }
            })?;
            Ok((timer, samples))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let exec = Executor::single_threaded();
    exec.add_node(&node)?;
    let spin = exec.spin_thread()?;
    // Generous: a loaded machine may run far behind; missed periods are skipped, so each
    // timer still fires `periods` times, later.
    let limit = std::time::Instant::now()
        + std::time::Duration::from_nanos(period as u64 * periods * 20 + 10_000_000_000);
    while fired.load(Ordering::Relaxed) < target {
        anyhow::ensure!(
            std::time::Instant::now() < limit,
            "the node-clock timers did not fire {target} times in time"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    spin.stop()?;
    let mut all = Samples::default();
    for (_, recorded) in &handles {
        let mut recorded = recorded.lock().unwrap_or_else(PoisonError::into_inner);
        all.extend(std::mem::take(&mut recorded.samples));
    }
    drop(handles);
    exec.shutdown(Duration::from_secs(2));
    Ok(all)
}

/// Segments the one-timer and many-timer rows alternate in (see `NodeClockSection`).
const SEGMENTS: u64 = 5;

struct NodeClockResult {
    timers: usize,
    summary: Summary,
    missed: u64,
}

/// What the timers of one run recorded: every callback's lateness (ns) and the periods
/// their ticks reported missed.
#[derive(Default)]
struct Samples {
    lateness: Vec<i64>,
    missed: u64,
}

impl Samples {
    fn extend(&mut self, other: Samples) {
        self.lateness.extend(other.lateness);
        self.missed += other.missed;
    }

    fn result(self, timers: usize) -> NodeClockResult {
        NodeClockResult {
            timers,
            summary: Summary::of_nanos(&self.lateness),
            missed: self.missed,
        }
    }
}

fn std_sleep(loops: u64, period: i64) -> anyhow::Result<Result> {
    std::thread::spawn(move || {
        let start = steady_ns();
        let mut lateness = Vec::with_capacity(loops as usize);
        let mut last = start;
        for _ in 0..loops {
            let asked = last + period;
            std::thread::sleep(std::time::Duration::from_nanos(period as u64));
            last = steady_ns();
            lateness.push(last - asked);
        }
        let drift = (last - (start + loops as i64 * period)) as f64 / 1e3;
        Result {
            name: "std_sleep",
            summary: Summary::of_nanos(&lateness),
            drift_us: Some(drift),
        }
    })
    .join()
    .map_err(|_| anyhow::anyhow!("std sleep thread panicked"))
}

/// `None` when built without the `baselines` feature.
#[cfg(not(feature = "baselines"))]
fn tokio_interval(_loops: u64, _period: i64) -> anyhow::Result<Option<Result>> {
    Ok(None)
}

#[cfg(feature = "baselines")]
fn tokio_interval(loops: u64, period: i64) -> anyhow::Result<Option<Result>> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()?;
    Ok(rt.block_on(async move {
        let mut interval = tokio::time::interval(std::time::Duration::from_nanos(period as u64));
        let first = interval.tick().await; // completes at once
        let mut lateness = Vec::with_capacity(loops as usize);
        let mut last = tokio::time::Instant::now();
        for _ in 0..loops {
            let scheduled = interval.tick().await;
            last = tokio::time::Instant::now();
            lateness.push(last.duration_since(scheduled).as_nanos() as i64);
        }
        let ideal = first + std::time::Duration::from_nanos(loops * period as u64);
        let drift = last.duration_since(ideal).as_nanos() as f64 / 1e3;
        Some(Result {
            name: "tokio_interval",
            summary: Summary::of_nanos(&lateness),
            drift_us: Some(drift),
        })
    }))
}

fn cyclictest(loops: u64, period_us: u64) -> anyhow::Result<Result> {
    let out = Command::new("cyclictest")
        .args([
            "-q",
            "-t",
            "1",
            "-i",
            &period_us.to_string(),
            "-l",
            &loops.to_string(),
            "--histogram=20000",
        ])
        .output()
        .context("cyclictest not found: install it with `apt-get install rt-tests`")?;
    if !out.status.success() {
        bail!(
            "cyclictest failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let text = String::from_utf8_lossy(&out.stdout);
    // Histogram lines: "<bucket us> <count>"; overflows and the max are in '#' lines.
    let mut samples = Vec::new();
    let mut max_us = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# Max Latencies:") {
            max_us = rest
                .split_whitespace()
                .next()
                .and_then(|v| v.parse::<i64>().ok());
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        let mut fields = line.split_whitespace();
        let (Some(bucket), Some(count)) = (fields.next(), fields.next()) else {
            continue;
        };
        let (Ok(bucket), Ok(count)) = (bucket.parse::<i64>(), count.parse::<usize>()) else {
            continue;
        };
        samples.extend(std::iter::repeat_n(bucket * 1000, count));
    }
    if samples.is_empty() {
        bail!("cyclictest printed no histogram:\n{text}");
    }
    let mut summary = Summary::of_nanos(&samples);
    if let Some(max) = max_us {
        summary.max_us = max as f64;
    }
    Ok(Result {
        name: "cyclictest",
        summary,
        drift_us: None,
    })
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let timer_periods = args.timer_periods.unwrap_or(args.loops.min(2000));
    if args.loops == 0 || args.period_us == 0 || args.timers == 0 || timer_periods == 0 {
        bail!("--loops, --period-us, --timers and --timer-periods must be positive");
    }
    let period = args.period_us as i64 * 1000;
    if args.node_clock_only {
        let section = NodeClockSection::measure(args.timers, timer_periods, period)?;
        if args.json {
            let out = json!({"period_us": args.period_us, "node_clock": section.json()});
            println!("{}", serde_json::to_string_pretty(&out)?);
        } else {
            section.print(args.period_us);
        }
        return Ok(ExitCode::SUCCESS);
    }
    if !args.json {
        println!(
            "{} wake-ups at {} us per contender, one contender after another...",
            args.loops, args.period_us
        );
    }
    let kairos = kairos_timer(args.loops, period)?;
    let std = std_sleep(args.loops, period)?;
    let tokio = tokio_interval(args.loops, period)?;
    let floor = cyclictest(args.loops, args.period_us)?;
    let kairos_p99 = kairos.summary.p99_us;
    let floor_p99 = floor.summary.p99_us.max(1.0);
    let results: Vec<Result> = [Some(kairos), Some(std), tokio, Some(floor)]
        .into_iter()
        .flatten()
        .collect();
    let section = NodeClockSection::measure(args.timers, timer_periods, period)?;
    if args.json {
        let rows: Vec<_> = results
            .iter()
            .map(|r| {
                json!({
                    "name": r.name, "p50_us": r.summary.p50_us, "p99_us": r.summary.p99_us,
                    "p999_us": r.summary.p999_us, "max_us": r.summary.max_us,
                    "early": r.summary.early, "drift_us": r.drift_us,
                })
            })
            .collect();
        let out = json!({"period_us": args.period_us, "samples": args.loops, "results": rows,
            "node_clock": section.json()});
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        println!(
            "lateness of a {} us periodic wake-up (cyclictest resolution: 1 us buckets)",
            args.period_us
        );
        println!("{} {:>10}", Summary::header(), "drift_us");
        for r in &results {
            let drift = r
                .drift_us
                .map(|d| format!("{d:.1}"))
                .unwrap_or_else(|| "n/a".into());
            println!("{} {:>10}", r.summary.row(r.name), drift);
        }
        if !cfg!(feature = "baselines") {
            println!("tokio_interval: {}", super::BASELINES_NOT_BUILT);
        }
        println!(
            "kairos p99 / cyclictest p99 = {:.2}",
            kairos_p99 / floor_p99
        );
        println!(
            "(drift: last wake-up minus its ideal time; kairos keeps its grid and counts missed periods)"
        );
        section.print(args.period_us);
    }
    Ok(ExitCode::SUCCESS)
}

/// One callback timer, then many, on a node clock, in one run.
struct NodeClockSection {
    periods: u64,
    one: NodeClockResult,
    many: NodeClockResult,
}

impl NodeClockSection {
    /// One timer, then many, in alternating segments of the run: a shared machine's
    /// quiet and busy spells (and a virtual machine's stalls) then fall on both rows
    /// alike, and the ratio compares the two, not two moments of the machine.
    fn measure(timers: usize, periods: u64, period: i64) -> anyhow::Result<Self> {
        let segments = periods.min(SEGMENTS);
        let (mut one, mut many) = (Samples::default(), Samples::default());
        for segment in 0..segments {
            // The first segments take the remainder.
            let length = periods / segments + u64::from(segment < periods % segments);
            one.extend(node_clock_timers(1, length, period)?);
            many.extend(node_clock_timers(timers, length, period)?);
        }
        Ok(Self {
            periods,
            one: one.result(1),
            many: many.result(timers),
        })
    }

    fn ratio(&self) -> f64 {
        self.many.summary.p99_us / self.one.summary.p99_us.max(0.001)
    }

    fn json(&self) -> serde_json::Value {
        let rows: Vec<_> = [&self.one, &self.many]
            .iter()
            .map(|r| {
                json!({
                    "timers": r.timers, "p50_us": r.summary.p50_us, "p99_us": r.summary.p99_us,
                    "p999_us": r.summary.p999_us, "max_us": r.summary.max_us,
                    "early": r.summary.early, "missed_periods": r.missed,
                })
            })
            .collect();
        json!({"periods": self.periods, "timers": rows, "p99_ratio": self.ratio()})
    }

    fn print(&self, period_us: u64) {
        println!(
            "callback timers on one node clock (system time), single-threaded executor, {} periods of {} us",
            self.periods, period_us
        );
        println!(
            "(one timer and many alternate in {SEGMENTS} segments; each timer's first {WARM_UP_TICKS} ticks are its warm-up, left out)"
        );
        println!("{} {:>10}", Summary::header(), "missed");
        for r in [&self.one, &self.many] {
            let name = format!("node_clock x{}", r.timers);
            println!("{} {:>10}", r.summary.row(&name), r.missed);
        }
        println!(
            "p99 of {} timers / p99 of one timer = {:.2}",
            self.many.timers,
            self.ratio()
        );
    }
}
