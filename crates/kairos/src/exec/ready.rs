//! The ready queue: work that can run now, served in arrival order.
//!
//! An entity that becomes ready pushes itself here (at most once at a time, guarded by its
//! [`ScheduleFlag`]) and wakes one worker, so a dispatch costs O(ready) and a busy entity
//! that re-queues itself goes behind everything that arrived meanwhile: nothing starves.
//! [`ReadyQueue::interrupt`] wakes every worker without giving it work (cancel, shutdown,
//! the future a `spin_until_future_complete` waits on was woken).
//!
//! A worker that runs out of work spins briefly before it sleeps (crossbeam's backoff, a
//! few microseconds), then, if the executor has an *idle spin* window, keeps polling, and
//! yielding its core to any other runnable thread, for that long: work that arrives within
//! the window is taken without a futex wake-up of a sleeping thread, which costs 5-30 us on
//! a virtual machine. The poll ends at once on an interrupt (cancel, shutdown, a new timer)
//! and never outlasts the pop's deadline: it trades a busy core for latency, never a wait.

use crate::loom::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use crate::loom::sync::{Condvar, Mutex};
use std::collections::VecDeque;
use std::time::Instant;

/// A FIFO of ready work with blocking, deadline-bounded pops.
#[derive(Debug)]
pub(crate) struct ReadyQueue<T> {
    state: Mutex<State<T>>,
    available: Condvar,
    /// How many items are queued, readable without the lock (a hint for spinning).
    len_hint: AtomicUsize,
    /// `State::interrupts`, readable without the lock (ends an idle spin).
    interrupts_hint: AtomicU64,
    /// How long a worker out of work polls before it sleeps, in ns (0: backoff only).
    idle_spin_ns: AtomicU64,
    /// Pops that went to sleep on the condition variable (what an idle spin avoids).
    sleeps: AtomicU64,
}

#[derive(Debug)]
struct State<T> {
    items: VecDeque<T>,
    /// Bumped by every interrupt; a waiter that saw an older value returns.
    interrupts: u64,
}

/// What a blocking pop returned.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Popped<T> {
    Item(T),
    /// [`ReadyQueue::interrupt`] was called since the caller read [`ReadyQueue::interrupts`].
    Interrupted,
    TimedOut,
}

impl<T> ReadyQueue<T> {
    pub(crate) fn new() -> Self {
        Self {
            state: Mutex::new(State {
                items: VecDeque::new(),
                interrupts: 0,
            }),
            available: Condvar::new(),
            len_hint: AtomicUsize::new(0),
            interrupts_hint: AtomicU64::new(0),
            idle_spin_ns: AtomicU64::new(0),
            sleeps: AtomicU64::new(0),
        }
    }

    /// Sets the idle spin window in ns (see the module docs); 0 turns it off.
    pub(crate) fn set_idle_spin_ns(&self, window: u64) {
        self.idle_spin_ns.store(window, Ordering::Relaxed);
    }

    pub(crate) fn idle_spin_ns(&self) -> u64 {
        self.idle_spin_ns.load(Ordering::Relaxed)
    }

    /// How many pops have gone to sleep waiting for work.
    pub(crate) fn sleeps(&self) -> u64 {
        self.sleeps.load(Ordering::Relaxed)
    }

    /// Appends ready work and wakes one waiting worker.
    pub(crate) fn push(&self, item: T) {
        let mut state = self.state.lock();
        state.items.push_back(item);
        self.len_hint.store(state.items.len(), Ordering::Release);
        drop(state);
        self.available.notify_one();
    }

    /// Puts work that was already waiting (released by a callback group) at the front.
    pub(crate) fn push_front(&self, item: T) {
        let mut state = self.state.lock();
        state.items.push_front(item);
        self.len_hint.store(state.items.len(), Ordering::Release);
        drop(state);
        self.available.notify_one();
    }

    /// Wakes every waiter without work; each returns [`Popped::Interrupted`].
    pub(crate) fn interrupt(&self) {
        let mut state = self.state.lock();
        state.interrupts += 1;
        self.interrupts_hint
            .store(state.interrupts, Ordering::Release);
        drop(state);
        self.available.notify_all();
    }

    /// The interrupt count a worker starts from (see [`ReadyQueue::pop`]).
    pub(crate) fn interrupts(&self) -> u64 {
        self.state.lock().interrupts
    }

    pub(crate) fn len(&self) -> usize {
        self.state.lock().items.len()
    }

    /// Whether work is queued, without the lock: a hint, exact once pushes have settled
    /// (a worker running a batch asks it between callbacks to yield to other work).
    pub(crate) fn has_queued(&self) -> bool {
        self.len_hint.load(Ordering::Acquire) > 0
    }

    /// Takes every queued item (the executor shut down: none will run).
    pub(crate) fn drain(&self) -> Vec<T> {
        let mut state = self.state.lock();
        self.len_hint.store(0, Ordering::Release);
        state.items.drain(..).collect()
    }

    pub(crate) fn try_pop(&self) -> Option<T> {
        let mut state = self.state.lock();
        let item = state.items.pop_front();
        self.len_hint.store(state.items.len(), Ordering::Release);
        item
    }

    /// Takes the oldest item without waiting: [`Popped::Interrupted`] first if an
    /// interrupt newer than `seen` came (as [`pop`](Self::pop)), `TimedOut` when empty.
    pub(crate) fn pop_now(&self, seen: &mut u64) -> Popped<T> {
        self.take(&mut self.state.lock(), seen)
            .unwrap_or(Popped::TimedOut)
    }

    /// An interrupt newer than `seen` (which is then updated), else the oldest item, from
    /// the locked state; `None` when neither.
    #[inline]
    fn take(&self, state: &mut State<T>, seen: &mut u64) -> Option<Popped<T>> {
        if state.interrupts != *seen {
            *seen = state.interrupts;
            return Some(Popped::Interrupted);
        }
        let item = state.items.pop_front()?;
        self.len_hint.store(state.items.len(), Ordering::Release);
        Some(Popped::Item(item))
    }

    /// Before sleeping, spins then yields briefly for work (crossbeam-channel's backoff):
    /// a burst's next item usually arrives within that, and a futex wake-up costs more.
    /// Then polls, yielding, for the idle spin window, ending early on work, on an
    /// interrupt newer than `seen` or at `deadline`.
    fn spin_for_work(&self, seen: u64, deadline: Option<Instant>) {
        if crate::loom::MODEL_CHECKED {
            return;
        }
        let found = || {
            self.len_hint.load(Ordering::Acquire) > 0
                || self.interrupts_hint.load(Ordering::Acquire) != seen
        };
        let backoff = crossbeam_utils::Backoff::new();
        while !backoff.is_completed() {
            if found() {
                return;
            }
            backoff.snooze();
        }
        let window = self.idle_spin_ns.load(Ordering::Relaxed);
        if window == 0 {
            return;
        }
        let end = Instant::now() + std::time::Duration::from_nanos(window);
        let end = deadline.map_or(end, |deadline| deadline.min(end));
        while !found() && Instant::now() < end {
            crate::loom::thread::yield_now();
        }
    }

    /// Takes the oldest item, waiting until one arrives, an interrupt newer than `seen`
    /// (which is then updated, so the caller re-checks why it was woken before popping
    /// again), or the deadline (none: no deadline; the caller's way out is an interrupt).
    pub(crate) fn pop(&self, seen: &mut u64, deadline: Option<Instant>) -> Popped<T> {
        let mut state = self.state.lock();
        let mut spun = false;
        loop {
            if let Some(popped) = self.take(&mut state, seen) {
                return popped;
            }
            if !spun {
                spun = true;
                drop(state);
                self.spin_for_work(*seen, deadline);
                state = self.state.lock();
                continue;
            }
            self.sleeps.fetch_add(1, Ordering::Relaxed);
            match deadline {
                None => self.available.wait(&mut state),
                Some(deadline) => {
                    if self.available.wait_until(&mut state, deadline) {
                        let item = state.items.pop_front();
                        self.len_hint.store(state.items.len(), Ordering::Release);
                        return item.map_or(Popped::TimedOut, Popped::Item);
                    }
                }
            }
        }
    }
}

/// "Already in the ready queue": makes a push idempotent until the worker that took the
/// item releases the flag, so an event arriving afterwards queues the item again (no lost
/// wake-up, no duplicate entry).
///
/// The handshake is a store-buffering pattern: a producer publishes its work, then sets the
/// flag; the worker releases the flag, then looks for work. Both sides are read-modify-writes
/// on the flag, so under the C++ memory model (not only on x86) one of them sees the other:
/// either the producer's `set` reads the worker's release (false: it pushes the item), or
/// the worker's `release` reads the producer's set (true, a release-acquire pair: the work
/// published before it is visible to the worker's check that follows). A plain store would
/// not synchronise with the producer and could miss the work. Checked by loom in
/// `tests/exec_loom.rs`.
#[derive(Debug, Default)]
pub(crate) struct ScheduleFlag(AtomicBool);

impl ScheduleFlag {
    pub(crate) fn new() -> Self {
        Self(AtomicBool::new(false))
    }

    /// Marks the item queued; true if the caller must push it (it was not queued).
    pub(crate) fn set(&self) -> bool {
        !self.0.swap(true, Ordering::AcqRel)
    }

    /// The worker is done with the item: later events queue it again. Work published
    /// before a `set` this call overwrites is visible to the caller's next check.
    pub(crate) fn clear(&self) {
        self.0.swap(false, Ordering::AcqRel);
    }
}
