//! The time driver: one runtime thread that wakes async sleeps on steady and system time.
//!
//! Async waits register `(monotonic deadline, waker)` in a [`DeadlineQueue`]; the driver
//! thread parks until the earliest deadline and wakes everything due, in deadline order. A
//! registration earlier than everything pending unparks the driver so it re-arms. When
//! nothing is pending the driver parks indefinitely: it never polls.
//!
//! A deadline nearer than [`SPIN_WINDOW`] is not worth a park: a timed futex wait and its
//! wake-up cost the kernel more than the wait itself and end tens of microseconds late.
//! The driver yields its core until such a deadline instead (it never wakes anything
//! before its deadline, and it checks for an earlier registration while it yields).
//! With sparse deadlines it parks; with a thousand timers at 1 kHz on distinct phases
//! (a deadline every microsecond) it stays awake and wakes each one on time, on one core.
//!
//! The driver is one `DeadlineHost`: the other is a single-threaded executor's
//! `Timekeeper`, which its own spinning thread serves (see `exec::timekeeper`), so the
//! timers of that executor cost no second thread and no cross-thread wake-up.
//!
//! # Ground rules
//! The queue is only touched under `queue`; wakers are woken after the lock is released.
//! `earlier` is set (after the registration, under `queue`) when a registration became
//! the earliest deadline, and taken by the driver before it reads the queue.

use super::deadline_host::{DeadlineHost, SPIN_WINDOW_NS};
use super::deadline_queue::DeadlineQueue;
use super::slack::ensure_fine_slack;
use super::wait::{mono_now, park_until_mono};
use parking_lot::Mutex;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::Waker;
use std::thread::Thread;

#[derive(Debug)]
pub(crate) struct Driver {
    queue: Mutex<DeadlineQueue>,
    /// A registration became the earliest deadline (see the ground rules).
    earlier: AtomicBool,
    thread: OnceLock<Option<Thread>>,
}

pub(crate) fn driver() -> &'static Driver {
    static DRIVER: OnceLock<Driver> = OnceLock::new();
    DRIVER.get_or_init(|| Driver {
        queue: Mutex::new(DeadlineQueue::default()),
        earlier: AtomicBool::new(false),
        thread: OnceLock::new(),
    })
}

/// [`driver()`] as a [`DeadlineHost`]: the host of every sleep not given another.
#[derive(Debug)]
pub(crate) struct GlobalDriver;

impl DeadlineHost for GlobalDriver {
    fn register(&self, mono_deadline: i64, key: &mut Option<u64>, waker: &Waker) {
        driver().register(mono_deadline, key, waker);
    }

    fn unregister(&self, key: Option<u64>) {
        driver().unregister(key);
    }
}

impl Driver {
    /// Registers (or refreshes) `waker` for `mono_deadline`, replacing an older key.
    pub(crate) fn register(
        &'static self,
        mono_deadline: i64,
        key: &mut Option<u64>,
        waker: &Waker,
    ) {
        let rearm = {
            let mut queue = self.queue.lock();
            if let Some(old) = key.take() {
                queue.remove(old);
            }
            let earliest = queue.next_deadline();
            *key = Some(queue.insert(mono_deadline, waker.clone()));
            let rearm = earliest.is_none_or(|e| mono_deadline < e);
            if rearm {
                self.earlier.store(true, Ordering::Release);
            }
            rearm
        };
        if rearm {
            self.unpark();
        }
    }

    pub(crate) fn unregister(&self, key: Option<u64>) {
        if let Some(k) = key {
            self.queue.lock().remove(k);
        }
    }

    fn unpark(&'static self) {
        let thread = self.thread.get_or_init(|| {
            std::thread::Builder::new()
                .name("kairos-time-driver".into())
                .spawn(move || self.run())
                .ok()
                .map(|h| h.thread().clone())
        });
        match thread {
            Some(t) => t.unpark(),
            // No thread could be started: fire what is due from here so no sleep is stuck
            // beyond its next poll; pending sleeps are re-checked by whoever polls them.
            None => {
                self.fire_due(&mut Vec::new());
            }
        }
    }

    /// Wakes every registration due now, in deadline order, and returns the next deadline.
    /// `due` is the caller's buffer, reused from one wake-up to the next.
    fn fire_due(&self, due: &mut Vec<Waker>) -> Option<i64> {
        self.earlier.store(false, Ordering::Relaxed);
        let next = {
            let mut queue = self.queue.lock();
            queue.pop_due(mono_now(), due);
            queue.next_deadline()
        };
        due.drain(..).for_each(Waker::wake);
        next
    }

    fn run(&self) {
        ensure_fine_slack();
        let mut due = Vec::new();
        loop {
            let next = self.fire_due(&mut due);
            match next {
                Some(at) if at.saturating_sub(mono_now()) <= SPIN_WINDOW_NS => self.yield_until(at),
                _ => park_until_mono(next),
            }
        }
    }

    /// Yields the core until `deadline` (monotonic) or an earlier registration.
    fn yield_until(&self, deadline: i64) {
        while mono_now() < deadline && !self.earlier.load(Ordering::Acquire) {
            std::thread::yield_now();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::AtomicI64;
    use std::task::Wake;

    /// Records the monotonic time it was woken at.
    struct WokenAt(AtomicI64);
    impl Wake for WokenAt {
        fn wake(self: Arc<Self>) {
            self.0.store(mono_now(), Ordering::Release);
        }
    }

    #[test]
    fn a_yield_for_a_deadline_ends_at_an_earlier_registration() {
        let driver = Driver {
            queue: Mutex::new(DeadlineQueue::default()),
            earlier: AtomicBool::new(true),
            thread: OnceLock::new(),
        };
        let start = mono_now();
        driver.yield_until(start + 10_000_000_000);
        assert!(
            mono_now() - start < 5_000_000_000,
            "the driver kept yielding for a later deadline past an earlier registration"
        );
    }

    #[test]
    fn deadlines_inside_the_spin_window_are_never_woken_early() {
        for i in 0..200 {
            let woken = Arc::new(WokenAt(AtomicI64::new(0)));
            let waker = Waker::from(Arc::clone(&woken));
            // Spread over the window, some right at its edge.
            let deadline = mono_now() + (i * 7_919) % (SPIN_WINDOW_NS + 1_000);
            let mut key = None;
            driver().register(deadline, &mut key, &waker);
            let give_up = mono_now() + 10_000_000_000;
            while woken.0.load(Ordering::Acquire) == 0 {
                assert!(mono_now() < give_up, "deadline {i} was never woken");
                std::thread::yield_now();
            }
            let at = woken.0.load(Ordering::Acquire);
            assert!(at >= deadline, "woken {} ns early", deadline - at);
        }
    }
}
