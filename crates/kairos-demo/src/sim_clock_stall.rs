//! `kairos demo sim-clock-stall`: story 1, the simulator clock that froze shutdown.
//!
//! A "sensor server" loops publish + 10 ms sleep on simulation time; a "simulator" thread
//! publishes the clock at real-time rate. Then the simulator stops publishing (the model
//! was deleted) and, as the driver's destructor did, asks the sensor server to stop.
//! kairos: the stall is detected after the configured timeout, the stop returns within
//! milliseconds, and the clock does what the declared policy says. Beside it, a naive
//! contender (sleep until the next clock message, join with no timeout) hangs; a watchdog
//! bounds it so the demo always ends.

use super::Outcome;
use kairos::thread::PeriodicTask;
use kairos::time::{
    CancelToken, ClockChange, ClockKind, Duration, JumpThreshold, SimClock, StallPolicy, Time,
};
use serde_json::json;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, mpsc};

const STALL_TIMEOUT: Duration = Duration::from_millis(200);
const SIM_STEP: Duration = Duration::from_millis(1);
/// How long the simulator publishes before it falls silent.
pub const SIM_RUN: Duration = Duration::from_millis(300);
/// The same under `--quick`: the sensor server still loops 20 times, and the trace of
/// the run (`kairos trace dump` is tested on it) still holds over a thousand events.
pub const SIM_RUN_QUICK: Duration = Duration::from_millis(200);

fn steady_ms_since(start: Time) -> f64 {
    kairos::time::Clock::steady()
        .now()
        .since(start)
        .unwrap_or(Duration::ZERO)
        .as_millis_f64()
}

/// The simulator: publishes one step of simulated time per step of steady time, `run`
/// worth of steps (a late step is caught up, never skipped), then falls silent. Returns
/// the steady time just before the last publish.
fn simulate(sim: &SimClock, run: Duration) -> anyhow::Result<Time> {
    let steady = kairos::time::Clock::steady();
    let token = CancelToken::new();
    let mut t = Time::new(ClockKind::Sim, 0);
    let start = steady.now();
    let mut next = start;
    let mut last_publish = start;
    for _ in 0..run.as_nanos() / SIM_STEP.as_nanos() {
        t = t + SIM_STEP;
        // Stamped before the publish: the clock takes its own stamp inside it, so the
        // stall delay measured from this one is never shorter than the clock's own.
        last_publish = steady.now();
        sim.publish(t)?;
        next = next + SIM_STEP;
        steady.sleep_until(next, &token)?;
    }
    Ok(last_publish)
}

/// What the sensor did under one stall policy.
pub(super) struct PolicyRun {
    pub(super) policy: StallPolicy,
    pub(super) stall_detected_ms: f64,
    pub(super) stop_ms: f64,
    pub(super) stopped: bool,
    pub(super) sensor_loops: u64,
    pub(super) clock_at_silence_ms: f64,
    pub(super) clock_at_stop_ms: f64,
    pub(super) ended_with: Option<String>,
    /// Stalls the clock saw while the simulator still ran (its thread held off the CPU).
    pub(super) stalls_before_silence: u32,
}

/// Where the simulator ran, in the words of the demo's table and verdict.
pub(super) struct Placement {
    /// The table's first line.
    pub(super) setting: String,
    /// Who the naive contender is.
    pub(super) naive: &'static str,
    /// How the demo ended the naive contender when it hung.
    pub(super) naive_stopped: &'static str,
    /// Said before the verdict.
    pub(super) verdict_prefix: &'static str,
    /// Whether the simulator and sensors were processes of their own (a JSON field).
    pub(super) processes: bool,
}

/// The table, verdict and JSON of the runs under every policy, the same wherever the
/// simulator ran.
pub(super) fn outcome(runs: &[PolicyRun], naive_hung: bool, placement: Placement) -> Outcome {
    let mut report = format!(
        "{}\n\
         policy               stall_detected_ms  stop_ms  stopped  loops  clock at silence -> at stop\n",
        placement.setting
    );
    for r in runs {
        report.push_str(&format!(
            "{:<20} {:>17.1} {:>8.2} {:>8} {:>6}  {:.1} ms -> {:.1} ms{}\n",
            r.policy.name(),
            r.stall_detected_ms,
            r.stop_ms,
            r.stopped,
            r.sensor_loops,
            r.clock_at_silence_ms,
            r.clock_at_stop_ms,
            r.ended_with
                .as_deref()
                .map(|e| format!(" (loop ended: {e})"))
                .unwrap_or_default()
        ));
    }
    report.push_str(&format!(
        "{} (delay on the next clock message, join without timeout): {}",
        placement.naive,
        if naive_hung {
            placement.naive_stopped
        } else {
            "did not hang"
        }
    ));
    let passed = runs
        .iter()
        .all(|r| r.stopped && r.stall_detected_ms.is_finite());
    let worst = runs.iter().map(|r| r.stop_ms).fold(0.0, f64::max);
    let verdict = format!(
        "{}stop under a stalled sim clock took at most {worst:.2} ms for every policy; naive join {}",
        placement.verdict_prefix,
        if naive_hung {
            "hung"
        } else {
            "did not hang (scenario did not reproduce)"
        }
    );
    let mut json = json!({
        "naive_hung": naive_hung,
        "stall_timeout_ms": STALL_TIMEOUT.as_millis_f64(),
        "policies": runs.iter().map(|r| json!({
            "policy": r.policy.name(),
            "stall_detected_ms": r.stall_detected_ms,
            "stop_ms": r.stop_ms,
            "stopped": r.stopped,
            "sensor_loops": r.sensor_loops,
            "clock_at_silence_ms": r.clock_at_silence_ms,
            "clock_at_stop_ms": r.clock_at_stop_ms,
            "loop_ended_with": r.ended_with,
            "stalls_before_silence": r.stalls_before_silence,
        })).collect::<Vec<_>>(),
    });
    if placement.processes {
        json["processes"] = json!(true);
    }
    Outcome {
        passed,
        verdict,
        report,
        json,
    }
}

fn run_policy(policy: StallPolicy, sim_run: Duration) -> anyhow::Result<PolicyRun> {
    let sim = SimClock::with_stall_policy(policy, STALL_TIMEOUT);
    let (stall_tx, stall_rx) = mpsc::channel();
    let _handler = sim.clock().create_jump_handler(
        JumpThreshold {
            min_forward: None,
            min_backward: None,
            on_clock_change: true,
        },
        || {},
        move |jump| {
            if jump.change == ClockChange::SimStalled {
                let _ = stall_tx.send(kairos::time::Clock::steady().now());
            }
        },
    );
    let loops = Arc::new(AtomicU64::new(0));
    let count = Arc::clone(&loops);
    let sensor = PeriodicTask::spawn(
        "sensor-server",
        sim.clock(),
        Duration::from_millis(10),
        move |_| {
            count.fetch_add(1, Ordering::Relaxed); // "publish" a reading
        },
    )?;

    let silent_since = simulate(&sim, sim_run)?;
    let clock_at_silence_ms = sim.now().nanos() as f64 / 1e6;
    // Wait (bounded by a liveness limit) for the stall to be noticed: the sensor's sleep
    // looks at the moment the stall timeout expires. A stall stamped before the silence
    // was a pause of the simulator's own thread (a loaded machine can hold it off the CPU
    // past the timeout): it is counted apart, not taken for the one this run is about.
    let give_up = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let mut stalls_before_silence = 0;
    let detected = loop {
        let left = give_up.saturating_duration_since(std::time::Instant::now());
        match stall_rx.recv_timeout(left) {
            Ok(at) if at < silent_since => stalls_before_silence += 1,
            Ok(at) => break Some(at),
            Err(_) => break None,
        }
    };
    let stall_detected_ms = detected.map_or(f64::NAN, |at| {
        at.since(silent_since).unwrap_or_default().as_millis_f64()
    });
    // Let the fallback clock (if any) run a little before the model is deleted.
    let _ = kairos::time::Clock::steady().sleep_for(Duration::from_millis(50), &CancelToken::new());

    let ended_with = sensor.ended_with().map(|e| e.to_string());
    let asked = kairos::time::Clock::steady().now();
    // A stop deadline no correct wake-up misses, however loaded the machine: a sleep the
    // stop did not wake would hold it all the same (the clock is frozen), so `stopped` is
    // the verdict and `stop_ms` the figure.
    let report = sensor.stop(Duration::from_secs(5));
    let stop_ms = steady_ms_since(asked);
    Ok(PolicyRun {
        policy,
        stall_detected_ms,
        stop_ms,
        stopped: report.stopped(),
        sensor_loops: loops.load(Ordering::Relaxed),
        clock_at_silence_ms,
        clock_at_stop_ms: sim.now().nanos() as f64 / 1e6,
        ended_with,
        stalls_before_silence,
    })
}

/// The naive contender: a delay that waits for the next clock message with no timeout and
/// no stop check, and a stop that joins with no timeout. Returns whether it hung (the
/// watchdog gave up on the join).
fn naive_hangs() -> bool {
    // (simulated time in ms, stop requested, sensor is inside a delay)
    let clock = Arc::new((Mutex::new((0i64, false, false)), Condvar::new()));
    let sensor_clock = Arc::clone(&clock);
    let sensor = std::thread::spawn(move || {
        let (lock, cv) = &*sensor_clock;
        let Ok(mut state) = lock.lock() else { return };
        loop {
            if state.1 {
                return; // stop requested, seen only between delays
            }
            // delay(10 ms) on the network clock: wait for clock messages, no timeout.
            let target = state.0 + 10;
            state.2 = true;
            cv.notify_all();
            while state.0 < target {
                state = match cv.wait(state) {
                    Ok(s) => s,
                    Err(_) => return,
                };
            }
            state.2 = false;
        }
    });
    // The simulator stops publishing (the model is deleted) while the sensor is in its
    // delay; then the destructor stops the driver: set the flag, join with no timeout.
    {
        let (lock, cv) = &*clock;
        let Ok(mut state) = lock.lock() else {
            return false;
        };
        while !state.2 {
            state = match cv.wait(state) {
                Ok(s) => s,
                Err(_) => return false,
            };
        }
        state.1 = true;
    }
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = sensor.join();
        let _ = done_tx.send(());
    });
    // The watchdog: the naive join gets 1 s; the hung threads are left behind.
    done_rx
        .recv_timeout(std::time::Duration::from_secs(1))
        .is_err()
}

/// Runs the naive contender, then the sensor server under each stall policy; `--quick`
/// lets the simulator publish for [`SIM_RUN_QUICK`] instead of [`SIM_RUN`].
pub fn run(quick: bool) -> anyhow::Result<Outcome> {
    let sim_run = if quick { SIM_RUN_QUICK } else { SIM_RUN };
    let naive_hung = naive_hangs();
    let mut runs = Vec::new();
    for policy in [
        StallPolicy::Wait,
        StallPolicy::FallbackToSteady,
        StallPolicy::Fail,
    ] {
        runs.push(run_policy(policy, sim_run)?);
    }
    Ok(outcome(
        &runs,
        naive_hung,
        Placement {
            setting: format!(
                "stall timeout {STALL_TIMEOUT}; the simulator publishes for {sim_run}, then falls silent and the sensor server is stopped"
            ),
            naive: "naive contender",
            naive_stopped: "HUNG (stopped by the demo's watchdog after 1 s)",
            verdict_prefix: "",
            processes: false,
        },
    ))
}
