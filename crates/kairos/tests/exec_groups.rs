//! Callback groups, starvation, shutdown and spin errors on real executors.

mod exec_support;
use exec_support::{node, spin_in_background};
use kairos::exec::{ExecError, Executor, GroupKind};
use kairos::graph::Qos;
use kairos::time::Duration;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Instant;

const LONG: std::time::Duration = std::time::Duration::from_secs(10);

/// Two callbacks of one group, both ready, on a 2-worker executor: each announces it has
/// started and waits (up to `wait_for_other`) for the other to announce. Returns whether
/// they ever overlapped.
fn overlap(kind: GroupKind, wait_for_other: std::time::Duration) -> bool {
    let exec = Executor::multi_threaded(2).unwrap();
    let node = node("overlap");
    let group = node.create_callback_group("pair", kind);
    let in_group = node.with_group(&group).unwrap();
    let (a_started, a_seen) = mpsc::channel::<()>();
    let (b_started, b_seen) = mpsc::channel::<()>();
    let overlapped = Arc::new(AtomicBool::new(false));
    let inside = Arc::new(AtomicUsize::new(0));
    let (done_tx, done_rx) = mpsc::channel();
    let make = |announce: mpsc::Sender<()>, other: mpsc::Receiver<()>| {
        let other = parking_lot::Mutex::new(other);
        let (inside, overlapped, done_tx) = (inside.clone(), overlapped.clone(), done_tx.clone());
        move || {
            if inside.fetch_add(1, Ordering::AcqRel) > 0 {
                overlapped.store(true, Ordering::Release);
            }
            announce.send(()).unwrap();
            // A barrier with a way out: wait for the other callback to start.
            let _ = other.lock().recv_timeout(wait_for_other);
            inside.fetch_sub(1, Ordering::AcqRel);
            done_tx.send(()).unwrap();
        }
    };
    let a = in_group.create_guard_condition("a", make(a_started, b_seen));
    let b = in_group.create_guard_condition("b", make(b_started, a_seen));
    exec.add_node(&node).unwrap();
    let spinner = spin_in_background(&exec);
    a.trigger();
    b.trigger();
    done_rx.recv_timeout(LONG).unwrap();
    done_rx.recv_timeout(LONG).unwrap();
    assert!(exec.shutdown(Duration::from_secs(30)).is_clean());
    spinner.join().unwrap().unwrap();
    overlapped.load(Ordering::Acquire)
}

#[test]
fn mutually_exclusive_callbacks_never_overlap() {
    // Each waits 300 ms for the other: with a broken gate the second would start meanwhile.
    assert!(!overlap(
        GroupKind::MutuallyExclusive,
        std::time::Duration::from_millis(300)
    ));
}

#[test]
fn reentrant_callbacks_overlap_on_a_multi_threaded_executor() {
    assert!(overlap(GroupKind::Reentrant, LONG));
}

#[test]
fn a_timer_longer_than_its_period_does_not_starve_a_subscription_or_a_service() {
    let exec = Executor::single_threaded();
    let node = node("busy");
    let ticks = Arc::new(AtomicU64::new(0));
    let sub_ran_at_tick = Arc::new(AtomicU64::new(0));
    let publisher = Arc::new(
        node.create_publisher::<u32>("work", Qos::keep_last(10))
            .unwrap(),
    );
    let _sub = {
        let (ticks, ran) = (ticks.clone(), sub_ran_at_tick.clone());
        node.create_subscription("work", Qos::keep_last(10), move |_: Arc<u32>| {
            ran.store(ticks.load(Ordering::Acquire), Ordering::Release);
        })
        .unwrap()
    };
    let _service = node.create_service("ping", |x: u32| x).unwrap();
    let client = node.create_client::<fn(u32) -> u32>("ping").unwrap();
    let response = Arc::new(parking_lot::Mutex::new(None));
    let (tx, rx) = mpsc::channel();
    let tx = parking_lot::Mutex::new(tx);
    let _timer = {
        let (ticks, ran, response, stopper) = (
            ticks.clone(),
            sub_ran_at_tick.clone(),
            response.clone(),
            exec.clone(),
        );
        node.create_timer(Duration::from_millis(2), move |_| {
            let tick = ticks.fetch_add(1, Ordering::AcqRel) + 1;
            // Each callback takes 5 periods: the timer is always due again when it ends.
            let _ = kairos::time::Clock::steady()
                .sleep_for(Duration::from_millis(10), &kairos::time::CancelToken::new());
            if tick == 3 {
                publisher.publish(7);
                *response.lock() = Some(client.call_async(1));
            }
            if tick == 5 {
                let served = response.lock().as_ref().is_some_and(|r| r.is_done());
                let _ = tx.lock().send((ran.load(Ordering::Acquire), served));
                stopper.cancel();
            }
        })
        .unwrap()
    };
    exec.add_node(&node).unwrap();
    exec.spin().unwrap();
    let (sub_ran_at, served) = rx.recv_timeout(LONG).unwrap();
    // Arrival order: the timer became due again during tick 3 (before the message
    // arrived), so it may run once more first; then the subscription and service run.
    assert!(
        (3..=4).contains(&sub_ran_at),
        "the subscription ran at tick {sub_ran_at}, not right after tick 3 or 4"
    );
    assert!(served, "the service answered before tick 5");
}

#[test]
fn shutdown_returns_by_its_deadline_and_names_a_callback_that_never_returns() {
    let exec = Executor::multi_threaded(2).unwrap();
    let node = node("stuck");
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let release_rx = parking_lot::Mutex::new(release_rx);
    let (started_tx, started_rx) = mpsc::channel();
    let stuck = node.create_guard_condition("never_returns", move || {
        started_tx.send(()).unwrap();
        // Never returns on its own (the test releases it at the very end to clean up).
        let _ = release_rx.lock().recv();
    });
    exec.add_node(&node).unwrap();
    let spinner = spin_in_background(&exec);
    stuck.trigger();
    started_rx.recv_timeout(LONG).unwrap();
    let start = Instant::now();
    let report = exec.shutdown(Duration::from_millis(100));
    let took = start.elapsed();
    assert!(
        took >= std::time::Duration::from_millis(100),
        "waited the deadline: {took:?}"
    );
    assert!(took < LONG, "returned in time: {took:?}");
    assert!(!report.is_clean());
    assert_eq!(report.still_running.len(), 1, "{report}");
    assert!(
        report.still_running[0].callback.contains("never_returns"),
        "{report}"
    );
    // Measured on the coarse monotonic clock (a few ms resolution).
    assert!(
        report.still_running[0].running_for >= Duration::from_millis(90),
        "{report}"
    );
    assert!(matches!(
        exec.spin_once(Duration::ZERO),
        Err(ExecError::ShutDown)
    ));
    release_tx.send(()).unwrap();
    spinner.join().unwrap().unwrap();
}

#[test]
fn spinning_from_two_threads_is_an_error() {
    let exec = Executor::single_threaded();
    let node = node("spun");
    let (entered_tx, entered_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let release_rx = parking_lot::Mutex::new(release_rx);
    let guard = node.create_guard_condition("hold", move || {
        entered_tx.send(()).unwrap();
        let _ = release_rx.lock().recv_timeout(LONG);
    });
    exec.add_node(&node).unwrap();
    let spinner = spin_in_background(&exec);
    guard.trigger();
    entered_rx.recv_timeout(LONG).unwrap();
    assert!(matches!(
        exec.spin_once(Duration::ZERO),
        Err(ExecError::AlreadySpinning)
    ));
    assert!(matches!(exec.spin_some(), Err(ExecError::AlreadySpinning)));
    exec.cancel();
    release_tx.send(()).unwrap();
    spinner.join().unwrap().unwrap();
}

#[test]
fn a_node_in_two_executors_is_an_error() {
    let node = node("shared");
    let first = Executor::single_threaded();
    let second = Executor::single_threaded();
    first.add_node(&node).unwrap();
    let err = second.add_node(&node).unwrap_err();
    assert!(matches!(err, ExecError::AlreadyAttached { .. }), "{err}");
    assert!(err.to_string().contains("/shared"));
    first.remove_node(&node).unwrap();
    second.add_node(&node).unwrap();
    assert!(matches!(
        Executor::multi_threaded(0),
        Err(ExecError::InvalidWorkers { workers: 0 })
    ));
    assert!(matches!(
        Executor::multi_threaded(1 << 20),
        Err(ExecError::InvalidWorkers { .. })
    ));
}

/// A regression here would make `spin` block forever: it runs on its own thread and the
/// test fails when it has not returned within [`LONG`].
#[test]
fn cancel_before_spin_makes_the_next_spin_return() {
    let exec = Executor::single_threaded();
    exec.cancel();
    let (returned_tx, returned_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = returned_tx.send(exec.spin());
    });
    match returned_rx.recv_timeout(LONG) {
        Ok(result) => result.unwrap(),
        Err(_) => {
            panic!("spin() after cancel() has not returned within {LONG:?}: the cancel was lost")
        }
    }
}

#[test]
fn spin_until_future_complete_times_out_and_completes() {
    let exec = Executor::single_threaded();
    let pending = std::future::pending::<()>();
    let start = Instant::now();
    assert!(matches!(
        exec.spin_until_future_complete(pending, Duration::from_millis(50)),
        Err(ExecError::Timeout { .. })
    ));
    assert!(start.elapsed() >= std::time::Duration::from_millis(50));
    let node = node("answer");
    let _service = node.create_service("forty_two", |_: ()| 42).unwrap();
    let client = node.create_client::<fn(()) -> i32>("forty_two").unwrap();
    exec.add_node(&node).unwrap();
    let answer = exec
        .spin_until_future_complete(client.call_async(()), Duration::from_secs(10))
        .unwrap();
    assert_eq!(answer.unwrap(), 42);
}

#[test]
fn spin_once_until_future_complete_returns_when_another_thread_completes_the_future() {
    // Nothing to run: only the future's completion, from another thread, ends the wait.
    let exec = Executor::single_threaded();
    let (tx, rx) = futures::channel::oneshot::channel::<u32>();
    let start = Instant::now();
    let completer = std::thread::spawn(move || tx.send(7));
    let done = exec
        .spin_once_until_future_complete(rx, Duration::from_secs(60))
        .unwrap();
    assert_eq!(done, Some(Ok(7)));
    assert!(
        start.elapsed() < std::time::Duration::from_secs(30),
        "waited {:?} of its 60 s for a future completed at once",
        start.elapsed()
    );
    completer.join().unwrap().unwrap();
    // With work ready, it runs one callback and returns, the future still pending.
    let node = node("once");
    let ran = Arc::new(AtomicUsize::new(0));
    let counted = ran.clone();
    let guard = node.create_guard_condition("tick", move || {
        counted.fetch_add(1, Ordering::Relaxed);
    });
    exec.add_node(&node).unwrap();
    guard.trigger();
    guard.trigger();
    let pending = exec
        .spin_once_until_future_complete(std::future::pending::<()>(), LONG)
        .unwrap();
    assert_eq!((pending, ran.load(Ordering::Relaxed)), (None, 1));
    // Nothing ready and nothing completing it: it waits its timeout, never less.
    let idle = Executor::single_threaded();
    let start = Instant::now();
    let nothing = idle
        .spin_once_until_future_complete(std::future::pending::<()>(), Duration::from_millis(50))
        .unwrap();
    assert_eq!(nothing, None);
    assert!(start.elapsed() >= std::time::Duration::from_millis(50));
}

#[test]
fn work_is_served_in_arrival_order() {
    let exec = Executor::single_threaded();
    let node = node("fifo");
    let order = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let guards: Vec<_> = (0..5)
        .map(|i| {
            let order = order.clone();
            node.create_guard_condition(&format!("g{i}"), move || order.lock().push(i))
        })
        .collect();
    exec.add_node(&node).unwrap();
    exec.spin_some().unwrap();
    for i in [3, 1, 4, 0, 2] {
        guards[i].trigger();
    }
    assert_eq!(exec.spin_some().unwrap(), 5);
    assert_eq!(*order.lock(), vec![3, 1, 4, 0, 2]);
}

#[test]
fn a_panicking_callback_is_counted_and_the_executor_goes_on() {
    let exec = Executor::single_threaded();
    let node = node("panicky");
    let ran = Arc::new(AtomicUsize::new(0));
    let bad = node.create_guard_condition("bad", || panic!("callback bug"));
    let good = {
        let ran = ran.clone();
        node.create_guard_condition("good", move || {
            ran.fetch_add(1, Ordering::Relaxed);
        })
    };
    exec.add_node(&node).unwrap();
    bad.trigger();
    good.trigger();
    exec.spin_all(Duration::from_secs(5)).unwrap();
    assert_eq!(ran.load(Ordering::Relaxed), 1);
    assert_eq!(exec.stats().panicked, 1);
}

#[test]
fn a_timer_on_simulated_time_fires_only_when_simulated_time_advances() {
    let sim = kairos::time::SimClock::new();
    sim.publish(kairos::time::Time::new(kairos::time::ClockKind::Sim, 0))
        .unwrap();
    let node = node("simulated");
    node.set_clock(sim.clock());
    let fired = Arc::new(AtomicU64::new(0));
    let counter = fired.clone();
    let timer = node
        .create_timer(Duration::from_millis(100), move |_| {
            counter.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
    let exec = Executor::single_threaded();
    exec.add_node(&node).unwrap();
    exec.spin_all(Duration::from_secs(1)).unwrap();
    assert!(
        !exec.spin_once(Duration::from_millis(20)).unwrap(),
        "no simulated time passed"
    );
    sim.step(Duration::from_millis(250));
    assert!(exec.spin_once(Duration::from_secs(10)).unwrap());
    assert_eq!(fired.load(Ordering::Relaxed), 1);
    assert_eq!(
        timer.missed_count(),
        1,
        "the 200 ms tick was missed and counted"
    );
    let report = exec.shutdown(Duration::from_secs(1));
    assert!(report.is_clean(), "{report}");
}

/// An async callback holds its (mutually exclusive) group while it awaits a sleep: another
/// callback of the group triggered meanwhile runs only after it completes.
#[test]
fn an_async_callback_holds_its_group_until_it_completes() {
    let exec = Executor::single_threaded();
    let node = node("holder");
    let order = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let (awaiting_tx, awaiting_rx) = mpsc::channel();
    let clock = node.clock();
    let _sub = {
        let order = order.clone();
        node.create_subscription_async("go", Qos::default(), move |_: Arc<()>| {
            let (order, awaiting_tx, clock) = (order.clone(), awaiting_tx.clone(), clock.clone());
            async move {
                let wake_at = clock.now() + Duration::from_millis(30);
                let sleep = clock.sleep_until_async(wake_at, &kairos::time::CancelToken::new());
                awaiting_tx.send(()).unwrap();
                sleep.await.unwrap();
                order.lock().push("async callback done");
            }
        })
        .unwrap()
    };
    let guard = {
        let order = order.clone();
        node.create_guard_condition("same_group", move || order.lock().push("guard"))
    };
    let publisher = node.create_publisher::<()>("go", Qos::default()).unwrap();
    exec.add_node(&node).unwrap();
    publisher.publish(());
    assert!(exec.spin_once(Duration::from_secs(5)).unwrap());
    awaiting_rx.recv_timeout(LONG).unwrap();
    guard.trigger();
    while order.lock().len() < 2 {
        assert!(
            exec.spin_once(Duration::from_secs(5)).unwrap(),
            "no progress"
        );
    }
    assert_eq!(*order.lock(), vec!["async callback done", "guard"]);
}

/// While an async callback is suspended, the (single) executor thread runs callbacks of
/// other groups: here the one that completes what it awaits.
#[test]
fn a_suspended_async_callback_frees_the_thread_for_other_groups() {
    let exec = Executor::single_threaded();
    let node = node("suspender");
    let other = node.create_callback_group("other", GroupKind::MutuallyExclusive);
    let (wake_tx, wake_rx) = futures::channel::oneshot::channel::<u32>();
    let wake_rx = Arc::new(parking_lot::Mutex::new(Some(wake_rx)));
    let (done_tx, done_rx) = futures::channel::oneshot::channel::<u32>();
    let done_tx = Arc::new(parking_lot::Mutex::new(Some(done_tx)));
    let _sub = node
        .create_subscription_async("go", Qos::default(), move |_: Arc<()>| {
            let (wake_rx, done_tx) = (wake_rx.lock().take(), done_tx.clone());
            async move {
                let Some(wake_rx) = wake_rx else { return };
                let value = wake_rx.await.unwrap();
                if let Some(done_tx) = done_tx.lock().take() {
                    done_tx.send(value + 1).unwrap();
                }
            }
        })
        .unwrap();
    let wake_tx = parking_lot::Mutex::new(Some(wake_tx));
    let guard = node
        .with_group(&other)
        .unwrap()
        .create_guard_condition("waker", move || {
            if let Some(wake_tx) = wake_tx.lock().take() {
                wake_tx.send(41).unwrap();
            }
        });
    let publisher = node.create_publisher::<()>("go", Qos::default()).unwrap();
    exec.add_node(&node).unwrap();
    publisher.publish(());
    guard.trigger();
    let result = exec
        .spin_until_future_complete(done_rx, Duration::from_secs(10))
        .unwrap();
    assert_eq!(result.unwrap(), 42);
}

/// The deadline of a shutdown made inside a callback. It waits for the callbacks running
/// on other threads, which a loaded machine may hold off the CPU for seconds; had it
/// waited for its own thread, it would run out (a liveness limit, not a speed).
const SELF_STOP_DEADLINE: std::time::Duration = std::time::Duration::from_secs(30);

/// Shuts an executor down from inside its own callback; returns the report, how long the
/// shutdown took, and whether the callback ran on a worker thread the executor started.
fn shutdown_from_callback() -> (kairos::exec::ShutdownReport, std::time::Duration, bool) {
    let exec = Executor::multi_threaded(2).unwrap();
    let node = node("self_stopping");
    let (tx, rx) = mpsc::channel();
    let stopper = exec.clone();
    // The holder keeps the first free thread busy until `stop` has started on the other.
    let (started_tx, started_rx) = mpsc::channel::<()>();
    let started_rx = parking_lot::Mutex::new(started_rx);
    let holder_group = node.create_callback_group("holder", GroupKind::MutuallyExclusive);
    let holder = node
        .with_group(&holder_group)
        .unwrap()
        .create_guard_condition("holder", move || {
            let _ = started_rx.lock().recv_timeout(LONG);
        });
    let guard = node.create_guard_condition("stop", move || {
        started_tx.send(()).unwrap();
        let on_worker = std::thread::current()
            .name()
            .is_some_and(|n| n.starts_with("kairos-exec"));
        let start = Instant::now();
        let report = stopper.shutdown(SELF_STOP_DEADLINE);
        let _ = tx.send((report, start.elapsed(), on_worker));
    });
    exec.add_node(&node).unwrap();
    let spinner = spin_in_background(&exec);
    holder.trigger();
    guard.trigger();
    let result = rx.recv_timeout(LONG).unwrap();
    spinner.join().unwrap().unwrap();
    result
}

#[test]
fn shutdown_from_inside_a_callback_returns_at_once_on_any_thread() {
    // Which thread runs the callback is the scheduler's choice: repeat until both kinds ran.
    let (mut on_worker, mut on_spinner) = (false, false);
    for _ in 0..40 {
        let (report, took, worker) = shutdown_from_callback();
        assert!(report.is_clean(), "{report}");
        assert!(
            took < SELF_STOP_DEADLINE,
            "waited for its own thread: {took:?}"
        );
        on_worker |= worker;
        on_spinner |= !worker;
        if on_worker && on_spinner {
            return;
        }
    }
    assert!(
        on_worker,
        "the callback never ran on a started worker thread in 40 runs"
    );
}

/// A callback handed out by `wait_for_ready` holds its mutually exclusive group until it
/// has run, wherever it runs: the other ready callback of the group is not handed out
/// meanwhile, and is as soon as the first has run on another thread.
#[test]
fn a_handed_out_callback_holds_its_group_until_it_runs_on_another_thread() {
    let exec = Executor::single_threaded();
    let node = node("handout");
    exec.add_node(&node).unwrap();
    let ran = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let guard = |name: &'static str| {
        let ran = ran.clone();
        node.create_guard_condition(name, move || {
            ran.lock().push((name, std::thread::current().id()));
        })
    };
    let (a, b) = (guard("a"), guard("b"));
    a.trigger();
    b.trigger();
    let first = exec.wait_for_ready(LONG).unwrap().expect("a is ready");
    assert_eq!(first.name(), "guard condition a (node /handout)");
    assert_eq!(&first.group(), node.default_callback_group());
    let second = exec.wait_for_ready(Duration::from_millis(50)).unwrap();
    assert!(
        second.is_none(),
        "b shares a's mutually exclusive group and must wait: {second:?}"
    );
    let runner = std::thread::spawn(move || (first.run(), std::thread::current().id()));
    let (first_ran, runner_id) = runner.join().unwrap();
    assert!(first_ran);
    let second = exec
        .wait_for_ready(LONG)
        .unwrap()
        .expect("b once a has run");
    assert_eq!(second.name(), "guard condition b (node /handout)");
    assert!(second.run());
    let ran = ran.lock().clone();
    assert_eq!(ran.len(), 2, "{ran:?}");
    assert_eq!(ran[0], ("a", runner_id), "a ran on the thread that ran it");
    assert_eq!(ran[1], ("b", std::thread::current().id()));
    assert!(!node.default_callback_group().is_busy());
    let report = exec.shutdown(Duration::from_secs(1));
    assert!(report.is_clean(), "{report}");
}

/// Only callbacks with work are handed out. One that is never run loses nothing: its
/// group is free again and its work runs at the next spin. After a shutdown nothing more is handed out, and a
/// handle taken before it does not start its callback.
#[test]
fn a_handed_out_callback_dropped_or_outlived_by_shutdown_is_not_lost_or_run_late() {
    let exec = Executor::single_threaded();
    let node = node("handout_drop");
    let ran = Arc::new(AtomicU64::new(0));
    let count = ran.clone();
    let guard = node.create_guard_condition("g", move || {
        count.fetch_add(1, Ordering::SeqCst);
    });
    exec.add_node(&node).unwrap();
    let idle = exec.wait_for_ready(Duration::from_millis(20)).unwrap();
    assert!(idle.is_none(), "nothing has work: {idle:?}");
    guard.trigger();
    drop(exec.wait_for_ready(LONG).unwrap().expect("ready"));
    assert!(
        !node.default_callback_group().is_busy(),
        "the gate was left"
    );
    assert_eq!(exec.spin_some().unwrap(), 1, "the work was queued again");
    assert_eq!(ran.load(Ordering::SeqCst), 1);

    guard.trigger();
    let late = exec.wait_for_ready(LONG).unwrap().expect("ready");
    let report = exec.shutdown(Duration::from_secs(1));
    assert!(report.is_clean(), "{report}");
    assert!(!late.run(), "no callback starts after shutdown");
    assert_eq!(ran.load(Ordering::SeqCst), 1);
    assert!(matches!(
        exec.wait_for_ready(Duration::ZERO),
        Err(ExecError::ShutDown)
    ));
}
