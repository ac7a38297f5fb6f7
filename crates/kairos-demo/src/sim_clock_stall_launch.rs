//! `kairos demo sim-clock-stall --launch`: story 1 at system scale, under `kairos launch`.
//!
//! Three processes from one launch file (`examples/launch/sim_clock_stall.launch.yaml`,
//! embedded): a simulator publishing `/clock` that freezes three seconds after it sees the
//! other two in the graph and dies once the planner waits past the frozen time, marked
//! `on_exit: shutdown`; a kairos sensor whose timer runs on the simulator's clock; and a
//! planner written the naive way (its worker waits for `/clock` to reach a target with no
//! timeout, publishing that target on [`WAITING_FOR`], and its Ctrl-C handler joins that
//! worker). When the simulator dies the launcher stops the system: the kairos sensor stops
//! on SIGINT at once (its waits end with the executor), the planner hangs in its join
//! exactly as in story 1, and the launcher SIGKILLs it at its deadline and names it,
//! quoting what it said it waits for.
//!
//! The simulator dies on an event, not a count of seconds: `/clock` messages still on
//! their way when it stopped would otherwise let a lagging planner (a loaded machine
//! delivers them late) reach its target after the stop and end cleanly, which is a
//! different story.

use super::Outcome;
use anyhow::Context as _;
use kairos::exec::Executor;
use kairos::graph::{CLOCK_TOPIC, ClockMsg, Context, Node, Qos};
use kairos::time::{ClockKind, Duration, Time};
use serde_json::json;
use std::io::Write;
use std::process::Stdio;
use std::sync::{Arc, Condvar, Mutex, PoisonError};

/// The launch file, as users find it under `examples/launch/`.
pub const LAUNCH_FILE: &str =
    include_str!("../../kairos-cli/examples/launch/sim_clock_stall.launch.yaml");

const SIM_STEP: Duration = Duration::from_millis(1);

/// How long the simulator waits for the nodes it should see before its countdown starts
/// anyway, and for the planner to wait past the frozen clock before it dies anyway.
pub const WAIT_FOR_NODES: Duration = Duration::from_secs(30);

/// Where the planner says which `/clock` time its worker waits for, each time it starts a
/// wait (a planner's status topic).
pub const WAITING_FOR: &str = "/planner/waiting_for";

/// The simulator (`kairos internal sim-clock-simulator --die-after S --after-nodes N,..`):
/// publishes `/clock` (1 ms of simulated time per ms); `die_after` seconds after the nodes
/// `after` are in the graph (or [`WAIT_FOR_NODES`] passed without them) its clock freezes,
/// and it exits with status 1 once the planner says it waits for a time past the frozen
/// clock (or [`WAIT_FOR_NODES`] passed without that), as a crashing simulator does: the
/// others are up, and the planner stuck, when it dies, however slowly a busy machine ran
/// them.
pub fn simulator_main(die_after: f64, after: &[String]) -> anyhow::Result<()> {
    kairos_zenoh::init()?.context("KAIROS_TRANSPORT=zenoh must be set for the simulator")?;
    let node = Node::new_in(&Context::global(), "simulator", "/")?;
    let clock = node.create_publisher::<ClockMsg>(CLOCK_TOPIC, Qos::keep_last(1))?;
    // The latest time the planner said it waits for (ns); i64::MIN before it says any.
    let planner_waits = Arc::new(std::sync::atomic::AtomicI64::new(i64::MIN));
    let heard = Arc::clone(&planner_waits);
    let _waiting_for =
        node.create_subscription(WAITING_FOR, Qos::keep_last(10), move |m: &ClockMsg| {
            heard.store(m.clock.nanos(), std::sync::atomic::Ordering::SeqCst);
        })?;
    let executor = Executor::single_threaded();
    executor.add_node(&node)?;
    let spinner = executor.clone();
    std::thread::spawn(move || spinner.spin());
    let steady = kairos::time::Clock::steady();
    let token = kairos::signal::shutdown_token();
    let mut t = Time::new(ClockKind::Sim, 0);
    let mut next = steady.now();
    let give_up = steady.now() + WAIT_FOR_NODES;
    let mut freeze_at = None;
    println!(
        "simulator: publishing /clock; freezing it {die_after} s after {after:?} are up, crashing once the planner waits past it"
    );
    loop {
        let now = steady.now();
        if freeze_at.is_none() {
            let graph = node.graph();
            if now >= give_up || after.iter().all(|n| graph.has_node(n)) {
                freeze_at = Some(now + Duration::from_secs_f64(die_after));
            }
        }
        if freeze_at.is_some_and(|at| now >= at) {
            break;
        }
        t = t + SIM_STEP;
        clock.publish(ClockMsg { clock: t });
        next = next + SIM_STEP;
        if steady.sleep_until(next, &token).is_err() {
            return Ok(()); // Ctrl-C before the crash
        }
    }
    // Frozen: no /clock from here on. Dies once the planner's worker waits for a time that
    // can no longer come (every /clock still on its way is older than `t`).
    let frozen = steady.now();
    let mut poll = frozen;
    while planner_waits.load(std::sync::atomic::Ordering::SeqCst) <= t.nanos()
        && steady.now() < frozen + WAIT_FOR_NODES
    {
        poll = poll + Duration::from_millis(5);
        if steady.sleep_until(poll, &token).is_err() {
            return Ok(());
        }
    }
    println!("simulator: crashed at sim time {t}");
    let _ = std::io::stdout().flush();
    std::process::exit(1);
}

/// The kairos sensor (`kairos internal sim-clock-launch-sensor`): a `use_sim_time` node
/// with a 10 ms timer on the simulator's clock. Ctrl-C shuts its executor down, which
/// ends every wait on the stalled clock.
pub fn sensor_main() -> anyhow::Result<()> {
    kairos_zenoh::init()?.context("KAIROS_TRANSPORT=zenoh must be set for the sensor")?;
    let node = Node::new_in(&Context::global(), "sensor", "/")?;
    node.set_use_sim_time(true)?;
    let announced = std::sync::Once::new();
    let _timer = node.create_timer(std::time::Duration::from_millis(10), move |tick| {
        announced.call_once(|| {
            println!(
                "sensor: reading every 10 ms of sim time (first at {})",
                tick.actual
            );
            let _ = std::io::stdout().flush();
        });
    })?;
    let executor = Executor::single_threaded();
    executor.add_node(&node)?;
    executor.spin()?;
    Ok(())
}

/// The naive planner (`kairos internal sim-clock-planner`): its worker waits for `/clock`
/// to reach each 10 ms target with no timeout and no stop check; its Ctrl-C handler
/// (SIGINT and SIGTERM, as rclcpp's) asks the worker to stop and joins it with no
/// timeout. With the simulator gone, that join never returns.
pub fn planner_main() -> anyhow::Result<()> {
    // This process handles its signals itself, the naive way.
    kairos::signal::set_shutdown_on_signal(false);
    // Installed first: a stop that comes while the process is still starting (a busy
    // machine can take seconds) is this handler's too, as the story has it.
    let mut signals = signal_hook::iterator::Signals::new([libc::SIGINT, libc::SIGTERM])?;
    kairos_zenoh::init()?.context("KAIROS_TRANSPORT=zenoh must be set for the planner")?;
    // (simulated time in ns, stop requested)
    let clock = Arc::new((Mutex::new((0i64, false)), Condvar::new()));
    let feed = Arc::clone(&clock);
    let node = Node::new_in(&Context::global(), "planner", "/")?;
    let _clock =
        node.create_subscription(CLOCK_TOPIC, Qos::keep_last(10), move |m: &ClockMsg| {
            let (lock, cv) = &*feed;
            lock.lock().unwrap_or_else(PoisonError::into_inner).0 = m.clock.nanos();
            cv.notify_all();
        })?;
    let waiting_for = node.create_publisher::<ClockMsg>(WAITING_FOR, Qos::keep_last(10))?;
    let executor = Executor::single_threaded();
    executor.add_node(&node)?;
    let spinner = executor.clone();
    std::thread::spawn(move || spinner.spin());
    let worker_clock = Arc::clone(&clock);
    let (started_tx, started_rx) = std::sync::mpsc::channel();
    let worker = std::thread::spawn(move || {
        let (lock, cv) = &*worker_clock;
        let mut state = lock.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = started_tx.send(());
        loop {
            if state.1 {
                return; // a stop is seen only between waits
            }
            let target = state.0 + 10_000_000;
            waiting_for.publish(ClockMsg {
                clock: Time::new(ClockKind::Sim, target),
            });
            while state.0 < target {
                state = cv.wait(state).unwrap_or_else(PoisonError::into_inner);
            }
        }
    });
    println!("planner: planning every 10 ms of sim time");
    let _ = std::io::stdout().flush();
    // The worker is waiting once this lock is had: it tells its start holding the lock,
    // and lets go of it only in its wait. The story's stop finds it there, however soon
    // the stop comes.
    let _ = started_rx.recv();
    drop(clock.0.lock().unwrap_or_else(PoisonError::into_inner));
    if signals.forever().next().is_some() {
        let (lock, _) = &*clock;
        let mut state = lock.lock().unwrap_or_else(PoisonError::into_inner);
        state.1 = true;
        println!(
            "planner: shutting down; joining the planning thread, which waits for /clock to \
             pass {:.3} s",
            state.0 as f64 / 1e9 + 0.01
        );
        let _ = std::io::stdout().flush();
    }
    // The naive stop: join with no timeout. Later signals are ignored (the iterator holds
    // them); only SIGKILL ends this process now.
    let _ = worker.join();
    println!("planner: stopped");
    Ok(())
}

/// Runs the launch file under `kairos launch` and reads its stop report.
pub fn run(_quick: bool) -> anyhow::Result<Outcome> {
    let exe = std::env::current_exe().context("cannot find the kairos binary")?;
    let dir = super::scratch_dir("sim-clock-stall-launch")?;
    let file = dir.join("sim_clock_stall.launch.yaml");
    std::fs::write(&file, LAUNCH_FILE).context("cannot write the launch file")?;
    let router =
        kairos_launch::router::LocalRouter::start(&exe, std::time::Duration::from_secs(30))?;
    let started = std::time::Instant::now();
    let out = router
        .command(&exe)
        .arg("launch")
        .arg(&file)
        .arg(format!("kairos:={}", exe.display()))
        .args(["--sigterm-timeout", "1", "--sigkill-timeout", "1"])
        .stdin(Stdio::null())
        .output();
    let _ = std::fs::remove_dir_all(&dir);
    let out = out.context("cannot run kairos launch")?;
    let took = started.elapsed().as_secs_f64();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let report: String = stdout
        .lines()
        .skip_while(|l| !l.starts_with("kairos launch: stop report"))
        .map(|l| format!("{l}\n"))
        .collect();
    let row = |label: &str| {
        report
            .lines()
            .find(|l| l.trim_start().starts_with(label))
            .unwrap_or("")
            .to_owned()
    };
    let sensor_clean = row("sensor-1").contains("stopped on SIGINT");
    let planner_named = row("planner-1").contains("killed by SIGKILL")
        && report.contains("waits for /clock to pass");
    let simulator_died = row("simulator-1").contains("had ended by itself");
    // Three seconds of simulation once all are up, then SIGINT, SIGTERM at 1 s, SIGKILL at
    // 2 s.
    let in_time = took < 15.0;
    let passed = sensor_clean && planner_named && simulator_died && in_time;
    let verdict = if passed {
        format!(
            "the simulator died; kairos launch stopped the system in {took:.1} s and named the \
             planner stuck on the simulator's clock, while the kairos sensor stopped on SIGINT"
        )
    } else {
        "the launch did not end as story 1 says it should (see the report)".to_owned()
    };
    Ok(Outcome {
        passed,
        verdict,
        report: format!(
            "kairos launch of examples/launch/sim_clock_stall.launch.yaml (exit {:?}, {took:.1} s):\n{report}",
            out.status.code()
        ),
        json: json!({
            "took_s": took,
            "exit_code": out.status.code(),
            "sensor_stopped_on_sigint": sensor_clean,
            "planner_named": planner_named,
            // What the launcher said of each process, so a failed run says why.
            "stop_report": if passed { serde_json::Value::Null } else { json!(report.lines().collect::<Vec<_>>()) },
            "simulator_died": simulator_died,
        }),
    })
}
