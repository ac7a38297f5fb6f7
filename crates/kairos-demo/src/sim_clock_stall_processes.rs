//! `kairos demo sim-clock-stall --processes`: story 1 as it happened, the simulator in a
//! process of its own, its clock reaching the robot over the network.
//!
//! A simulator process publishes `/clock` (kairos's `ClockMsg`, on the wire as
//! `rosgraph_msgs/msg/Clock`) one millisecond of simulated time per millisecond. Three
//! sensor processes, one per stall policy, each run a node with `use_sim_time` whose
//! periodic task sleeps 10 ms of simulated time per loop. Once every sensor runs, the demo
//! kills the simulator (SIGKILL: the model is gone, mid-run) and then asks each sensor to
//! stop, as the driver's destructor did. Every sensor notices the stall after its
//! timeout (measured from the last `/clock` message it received), and its stop returns
//! within its deadline whatever the policy; the table is the in-process demo's. Beside them, a naive sensor process
//! (sleep until the next clock message, join with no timeout) hangs; the demo kills it
//! after a second so it always ends.
//!
//! Every process talks through a `kairos router` on a free loopback port; children are
//! killed when the demo ends, however it ends.

use super::Outcome;
use super::sim_clock_stall::{Placement, PolicyRun, outcome};
use anyhow::{Context as _, bail};
use kairos::graph::{CLOCK_TOPIC, ClockMsg, Context, Node, NodeOptions, Qos, SimStall};
use kairos::thread::PeriodicTask;
use kairos::time::{
    CancelToken, ClockChange, ClockKind, Duration, JumpThreshold, StallPolicy, Time,
};
use kairos_launch::process::{Running, expect_line, lines_of, signal};
use kairos_launch::router::LocalRouter;
use serde_json::json;
use std::io::Write;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;

const STALL_TIMEOUT: Duration = Duration::from_millis(200);
const SIM_STEP: Duration = Duration::from_millis(1);
const SENSOR_PERIOD: Duration = Duration::from_millis(10);
/// Loops each sensor runs on the simulator's clock before the simulator is killed.
const LOOPS_BEFORE_KILL: u64 = 10;
/// The longest any child may take to start, see the router, or answer.
const STARTUP: std::time::Duration = std::time::Duration::from_secs(30);
/// How long the demo waits for each sensor to notice the stall, and then to report.
const ANSWER: std::time::Duration = std::time::Duration::from_secs(5);
/// The naive contender's join gets this long before it counts as hung.
const NAIVE_WATCHDOG: std::time::Duration = std::time::Duration::from_secs(1);

const POLICIES: [StallPolicy; 3] = [
    StallPolicy::Wait,
    StallPolicy::FallbackToSteady,
    StallPolicy::Fail,
];

fn policy_named(name: &str) -> anyhow::Result<StallPolicy> {
    POLICIES
        .into_iter()
        .find(|p| p.name() == name)
        .with_context(|| format!("no stall policy '{name}' (wait, fallback_to_steady, fail)"))
}

/// Steady time in ns (the monotonic clock).
fn steady_ns() -> i64 {
    kairos::time::Clock::steady().now().nanos()
}

/// A `kairos internal ...` child on the demo's router, with stdin and stdout piped.
fn child(exe: &std::path::Path, router: &LocalRouter, args: &[&str]) -> anyhow::Result<Running> {
    Ok(Running(
        router
            .command(exe)
            .arg("internal")
            .args(args)
            .env_remove("KAIROS_TRACE")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("cannot start `kairos internal {}`", args.join(" ")))?,
    ))
}

fn say(child: &mut Running, line: &str) -> anyhow::Result<()> {
    let stdin = child.0.stdin.as_mut().context("child has no stdin")?;
    writeln!(stdin, "{line}")?;
    stdin.flush()?;
    Ok(())
}

pub fn run(_quick: bool) -> anyhow::Result<Outcome> {
    let exe = std::env::current_exe().context("cannot find the kairos binary")?;
    let router = LocalRouter::start(&exe, STARTUP)?;

    let mut simulator = child(&exe, &router, &["sim-clock-simulator"])?;
    let simulator_lines = lines_of(&mut simulator.0)?;
    expect_line(&simulator_lines, "ready", STARTUP, "the simulator")?;

    let mut sensors = Vec::new();
    for policy in POLICIES {
        let mut sensor = child(&exe, &router, &["sim-clock-sensor", policy.name()])?;
        let lines = lines_of(&mut sensor.0)?;
        sensors.push((policy, sensor, lines));
    }
    let mut naive = child(&exe, &router, &["sim-clock-naive"])?;
    let naive_lines = lines_of(&mut naive.0)?;
    for (policy, _, lines) in &sensors {
        expect_line(
            lines,
            "running",
            STARTUP,
            &format!("the {} sensor", policy.name()),
        )?;
    }
    expect_line(&naive_lines, "running", STARTUP, "the naive sensor")?;

    // The model is deleted: the simulator dies mid-run, without a word on the wire.
    signal(&simulator.0, libc::SIGKILL);
    let _ = simulator.0.wait();

    // Each sensor says when it noticed the stall and when its last /clock message came.
    let mut stalls = Vec::new();
    for (policy, _, lines) in &sensors {
        let who = format!("the {} sensor", policy.name());
        let line = expect_line(lines, "stalled ", ANSWER, &who)?;
        let numbers: Vec<i64> = line
            .split_whitespace()
            .skip(1)
            .filter_map(|s| s.parse().ok())
            .collect();
        let [stalled_at, last_sample, clock] = numbers[..] else {
            bail!("{who} said '{line}', not 'stalled <ns> <ns> <ns>'");
        };
        stalls.push(((stalled_at - last_sample) as f64 / 1e6, clock as f64 / 1e6));
    }
    // Let the fallback clock (if any) run a little before the sensors are stopped.
    std::thread::sleep(std::time::Duration::from_millis(50));
    for (_, sensor, _) in sensors.iter_mut() {
        say(sensor, "stop")?;
    }
    say(&mut naive, "stop")?;

    let mut runs = Vec::new();
    for ((policy, mut sensor, lines), (stall_detected_ms, clock_at_silence_ms)) in
        sensors.into_iter().zip(stalls)
    {
        let line = expect_line(
            &lines,
            "result ",
            ANSWER,
            &format!("the {} sensor", policy.name()),
        )?;
        let result: serde_json::Value = serde_json::from_str(&line["result ".len()..])
            .with_context(|| format!("the {} sensor's result: {line}", policy.name()))?;
        let _ = sensor.0.wait();
        runs.push(PolicyRun {
            policy,
            stall_detected_ms,
            stop_ms: result["stop_ms"].as_f64().unwrap_or(f64::NAN),
            stopped: result["stopped"].as_bool().unwrap_or(false),
            sensor_loops: result["loops"].as_u64().unwrap_or(0),
            clock_at_silence_ms,
            clock_at_stop_ms: result["clock_ms"].as_f64().unwrap_or(f64::NAN),
            ended_with: result["ended_with"].as_str().map(str::to_owned),
            stalls_before_silence: 0,
        });
    }
    let naive_hung =
        expect_line(&naive_lines, "stopped", NAIVE_WATCHDOG, "the naive sensor").is_err();
    drop(naive); // killed if it still hangs
    drop(router);

    Ok(outcome(
        &runs,
        naive_hung,
        Placement {
            setting: format!(
                "stall timeout {STALL_TIMEOUT}; the simulator process publishes /clock over Zenoh until it is killed (SIGKILL), then each sensor process is stopped; stall detection from the last /clock each sensor received"
            ),
            naive: "naive contender process",
            naive_stopped: "HUNG (killed by the demo after 1 s)",
            verdict_prefix: "with the simulator in another process, ",
            processes: true,
        },
    ))
}

/// Lines the parent writes on a child's stdin, read on a thread of their own.
fn stdin_lines() -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// The simulator (`kairos internal sim-clock-simulator`): publishes `/clock`, one step of
/// simulated time per step of steady time (a late step is caught up, never skipped),
/// until it is killed.
pub fn simulator_main() -> anyhow::Result<()> {
    kairos_zenoh::init()?.context("KAIROS_TRANSPORT=zenoh must be set for the simulator")?;
    let node = Node::new_in(&Context::global(), "simulator", "/")?;
    let clock = node.create_publisher::<ClockMsg>(CLOCK_TOPIC, Qos::keep_last(1))?;
    println!("ready");
    let steady = kairos::time::Clock::steady();
    let token = CancelToken::new();
    let mut t = Time::new(ClockKind::Sim, 0);
    let mut next = steady.now();
    loop {
        t = t + SIM_STEP;
        clock.publish(ClockMsg { clock: t });
        next = next + SIM_STEP;
        steady.sleep_until(next, &token)?;
    }
}

/// A sensor (`kairos internal sim-clock-sensor POLICY`): a `use_sim_time` node whose
/// periodic task sleeps 10 ms of simulated time per loop. It says `running` once it has
/// looped on the simulator's clock, `stalled <steady ns> <sim ns>` when the clock stalls,
/// and on `stop` stops the task (1 s deadline) and says `result <json>`.
pub fn sensor_main(policy: &str) -> anyhow::Result<()> {
    let policy = policy_named(policy)?;
    kairos_zenoh::init()?.context("KAIROS_TRANSPORT=zenoh must be set for a sensor")?;
    let context = Context::global();
    let stall = SimStall::new(policy, STALL_TIMEOUT);
    let node = Node::with_options(
        &context,
        &format!("sensor_{}", policy.name()),
        NodeOptions::new().sim_stall(stall),
    )?;
    node.set_use_sim_time(true)?;
    let sim = context.sim_clock_with(stall)?;
    let (stall_tx, stall_rx) = mpsc::channel();
    let _stalls = sim.clock().create_jump_handler(
        JumpThreshold {
            min_forward: None,
            min_backward: None,
            on_clock_change: true,
        },
        || {},
        move |jump| {
            if jump.change == ClockChange::SimStalled {
                let _ = stall_tx.send(steady_ns());
            }
        },
    );
    // When the last /clock message arrived: every sample moves the clock forward, and the
    // handler runs in the thread that applies it.
    let last_sample = Arc::new(std::sync::atomic::AtomicI64::new(0));
    let arrival = Arc::clone(&last_sample);
    let _samples = sim.clock().create_jump_handler(
        JumpThreshold {
            min_forward: Some(Duration::from_nanos(1)),
            min_backward: None,
            on_clock_change: false,
        },
        || {},
        move |_| arrival.store(steady_ns(), Ordering::Relaxed),
    );
    // The clock starts with the first /clock message from the simulator.
    let steady = kairos::time::Clock::steady();
    let token = CancelToken::new();
    let give_up = steady.now() + Duration::from_secs(30);
    while !sim.has_started() {
        if steady.now() > give_up {
            bail!("no /clock message from the simulator within 30 s");
        }
        steady.sleep_for(Duration::from_millis(5), &token)?;
    }
    let loops = Arc::new(AtomicU64::new(0));
    let count = Arc::clone(&loops);
    let (running_tx, running_rx) = mpsc::channel();
    let sensor = PeriodicTask::spawn("sensor-server", node.clock(), SENSOR_PERIOD, move |_| {
        // "publish" a reading
        if count.fetch_add(1, Ordering::Relaxed) + 1 == LOOPS_BEFORE_KILL {
            let _ = running_tx.send(());
        }
    })?;
    running_rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .context("the sensor did not loop on the simulator's clock within 30 s")?;
    println!("running");
    let stalled_at = stall_rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .context("no stall within 30 s")?;
    println!(
        "stalled {stalled_at} {} {}",
        last_sample.load(Ordering::Relaxed),
        sim.now().nanos()
    );
    let commands = stdin_lines();
    commands
        .recv_timeout(std::time::Duration::from_secs(30))
        .context("no stop from the demo within 30 s")?;
    let ended_with = sensor.ended_with().map(|e| e.to_string());
    let asked = steady.now();
    // As in one process: a deadline no correct wake-up misses (see `sim_clock_stall`).
    let report = sensor.stop(Duration::from_secs(5));
    let stop_ms = steady
        .now()
        .since(asked)
        .unwrap_or_default()
        .as_millis_f64();
    println!(
        "result {}",
        json!({
            "stop_ms": stop_ms,
            "stopped": report.stopped(),
            "loops": loops.load(Ordering::Relaxed),
            "clock_ms": sim.now().nanos() as f64 / 1e6,
            "ended_with": ended_with,
        })
    );
    Ok(())
}

/// The naive contender (`kairos internal sim-clock-naive`): its delay waits for `/clock`
/// messages to reach the target with no timeout and no stop check, and its stop joins
/// with no timeout. Says `running` once inside a delay on the simulator's clock, and
/// `stopped` if the join ever returns.
pub fn naive_main() -> anyhow::Result<()> {
    use std::sync::{Condvar, Mutex};
    kairos_zenoh::init()?.context("KAIROS_TRANSPORT=zenoh must be set for the naive sensor")?;
    // (simulated time in ns, stop requested, clock messages seen)
    let clock = Arc::new((Mutex::new((0i64, false, 0u64)), Condvar::new()));
    let feed = Arc::clone(&clock);
    let node = Node::new_in(&Context::global(), "naive_sensor", "/")?;
    // The naive driver's clock callback: every /clock message, as it comes.
    let _clock =
        node.create_subscription(CLOCK_TOPIC, Qos::keep_last(10), move |m: &ClockMsg| {
            let (lock, cv) = &*feed;
            if let Ok(mut state) = lock.lock() {
                state.0 = m.clock.nanos();
                state.2 += 1;
                cv.notify_all();
            }
        })?;
    let executor = kairos::exec::Executor::single_threaded();
    executor.add_node(&node)?;
    let spinner = executor.clone();
    std::thread::spawn(move || spinner.spin());
    let sensor_clock = Arc::clone(&clock);
    let (inside_tx, inside_rx) = mpsc::channel();
    let sensor = std::thread::spawn(move || {
        let (lock, cv) = &*sensor_clock;
        let Ok(mut state) = lock.lock() else { return };
        loop {
            if state.1 {
                return; // stop requested, seen only between delays
            }
            // delay(10 ms) on the network clock: wait for clock messages, no timeout.
            let target = state.0 + SENSOR_PERIOD.as_nanos();
            if state.2 > LOOPS_BEFORE_KILL {
                let _ = inside_tx.send(());
            }
            while state.0 < target {
                state = match cv.wait(state) {
                    Ok(s) => s,
                    Err(_) => return,
                };
            }
        }
    });
    inside_rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .context("the naive sensor saw no /clock within 30 s")?;
    println!("running");
    stdin_lines()
        .recv_timeout(std::time::Duration::from_secs(30))
        .context("no stop from the demo within 30 s")?;
    {
        let (lock, _) = &*clock;
        if let Ok(mut state) = lock.lock() {
            state.1 = true;
        }
    }
    // The naive stop: join with no timeout. The demo kills this process if it hangs.
    let _ = sensor.join();
    println!("stopped");
    let _ = executor.shutdown(Duration::from_secs(1));
    Ok(())
}

/// A follower (`kairos internal sim-clock-follower --ticks N`): a `use_sim_time` node
/// whose 100 ms timer runs on the `/clock` another process publishes. Says `ready`, then
/// `tick <scheduled ns> <actual ns> <missed>` for each of `ticks` ticks, and exits.
pub fn follower_main(ticks: u64) -> anyhow::Result<()> {
    kairos_zenoh::init()?.context("KAIROS_TRANSPORT=zenoh must be set for the follower")?;
    let node = Node::new_in(&Context::global(), "follower", "/")?;
    node.set_use_sim_time(true)?;
    let (tx, rx) = mpsc::channel();
    let _timer = node.create_timer(Duration::from_millis(100), move |tick| {
        let _ = tx.send(tick);
    })?;
    let executor = kairos::exec::Executor::single_threaded();
    executor.add_node(&node)?;
    let spin = executor.spin_thread()?;
    println!("ready");
    for _ in 0..ticks {
        let tick = rx
            .recv_timeout(std::time::Duration::from_secs(30))
            .context("no timer tick within 30 s: is a simulator publishing /clock?")?;
        println!(
            "tick {} {} {}",
            tick.scheduled.nanos(),
            tick.actual.nanos(),
            tick.missed
        );
    }
    spin.stop()?;
    Ok(())
}
