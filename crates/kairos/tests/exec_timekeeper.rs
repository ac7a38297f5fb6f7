//! A single-threaded executor keeps its own timers (`exec/timekeeper.rs`): the thread that
//! spins it wakes them, with no time-driver thread and no cross-thread wake-up, and every
//! promise of a callback timer still holds.
//!
//! - the time driver's thread never starts for these timers;
//! - every way to spin (`spin`, `spin_once`, `spin_some`, `spin_all`) runs the timers that
//!   came due while nobody spun;
//! - a timer that comes due while a subscription runs a batch of its messages waits for
//!   at most four of them;
//! - randomized: timers on steady, system and node clocks, periods inside and outside the
//!   driver's spin window, cancelled and reset from another thread, never fire early and
//!   account for every period.
//!
//! Every test in this binary uses single-threaded executors only: the first test checks
//! the process never started the time driver, so a test here that used the driver (a
//! multi-threaded executor's timer, an async sleep) would break it.

mod exec_support;

use exec_support::wait_until;
use kairos::exec::{CallbackTimer, Executor};
use kairos::graph::{Context, Node, Qos};
use kairos::time::{Clock, Duration, Tick};
use proptest::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The threads of this process whose name starts with `prefix` (`/proc/self/task`).
fn threads_named(prefix: &str) -> Vec<String> {
    let tasks = std::fs::read_dir("/proc/self/task").expect("/proc/self/task is readable");
    tasks
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .map(|comm| comm.trim().to_owned())
        .filter(|comm| comm.starts_with(prefix))
        .collect()
}

fn counting_timer(node: &Node, clock: Clock, period: Duration) -> (CallbackTimer, Arc<AtomicU64>) {
    let count = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&count);
    let timer = node
        .create_timer_on(clock, period, move |_| {
            counter.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
    (timer, count)
}

#[test]
fn a_single_threaded_executor_fires_its_timers_without_the_time_driver_thread() {
    let node = Node::new_in(&Context::new(), "keeper", "/").unwrap();
    let timers: Vec<_> = (0..100)
        .map(|i| {
            let clock = if i % 2 == 0 {
                node.clock()
            } else {
                Clock::steady()
            };
            counting_timer(&node, clock, Duration::from_micros(500 + i as i64 * 10))
        })
        .collect();
    let exec = Executor::single_threaded();
    exec.add_node(&node).unwrap();
    let spin = exec.spin_thread().unwrap();
    wait_until("every timer fired 20 times", || {
        timers
            .iter()
            .all(|(_, count)| count.load(Ordering::Relaxed) >= 20)
    });
    spin.stop().unwrap();
    assert_eq!(
        threads_named("kairos-time-dri"),
        Vec::<String>::new(),
        "the time driver's thread woke the timers of a single-threaded executor"
    );
}

/// A node with one 1 ms timer on an executor that has run it once (armed), then nobody
/// spinning until the deadline has passed.
fn armed_and_due() -> (Executor, Node, CallbackTimer, Arc<AtomicU64>) {
    let node = Node::new_in(&Context::new(), "due", "/").unwrap();
    let (timer, count) = counting_timer(&node, node.clock(), Duration::from_millis(1));
    let exec = Executor::single_threaded();
    exec.add_node(&node).unwrap();
    // The first run arms the timer; it is not due yet.
    exec.spin_some().unwrap();
    let before = count.load(Ordering::Relaxed);
    wait_until("the deadline passed", || {
        timer.time_until_trigger() <= Duration::ZERO
    });
    assert_eq!(
        count.load(Ordering::Relaxed),
        before,
        "the timer ran while nobody spun the executor"
    );
    (exec, node, timer, count)
}

#[test]
fn every_way_to_spin_runs_the_timers_that_came_due_while_nobody_spun() {
    let (exec, _node, _timer, count) = armed_and_due();
    let before = count.load(Ordering::Relaxed);
    assert!(exec.spin_some().unwrap() >= 1, "spin_some");
    assert!(count.load(Ordering::Relaxed) > before);

    let (exec, _node, _timer, count) = armed_and_due();
    let before = count.load(Ordering::Relaxed);
    assert!(
        exec.spin_all(Duration::from_secs(1)).unwrap() >= 1,
        "spin_all"
    );
    assert!(count.load(Ordering::Relaxed) > before);

    let (exec, _node, _timer, count) = armed_and_due();
    let before = count.load(Ordering::Relaxed);
    assert!(exec.spin_once(Duration::ZERO).unwrap(), "spin_once");
    assert!(count.load(Ordering::Relaxed) > before);

    // `spin_once` with time to wait: it waits on the timer's deadline itself.
    let (exec, _node, _timer, count) = armed_and_due();
    exec.spin_once(Duration::ZERO).unwrap();
    let before = count.load(Ordering::Relaxed);
    assert!(
        exec.spin_once(Duration::from_secs(20)).unwrap(),
        "spin_once did not wait for the next tick"
    );
    assert!(count.load(Ordering::Relaxed) > before);
}

#[test]
fn a_timer_due_during_a_batch_waits_for_at_most_four_of_its_callbacks() {
    /// What ran: a message's callback (its start), or a tick (its deadline).
    #[derive(Debug, Clone, Copy)]
    enum Ran {
        Message(i64),
        Tick(i64),
    }
    let mono = || Clock::steady().now().nanos();
    let node = Node::new_in(&Context::new(), "batch_and_timer", "/").unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let (messages, ticks) = (Arc::clone(&log), Arc::clone(&log));
    let _sub = node
        .create_subscription("burst", Qos::keep_all(1_000), move |_: &u32| {
            let start = mono();
            messages.lock().unwrap().push(Ran::Message(start));
            // A callback of 150 us: the timer comes due during the burst's batches.
            while mono() < start + 150_000 {
                std::hint::spin_loop();
            }
        })
        .unwrap();
    let timer = node
        .create_timer_on(Clock::steady(), Duration::from_millis(2), move |tick| {
            ticks
                .lock()
                .unwrap()
                .push(Ran::Tick(tick.scheduled.nanos()));
        })
        .unwrap();
    let publisher = node
        .create_publisher::<u32>("burst", Qos::keep_all(1_000))
        .unwrap();
    let exec = Executor::single_threaded();
    exec.add_node(&node).unwrap();
    let spin = exec.spin_thread().unwrap();
    wait_until("the first tick", || timer.fired_count() >= 1);
    for i in 0..80 {
        publisher.publish(i);
    }
    wait_until("the burst was handled", || {
        log.lock()
            .unwrap()
            .iter()
            .filter(|ran| matches!(ran, Ran::Message(_)))
            .count()
            == 80
    });
    spin.stop().unwrap();
    let log = log.lock().unwrap();
    let mut ticks_in_burst = 0;
    for (at, ran) in log.iter().enumerate() {
        let Ran::Tick(deadline) = *ran else {
            continue;
        };
        // Callbacks of messages started after the tick was due, before it ran.
        let overtaking = log[..at]
            .iter()
            .filter(|ran| matches!(ran, Ran::Message(start) if *start >= deadline))
            .count();
        ticks_in_burst += usize::from(log[..at].iter().any(|r| matches!(r, Ran::Message(_))));
        assert!(
            overtaking <= 4,
            "a tick due at {deadline} waited for {overtaking} message callbacks: {log:?}"
        );
    }
    assert!(
        ticks_in_burst >= 1,
        "no tick came due during the burst: {log:?}"
    );
}

/// What one callback saw: its tick, and the clock of its timer when it started.
#[derive(Debug, Clone, Copy)]
struct Seen {
    tick: Tick,
    now: i64,
    mono: i64,
}

#[derive(Debug, Clone)]
struct Plan {
    /// Period (us) and clock (0 steady, 1 system, 2 node clock) of each timer.
    timers: Vec<(u64, u8)>,
    /// (timer, action: 0 cancel, 1 reset, 2 cancel then reset) made from outside, one
    /// after another, each after `pause` us.
    actions: Vec<(usize, u8, u64)>,
}

fn plan() -> impl Strategy<Value = Plan> {
    prop::collection::vec((10u64..3_000, 0u8..3), 1..24).prop_flat_map(|timers| {
        let n = timers.len();
        prop::collection::vec((0..n, 0u8..3, 0u64..2_000), 0..12).prop_map(move |actions| Plan {
            timers: timers.clone(),
            actions,
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn random_timers_never_fire_early_and_account_for_every_period(plan in plan()) {
        let node = Node::new_in(&Context::new(), "random_timers", "/").unwrap();
        let mono0 = Clock::steady().now().nanos();
        let timers: Vec<_> = plan
            .timers
            .iter()
            .map(|&(period_us, clock)| {
                let clock = match clock {
                    0 => Clock::steady(),
                    1 => Clock::system(),
                    _ => node.clock(),
                };
                let log = Arc::new(Mutex::new(Vec::<Seen>::new()));
                let (recorded, timer_clock) = (Arc::clone(&log), clock.clone());
                let timer = node
                    .create_timer_on(clock, Duration::from_micros(period_us as i64), move |tick| {
                        let now = timer_clock.now().nanos();
                        let mono = Clock::steady().now().nanos();
                        recorded.lock().unwrap().push(Seen { tick, now, mono });
                    })
                    .unwrap();
                (timer, log)
            })
            .collect();
        let exec = Executor::single_threaded();
        exec.add_node(&node).unwrap();
        let spin = exec.spin_thread().unwrap();
        for &(index, action, pause_us) in &plan.actions {
            let until = Clock::steady().now() + Duration::from_micros(pause_us as i64);
            wait_until("the pause between actions", || Clock::steady().now() >= until);
            let timer = &timers[index].0;
            match action {
                0 => timer.cancel(),
                1 => timer.reset(),
                _ => {
                    timer.cancel();
                    timer.reset();
                }
            }
        }
        // Every timer left running fires at least twice more: the executor kept up.
        let counts: Vec<u64> = timers.iter().map(|(t, _)| t.fired_count()).collect();
        wait_until("the running timers fired twice more", || {
            timers.iter().zip(&counts).all(|((timer, _), &before)| {
                timer.is_cancelled() || timer.fired_count() >= before + 2
            })
        });
        spin.stop().unwrap();
        for (i, (timer, log)) in timers.iter().enumerate() {
            let log = log.lock().unwrap();
            prop_assert_eq!(log.len() as u64, timer.fired_count(), "timer {}: a fire without its callback", i);
            let missed: u64 = log.iter().map(|seen| seen.tick.missed).sum();
            prop_assert_eq!(missed, timer.missed_count(), "timer {}: missed periods not all reported", i);
            for seen in log.iter() {
                prop_assert!(
                    seen.now >= seen.tick.scheduled.nanos(),
                    "timer {} fired {} ns early", i, seen.tick.scheduled.nanos() - seen.now
                );
                prop_assert!(seen.mono >= mono0);
            }
            for pair in log.windows(2) {
                prop_assert!(
                    pair[1].tick.scheduled.nanos() > pair[0].tick.scheduled.nanos(),
                    "timer {}: a tick was not later than the one before", i
                );
            }
        }
        prop_assert_eq!(
            threads_named("kairos-time-dri"),
            Vec::<String>::new(),
            "the time driver's thread started"
        );
    }
}
