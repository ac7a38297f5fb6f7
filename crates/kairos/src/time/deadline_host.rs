//! [`DeadlineHost`]: who wakes a sleep's monotonic deadline.
//!
//! Two hosts exist: the time driver's thread (`driver`), the default, and a
//! single-threaded executor's timekeeper (`exec::timekeeper`), served by the thread that
//! spins that executor. A sleep registers its deadline with its host and is woken by it.

use std::task::Waker;

/// Wakes registrations once the monotonic clock has reached their deadline, never before.
pub(crate) trait DeadlineHost: Send + Sync + std::fmt::Debug {
    /// Registers (or refreshes) `waker` for `mono_deadline`, replacing an older key.
    fn register(&self, mono_deadline: i64, key: &mut Option<u64>, waker: &Waker);
    fn unregister(&self, key: Option<u64>);
}
