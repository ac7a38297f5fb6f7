//! What each worker of an executor is running now: one slot per worker, written by that
//! worker alone without a lock, read by `shutdown` (which names the callbacks still
//! running in its report) and by nothing on the dispatch path.
//!
//! # Ground rules
//! - A slot belongs to one spin session on one thread (the spinning thread or a helper);
//!   only that thread writes it. The executor keeps weak references to the live slots
//!   under its `running` lock, which is also the lock `shutdown` waits on `idle` under.
//! - A callback's start stores its start time, then its entity id in `callback` (SeqCst),
//!   then reads the executor's `shut_down` (SeqCst); `shutdown` stores `shut_down`
//!   (SeqCst) before it reads the slots (SeqCst). In that single order one sees the
//!   other: a callback either shows in the report or never starts.
//! - A callback's end (or a start that saw `shut_down`) clears `callback` (SeqCst) and, if
//!   `shut_down` is set, notifies `idle` under the `running` lock; `shutdown` reads the
//!   slots under that lock before each wait, so it cannot miss the notification.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::thread::ThreadId;

#[derive(Debug)]
pub(crate) struct WorkerSlot {
    /// The entity id of the callback running (0: none).
    callback: AtomicU64,
    /// Coarse monotonic nanoseconds when it started.
    since_ns: AtomicI64,
    pub(crate) thread: ThreadId,
}

/// A callback a slot showed as running.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RunningCall {
    pub(crate) entity: u64,
    pub(crate) since_ns: i64,
    pub(crate) thread: ThreadId,
}

impl WorkerSlot {
    /// A slot for the calling thread.
    pub(crate) fn new() -> Self {
        Self {
            callback: AtomicU64::new(0),
            since_ns: AtomicI64::new(0),
            thread: std::thread::current().id(),
        }
    }

    pub(crate) fn start(&self, entity: u64, now_ns: i64) {
        self.since_ns.store(now_ns, Ordering::Relaxed);
        self.callback.store(entity, Ordering::SeqCst);
    }

    pub(crate) fn end(&self) {
        self.callback.store(0, Ordering::SeqCst);
    }

    /// The callback running in this slot now, if any.
    pub(crate) fn running(&self) -> Option<RunningCall> {
        let entity = self.callback.load(Ordering::SeqCst);
        (entity != 0).then(|| RunningCall {
            entity,
            since_ns: self.since_ns.load(Ordering::Relaxed),
            thread: self.thread,
        })
    }
}

/// Coarse monotonic nanoseconds (a few ms resolution, a fraction of `Instant::now`'s cost
/// on every dispatch): enough to say how long a stuck callback has run.
pub(crate) fn coarse_now_ns() -> i64 {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::MonotonicCoarse);
    now.tv_sec
        .saturating_mul(1_000_000_000)
        .saturating_add(now.tv_nsec)
}
