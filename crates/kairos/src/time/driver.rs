//! The time driver: one runtime thread that wakes async sleeps on steady and system time.
//!
//! Async waits register `(monotonic deadline, waker)` in a [`DeadlineQueue`]; the driver
//! thread parks until the earliest deadline and wakes what is due, in deadline order. A
//! registration earlier than everything pending unparks the driver so it re-arms. When
//! nothing is pending the driver parks indefinitely: it never polls.
//!
//! # Ground rules
//! The queue is only touched under `queue`; wakers are woken after the lock is released.

use super::deadline_queue::DeadlineQueue;
use super::slack::ensure_fine_slack;
use super::wait::{mono_now, park_until_mono};
use parking_lot::Mutex;
use std::sync::OnceLock;
use std::task::Waker;
use std::thread::Thread;

#[derive(Debug)]
pub(crate) struct Driver {
    queue: Mutex<DeadlineQueue>,
    thread: OnceLock<Option<Thread>>,
}

pub(crate) fn driver() -> &'static Driver {
    static DRIVER: OnceLock<Driver> = OnceLock::new();
    DRIVER.get_or_init(|| Driver {
        queue: Mutex::new(DeadlineQueue::default()),
        thread: OnceLock::new(),
    })
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
            earliest.is_none_or(|e| mono_deadline < e)
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
                self.fire_due();
            }
        }
    }

    fn fire_due(&self) -> Option<i64> {
        let mut due = Vec::new();
        let next = {
            let mut queue = self.queue.lock();
            queue.pop_due(mono_now(), &mut due);
            queue.next_deadline()
        };
        due.into_iter().for_each(Waker::wake);
        next
    }

    fn run(&self) {
        ensure_fine_slack();
        loop {
            let next = self.fire_due();
            park_until_mono(next);
        }
    }
}
