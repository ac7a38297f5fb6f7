//! `kairos bench timer`: a 1 kHz periodic wake-up, measured as lateness (actual minus
//! scheduled wake-up, in us), for kairos's `Timer`, a naive `std::thread::sleep(period)`
//! loop, `tokio::time::interval`, and `cyclictest` as the machine's own floor. All run
//! without real-time priority, for the same number of loops, one after the other.

use crate::stats::Summary;
use anyhow::{Context, bail};
use clap::Args as ClapArgs;
use kairos::time::{CancelToken, Clock, Duration, Timer};
use serde_json::json;
use std::process::{Command, ExitCode};

#[derive(Debug, ClapArgs)]
pub struct Args {
    /// Wake-ups per contender.
    #[arg(long, default_value_t = 10_000)]
    pub loops: u64,
    /// Period in microseconds.
    #[arg(long, default_value_t = 1000)]
    pub period_us: u64,
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

fn tokio_interval(loops: u64, period: i64) -> anyhow::Result<Result> {
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
        Result {
            name: "tokio_interval",
            summary: Summary::of_nanos(&lateness),
            drift_us: Some(drift),
        }
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
    if args.loops == 0 || args.period_us == 0 {
        bail!("--loops and --period-us must be positive");
    }
    let period = args.period_us as i64 * 1000;
    if !args.json {
        println!(
            "{} wake-ups at {} us per contender, one contender after another...",
            args.loops, args.period_us
        );
    }
    let results = [
        kairos_timer(args.loops, period)?,
        std_sleep(args.loops, period)?,
        tokio_interval(args.loops, period)?,
        cyclictest(args.loops, args.period_us)?,
    ];
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
        let out = json!({"period_us": args.period_us, "samples": args.loops, "results": rows});
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
        let floor = results[3].summary.p99_us.max(1.0);
        println!(
            "kairos p99 / cyclictest p99 = {:.2}",
            results[0].summary.p99_us / floor
        );
        println!(
            "(drift: last wake-up minus its ideal time; kairos keeps its grid and counts missed periods)"
        );
    }
    Ok(ExitCode::SUCCESS)
}
