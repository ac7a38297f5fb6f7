use super::*;
use crate::graph::Context;

/// Issue 13, defect 3: a worker that took an item from the queue just before a shutdown
/// must not start its callback after `shutdown` has returned. Replayed step by step:
/// the item is taken, the executor shut down, then the worker runs what it took.
#[test]
fn an_item_taken_before_shutdown_does_not_start_after_it() {
    let node = Node::new_in(&Context::new(), "node", "/").unwrap();
    let exec = Executor::single_threaded();
    exec.add_node(&node).unwrap();
    let ran = Arc::new(AtomicU64::new(0));
    let count = ran.clone();
    let guard = node.create_guard_condition("late", move || {
        count.fetch_add(1, Ordering::SeqCst);
    });
    guard.trigger();
    let taken = exec
        .shared
        .ready
        .try_pop()
        .expect("the guard condition is queued");
    let report = exec.shutdown(Duration::ZERO);
    assert!(report.is_clean(), "{report}");
    // The worker had checked that the entity was attached before the shutdown detached
    // it (the window the campaign hit): replayed by attaching it again.
    guard.inner.core().attach(&exec.shared);
    let slot = exec.shared.new_slot();
    let started = exec.shared.run_ready(taken, &slot, 1);
    assert!(!started, "no callback may start after shutdown returned");
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    assert!(
        !node.default_callback_group().is_busy(),
        "the group was left"
    );
}

/// The timekeeper's handshake: a deadline registered from another thread, earlier
/// than the one the spinning thread waits for (or while it waits with no timer at
/// all), ends that wait; it is woken once reached, never before.
#[test]
fn an_earlier_deadline_registered_from_another_thread_ends_the_keepers_wait() {
    an_earlier_deadline_ends_the_wait(true);
    an_earlier_deadline_ends_the_wait(false);
}

fn an_earlier_deadline_ends_the_wait(far_timer: bool) {
    use crate::time::DeadlineHost;
    use crate::time::wait::{mono_now, thread_waker};
    let exec = Executor::single_threaded();
    let keeper = exec.shared.timekeeper.clone().expect("single-threaded");
    let (far_key, near_key) = (&mut None, &mut None);
    let idle = thread_waker();
    if far_timer {
        keeper.register(mono_now() + 3_600_000_000_000, far_key, &idle);
    }
    let woken = Arc::new(std::sync::atomic::AtomicI64::new(0));
    let (near_at, registered) = (
        Arc::new(std::sync::atomic::AtomicI64::new(0)),
        woken.clone(),
    );
    let near = Waker::from(Arc::new(StampOnWake(registered)));
    let waiting = std::thread::scope(|scope| {
        let waiter = scope.spawn(|| {
            let mut seen = exec.shared.ready.interrupts();
            // Ends at the interrupt (the caller looks again), not after 20 s.
            let limit = Instant::now() + std::time::Duration::from_secs(20);
            let popped = exec.shared.next_item(&mut seen, Some(limit));
            assert!(
                matches!(popped, Popped::Interrupted),
                "the wait went on past the nudge (far timer: {far_timer})"
            );
            // The next looks wait for the near deadline and wake it (a look returns
            // only for work or its caller's deadline: looks of 10 ms).
            let until = Instant::now() + std::time::Duration::from_secs(20);
            while woken.load(Ordering::Acquire) == 0 && Instant::now() < until {
                let soon = Instant::now() + std::time::Duration::from_millis(10);
                let _ = exec.shared.next_item(&mut seen, Some(soon));
            }
        });
        // Once the spinning thread waits (for the far deadline, or for work only),
        // register a near one.
        let until = Instant::now() + std::time::Duration::from_secs(20);
        while !keeper.is_waiting() && Instant::now() < until {
            std::thread::yield_now();
        }
        let at = mono_now() + 2_000_000;
        near_at.store(at, Ordering::Release);
        keeper.register(at, near_key, &near);
        waiter.join().is_ok()
    });
    assert!(waiting, "the spinning thread panicked");
    let at = woken.load(Ordering::Acquire);
    assert!(at != 0, "the near deadline was never woken");
    assert!(
        at >= near_at.load(Ordering::Acquire),
        "woken before its deadline"
    );
}

/// Stores the monotonic time of its wake-up.
struct StampOnWake(Arc<std::sync::atomic::AtomicI64>);
impl Wake for StampOnWake {
    fn wake(self: Arc<Self>) {
        self.0
            .store(crate::time::wait::mono_now(), Ordering::Release);
    }
}

/// A timekeeper that counts its interrupts.
fn counting() -> (Timekeeper, Arc<std::sync::atomic::AtomicUsize>) {
    let count = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = Arc::clone(&count);
    let keeper = Timekeeper::new(Box::new(move || {
        counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }));
    (keeper, count)
}

/// Only a registration that would shorten the spinning thread's wait interrupts it: a
/// re-arm made by the spinning thread itself (not waiting) or a later deadline costs
/// no interrupt, an earlier one (or any, during a wait with no timer) does.
#[test]
fn a_registration_interrupts_only_a_wait_it_shortens() {
    use crate::time::DeadlineHost;
    let interrupts =
        |keeper: &Timekeeper, count: &std::sync::atomic::AtomicUsize, deadline: i64| {
            let before = count.load(std::sync::atomic::Ordering::SeqCst);
            keeper.register(deadline, &mut None, Waker::noop());
            count.load(std::sync::atomic::Ordering::SeqCst) - before
        };
    let far = crate::time::wait::mono_now() + 3_600_000_000_000;
    let (keeper, count) = counting();
    assert_eq!(interrupts(&keeper, &count, far), 0, "not waiting");
    assert!(keeper.begin_wait(Some(far)));
    assert_eq!(interrupts(&keeper, &count, far + 1), 0, "a later deadline");
    assert_eq!(
        interrupts(&keeper, &count, far - 1),
        1,
        "an earlier deadline"
    );
    keeper.end_wait();
    assert_eq!(interrupts(&keeper, &count, far - 2), 0, "the wait is over");

    let (keeper, count) = counting();
    assert!(keeper.begin_wait(None));
    assert_eq!(interrupts(&keeper, &count, far), 1, "a wait with no timer");
    keeper.end_wait();
    assert!(
        !keeper.begin_wait(Some(far + 1)),
        "a wait past a registered deadline"
    );
}

/// A guard condition whose callback reports on a channel, for ping-pong tests.
fn pinged(node: &Node) -> (crate::exec::GuardCondition, std::sync::mpsc::Receiver<()>) {
    let (tx, rx) = std::sync::mpsc::channel();
    let tx = Mutex::new(tx);
    let guard = node.create_guard_condition("ping", move || {
        let _ = tx.lock().send(());
    });
    (guard, rx)
}

/// A spinning executor with a ping guard condition, for the idle spin tests.
struct Pinged {
    exec: Executor,
    guard: crate::exec::GuardCondition,
    pongs: std::sync::mpsc::Receiver<()>,
    spin: SpinThread,
    _node: Node,
}

impl Pinged {
    fn new(idle_spin: Duration, workers: usize) -> Self {
        let node = Node::new_in(&Context::new(), "pinged", "/").unwrap();
        let exec = Executor::multi_threaded(workers).unwrap();
        exec.set_idle_spin(idle_spin).unwrap();
        exec.add_node(&node).unwrap();
        let (guard, pongs) = pinged(&node);
        let spin = exec.spin_thread().unwrap();
        let pinged = Self {
            exec,
            guard,
            pongs,
            spin,
            _node: node,
        };
        pinged.ping();
        pinged
    }

    fn ping(&self) {
        self.guard.trigger();
        self.pongs
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("every ping is answered");
    }
}

/// A pop with an idle spin window takes work that arrives within the window without going
/// to sleep; without a window it sleeps until the work comes. Timed on the queue itself,
/// with a window (60 s) that only a hang outlasts: how often a busy machine lets a spinning
/// thread run is a property of its scheduler, measured by `kairos bench zenoh
/// --idle-spin-us` (its `executor_sleeps`), not asserted here.
#[test]
fn an_idle_spin_takes_work_that_comes_within_it_without_sleeping() {
    use crate::exec::ready::{Popped, ReadyQueue};
    let queue = Arc::new(ReadyQueue::<u32>::new());
    queue.set_idle_spin_ns(60_000_000_000);
    let popper = {
        let queue = queue.clone();
        std::thread::spawn(move || queue.pop(&mut 0, None))
    };
    std::thread::sleep(std::time::Duration::from_millis(20));
    queue.push(1);
    assert_eq!(popper.join().unwrap(), Popped::Item(1));
    assert_eq!(
        queue.sleeps(),
        0,
        "work within the window is taken spinning"
    );

    // The counter counts: without a window the pop sleeps (waited for), then takes the
    // work that wakes it.
    queue.set_idle_spin_ns(0);
    let popper = {
        let queue = queue.clone();
        std::thread::spawn(move || queue.pop(&mut 0, None))
    };
    let limit = Instant::now() + std::time::Duration::from_secs(30);
    while queue.sleeps() == 0 {
        assert!(
            Instant::now() < limit,
            "no sleep within 30 s without a window"
        );
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    queue.push(2);
    assert_eq!(popper.join().unwrap(), Popped::Item(2));
}

/// The executor's idle spin reaches its workers, and its sleep counter counts: without a
/// window a worker sleeps after each ping (its backoff lasts microseconds, or longer on a
/// loaded machine: waited for). The count is read before the ping: the worker may well
/// sleep before the pong is read here.
#[test]
fn an_executor_passes_its_idle_spin_to_its_workers_and_counts_their_sleeps() {
    for workers in [1, 2] {
        let spun = Pinged::new(Executor::MAX_IDLE_SPIN, workers);
        assert_eq!(spun.exec.shared.ready.idle_spin_ns(), 1_000_000_000);
        spun.ping();
        spun.spin.stop().unwrap();

        let plain = Pinged::new(Duration::ZERO, workers);
        for round in 0..20 {
            let before = plain.exec.stats().sleeps;
            plain.ping();
            let limit = Instant::now() + std::time::Duration::from_secs(10);
            while plain.exec.stats().sleeps == before {
                assert!(
                    Instant::now() < limit,
                    "no sleep within 10 s after ping {round} without a window ({workers} workers)"
                );
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        }
        plain.spin.stop().unwrap();
    }
}

/// An idle spin is a wait like the others: `cancel` and `shutdown` end it at once, not
/// at the end of its window.
#[test]
fn cancel_and_shutdown_end_an_idle_spin_at_once() {
    for shutdown in [false, true] {
        let node = Node::new_in(&Context::new(), "spinning", "/").unwrap();
        let exec = Executor::single_threaded();
        // A window of a minute (the public cap is 1 s): only a spin that cancel and
        // shutdown did not end runs into it, however the machine schedules this test.
        exec.shared.ready.set_idle_spin_ns(60_000_000_000);
        exec.add_node(&node).unwrap();
        let (guard, pongs) = pinged(&node);
        let spin = exec.spin_thread().unwrap();
        guard.trigger();
        pongs
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("answered");
        // The worker now polls for up to a minute.
        let asked = Instant::now();
        if shutdown {
            assert!(exec.shutdown(Duration::from_secs(30)).is_clean());
            let _ = spin.stop();
        } else {
            spin.stop().unwrap();
        }
        let took = asked.elapsed();
        assert!(
            took < std::time::Duration::from_secs(30),
            "the spin ended {took:?} after {} (a 60 s window)",
            if shutdown { "shutdown" } else { "cancel" }
        );
    }
}

/// Timers keep their time under an idle spin: the poll ends at the next deadline (one
/// worker keeps its own timers) or when the time driver queues the timer (several).
#[test]
fn an_idle_spin_never_delays_a_timer() {
    for workers in [1, 2] {
        let node = Node::new_in(&Context::new(), "ticking", "/").unwrap();
        let exec = Executor::multi_threaded(workers).unwrap();
        // A window of a minute (the public cap is 1 s): a poll that ignored the timer's
        // deadline would hold a tick that long, however the machine schedules this test.
        exec.shared.ready.set_idle_spin_ns(60_000_000_000);
        exec.add_node(&node).unwrap();
        let (tx, ticks) = std::sync::mpsc::channel();
        let tx = Mutex::new(tx);
        let _timer = node
            .create_timer(Duration::from_millis(20), move |_| {
                let _ = tx.lock().send(Instant::now());
            })
            .unwrap();
        let spin = exec.spin_thread().unwrap();
        let start = Instant::now();
        for _ in 0..10 {
            ticks
                .recv_timeout(std::time::Duration::from_secs(30))
                .expect("the timer ticks");
        }
        let took = start.elapsed();
        spin.stop().unwrap();
        // 200 ms of ticks; a poll that ignored the deadline would hold each for 60 s.
        assert!(
            took < std::time::Duration::from_secs(30),
            "10 ticks of 20 ms took {took:?} ({workers} workers, a 60 s window)"
        );
    }
}

#[test]
fn an_idle_spin_window_outside_0_to_1_s_is_refused() {
    let exec = Executor::single_threaded();
    for window in [Duration::from_nanos(-1), Duration::from_millis(1001)] {
        let err = exec.set_idle_spin(window).unwrap_err();
        assert!(matches!(err, ExecError::InvalidIdleSpin { .. }), "{err}");
        assert!(err.to_string().contains("0 to 1 s"), "{err}");
    }
    assert_eq!(exec.idle_spin(), Duration::ZERO);
    exec.set_idle_spin(Duration::from_micros(1500)).unwrap();
    assert_eq!(exec.idle_spin(), Duration::from_micros(1500));
}
