//! `kairos demo clock-jump`: story 4, the ROS 2 timer that stopped when NTP stepped the
//! wall clock back.
//!
//! A child process runs under libfaketime (`LD_PRELOAD`, with `FAKETIME_TIMESTAMP_FILE`
//! so this parent can step the child's wall clock while it runs, and
//! `FAKETIME_DONT_FAKE_MONOTONIC=1` so its monotonic clock stays real). In the child, for
//! about 3 s: a kairos steady 100 ms timer, a kairos system-clock 100 ms timer, and a naive
//! contender that keeps absolute wall-clock deadlines (`next = previous + period`) and
//! ignores jumps, as the ROS 2 wait did. The parent steps the wall clock back 5 s after
//! 1 s and forward 5 s after 2 s. A jump handler in the child records the jumps it saw, so
//! the demo cannot pass by not jumping.

use super::Outcome;
use anyhow::{Context, bail};
use kairos::time::{CancelToken, Clock, Duration, JumpThreshold, Timer};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

const PERIOD_MS: i64 = 100;
const RUN_MS: i64 = 3000;
const STEP_BACK_AT_MS: i64 = 1000;
const STEP_FORWARD_AT_MS: i64 = 2000;

/// Where Debian's `faketime` package puts libfaketime.
const LIBFAKETIME: &[&str] = &[
    "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
    "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
    "/usr/lib/faketime/libfaketime.so.1",
];

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Contender {
    pub expected_ticks: u64,
    pub ticks: u64,
    /// Periods the timer reported passing without a tick (a kairos timer counts them; the
    /// naive loop cannot, so 0).
    #[serde(default)]
    pub missed: u64,
    pub max_gap_ms: f64,
}

/// A gap no timer that kept its promise shows, however loaded the machine (a thread kept
/// off its core for a second), and every stall on a 5 s step does.
const STALL_MS: f64 = 1000.0;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ChildReport {
    pub steady_timer: Contender,
    pub system_timer: Contender,
    pub naive_wall_deadline: Contender,
    /// Signed deltas (ms) of the jumps the child's jump handler was told about.
    pub jumps_seen_ms: Vec<f64>,
}

/// The clock-jump scenario cannot run on this machine: what is missing and how to get it.
/// `kairos demo` (every scenario) reports it as a skip and goes on; `kairos demo
/// clock-jump` fails with it.
#[derive(Debug, thiserror::Error)]
#[error(
    "libfaketime is not installed (looked for {looked}): install it with \
     `sudo apt-get install faketime`, or point KAIROS_LIBFAKETIME at libfaketime.so.1; the \
     clock-jump scenario steps the wall clock of a child process with it"
)]
pub struct LibfaketimeMissing {
    looked: String,
}

/// Where libfaketime is: `KAIROS_LIBFAKETIME` when set (a non-standard install), else
/// Debian's locations.
pub fn libfaketime_path() -> Result<PathBuf, LibfaketimeMissing> {
    let candidates: Vec<PathBuf> = match std::env::var_os("KAIROS_LIBFAKETIME") {
        Some(path) => vec![PathBuf::from(path)],
        None => LIBFAKETIME.iter().map(PathBuf::from).collect(),
    };
    candidates
        .iter()
        .find(|p| p.is_file())
        .cloned()
        .ok_or_else(|| LibfaketimeMissing {
            looked: candidates
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// Runs the child under libfaketime and steps its wall clock. `--quick` changes nothing
/// here: the naive contender shows its stall only if the wall clock stays 5 s back for
/// about a second, so the run cannot be shorter and still show the difference.
pub fn run(_quick: bool) -> anyhow::Result<Outcome> {
    let lib = libfaketime_path().map_err(super::Unavailable::from)?;
    let dir = super::scratch_dir("clock-jump")?;
    let step_file = dir.join("faketime-offset");
    std::fs::write(&step_file, "+0\n")?;
    let report = run_child(&lib, &step_file);
    let _ = std::fs::remove_dir_all(&dir);
    let r = report?;

    let back = r.jumps_seen_ms.iter().any(|&d| (d + 5000.0).abs() < 500.0);
    let fwd = r.jumps_seen_ms.iter().any(|&d| (d - 5000.0).abs() < 500.0);
    // Every period of the run is a tick or a counted miss (a late wake-up on a loaded
    // machine may merge periods, counted), and no gap is a stall.
    let steady = &r.steady_timer;
    let steady_ok = (steady.ticks + steady.missed).abs_diff(steady.expected_ticks) <= 1
        && steady.max_gap_ms < STALL_MS;
    let system_ok = r.system_timer.max_gap_ms < STALL_MS;
    let naive_stalled = r.naive_wall_deadline.max_gap_ms > 900.0;
    let passed = back && fwd && steady_ok && system_ok;

    let mut text = String::from("contender             expected  ticks  max_gap_ms\n");
    for (name, c) in [
        ("kairos steady timer", &r.steady_timer),
        ("kairos system timer", &r.system_timer),
        ("naive wall deadline", &r.naive_wall_deadline),
    ] {
        text.push_str(&format!(
            "{name:<21} {:>8} {:>6} {:>11.1}\n",
            c.expected_ticks, c.ticks, c.max_gap_ms
        ));
    }
    let jumps: Vec<String> = r
        .jumps_seen_ms
        .iter()
        .map(|d| format!("{:+.0} ms", d))
        .collect();
    text.push_str(&format!(
        "jumps seen by the child's jump handler: {}",
        jumps.join(", ")
    ));
    let verdict = format!(
        "wall clock stepped -5 s / +5 s ({}); kairos steady timer {} ticks (expected {}), max gap {:.0} ms; \
         naive wall-deadline timer {}",
        if back && fwd {
            "both jumps seen"
        } else {
            "JUMPS NOT SEEN"
        },
        r.steady_timer.ticks,
        r.steady_timer.expected_ticks,
        r.steady_timer.max_gap_ms,
        if naive_stalled {
            format!("stalled for {:.0} ms", r.naive_wall_deadline.max_gap_ms)
        } else {
            "did not stall (the scenario did not reproduce)".into()
        }
    );
    let json = json!({
        "contenders": {
            "kairos_steady_timer": r.steady_timer,
            "kairos_system_timer": r.system_timer,
            "naive_wall_deadline": r.naive_wall_deadline,
        },
        "jumps_seen_ms": r.jumps_seen_ms,
        "naive_stalled": naive_stalled,
    });
    Ok(Outcome {
        passed,
        verdict,
        report: text,
        json,
    })
}

fn run_child(lib: &Path, step_file: &Path) -> anyhow::Result<ChildReport> {
    let exe =
        std::env::current_exe().context("cannot find the kairos binary to re-run as the child")?;
    let mut child = Command::new(exe)
        .args(["internal", "clock-jump-child"])
        .env("LD_PRELOAD", lib)
        .env("FAKETIME_TIMESTAMP_FILE", step_file)
        .env("FAKETIME_NO_CACHE", "1")
        .env("FAKETIME_DONT_FAKE_MONOTONIC", "1")
        .stdout(Stdio::piped())
        .spawn()
        .context("cannot start the clock-jump child")?;
    let stdout = child.stdout.take().context("child has no stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    let ready = lines.next().transpose()?.unwrap_or_default();
    if ready.trim() != "ready" {
        let _ = child.kill();
        bail!("the clock-jump child did not start (said {ready:?})");
    }
    let steady = Clock::steady();
    let token = CancelToken::new();
    let start = steady.now();
    steady.sleep_until(start + Duration::from_millis(STEP_BACK_AT_MS), &token)?;
    std::fs::File::create(step_file)?.write_all(b"-5\n")?;
    steady.sleep_until(start + Duration::from_millis(STEP_FORWARD_AT_MS), &token)?;
    std::fs::File::create(step_file)?.write_all(b"+0\n")?;
    let report = lines
        .next()
        .transpose()?
        .context("the clock-jump child printed no report")?;
    let status = child.wait()?;
    if !status.success() {
        bail!("the clock-jump child failed: {status}");
    }
    serde_json::from_str(&report).with_context(|| format!("unreadable child report: {report}"))
}

/// Tick times of one contender, on the steady clock, in ns, with the periods the timer
/// reported missed before each.
type Ticks = Arc<Mutex<Vec<(i64, u64)>>>;

fn contender(ticks: &Ticks, start: i64, end: i64) -> Contender {
    let mut t = ticks.lock().map(|v| v.clone()).unwrap_or_default();
    t.retain(|&(x, _)| x <= end);
    let mut last = start;
    let mut max_gap = 0;
    for x in t.iter().map(|&(x, _)| x).chain(std::iter::once(end)) {
        max_gap = max_gap.max(x - last);
        last = x;
    }
    Contender {
        expected_ticks: ((end - start) / (PERIOD_MS * 1_000_000)) as u64,
        ticks: t.len() as u64,
        missed: t.iter().map(|&(_, missed)| missed).sum(),
        max_gap_ms: max_gap as f64 / 1e6,
    }
}

/// The child: runs the three contenders for `RUN_MS` of steady time, prints a JSON report.
pub fn child_main() -> anyhow::Result<()> {
    let steady = Clock::steady();
    let period = Duration::from_millis(PERIOD_MS);
    let jumps = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&jumps);
    let _handler = Clock::system().create_jump_handler(
        JumpThreshold {
            min_forward: Some(Duration::from_millis(500)),
            min_backward: Some(Duration::from_millis(500)),
            on_clock_change: false,
        },
        || {},
        move |jump| {
            if let Ok(mut v) = seen.lock() {
                v.push(jump.delta.as_millis_f64());
            }
        },
    );
    let stop = CancelToken::new();
    let (steady_ticks, system_ticks, naive_ticks): (Ticks, Ticks, Ticks) = Default::default();
    let start = steady.now().nanos();
    let end = start + RUN_MS * 1_000_000;

    for (clock, ticks) in [
        (Clock::steady(), &steady_ticks),
        (Clock::system(), &system_ticks),
    ] {
        let timer = Timer::new(clock, period)?;
        let (ticks, stop) = (Arc::clone(ticks), stop.clone());
        // Not joined: the report only counts ticks up to `end`, and cancelling `stop` ends
        // these threads on their own.
        std::thread::spawn(move || {
            while let Ok(tick) = timer.wait(&stop) {
                if let Ok(mut v) = ticks.lock() {
                    v.push((Clock::steady().now().nanos(), tick.missed));
                }
            }
        });
    }
    let naive = Arc::clone(&naive_ticks);
    // The naive contender is never joined: after the backward step it sleeps ~5 s, which
    // is the bug it demonstrates. The process exits without waiting for it.
    std::thread::spawn(move || {
        let mut next =
            std::time::SystemTime::now() + std::time::Duration::from_millis(PERIOD_MS as u64);
        loop {
            if let Ok(remaining) = next.duration_since(std::time::SystemTime::now()) {
                std::thread::sleep(remaining);
            }
            if let Ok(mut v) = naive.lock() {
                v.push((Clock::steady().now().nanos(), 0));
            }
            next += std::time::Duration::from_millis(PERIOD_MS as u64);
        }
    });

    println!("ready");
    std::io::stdout().flush()?;
    steady.sleep_until(
        kairos::time::Time::new(steady.kind(), end),
        &CancelToken::new(),
    )?;
    stop.cancel();
    let report = ChildReport {
        steady_timer: contender(&steady_ticks, start, end),
        system_timer: contender(&system_ticks, start, end),
        naive_wall_deadline: contender(&naive_ticks, start, end),
        jumps_seen_ms: jumps.lock().map(|v| v.clone()).unwrap_or_default(),
    };
    println!("{}", serde_json::to_string(&report)?);
    std::io::stdout().flush()?;
    Ok(())
}
