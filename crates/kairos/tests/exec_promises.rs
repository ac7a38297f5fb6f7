//! Issue 12's broken promises, each proven by a test that failed before the fix, and the
//! three example programs (compiled into this test and run, so they cannot rot).

#[path = "../examples/await_same_group.rs"]
mod await_same_group;
#[path = "../examples/lockstep.rs"]
mod lockstep;
#[path = "../examples/sim_stall_resume.rs"]
mod sim_stall_resume;

use kairos::exec::{DeadlockReason, Executor};
use kairos::graph::{CallError, Context, Node};
use kairos::time::{CancelToken, Clock, Duration, SimClock, StallPolicy};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Instant;

// --- 12.1: an awaited call never waits silently ---------------------------------------

#[test]
fn an_awaited_call_to_a_service_in_the_held_group_fails_at_once_multi_threaded() {
    let node = Node::new_in(&Context::new(), "caller", "/").unwrap();
    node.set_clock(Clock::steady());
    let _service = node
        .create_service("add", |(a, b): (i64, i64)| a + b)
        .unwrap();
    let client = Arc::new(node.create_client::<fn((i64, i64)) -> i64>("add").unwrap());
    let exec = Executor::multi_threaded(3).unwrap();
    exec.add_node(&node).unwrap();
    let (tx, rx) = mpsc::sync_channel(1);
    let _timer = node
        .create_timer_async(Duration::from_millis(1), move |_| {
            let (client, tx) = (client.clone(), tx.clone());
            async move {
                let start = Instant::now();
                let result = client.call_async((2, 3)).await;
                let _ = tx.try_send((result, start.elapsed()));
            }
        })
        .unwrap();
    let spin = exec.spin_thread().unwrap();
    let (result, took) = rx
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("the awaited call hung silently");
    drop(spin);
    exec.shutdown(Duration::from_secs(5));
    match result {
        Err(CallError::WouldDeadlock(err)) => {
            assert_eq!(err.reason, DeadlockReason::GroupHeld, "{err}");
            let message = err.to_string();
            assert!(
                message.contains("awaiting the response of service '/add'"),
                "{message}"
            );
            assert!(
                message.contains("another callback group"),
                "the fix is named: {message}"
            );
        }
        other => panic!("expected WouldDeadlock, got {other:?}"),
    }
    // An await that could complete would hang (the 10 s above); "at once" is far under it.
    assert!(took < std::time::Duration::from_secs(5), "took {took:?}");
}

#[test]
fn the_blocking_form_no_longer_recommends_await_for_a_held_group() {
    let node = Node::new_in(&Context::new(), "caller", "/").unwrap();
    node.set_clock(Clock::steady());
    let _service = node
        .create_service("add", |(a, b): (i64, i64)| a + b)
        .unwrap();
    let client = node.create_client::<fn((i64, i64)) -> i64>("add").unwrap();
    let exec = Executor::multi_threaded(2).unwrap();
    exec.add_node(&node).unwrap();
    let (tx, rx) = mpsc::sync_channel(1);
    let _timer = node
        .create_timer(Duration::from_millis(1), move |_| {
            let _ = tx.try_send(client.call((1, 1), Duration::from_secs(5)));
        })
        .unwrap();
    let spin = exec.spin_thread().unwrap();
    let result = rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
    drop(spin);
    exec.shutdown(Duration::from_secs(5));
    let Err(CallError::WouldDeadlock(err)) = result else {
        panic!("expected WouldDeadlock, got {result:?}")
    };
    let message = err.to_string();
    assert!(
        message.contains("does not help") && !message.contains("Fix: `.await` it"),
        "the fix must not recommend an await that hangs: {message}"
    );
}

#[test]
fn shutdown_reports_an_async_callback_parked_at_an_await_and_frees_it() {
    let node = Node::new_in(&Context::new(), "sleeper", "/").unwrap();
    node.set_clock(Clock::steady());
    let exec = Executor::multi_threaded(2).unwrap();
    exec.add_node(&node).unwrap();
    let held = Arc::new(());
    let witness = Arc::downgrade(&held);
    let (tx, rx) = mpsc::sync_channel(1);
    let timer = node
        .create_timer_async(Duration::from_millis(1), move |_| {
            let (tx, held) = (tx.clone(), held.clone());
            async move {
                let _ = tx.try_send(());
                let hour =
                    Clock::steady().sleep_for_async(Duration::from_secs(3600), &CancelToken::new());
                let _ = hour.await;
                drop(held);
            }
        })
        .unwrap();
    let spin = exec.spin_thread().unwrap();
    rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
    assert_eq!(exec.live_tasks(), 1, "the suspended callback is visible");
    spin.stop().unwrap();
    let report = exec.shutdown(Duration::from_secs(2));
    assert!(!report.is_clean(), "{report}");
    assert_eq!(report.live_tasks, 1, "{report}");
    assert_eq!(report.suspended.len(), 1, "{report}");
    assert!(report.suspended[0].callback.contains("timer"), "{report}");
    assert!(
        report.to_string().contains("abandoned at an .await"),
        "{report}"
    );
    drop(timer);
    drop(node);
    drop(exec);
    assert!(
        witness.upgrade().is_none(),
        "the abandoned callback's future was freed"
    );
}

#[test]
fn example_await_same_group() {
    let outcome = await_same_group::run();
    assert!(
        matches!(&outcome.same_group, Err(CallError::WouldDeadlock(err)) if err.reason == DeadlockReason::GroupHeld),
        "{:?}",
        outcome.same_group
    );
    assert_eq!(outcome.own_group.unwrap(), 5);
    assert_eq!(outcome.report.suspended.len(), 1, "{}", outcome.report);
}

// --- 12.2: a Fail stall does not kill executor timers ----------------------------------

#[test]
fn a_timer_that_gave_up_on_a_fail_stall_fires_again_on_its_grid_after_the_resume() {
    let sim = SimClock::with_stall_policy(StallPolicy::Fail, Duration::from_millis(50));
    let node = Node::new_in(&Context::new(), "robot", "/").unwrap();
    node.set_clock(sim.clock());
    let ticks = Arc::new(Mutex::new(Vec::new()));
    let log = ticks.clone();
    let timer = node
        .create_timer(Duration::from_millis(100), move |tick| {
            log.lock().unwrap().push(tick.scheduled.nanos() / 1_000_000)
        })
        .unwrap();
    let exec = Executor::multi_threaded(2).unwrap();
    exec.add_node(&node).unwrap();
    let spin = exec.spin_thread().unwrap();
    sim.step(Duration::from_millis(200));
    let give_up = Instant::now() + std::time::Duration::from_secs(10);
    while timer.stall_count() == 0 {
        assert!(
            Instant::now() < give_up,
            "the timer never noticed the stall"
        );
        std::thread::yield_now();
    }
    sim.step(Duration::from_millis(300));
    drop(spin);
    exec.shutdown(Duration::from_secs(5));
    assert_eq!(*ticks.lock().unwrap(), [100, 200, 300, 400, 500]);
}

#[test]
fn example_sim_stall_resume() {
    let outcome = sim_stall_resume::run();
    assert_eq!(outcome.ticks_ms, [100, 200, 300, 400, 500, 600]);
    assert!(outcome.stalls >= 1, "the timer that gave up is reported");
}

// --- 12.3: lock-step stepping is deterministic for node timers --------------------------

#[test]
fn sixty_one_second_steps_give_sixty_ticks_every_run_by_step_and_by_clock_topic() {
    let mut runs = Vec::new();
    for run in 0..40 {
        let drive = if run % 2 == 0 {
            lockstep::Drive::Step
        } else {
            lockstep::Drive::ClockTopic
        };
        let workers = 1 + run % 3;
        let ticks = lockstep::run(drive, workers, 60);
        runs.push((drive, workers, ticks));
    }
    assert!(
        runs.iter().all(|(_, _, ticks)| *ticks == 60),
        "every run must count 60 ticks: {runs:?}"
    );
}

#[test]
fn a_step_waits_for_every_callback_it_made_due_in_order() {
    // Three timers of different periods on a 2-worker executor: after each 10 ms step the
    // callbacks of that instant have all run.
    let sim = SimClock::new();
    let node = Node::new_in(&Context::new(), "robot", "/").unwrap();
    node.set_clock(sim.clock());
    let counts: Vec<Arc<AtomicU64>> = (0..3).map(|_| Arc::new(AtomicU64::new(0))).collect();
    let timers: Vec<_> = [10, 20, 30]
        .iter()
        .zip(&counts)
        .map(|(ms, count)| {
            let count = count.clone();
            node.create_timer(Duration::from_millis(*ms), move |_| {
                count.fetch_add(1, Ordering::Relaxed);
            })
            .unwrap()
        })
        .collect();
    let exec = Executor::multi_threaded(2).unwrap();
    exec.add_node(&node).unwrap();
    let spin = exec.spin_thread().unwrap();
    for step in 1..=60u64 {
        sim.step(Duration::from_millis(10));
        let seen: Vec<u64> = counts.iter().map(|c| c.load(Ordering::Relaxed)).collect();
        assert_eq!(seen, [step, step / 2, step / 3], "after step {step}");
    }
    drop(spin);
    exec.shutdown(Duration::from_secs(5));
    drop(timers);
}

#[test]
fn example_lockstep() {
    assert_eq!(lockstep::run(lockstep::Drive::Step, 2, 60), 60);
    assert_eq!(lockstep::run(lockstep::Drive::ClockTopic, 2, 60), 60);
}

#[test]
fn a_simulator_publishing_clock_from_a_callback_of_the_same_executor_is_not_held_up() {
    use kairos::graph::{ClockMsg, Qos};
    use kairos::time::{ClockKind, Time};
    // The simulator is a node on the very executor that runs the robot's timer: a lock-step
    // wait there could only time out, so /clock must not wait for that executor.
    let context = Context::new();
    let robot = Node::new_in(&context, "robot", "/").unwrap();
    robot.set_use_sim_time(true).unwrap();
    let ticks = Arc::new(AtomicU64::new(0));
    let count = ticks.clone();
    let _timer = robot
        .create_timer(Duration::from_millis(10), move |_| {
            count.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
    let simulator = Node::new_in(&context, "simulator", "/").unwrap();
    simulator.set_clock(Clock::steady());
    let clock = simulator
        .create_publisher::<ClockMsg>("/clock", Qos::keep_last(1))
        .unwrap();
    let published = Arc::new(AtomicU64::new(0));
    let step = published.clone();
    let _sim_timer = simulator
        .create_timer(Duration::from_micros(100), move |_| {
            let n = step.fetch_add(1, Ordering::Relaxed) + 1;
            if n <= 50 {
                clock.publish(ClockMsg {
                    clock: Time::new(ClockKind::Sim, n as i64 * 10_000_000),
                });
            }
        })
        .unwrap();
    let exec = Executor::single_threaded();
    exec.add_node(&robot).unwrap();
    exec.add_node(&simulator).unwrap();
    let start = Instant::now();
    let spin = exec.spin_thread().unwrap();
    let give_up = Instant::now() + std::time::Duration::from_secs(20);
    while published.load(Ordering::Relaxed) < 50 {
        assert!(
            Instant::now() < give_up,
            "the simulator was held up: {} publishes in 20 s",
            published.load(Ordering::Relaxed)
        );
        std::thread::yield_now();
    }
    spin.stop().unwrap();
    exec.shutdown(Duration::from_secs(5));
    // (Same-executor publishes cannot be lock-step: the robot may see two at once.)
    assert!(ticks.load(Ordering::Relaxed) > 0, "the robot timer ran");
    // 50 publishes held up by a 2 s settle each would take 100 s.
    assert!(
        start.elapsed() < std::time::Duration::from_secs(20),
        "took {:?}",
        start.elapsed()
    );
}

#[test]
fn a_step_waits_for_an_async_callback_it_wakes_from_a_simulated_sleep() {
    // An async 1 s timer awaits 0.5 s of simulated time, then counts: after every 250 ms
    // step, the count is exactly the number of k >= 1 with k + 0.5 s reached.
    let sim = SimClock::new();
    let node = Node::new_in(&Context::new(), "robot", "/").unwrap();
    node.set_clock(sim.clock());
    let done = Arc::new(AtomicU64::new(0));
    let count = done.clone();
    let sleep_clock = sim.clock();
    let _timer = node
        .create_timer_async(Duration::from_secs(1), move |_| {
            let (count, clock) = (count.clone(), sleep_clock.clone());
            async move {
                let _ = clock
                    .sleep_for_async(Duration::from_millis(500), &CancelToken::new())
                    .await;
                count.fetch_add(1, Ordering::SeqCst);
            }
        })
        .unwrap();
    let exec = Executor::multi_threaded(2).unwrap();
    exec.add_node(&node).unwrap();
    let spin = exec.spin_thread().unwrap();
    for quarter in 1..=40u64 {
        sim.step(Duration::from_millis(250));
        let expected = if quarter >= 6 { (quarter - 2) / 4 } else { 0 };
        assert_eq!(
            done.load(Ordering::SeqCst),
            expected,
            "at {} ms",
            quarter * 250
        );
    }
    spin.stop().unwrap();
    exec.shutdown(Duration::from_secs(5));
}
