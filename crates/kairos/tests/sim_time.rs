//! Simulation time: stall policies, stopping threads under a frozen clock, deterministic
//! stepping.

use kairos::thread::{ManagedThread, PeriodicTask, StopOutcome};
use kairos::time::{
    CancelToken, Clock, ClockChange, ClockKind, Duration, JumpThreshold, SimClock, StallPolicy,
    Time, WaitError,
};
use std::sync::{Arc, Mutex, mpsc};

fn sim(ns: i64) -> Time {
    Time::new(ClockKind::Sim, ns)
}

const MS: i64 = 1_000_000;

/// Runs `body` on a thread and returns its result, failing the test if it hangs.
fn on_thread<T: Send + 'static>(body: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || tx.send(body()).unwrap());
    rx.recv_timeout(std::time::Duration::from_secs(30))
        .expect("the wait hung")
}

/// Spins (bounded) until `ready` holds: synchronization on observable state, not a sleep.
fn wait_for(ready: impl Fn() -> bool) {
    let give_up = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !ready() {
        assert!(
            std::time::Instant::now() < give_up,
            "condition never became true"
        );
        std::thread::yield_now();
    }
}

#[test]
fn fail_policy_returns_stalled_after_the_timeout() {
    let clock = SimClock::with_stall_policy(StallPolicy::Fail, Duration::from_millis(50));
    clock.publish(sim(5 * MS)).unwrap();
    let c = clock.clock();
    let err =
        on_thread(move || c.sleep_for(Duration::from_secs(10), &CancelToken::new())).unwrap_err();
    match err {
        WaitError::Stalled { last, silent_for } => {
            assert_eq!(last, sim(5 * MS));
            assert!(
                silent_for >= Duration::from_millis(50),
                "failed before the timeout: {silent_for}"
            );
        }
        other => panic!("expected Stalled, got {other:?}"),
    }
    assert_eq!(clock.stall_count(), 1);
}

#[test]
fn fallback_policy_keeps_time_moving_and_completes_the_sleep() {
    let clock =
        SimClock::with_stall_policy(StallPolicy::FallbackToSteady, Duration::from_millis(20));
    clock.publish(sim(0)).unwrap();
    let c = clock.clock();
    // Nobody publishes: the sleep completes on the fallback clock, never early.
    let end = on_thread(move || {
        c.sleep_for(Duration::from_millis(30), &CancelToken::new())
            .unwrap();
        c.now()
    });
    assert!(end >= sim(30 * MS), "woke at {end}");
    assert!(clock.is_stalled());
    // The source resumes below the fallback value: the clock holds, never goes back.
    let held = clock.now();
    clock.publish(sim(MS)).unwrap();
    assert!(clock.now() >= held, "went backwards on resume");
    assert!(!clock.is_stalled());
}

#[test]
fn wait_policy_reports_stall_and_resume_to_jump_handlers() {
    let clock = SimClock::with_stall_policy(StallPolicy::Wait, Duration::from_millis(20));
    clock.publish(sim(0)).unwrap();
    let (tx, rx) = mpsc::channel();
    let _h = clock.clock().create_jump_handler(
        JumpThreshold {
            min_forward: None,
            min_backward: None,
            on_clock_change: true,
        },
        || {},
        move |j| tx.send(j.change).unwrap(),
    );
    let c = clock.clock();
    let token = CancelToken::new();
    let t = token.clone();
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || {
        done_tx
            .send(c.sleep_for(Duration::from_secs(1), &t))
            .unwrap()
    });
    // The sleeper itself notices the stall when the timeout expires.
    assert_eq!(
        rx.recv_timeout(std::time::Duration::from_secs(10)),
        Ok(ClockChange::SimStalled)
    );
    clock.publish(sim(MS)).unwrap();
    assert_eq!(
        rx.recv_timeout(std::time::Duration::from_secs(10)),
        Ok(ClockChange::SimResumed)
    );
    token.cancel();
    assert_eq!(
        done_rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .unwrap(),
        Err(WaitError::Cancelled)
    );
}

#[test]
fn a_forward_jump_wakes_sleepers_in_deadline_order() {
    let clock = SimClock::new();
    clock.publish(sim(0)).unwrap();
    let order = Arc::new(Mutex::new(Vec::new()));
    let mut wakes = Vec::new();
    for d in [30, 10, 20] {
        let (c, order) = (clock.clock(), Arc::clone(&order));
        wakes.push(std::thread::spawn(move || {
            c.sleep_until(sim(d * MS), &CancelToken::new()).unwrap();
            order.lock().unwrap().push(d);
        }));
    }
    wait_for(|| clock.pending_waits() == 3);
    // Deterministic stepping wakes them one at a time, in deadline order.
    clock.run_until(sim(100 * MS));
    assert_eq!(*order.lock().unwrap(), [10, 20, 30]);
}

#[test]
fn stop_under_a_frozen_clock_wakes_the_sleeping_task_at_once() {
    let clock = SimClock::new();
    clock.publish(sim(0)).unwrap();
    let task = PeriodicTask::spawn(
        "imu-driver",
        clock.clock(),
        Duration::from_millis(10),
        |_| {},
    )
    .unwrap();
    clock.step(Duration::from_millis(25)); // two periods run, then the simulator freezes
    let report = task.stop(Duration::from_secs(5));
    // Stopped, not timed out: a sleep the stop did not wake would have held it for the
    // whole deadline (the frozen clock never wakes it); how fast it woke is a benchmark's.
    assert!(report.stopped(), "{report}");
    assert!(report.stop_took < Duration::from_secs(5), "{report}");
}

#[test]
fn a_thread_that_will_not_stop_is_reported_and_detached() {
    let (_keep, blocked) = mpsc::channel::<()>();
    let thread = ManagedThread::spawn("stuck-driver", move |_token| {
        // Blocks outside kairos, ignoring its token.
        let _ = blocked.recv();
    })
    .unwrap();
    let report = thread.stop(Duration::from_millis(50));
    assert_eq!(report.name, "stuck-driver");
    assert!(
        matches!(report.outcome, StopOutcome::StillRunning { .. }),
        "{report}"
    );
    assert!(report.stop_took < Duration::from_secs(5));
    assert!(report.to_string().contains("did not stop"), "{report}");
}

#[test]
fn a_stuck_thread_in_a_kairos_wait_says_what_it_waits_on() {
    let clock = SimClock::new();
    let c = clock.clock();
    let thread = ManagedThread::spawn("waits-for-sim", move |_token| {
        // Ignores its own token on purpose: only a publish could end this wait.
        let _ = c.sleep_for(Duration::from_secs(1), &CancelToken::new());
    })
    .unwrap();
    wait_for(|| thread.waiting_on().is_some());
    let report = thread.stop(Duration::from_millis(50));
    match &report.outcome {
        StopOutcome::StillRunning {
            waiting_on: Some(w),
        } => assert!(w.contains("sim clock"), "{w}"),
        other => {
            panic!("expected a stuck thread waiting on the sim clock, got {other:?} ({report})")
        }
    }
    clock.publish(sim(2_000 * MS)).unwrap(); // release it
}

/// Several timers and sleepers on simulated time, driven by `run_until`: the log of
/// wake-ups (who, at what simulated time).
fn stepped_scenario() -> Vec<(&'static str, i64)> {
    let clock = SimClock::new();
    clock.publish(sim(0)).unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut tasks = Vec::new();
    for (name, period) in [("lidar", 7), ("imu", 10), ("camera", 15)] {
        let (c, log) = (clock.clone(), Arc::clone(&log));
        tasks.push(
            PeriodicTask::spawn(
                name,
                clock.clock(),
                Duration::from_millis(period),
                move |_| {
                    log.lock().unwrap().push((name, c.now().nanos()));
                },
            )
            .unwrap(),
        );
    }
    let (c, l) = (clock.clone(), Arc::clone(&log));
    let sleeper = ManagedThread::spawn("planner", move |token| {
        while c.clock().sleep_for(Duration::from_millis(4), token).is_ok() {
            l.lock().unwrap().push(("planner", c.now().nanos()));
        }
    })
    .unwrap();
    wait_for(|| clock.pending_waits() == 4);
    clock.run_until(sim(60_000 * MS)); // one minute of robot time
    for t in tasks {
        assert!(t.stop(Duration::from_secs(5)).stopped());
    }
    assert!(sleeper.stop(Duration::from_secs(5)).stopped());
    Arc::try_unwrap(log).unwrap().into_inner().unwrap()
}

#[test]
fn stepping_is_deterministic_and_fast() {
    let started = std::time::Instant::now();
    let first = stepped_scenario();
    let second = stepped_scenario();
    let took = started.elapsed();
    let count = |name| first.iter().filter(|(n, _)| *n == name).count();
    assert_eq!(count("imu"), 6000, "a 10 ms timer over 60 s of sim time");
    assert_eq!(count("lidar"), 60_000 / 7);
    assert!(
        count("planner") >= 14_999,
        "planner woke {} times",
        count("planner")
    );
    assert_eq!(
        first, second,
        "two runs of the same scenario woke in a different order"
    );
    for w in first.windows(2) {
        assert!(w[0].1 <= w[1].1, "wake-ups out of time order: {w:?}");
    }
    assert!(
        took < std::time::Duration::from_secs(60),
        "two minutes of sim time took {took:?}"
    );
}

/// `set_settle_timeout`: a step waits as long as it is told for the thread it woke. The
/// woken thread works 3 s of real time, past the default bound (2 s): with the largest
/// bound the step returns only after that work (the test's 30 s guard catches a hang),
/// and no settle wait gave up.
#[test]
fn a_longer_settle_timeout_waits_for_work_past_the_default() {
    let clock = SimClock::new();
    assert_eq!(clock.settle_timeout(), kairos::time::SETTLE_TIMEOUT);
    // The largest bound there is: taken as "as good as forever", never an overflow.
    clock.set_settle_timeout(Duration::MAX);
    assert_eq!(clock.settle_timeout(), Duration::MAX);
    clock.publish(sim(0)).unwrap();
    let worked = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (c, w) = (clock.clock(), worked.clone());
    let worker = std::thread::spawn(move || {
        c.sleep_until(sim(10 * MS), &CancelToken::new()).unwrap();
        std::thread::sleep(std::time::Duration::from_secs(3));
        w.store(true, std::sync::atomic::Ordering::SeqCst);
        // Back to waiting on the clock: the step that woke it may move on.
        let _ = c.sleep_until(sim(1_000 * MS), &CancelToken::new());
    });
    wait_for(|| clock.pending_waits() == 1);
    on_thread({
        let clock = clock.clone();
        move || clock.step(Duration::from_millis(10))
    });
    assert!(
        worked.load(std::sync::atomic::Ordering::SeqCst),
        "the step moved on before the work it woke was done"
    );
    assert_eq!(clock.settle_timeouts(), 0);
    clock.step(Duration::from_secs(1));
    worker.join().unwrap();
}

/// A settle bound of zero (or below) never waits: the step moves on and counts it.
#[test]
fn a_zero_settle_timeout_moves_on_and_counts_it() {
    let clock = SimClock::new();
    clock.set_settle_timeout(Duration::from_millis(-5));
    assert_eq!(clock.settle_timeout(), Duration::ZERO);
    clock.publish(sim(0)).unwrap();
    let (release, released) = mpsc::channel::<()>();
    let c = clock.clock();
    let worker = std::thread::spawn(move || {
        c.sleep_until(sim(10 * MS), &CancelToken::new()).unwrap();
        // Busy until the test says so: only a bound of zero lets the step return first.
        let _ = released.recv();
    });
    wait_for(|| clock.pending_waits() == 1);
    on_thread({
        let clock = clock.clone();
        move || clock.step(Duration::from_millis(10))
    });
    assert_eq!(clock.settle_timeouts(), 1);
    release.send(()).unwrap();
    worker.join().unwrap();
}

#[test]
fn node_clock_switches_source_and_tells_jump_handlers() {
    use kairos::time::RosClock;
    let sim_clock = SimClock::new();
    sim_clock.publish(sim(42 * MS)).unwrap();
    let node = RosClock::new(sim_clock.clone());
    let clock = node.clock();
    assert_eq!(clock.kind(), ClockKind::System);
    let (tx, rx) = mpsc::channel();
    let _h = clock.create_jump_handler(
        JumpThreshold {
            min_forward: None,
            min_backward: None,
            on_clock_change: true,
        },
        || {},
        move |j| tx.send(j.change).unwrap(),
    );
    node.set_use_sim_time(true);
    assert_eq!(rx.try_recv(), Ok(ClockChange::SimActivated));
    assert_eq!(clock.now(), sim(42 * MS));
    node.set_use_sim_time(true); // no change, no report
    assert!(rx.try_recv().is_err());
    node.set_use_sim_time(false);
    assert_eq!(rx.try_recv(), Ok(ClockChange::SimDeactivated));
    assert_eq!(clock.kind(), ClockKind::System);
}

#[test]
fn a_wait_on_the_node_clock_ends_when_the_source_switches() {
    use kairos::time::RosClock;
    let sim_clock = SimClock::new();
    sim_clock.publish(sim(0)).unwrap();
    let node = RosClock::new(sim_clock.clone());
    node.set_use_sim_time(true);
    let clock = node.clock();
    let c = clock.clone();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        tx.send(c.sleep_for(Duration::from_secs(3600), &CancelToken::new()))
            .unwrap()
    });
    wait_for(|| sim_clock.pending_waits() == 1);
    node.set_use_sim_time(false);
    let result = rx
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("the wait did not end on the switch");
    assert_eq!(result, Err(WaitError::ClockChanged));
}

#[test]
fn a_timer_on_the_node_clock_restarts_its_period_on_a_switch() {
    use kairos::time::{RosClock, Timer};
    let sim_clock = SimClock::new();
    sim_clock.publish(sim(0)).unwrap();
    let node = RosClock::new(sim_clock.clone());
    node.set_use_sim_time(true);
    // A period of an hour: a switch that restarts it leaves an hour, whatever the
    // scheduler does between the switch and the reads below.
    let period = Duration::from_secs(3600);
    let timer = Timer::new(node.clock(), period).unwrap();
    sim_clock.publish(sim(3600 * 1000 * MS)).unwrap();
    assert!(timer.try_fire().is_some());
    let before_switch = Clock::system().now();
    node.set_use_sim_time(false);
    let next = timer.next_deadline();
    assert_eq!(next.kind(), ClockKind::System);
    assert!(
        next >= before_switch + period,
        "the period restarts at the switch: next {next:?}, switched after {before_switch:?}"
    );
    let left = timer.time_until_trigger();
    assert!(left > Duration::ZERO && left <= period, "{left}");
    assert!(
        timer.try_fire().is_none(),
        "a switch must not fire the timer"
    );
}

#[test]
fn a_node_with_sim_time_follows_the_clock_topic_and_its_timers_fire_on_it() {
    use kairos::exec::Executor;
    use kairos::graph::{ClockMsg, Context, Node, Qos};
    let context = Context::new();
    let simulator = Node::new_in(&context, "simulator", "/").unwrap();
    let clock_pub = simulator
        .create_publisher::<ClockMsg>("/clock", Qos::keep_last(1))
        .unwrap();
    let robot = Node::new_in(&context, "robot", "/").unwrap();
    assert_eq!(
        robot.clock().kind(),
        ClockKind::System,
        "ROS time is system time by default"
    );
    robot.set_use_sim_time(true).unwrap();
    assert_eq!(robot.clock().kind(), ClockKind::Sim);
    let fired = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&fired);
    let _timer = robot
        .create_timer(Duration::from_millis(100), move |tick| {
            log.lock().unwrap().push(tick.scheduled.nanos())
        })
        .unwrap();
    let executor = Executor::single_threaded();
    executor.add_node(&robot).unwrap();
    // The simulator publishes 0.5 s of simulated time in 10 ms steps; no real waiting.
    for step in 0..=50 {
        clock_pub.publish(ClockMsg {
            clock: sim(step * 10 * MS),
        });
        while executor.spin_some().unwrap() > 0 {}
    }
    assert_eq!(
        robot.clock().now(),
        sim(500 * MS),
        "the node clock follows /clock"
    );
    assert_eq!(
        *fired.lock().unwrap(),
        [100 * MS, 200 * MS, 300 * MS, 400 * MS, 500 * MS]
    );
}
