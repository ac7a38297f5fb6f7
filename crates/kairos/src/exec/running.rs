//! What each worker of an executor is running now: one slot per worker, written by that
//! worker alone without a lock, read by `shutdown` (which names the callbacks still
//! running in its report) and by nothing on the dispatch path.
//!
//! # Ground rules
//! - A slot belongs to one spin session on one thread (the spinning thread or a helper);
//!   only that thread writes it. The executor keeps weak references to the live slots
//!   under its `running` lock, which is also the lock `shutdown` waits on `idle` under.
//! - A callback's start stores its start time, then its entity id in `callback`, then
//!   (after a fence) reads the executor's `shut_down`; [`shut_down`] stores the flag
//!   and fences before `shutdown` reads any slot. Of two such store-fence-load sequences
//!   one always sees the other's store: a callback either shows in the report or never
//!   starts. The worker's fence is the light side of an asymmetric pair and shutdown's
//!   the heavy one (`crate::fence`): a callback pays no memory barrier for it. (Fences,
//!   not SeqCst accesses, so that loom checks it: `tests/exec_loom.rs`.)
//! - A callback's end clears `callback` and, after a light fence, reads `shut_down`: if
//!   set, the worker notifies `idle` under the `running` lock; `shutdown` reads the slots
//!   under that lock before each wait, so either it sees the slot clear or it hears the
//!   notification.
//! - `callbacks` counts the callbacks the slot's thread ran; only that thread writes it (no
//!   read-modify-write on the dispatch path). It moves the count into the executor's total
//!   under the `running` lock before the slot is dropped, and the executor's stats sum the
//!   total and the live slots under that lock, so every callback is counted exactly once.

use crate::loom::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use crate::loom::sync::{heavy_fence, light_fence};
use std::thread::ThreadId;

#[derive(Debug)]
pub(crate) struct WorkerSlot {
    /// The entity id of the callback running (0: none).
    callback: AtomicU64,
    /// Coarse monotonic nanoseconds when it started.
    since_ns: AtomicI64,
    /// Callbacks run in this slot not yet moved into the executor's total.
    callbacks: AtomicU64,
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
            callbacks: AtomicU64::new(0),
            thread: std::thread::current().id(),
        }
    }

    /// Shows the callback of `entity` as running unless the executor is `shut_down`; true
    /// if it may start (false: the slot is clear again and the caller must [`end`]'s
    /// notification duty, as after a run).
    ///
    /// [`end`]: Self::end
    pub(crate) fn start(&self, entity: u64, now_ns: i64, shut_down: &AtomicBool) -> bool {
        self.since_ns.store(now_ns, Ordering::Relaxed);
        self.callback.store(entity, Ordering::Release);
        light_fence();
        if shut_down.load(Ordering::Relaxed) {
            self.callback.store(0, Ordering::Release);
            return false;
        }
        true
    }

    /// The callback returned; true if the executor is shut down, so a `shutdown` waiting
    /// for this slot must be notified.
    pub(crate) fn end(&self, shut_down: &AtomicBool) -> bool {
        self.callback.store(0, Ordering::Release);
        light_fence();
        shut_down.load(Ordering::Relaxed)
    }

    /// Counts one callback run by this slot's thread (the only writer).
    #[inline]
    pub(crate) fn count_callback(&self) {
        let ran = self.callbacks.load(Ordering::Relaxed);
        self.callbacks.store(ran + 1, Ordering::Relaxed);
    }

    /// The callbacks counted and not yet taken (read under the executor's `running` lock).
    pub(crate) fn callbacks(&self) -> u64 {
        self.callbacks.load(Ordering::Relaxed)
    }

    /// Takes the count, for the executor's total (by the slot's thread, under `running`).
    pub(crate) fn take_callbacks(&self) -> u64 {
        let ran = self.callbacks.load(Ordering::Relaxed);
        self.callbacks.store(0, Ordering::Relaxed);
        ran
    }

    /// The callback running in this slot now, if any (after [`shut_down`], what `shutdown`
    /// waits for).
    pub(crate) fn running(&self) -> Option<RunningCall> {
        let entity = self.callback.load(Ordering::Acquire);
        (entity != 0).then(|| RunningCall {
            entity,
            since_ns: self.since_ns.load(Ordering::Relaxed),
            thread: self.thread,
        })
    }
}

/// Sets the executor's `shut_down` flag so that every callback start from now on sees it
/// or shows in the slots read after this returns.
pub(crate) fn shut_down(flag: &AtomicBool) {
    flag.store(true, Ordering::SeqCst);
    heavy_fence();
}

/// Coarse monotonic nanoseconds (a few ms resolution, a fraction of `Instant::now`'s cost
/// on every dispatch): enough to say how long a stuck callback has run.
pub(crate) fn coarse_now_ns() -> i64 {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::MonotonicCoarse);
    now.tv_sec
        .saturating_mul(1_000_000_000)
        .saturating_add(now.tv_nsec)
}
