//! [`DeadlineHost`]: who wakes a sleep's monotonic deadline.
//!
//! Two hosts exist: the time driver's thread (`driver`), the default, and a
//! single-threaded executor's timekeeper (`exec::timekeeper`), served by the thread that
//! spins that executor. A sleep registers its deadline with its host and is woken by it.

use std::task::Waker;

/// Deadlines at most this far away are waited for by yielding, not parking: a timed
/// futex wait and its wake-up cost more than the wait itself (see `driver`). Both hosts
/// use it.
pub(crate) const SPIN_WINDOW_NS: i64 = 50_000;

/// Wakes registrations once the monotonic clock has reached their deadline, never before.
pub(crate) trait DeadlineHost: Send + Sync + std::fmt::Debug {
    /// Registers (or refreshes) `waker` for `mono_deadline`, replacing an older key.
    fn register(&self, mono_deadline: i64, key: &mut Option<u64>, waker: &Waker);
    fn unregister(&self, key: Option<u64>);
}
