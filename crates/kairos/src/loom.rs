//! The synchronization primitives the executor core (ready queue, callback-group gate,
//! schedule flags, timekeeper) is written against, as `crate::loom::sync`. Here they are the
//! real ones; `tests/exec_loom.rs` compiles the same source files (`exec/ready.rs`,
//! `exec/gate.rs`, `exec/timekeeper.rs`, ...) with its own `loom` module mapping these names to loom's model-checked primitives, so
//! the code loom explores is the code that runs.
//!
//! The API follows `parking_lot` (a lock never fails; a condition wait takes the guard by
//! reference and can have a monotonic deadline).

/// Whether the primitives are loom's (no spinning then: it only adds states to explore).
pub(crate) const MODEL_CHECKED: bool = false;

pub(crate) mod sync {
    pub(crate) use crate::fence::{heavy_fence, light_fence};
    pub(crate) use parking_lot::{Mutex, MutexGuard};
    pub(crate) use std::sync::atomic;
    use std::time::Instant;

    /// A condition variable; waits are on the monotonic clock.
    #[derive(Debug, Default)]
    pub(crate) struct Condvar(parking_lot::Condvar);

    impl Condvar {
        pub(crate) fn new() -> Self {
            Self(parking_lot::Condvar::new())
        }

        pub(crate) fn wait<T>(&self, guard: &mut MutexGuard<'_, T>) {
            self.0.wait(guard);
        }

        /// Waits for a notification or the deadline; true if the deadline passed.
        pub(crate) fn wait_until<T>(
            &self,
            guard: &mut MutexGuard<'_, T>,
            deadline: Instant,
        ) -> bool {
            self.0.wait_until(guard, deadline).timed_out()
        }

        pub(crate) fn notify_one(&self) {
            self.0.notify_one();
        }

        pub(crate) fn notify_all(&self) {
            self.0.notify_all();
        }
    }
}

/// Thread operations a spin loop of the executor core uses (loom schedules at them).
pub(crate) mod thread {
    pub(crate) use std::thread::yield_now;
}
