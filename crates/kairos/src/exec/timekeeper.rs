//! The timekeeper: a single-threaded executor keeps its own timers' deadlines, and the
//! thread that spins it waits on the earliest one, as rclcpp's wait set does.
//!
//! A callback timer arms a [`Sleep`](crate::time::Sleep) whose monotonic deadline is
//! registered here instead of on the time driver. The spinning thread, each time it looks
//! for work ([`Timekeeper::next_item`]), wakes every registration that is due (the timer
//! entities queue themselves), and when nothing is ready it waits for work no later than
//! the earliest deadline: a timed futex wait on the monotonic clock, or, for a deadline
//! nearer than the time driver's spin window, yields of its core. So a timer costs one
//! thread, not two: no driver thread wakes, no wake-up crosses cores, and a thousand
//! timers at 1 kHz leave the machine's other cores free.
//!
//! Promises, as the driver's: a registration is woken only once the monotonic clock has
//! reached its deadline (its timer then checks its own clock again, so it is never
//! early), and never later than the next time the spinning thread looks for work after
//! that. While nobody spins the executor its timers are not woken, which costs nothing:
//! their callbacks could not run anyway, and the first look of the next spin fires what
//! became due.
//!
//! Multi-threaded executors leave their timers on the time driver: with several workers
//! someone would have to hand the wait over whenever the waiting worker takes work.
//!
//! # Ground rules
//! - `queue` (lock): the registrations; `earliest` and `waiting_until` are written under
//!   it. `earliest` is read without it (one load on the dispatch path): only a hint, as
//!   a stale value costs one look under the lock, and every decision to wait is made
//!   again under the lock (`begin_wait`).
//! - `waiting_until` is the deadline the spinning thread is about to wait for (`i64::MAX`
//!   while it waits with no timer registered, `i64::MIN` while it does not wait). It is
//!   set under `queue` after checking the earliest deadline, and a registration reads it
//!   under `queue` after inserting: so either the waiter sees the new deadline, or the
//!   registration sees the wait and interrupts the executor's ready queue, which ends the
//!   wait (the waiter looks again). A registration made while nobody waits (the spinning
//!   thread re-arming a timer) costs no interrupt.
//! - Wakers are woken after `queue` is released (a woken entity takes the executor's
//!   locks).
//!
//! Its primitives come through `crate::loom`: `tests/exec_loom.rs` checks the handshake
//! with the ready queue under the loom model checker.

use super::ready::{Popped, ReadyQueue};
use crate::loom::sync::Mutex;
use crate::loom::sync::atomic::{AtomicI64, Ordering};
use crate::loom::thread;
use crate::time::slack::ensure_fine_slack;
use crate::time::wait::mono_now;
use crate::time::{DeadlineHost, DeadlineQueue, SPIN_WINDOW_NS};
use std::fmt;
use std::task::Waker;
use std::time::Instant;

/// "No deadline" in `earliest`, and in `waiting_until` "waits with no timer registered".
const NONE: i64 = i64::MAX;
/// "Not waiting" in `waiting_until`: no registration is earlier.
const NOT_WAITING: i64 = i64::MIN;

pub(crate) struct Timekeeper {
    queue: Mutex<DeadlineQueue>,
    /// The earliest registered deadline (monotonic ns), [`NONE`] when nothing is registered.
    earliest: AtomicI64,
    /// The deadline the spinning thread waits for (see the ground rules).
    waiting_until: AtomicI64,
    /// The wakers of the last look, kept for the next (only the spinning thread looks).
    due: Mutex<Vec<Waker>>,
    /// Interrupts the executor's ready queue (see the ground rules).
    interrupt: Box<dyn Fn() + Send + Sync>,
}

impl fmt::Debug for Timekeeper {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Timekeeper")
            .field("earliest", &self.earliest)
            .field("waiting_until", &self.waiting_until)
            .finish_non_exhaustive()
    }
}

/// What a look found: the time it read and the earliest deadline left.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Look {
    /// The monotonic time of the look (0 when nothing was registered: no read).
    pub(crate) now: i64,
    /// The earliest deadline still registered, if any.
    pub(crate) next: Option<i64>,
    /// Whether it woke a registration.
    pub(crate) woke: bool,
}

impl Timekeeper {
    /// A timekeeper whose registrations end a wait with `interrupt` (which interrupts the
    /// executor's ready queue).
    pub(crate) fn new(interrupt: Box<dyn Fn() + Send + Sync>) -> Self {
        Self {
            queue: Mutex::new(DeadlineQueue::default()),
            earliest: AtomicI64::new(NONE),
            waiting_until: AtomicI64::new(NOT_WAITING),
            due: Mutex::new(Vec::new()),
            interrupt,
        }
    }

    /// Whether a registration is due: one atomic load when nothing is registered, a clock
    /// read otherwise.
    #[inline]
    pub(crate) fn any_due(&self) -> bool {
        let earliest = self.earliest.load(Ordering::Acquire);
        earliest != NONE && earliest <= mono_now()
    }

    /// The next item of `ready`, as [`ReadyQueue::pop`], for the thread that spins the
    /// executor: every look wakes the registrations that are due (through `wake`, which
    /// drains the wakers it is given), and a wait for work ends no later than the
    /// earliest deadline (yielding the core instead when that is nearer than the time
    /// driver's spin window). `deadline` is the caller's own; only it gives `TimedOut`.
    pub(crate) fn next_item<T>(
        &self,
        ready: &ReadyQueue<T>,
        seen: &mut u64,
        deadline: Option<Instant>,
        wake: impl Fn(&mut Vec<Waker>),
    ) -> Popped<T> {
        loop {
            let look = self.look(&wake);
            let popped = ready.pop_now(seen);
            if !matches!(popped, Popped::TimedOut) {
                return popped;
            }
            let Some(next) = look.next else {
                // No timer: wait for work alone; a registration meanwhile interrupts it.
                if !self.begin_wait(None) {
                    continue;
                }
                let popped = ready.pop(seen, deadline);
                self.end_wait();
                return popped;
            };
            if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                return Popped::TimedOut;
            }
            let remaining = next.saturating_sub(look.now);
            if remaining <= SPIN_WINDOW_NS {
                thread::yield_now();
                continue;
            }
            if !self.begin_wait(Some(next)) {
                continue;
            }
            // The thread waits on its timers: 1 ns slack (see `time::slack`).
            ensure_fine_slack();
            // Errs late by the time since the look, never early: the next look re-reads.
            let wake_at = Instant::now() + std::time::Duration::from_nanos(remaining as u64);
            let until = deadline.map_or(wake_at, |deadline| deadline.min(wake_at));
            let popped = ready.pop(seen, Some(until));
            self.end_wait();
            if !matches!(popped, Popped::TimedOut) {
                return popped;
            }
        }
    }

    /// Wakes every registration due now, in deadline order, through `wake` (which drains
    /// the wakers it is given).
    #[inline]
    pub(crate) fn look(&self, wake: impl Fn(&mut Vec<Waker>)) -> Look {
        let earliest = self.earliest.load(Ordering::Acquire);
        if earliest == NONE {
            return Look {
                now: 0,
                next: None,
                woke: false,
            };
        }
        let now = mono_now();
        if earliest > now {
            return Look {
                now,
                next: Some(earliest),
                woke: false,
            };
        }
        self.wake_due(now, wake)
    }

    /// The slow half of [`look`](Self::look): something may be due at `now`.
    #[inline(never)]
    fn wake_due(&self, now: i64, wake: impl Fn(&mut Vec<Waker>)) -> Look {
        let mut due = std::mem::take(&mut *self.due.lock());
        let next = {
            let mut queue = self.queue.lock();
            queue.pop_due(now, &mut due);
            let next = queue.next_deadline();
            self.earliest.store(next.unwrap_or(NONE), Ordering::Release);
            next
        };
        let woke = !due.is_empty();
        wake(&mut due);
        due.clear();
        *self.due.lock() = due;
        Look { now, next, woke }
    }

    /// The spinning thread is about to wait for work until `deadline`, the earliest a
    /// look returned (`None`: no timer registered): true if it may (no earlier
    /// registration came in since; one that comes later interrupts the wait).
    pub(super) fn begin_wait(&self, deadline: Option<i64>) -> bool {
        let deadline = deadline.unwrap_or(NONE);
        let _queue = self.queue.lock();
        if self.earliest.load(Ordering::Acquire) < deadline {
            return false;
        }
        self.waiting_until.store(deadline, Ordering::Release);
        true
    }

    /// Whether the spinning thread waits (between `begin_wait` and `end_wait`).
    #[cfg(test)]
    pub(crate) fn is_waiting(&self) -> bool {
        self.waiting_until.load(Ordering::Acquire) != NOT_WAITING
    }

    /// The wait [`begin_wait`](Self::begin_wait) announced is over.
    pub(super) fn end_wait(&self) {
        self.waiting_until.store(NOT_WAITING, Ordering::Release);
    }
}

impl DeadlineHost for Timekeeper {
    fn register(&self, mono_deadline: i64, key: &mut Option<u64>, waker: &Waker) {
        let interrupt = {
            let mut queue = self.queue.lock();
            if let Some(old) = key.take() {
                queue.remove(old);
            }
            *key = Some(queue.insert(mono_deadline, waker.clone()));
            if mono_deadline < self.earliest.load(Ordering::Acquire) {
                self.earliest.store(mono_deadline, Ordering::Release);
            }
            mono_deadline < self.waiting_until.load(Ordering::Acquire)
        };
        if interrupt {
            (self.interrupt)();
        }
    }

    fn unregister(&self, key: Option<u64>) {
        if let Some(key) = key {
            // `earliest` may now be early: the next look finds nothing due and corrects it.
            self.queue.lock().remove(key);
        }
    }
}
