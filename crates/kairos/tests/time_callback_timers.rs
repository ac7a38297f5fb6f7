//! Callback timers on an executor, many at once, with the re-arm that keeps one sleep per
//! timer from period to period (`exec/timer.rs`) and the time driver that yields for near
//! deadlines (`time/driver.rs`): the promises still hold.
//!
//! - never early: every callback starts once the wall clock reads its tick's deadline,
//!   also checked against the monotonic clock, and across real wall-clock steps
//!   (libfaketime in a child process);
//! - nothing is lost silently: the missed periods the ticks report add up to the timers'
//!   counts, and every fire is a callback;
//! - a timer re-armed from one sleep still stops on cancel, resumes on reset and follows
//!   a node clock switching between system and simulation time.

use kairos::exec::Executor;
use kairos::graph::{Context, Node};
use kairos::time::{Clock, ClockKind, Duration, JumpThreshold, RosClock, SimClock, Tick, Time};
use kairos_testkit::set_wall_offset;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Spins (bounded) until `ready` holds: synchronization on observable state, not a sleep.
fn wait_for(what: &str, ready: impl Fn() -> bool) {
    let give_up = Instant::now() + std::time::Duration::from_secs(30);
    while !ready() {
        assert!(Instant::now() < give_up, "never happened: {what}");
        std::thread::yield_now();
    }
}

/// What a callback saw: its tick, then the wall and the monotonic clock at its start.
#[derive(Debug, Clone, Copy)]
struct Seen {
    tick: Tick,
    wall: i64,
    mono: i64,
}

type Log = Arc<Mutex<Vec<Seen>>>;

fn logging_timer(
    node: &Node,
    clock: Clock,
    period: Duration,
) -> (kairos::exec::CallbackTimer, Log) {
    let log = Log::default();
    let recorded = Arc::clone(&log);
    let timer = node
        .create_timer_on(clock, period, move |tick| {
            let wall = Clock::system().now().nanos();
            let mono = Clock::steady().now().nanos();
            recorded.lock().unwrap().push(Seen { tick, wall, mono });
        })
        .unwrap();
    (timer, log)
}

#[test]
fn many_timers_on_a_node_clock_never_fire_early_and_count_every_missed_period() {
    const TIMERS: usize = 200;
    const TICKS: usize = 30;
    let node = Node::new_in(&Context::new(), "many_timers", "/").unwrap();
    let clock = node.clock();
    assert_eq!(
        clock.kind(),
        ClockKind::System,
        "a node starts on system time"
    );
    // The wall clock, then the monotonic clock: `mono - mono0` never exceeds the time
    // since `wall0` was read, so the monotonic check below cannot pass an early tick.
    let wall0 = Clock::system().now().nanos();
    let mono0 = Clock::steady().now().nanos();
    let timers: Vec<_> = (0..TIMERS)
        .map(|_| logging_timer(&node, clock.clone(), Duration::from_millis(1)))
        .collect();
    let exec = Executor::single_threaded();
    exec.add_node(&node).unwrap();
    let spin = exec.spin_thread().unwrap();
    wait_for("every timer fired its ticks", || {
        timers
            .iter()
            .all(|(_, log)| log.lock().unwrap().len() >= TICKS)
    });
    spin.stop().unwrap();
    for (timer, log) in &timers {
        let log = log.lock().unwrap();
        for seen in log.iter() {
            let scheduled = seen.tick.scheduled.nanos();
            assert!(
                seen.tick.actual.nanos() >= scheduled && seen.wall >= scheduled,
                "a tick ran before its deadline on the wall clock: {seen:?}"
            );
            // NTP may slew the wall clock by 500 ppm against the monotonic one: 50 us of
            // allowance covers that over this test's run, not a tick fired a period early.
            let since_start = seen.mono - mono0;
            assert!(
                since_start >= scheduled - wall0 - 50_000,
                "a tick ran {} ns early on the monotonic clock: {seen:?}",
                scheduled - wall0 - since_start
            );
        }
        assert_eq!(
            timer.fired_count(),
            log.len() as u64,
            "a fire without its callback"
        );
        let reported: u64 = log.iter().map(|s| s.tick.missed).sum();
        assert_eq!(
            reported,
            timer.missed_count(),
            "the ticks' missed periods must add up to the timer's count"
        );
        // Deadlines stay on the grid: a tick that came `missed` periods late is followed
        // by the first grid point after it.
        for pair in log.windows(2) {
            let gap = pair[1].tick.scheduled.nanos() - pair[0].tick.scheduled.nanos();
            assert_eq!(
                gap,
                (pair[0].tick.missed as i64 + 1) * 1_000_000,
                "{pair:?}"
            );
        }
    }
    exec.shutdown(Duration::from_secs(5));
}

#[test]
fn a_rearmed_timer_stops_on_cancel_resumes_on_reset_and_follows_source_switches() {
    let sim = SimClock::new();
    sim.publish(Time::new(ClockKind::Sim, 0)).unwrap();
    let ros = RosClock::new(sim.clone());
    let node = Node::new_in(&Context::new(), "rearmed", "/").unwrap();
    let (timer, log) = logging_timer(&node, ros.clock(), Duration::from_millis(2));
    let exec = Executor::single_threaded();
    exec.add_node(&node).unwrap();
    let spin = exec.spin_thread().unwrap();
    let count = || log.lock().unwrap().len();

    // A witness on the same executor: while it ticks, the executor is running timers.
    let (_witness, witness_log) = logging_timer(&node, Clock::steady(), Duration::from_millis(1));
    let witnessed = || witness_log.lock().unwrap().len();

    wait_for("ticks on system time", || count() >= 5);
    timer.cancel();
    let after_cancel = count();
    let witness_then = witnessed();
    wait_for("the witness ticks 20 times after the cancel", || {
        witnessed() >= witness_then + 20
    });
    // A callback already dispatched when cancel came may still run; nothing after it.
    assert!(
        count() <= after_cancel + 1,
        "a cancelled timer kept firing: {after_cancel} ticks at the cancel, {} after",
        count()
    );
    let fired = timer.fired_count();
    timer.reset();
    wait_for("ticks again after reset", || {
        timer.fired_count() >= fired + 3
    });

    // Simulation time: the timer restarts its period there and ticks as time is published.
    ros.set_use_sim_time(true);
    let on_sim = |log: &Log| {
        log.lock()
            .unwrap()
            .iter()
            .filter(|s| s.tick.scheduled.kind() == ClockKind::Sim)
            .count()
    };
    let give_up = Instant::now() + std::time::Duration::from_secs(30);
    let mut sim_now = 0;
    while on_sim(&log) < 3 {
        assert!(Instant::now() < give_up, "no ticks on simulation time");
        sim_now += 1_000_000;
        sim.publish(Time::new(ClockKind::Sim, sim_now)).unwrap();
        std::thread::yield_now();
    }
    for seen in log.lock().unwrap().iter() {
        if seen.tick.scheduled.kind() == ClockKind::Sim {
            assert!(
                seen.tick.actual.nanos() >= seen.tick.scheduled.nanos(),
                "{seen:?}"
            );
            assert!(
                seen.tick.scheduled.nanos() <= sim_now,
                "fired before sim time reached it"
            );
        }
    }
    // And back on system time.
    ros.set_use_sim_time(false);
    let system_ticks = |log: &Log| {
        log.lock()
            .unwrap()
            .iter()
            .filter(|s| s.tick.scheduled.kind() == ClockKind::System)
            .count()
    };
    let before = system_ticks(&log);
    wait_for("ticks on system time after the switch back", || {
        system_ticks(&log) >= before + 3
    });
    spin.stop().unwrap();
    for seen in log.lock().unwrap().iter() {
        if seen.tick.scheduled.kind() == ClockKind::System {
            assert!(seen.wall >= seen.tick.scheduled.nanos(), "early: {seen:?}");
        }
    }
    exec.shutdown(Duration::from_secs(5));
}

const CHILD: &str = "KAIROS_CALLBACK_TIMERS_WALL_CHILD";

/// In the child (under libfaketime): 50 callback timers on system time while the wall
/// clock steps back and forth; every callback must start at or after its deadline on the
/// wall clock it reads, and the timers must keep ticking after each step.
fn wall_step_child(file: &Path) {
    let heard = Arc::new(Mutex::new(Vec::<i64>::new()));
    let h = Arc::clone(&heard);
    let _handler = Clock::system().create_jump_handler(
        JumpThreshold::ALL,
        || {},
        move |j| h.lock().unwrap().push(j.delta.as_nanos()),
    );
    let node = Node::new_in(&Context::new(), "stepped", "/").unwrap();
    let timers: Vec<_> = (0..50)
        .map(|_| logging_timer(&node, Clock::system(), Duration::from_millis(2)))
        .collect();
    let exec = Executor::single_threaded();
    exec.add_node(&node).unwrap();
    let spin = exec.spin_thread().unwrap();
    let total = || -> usize { timers.iter().map(|(_, l)| l.lock().unwrap().len()).sum() };
    let mono = || Clock::steady().now().nanos();
    // Each step: the monotonic times around its write, and how far it moved the wall clock.
    let mut steps: Vec<(i64, i64, i64)> = Vec::new();
    let mut last = 0;
    for (i, offset) in [-2, 0, 3, -1, 0, 2, -3, 0].into_iter().enumerate() {
        let before = total();
        let written_after = mono();
        set_wall_offset(file, offset);
        steps.push((written_after, mono(), (offset - last) * 1_000_000_000));
        last = offset;
        wait_for(&format!("ticks after step {i} to {offset:+} s"), || {
            total() >= before + 200
        });
    }
    spin.stop().unwrap();
    // The steps really happened (the test cannot pass by not stepping).
    let heard = heard.lock().unwrap().clone();
    assert!(
        heard.iter().any(|&d| d <= -500_000_000) && heard.iter().any(|&d| d >= 500_000_000),
        "the wall clock was not stepped both ways; jumps heard (ns): {heard:?}"
    );
    // A backward step written between a timer's decision (on a fresh wall read, which
    // `tick.actual` is) and the callback's own wall read makes that read land before the
    // deadline although nothing fired early: excused when the step was written within
    // 20 ms (monotonic) before the callback's read and undoing it puts the read on time.
    let stepped_under = |seen: &Seen| {
        steps.iter().any(|&(after, written, delta)| {
            delta < 0
                && (after..=written + 20_000_000).contains(&seen.mono)
                && seen.wall - delta >= seen.tick.scheduled.nanos()
        })
    };
    let mut early = Vec::new();
    for (_, log) in &timers {
        for seen in log.lock().unwrap().iter() {
            let wall_early = seen.wall < seen.tick.scheduled.nanos() && !stepped_under(seen);
            if wall_early || seen.tick.actual.nanos() < seen.tick.scheduled.nanos() {
                early.push(*seen);
            }
        }
    }
    assert!(
        early.is_empty(),
        "{} callbacks started before their deadline across wall-clock steps: {:?}",
        early.len(),
        &early[..early.len().min(5)]
    );
    exec.shutdown(Duration::from_secs(5));
}

#[test]
fn callback_timers_on_system_time_never_fire_early_across_wall_clock_steps() {
    if let Ok(file) = std::env::var(CHILD) {
        wall_step_child(Path::new(&file));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("offset");
    set_wall_offset(&file, 0);
    let out = kairos_testkit::rerun_self_under_faketime(
        "callback_timers_on_system_time_never_fire_early_across_wall_clock_steps",
        &file,
    )
    .env(CHILD, &file)
    .output()
    .unwrap();
    assert!(
        out.status.success(),
        "child failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A single-threaded executor keeps its timers' deadlines itself (`exec/timekeeper.rs`),
/// a multi-threaded one leaves them to the time driver: a timer whose node moves from one
/// executor to another is woken by the new one's, not left registered with the old.
#[test]
fn a_timer_follows_its_node_from_executor_to_executor() {
    let node = Node::new_in(&Context::new(), "moving", "/").unwrap();
    let (timer, log) = logging_timer(&node, node.clock(), Duration::from_millis(1));
    let executors = [
        Executor::single_threaded(),
        Executor::multi_threaded(2).unwrap(),
        Executor::single_threaded(),
        Executor::single_threaded(),
    ];
    for (i, exec) in executors.iter().enumerate() {
        exec.add_node(&node).unwrap();
        let before = timer.fired_count();
        let spin = exec.spin_thread().unwrap();
        wait_for(&format!("the timer fired on executor {i}"), || {
            timer.fired_count() >= before + 3
        });
        spin.stop().unwrap();
        exec.remove_node(&node).unwrap();
    }
    let log = log.lock().unwrap();
    assert!(
        log.iter()
            .all(|seen| seen.wall >= seen.tick.scheduled.nanos()),
        "a tick fired early"
    );
}
