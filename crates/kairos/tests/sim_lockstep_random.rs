//! Lock-step simulation time, randomized, on a busy machine (issue 24).
//!
//! Each case is drawn from a seed: how time is driven (`SimClock::step`, or a simulator
//! node publishing `/clock`), the step size (1 us to seconds), how many nodes and
//! timers and their periods, which clock they read (a node's `use_sim_time`, switched on
//! before or after its executor started; a `SimClock` given with `set_clock` under each
//! stall policy; a first sample published or not before the timers exist), the executor
//! (single-threaded, or 1-4 workers) and how it is spun (`spin_thread`, a `spin()` on a
//! thread the test spawns and does not wait for, or `spin_some` on the stepping thread
//! after each step), and a subscription on a second executor that one timer publishes to.
//!
//! Asserted, for every case:
//! - every timer ticks exactly once per period of simulated time, none missed (lock-step
//!   `spin_some` with steps longer than a period: ticks plus missed periods account for
//!   every period, as the missed-period rule says);
//! - the subscription receives every message, in order;
//! - two runs of one seed give the same callback log, each step's place in it included
//!   (every callback a step made due is logged before the step returns), and the same
//!   trace (the timer fires, clock updates and callback starts babeltrace2 reads, handles
//!   numbered by first use), with no event discarded.
//!
//! Two CPU-bound threads run beside every case: determinism must not depend on how idle
//! the machine is. The seeds are printed; `KAIROS_SIM_SEED=<seed>` replays one case, and
//! `KAIROS_SIM_CASES=<n>` runs more (default 24); `KAIROS_SIM_SHOW=1` prints each case's
//! trace events.

use kairos::exec::Executor;
use kairos::graph::{ClockMsg, Context, Node, Qos};
use kairos::time::{ClockKind, Duration, SimClock, StallPolicy, Time};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// SplitMix64: a seed gives the same case on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Spin {
    /// `Executor::spin_thread` (returns once the spin has begun).
    Thread,
    /// `std::thread::spawn(move || exec.spin())`, stepping at once.
    Spawned,
    /// `while exec.spin_some()? > 0 {}` on the stepping thread after each step.
    Lockstep,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum ClockSetup {
    /// `set_use_sim_time(true)` before the node joins its executor.
    UseSimTime,
    /// `set_use_sim_time(true)` once the executor spins (timers armed on system time).
    UseSimTimeWhileSpinning,
    /// `set_clock(SimClock::with_stall_policy(..))`.
    SetClock(StallPolicy),
    /// `set_clock` of a clock that waits through stalls with a 1 ms stall timeout: its
    /// waiters look again every millisecond of real time, so timers run for reasons of
    /// their own while steps wake them (a tick must still fire in its turn).
    SetClockRechecking,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Drive {
    /// `SimClock::step`: time moves to each deadline in turn.
    Step,
    /// A simulator node publishing on `/clock` (`publish_settled`): time jumps by a step.
    ClockTopic,
}

#[derive(Debug, Clone)]
struct Case {
    drive: Drive,
    step_ns: i64,
    steps: i64,
    /// Per node, the periods of its timers (ns).
    nodes: Vec<Vec<i64>>,
    workers: usize,
    spin: Spin,
    clock: ClockSetup,
    /// The first sample published before the timers are created (`None`: none).
    start_ns: Option<i64>,
}

impl Case {
    fn from_seed(seed: u64) -> Case {
        let mut rng = Rng(seed);
        let step_ns = rng.pick(&[
            1_000,
            7_000,
            100_000,
            1_000_000,
            3_300_000,
            10_000_000,
            250_000_000,
            1_000_000_000,
            2_500_000_000,
        ]);
        let steps = 20 + rng.below(1_500) as i64;
        let span = step_ns * steps;
        let periods = [
            1_000,
            10_000,
            250_000,
            1_000_000,
            10_000_000,
            100_000_000,
            1_000_000_000,
            3_000_000_000,
        ];
        let nodes = (0..1 + rng.below(3))
            .map(|_| {
                (0..1 + rng.below(3))
                    .map(|_| {
                        // At most ~1,500 ticks per timer, at least a few.
                        let p = rng.pick(&periods);
                        p.max(span / 1_500).min(span / 2).max(1_000)
                    })
                    .collect()
            })
            .collect();
        let workers = rng.below(5) as usize; // 0: single-threaded
        let spin = rng.pick(&[Spin::Thread, Spin::Spawned, Spin::Lockstep]);
        let clock = rng.pick(&[
            ClockSetup::UseSimTime,
            ClockSetup::UseSimTimeWhileSpinning,
            ClockSetup::SetClock(StallPolicy::Wait),
            ClockSetup::SetClock(StallPolicy::FallbackToSteady),
            ClockSetup::SetClock(StallPolicy::Fail),
        ]);
        let start_ns = (rng.below(2) == 0).then(|| rng.below(5_000_000_000) as i64);
        // `/clock` feeds the context's simulated clock, which `set_clock` does not use.
        let drive = match clock {
            ClockSetup::SetClock(_) | ClockSetup::SetClockRechecking => Drive::Step,
            _ => rng.pick(&[Drive::Step, Drive::ClockTopic]),
        };
        // Drawn last, so that every seed printed before it was added still gives its case.
        // Not with lock-step `spin_some`: there the step waits for nothing and the caller
        // runs what is queued in queue order, so an entity a recheck queued before the
        // step keeps its earlier place (see `time::sim`, "Deterministic stepping").
        let clock = match clock {
            ClockSetup::SetClock(StallPolicy::Wait)
                if spin != Spin::Lockstep && rng.below(2) == 0 =>
            {
                ClockSetup::SetClockRechecking
            }
            clock => clock,
        };
        Case {
            drive,
            step_ns,
            steps,
            nodes,
            workers,
            spin,
            clock,
            start_ns,
        }
    }
}

/// What one run saw: the callback log and the counters of each timer.
#[derive(Debug, PartialEq)]
struct Outcome {
    log: Vec<String>,
    /// Per timer: (period, created at, fired, missed), on simulation time.
    timers: Vec<(i64, i64, u64, u64)>,
    received: Vec<u64>,
    end_ns: i64,
    /// Lock-step waits that gave up on their timeout (each one a step not waited for).
    settle_timeouts: u64,
}

/// How long a lock-step wait may take before it gives up (the clock's default is 2 s).
/// The bound is a safety net for a callback that never returns, not a speed limit: a
/// loaded 2-core machine (the two CPU-bound threads here, and the rest of the suite
/// beside this test) has kept a woken worker off the CPU past the default once. A lost
/// wake waits forever, so it still ends here, counted and failed; a slow machine does not.
const SETTLE_BOUND: Duration = Duration::from_secs(30);

fn executor(workers: usize) -> Executor {
    match workers {
        0 => Executor::single_threaded(),
        n => Executor::multi_threaded(n).expect("workers"),
    }
}

/// A spin of `exec` the way `spin` says; the returned closure stops it.
fn start_spin(exec: &Arc<Executor>, spin: Spin) -> Box<dyn FnOnce()> {
    match spin {
        Spin::Thread => {
            let handle = exec.spin_thread().expect("spin thread");
            Box::new(move || handle.stop().expect("spin stopped"))
        }
        Spin::Spawned => {
            let spinner = Arc::clone(exec);
            let thread = std::thread::spawn(move || spinner.spin());
            let exec = Arc::clone(exec);
            Box::new(move || {
                exec.cancel();
                thread.join().expect("spin thread").expect("spin");
            })
        }
        Spin::Lockstep => Box::new(|| {}),
    }
}

fn run(case: &Case) -> Outcome {
    let context = Context::new();
    let stall = Duration::from_secs(3600);
    let sim = match case.clock {
        ClockSetup::SetClock(policy) => SimClock::with_stall_policy(policy, stall),
        ClockSetup::SetClockRechecking => {
            SimClock::with_stall_policy(StallPolicy::Wait, Duration::from_millis(1))
        }
        _ => context.sim_clock().expect("sim clock"),
    };
    sim.set_settle_timeout(SETTLE_BOUND);
    if let Some(start) = case.start_ns {
        sim.publish(Time::new(ClockKind::Sim, start))
            .expect("first sample");
    }
    let log = Arc::new(Mutex::new(Vec::new()));
    let exec = Arc::new(executor(case.workers));
    let listener_exec = Arc::new(executor(case.workers.min(1)));

    let listener = Node::new_in(&context, "listener", "/").expect("node");
    let received = Arc::new(Mutex::new(Vec::new()));
    let (got, sub_log) = (received.clone(), log.clone());
    let _sub = listener
        .create_subscription("/ticks", Qos::keep_all(100_000), move |n: Arc<u64>| {
            got.lock().unwrap().push(*n);
            sub_log.lock().unwrap().push(format!("sub {n}"));
        })
        .expect("subscription");
    listener_exec.add_node(&listener).expect("listener added");

    let mut nodes = Vec::new();
    let mut timers = Vec::new();
    for (n, periods) in case.nodes.iter().enumerate() {
        let node = Node::new_in(&context, &format!("robot{n}"), "/").expect("node");
        match case.clock {
            ClockSetup::UseSimTime => node.set_use_sim_time(true).expect("sim time"),
            ClockSetup::UseSimTimeWhileSpinning => {}
            ClockSetup::SetClock(_) | ClockSetup::SetClockRechecking => node.set_clock(sim.clock()),
        }
        let publisher = node
            .create_publisher::<u64>("/ticks", Qos::keep_all(100_000))
            .expect("publisher");
        let publisher = Arc::new(publisher);
        for (t, period) in periods.iter().enumerate() {
            let (log, clock) = (log.clone(), sim.clone());
            let publisher = (n == 0 && t == 0).then(|| publisher.clone());
            let before_sim = Arc::new(Mutex::new((0, 0)));
            let system_ticks = before_sim.clone();
            let timer = node
                .create_timer(Duration::from_nanos(*period), move |tick| {
                    if tick.scheduled.kind() != ClockKind::Sim {
                        // A tick of system time before `set_use_sim_time(true)` took
                        // effect (a loaded machine may let a short period pass first):
                        // not part of the simulation, counted apart.
                        let mut ticks = system_ticks.lock().unwrap();
                        *ticks = (ticks.0 + 1, ticks.1 + tick.missed);
                        return;
                    }
                    log.lock().unwrap().push(format!(
                        "timer {n}.{t} scheduled {} now {} missed {}",
                        tick.scheduled.nanos(),
                        clock.now().nanos(),
                        tick.missed
                    ));
                    if let Some(publisher) = &publisher {
                        publisher.publish(tick.scheduled.nanos() as u64);
                    }
                })
                .expect("timer");
            timers.push((*period, timer, before_sim));
        }
        exec.add_node(&node).expect("node added");
        nodes.push(node);
    }
    let stop_listener = start_spin(
        &listener_exec,
        match case.spin {
            Spin::Lockstep => Spin::Lockstep,
            _ => Spin::Thread,
        },
    );
    let stop = start_spin(&exec, case.spin);
    if case.clock == ClockSetup::UseSimTimeWhileSpinning {
        for node in &nodes {
            node.set_use_sim_time(true).expect("sim time");
        }
    }
    let created = sim.now().nanos();
    let spin_some = |exec: &Executor| while exec.spin_some().expect("spin_some") > 0 {};
    if case.spin == Spin::Lockstep {
        spin_some(&exec);
        spin_some(&listener_exec);
    }
    let simulator = Node::new_in(&context, "simulator", "/").expect("node");
    let clock_topic = simulator
        .create_publisher::<ClockMsg>("/clock", Qos::keep_last(1))
        .expect("publisher");
    for _ in 0..case.steps {
        match case.drive {
            Drive::Step => sim.step(Duration::from_nanos(case.step_ns)),
            Drive::ClockTopic => {
                clock_topic.publish(ClockMsg {
                    clock: Time::new(ClockKind::Sim, sim.now().nanos() + case.step_ns),
                });
            }
        }
        if case.spin == Spin::Lockstep {
            // The timers, then what they published, then anything that made due.
            loop {
                let ran = exec.spin_some().expect("spin_some")
                    + listener_exec.spin_some().expect("spin_some");
                if ran == 0 {
                    break;
                }
            }
        }
        // Everything the step made due has run by now, whichever thread ran it: the
        // log says so in the same place every run.
        log.lock()
            .unwrap()
            .push(format!("step to {}", sim.now().nanos()));
        if sim.settle_timeouts() > 0 {
            // The case has failed: stop rather than wait out the bound at every step.
            break;
        }
    }
    let end_ns = sim.now().nanos();
    stop();
    stop_listener();
    let timers = timers
        .iter()
        .map(|(period, timer, before_sim)| {
            let (fired, missed) = *before_sim.lock().unwrap();
            (
                *period,
                created,
                timer.fired_count() - fired,
                timer.missed_count() - missed,
            )
        })
        .collect();
    exec.shutdown(Duration::from_secs(5));
    listener_exec.shutdown(Duration::from_secs(5));
    let log = log.lock().unwrap().clone();
    let received = received.lock().unwrap().clone();
    Outcome {
        log,
        timers,
        received,
        end_ns,
        settle_timeouts: sim.settle_timeouts(),
    }
}

/// The events of a trace that must repeat exactly: timer fires (scheduled and actual
/// simulated times), simulated clock updates and callback starts, with handles numbered
/// by first use. With `from_first_sim_tick`, the events before the first tick on
/// simulation time are left out (see `run_traced`).
fn deterministic_events(trace: &Path, from_first_sim_tick: bool) -> Vec<String> {
    let text = kairos_testkit::babeltrace2_clean(&[], trace);
    let keep = [
        "kairos:timer_fire",
        "kairos:sim_clock_update",
        "ros2:callback_start",
    ];
    // `[time] (+delta) host event: { context }, { stream context }, { fields }`
    let mut kept: Vec<&str> = text
        .lines()
        .filter_map(|line| {
            let at = line.find(" kairos:").or_else(|| line.find(" ros2:"))?;
            let event = &line[at + 1..];
            keep.iter().any(|k| event.starts_with(k)).then_some(event)
        })
        .collect();
    if from_first_sim_tick {
        let first = kept
            .iter()
            .position(|e| e.starts_with("kairos:timer_fire") && !e.contains("\"system\""))
            .unwrap_or(kept.len());
        kept.drain(..first);
    }
    let mut handles: HashMap<String, usize> = HashMap::new();
    kept.into_iter()
        .map(|event| {
            // Everything after the event name except the stream context (cpu id, thread).
            let fields = event.rsplit_once("}, {").map_or(event, |(_, f)| f);
            let mut out = event.split(':').take(2).collect::<Vec<_>>().join(":");
            for field in fields.trim_end_matches(" }").split(", ") {
                let (key, value) = field.split_once(" = ").unwrap_or((field, ""));
                let key = key.trim_start_matches("{ ").trim();
                if key.ends_with("handle") || key == "callback" {
                    let next = handles.len();
                    let id = *handles.entry(value.to_string()).or_insert(next);
                    out.push_str(&format!(" {key}=#{id}"));
                } else {
                    out.push_str(&format!(" {key}={value}"));
                }
            }
            out
        })
        .collect()
}

fn run_traced(case: &Case, dir: &Path, name: &str) -> (Outcome, Vec<String>) {
    let path = dir.join(name);
    // Room in each thread's queue for every event of the case, drained or not: none may be
    // discarded. Sized to the case: a queue is allocated and initialized whole by its
    // thread's first event, which a 2-core machine under load makes slow enough to count.
    let span = case.step_ns * case.steps;
    let ticks: i64 = case.nodes.iter().flatten().map(|p| span / p + 1).sum();
    // Per tick: its fire, callback start and end, a publish and its delivery's events; per
    // step: the clock update, and a `/clock` message's publish, delivery and callback.
    let events = ((ticks + case.steps) * 8) as usize;
    let config = kairos::trace::SessionConfig {
        buffer_events: (2 * events).next_power_of_two().max(16 * 1024),
        ..Default::default()
    };
    let session = kairos::trace::Session::start_with(&path, config).expect("trace session");
    let outcome = run(case);
    let stats = session.stop().expect("trace written");
    assert_eq!(
        (stats.events_discarded, stats.events_lost),
        (0, 0),
        "every event of {case:?} must be in its trace"
    );
    if outcome.settle_timeouts > 0 {
        // Where each wait gave up (simulated time, and how many marked runs it was owed).
        let text = kairos_testkit::babeltrace2_clean(&[], &path);
        let gave_up: Vec<&str> = text
            .lines()
            .filter(|line| line.contains("kairos:sim_settle_timeout"))
            .collect();
        panic!(
            "{} lock-step wait(s) of {case:?} ended on their {SETTLE_BOUND:?} bound (a run the \
             step marked never came back); the trace says:\n{}",
            outcome.settle_timeouts,
            gave_up.join("\n")
        );
    }
    // Until the first tick on simulation time, timers switched to it while spinning ran on
    // system time (ticks a loaded machine may let through before the switch, see `run`):
    // not compared. Nothing of system time follows that tick: each timer's re-arm on the
    // simulated clock, which the first step waits for, runs after any callback it had in
    // progress.
    let from_first_sim_tick = case.clock == ClockSetup::UseSimTimeWhileSpinning;
    (outcome, deterministic_events(&path, from_first_sim_tick))
}

fn check(case: &Case, outcome: &Outcome) {
    assert_eq!(
        outcome.settle_timeouts, 0,
        "no lock-step wait may end on its timeout in {case:?}"
    );
    for (i, &(period, created, fired, missed)) in outcome.timers.iter().enumerate() {
        let periods = ((outcome.end_ns - created) / period) as u64;
        // Lock-step spinning and `/clock` jumps move time by whole steps: a step longer
        // than the period fires the timer once and counts the periods it passed.
        let long_steps = (case.spin == Spin::Lockstep || case.drive == Drive::ClockTopic)
            && case.step_ns > period;
        if long_steps {
            assert_eq!(
                fired + missed,
                periods,
                "timer {i} (period {period} ns): {fired} ticks + {missed} missed must account \
                 for the {periods} periods of {case:?}"
            );
        } else {
            assert_eq!(
                (fired, missed),
                (periods, 0),
                "timer {i} (period {period} ns) must tick once a period with none missed \
                 in {case:?}"
            );
        }
    }
    let published: Vec<u64> = outcome
        .log
        .iter()
        .filter(|line| line.starts_with("timer 0.0 "))
        .map(|line| line.split(' ').nth(3).unwrap().parse().unwrap())
        .collect();
    assert_eq!(
        outcome.received, published,
        "the subscription must receive every message the timer published, in order"
    );
}

#[test]
fn lockstep_stepping_is_exact_and_repeats_under_load() {
    let seeds: Vec<u64> = match std::env::var("KAIROS_SIM_SEED") {
        Ok(seed) => vec![seed.parse().expect("KAIROS_SIM_SEED is a u64")],
        Err(_) => {
            let cases = std::env::var("KAIROS_SIM_CASES")
                .ok()
                .and_then(|n| n.parse().ok())
                .unwrap_or(24);
            let base = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64);
            (0..cases).map(|i| Rng(base).next() ^ i).collect()
        }
    };
    let _load = kairos_testkit::CpuLoad::start(2);
    let dir = tempfile::tempdir().expect("temp dir");
    for seed in seeds {
        let case = Case::from_seed(seed);
        eprintln!("seed {seed} (replay: KAIROS_SIM_SEED={seed}): {case:?}");
        let started = std::time::Instant::now();
        let (first, first_trace) = run_traced(&case, dir.path(), &format!("{seed}-a"));
        check(&case, &first);
        let (second, second_trace) = run_traced(&case, dir.path(), &format!("{seed}-b"));
        check(&case, &second);
        assert!(
            first == second,
            "seed {seed}: two runs differ: {:?} vs {:?}",
            first.log.iter().zip(&second.log).find(|(a, b)| a != b),
            (first.log.len(), second.log.len())
        );
        assert!(
            !first_trace.is_empty(),
            "seed {seed}: the trace holds no timer fire"
        );
        if first_trace != second_trace {
            // Both runs' events, kept for whoever replays the seed.
            let kept = std::env::temp_dir().join(format!("kairos-sim-{seed}"));
            std::fs::create_dir_all(&kept).expect("kept dir");
            std::fs::write(kept.join("a.events"), first_trace.join("\n")).expect("kept");
            std::fs::write(kept.join("b.events"), second_trace.join("\n")).expect("kept");
            panic!(
                "seed {seed}: two traces differ, first at {:?}; both runs' events are in {}",
                first_trace.iter().zip(&second_trace).find(|(a, b)| a != b),
                kept.display()
            );
        }
        if std::env::var_os("KAIROS_SIM_SHOW").is_some() {
            eprintln!("{}", first_trace.join("\n"));
        }
        eprintln!(
            "seed {seed}: {} callbacks, {} trace events, twice in {:?}",
            first.log.len(),
            first_trace.len(),
            started.elapsed()
        );
    }
}
