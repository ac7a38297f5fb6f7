//! The synchronization primitives the executor core (ready queue, callback-group gate,
//! schedule flags) is written against: the real ones normally, loom's model-checked ones
//! when built with `RUSTFLAGS="--cfg loom"`, so the same code is what loom explores.
//!
//! The API follows `parking_lot` (a lock never fails; a condition wait takes the guard by
//! reference and can have a monotonic deadline).

#[cfg(not(loom))]
pub(crate) mod sync {
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

#[cfg(loom)]
pub(crate) mod sync {
    pub(crate) use loom::sync::atomic;
    use std::ops::{Deref, DerefMut};
    use std::sync::PoisonError;
    use std::time::Instant;

    #[derive(Debug)]
    pub(crate) struct Mutex<T>(loom::sync::Mutex<T>);

    /// Holds loom's guard in an `Option` so a condition wait can take it by reference.
    #[derive(Debug)]
    pub(crate) struct MutexGuard<'a, T>(Option<loom::sync::MutexGuard<'a, T>>);

    impl<T> Mutex<T> {
        pub(crate) fn new(value: T) -> Self {
            Self(loom::sync::Mutex::new(value))
        }

        pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
            MutexGuard(Some(self.0.lock().unwrap_or_else(PoisonError::into_inner)))
        }
    }

    impl<T: Default> Default for Mutex<T> {
        fn default() -> Self {
            Self::new(T::default())
        }
    }

    impl<T> Deref for MutexGuard<'_, T> {
        type Target = T;
        fn deref(&self) -> &T {
            self.0
                .as_deref()
                .expect("guard is only empty during a condition wait")
        }
    }

    impl<T> DerefMut for MutexGuard<'_, T> {
        fn deref_mut(&mut self) -> &mut T {
            self.0
                .as_deref_mut()
                .expect("guard is only empty during a condition wait")
        }
    }

    #[derive(Debug, Default)]
    pub(crate) struct Condvar(loom::sync::Condvar);

    impl Condvar {
        pub(crate) fn new() -> Self {
            Self(loom::sync::Condvar::new())
        }

        pub(crate) fn wait<T>(&self, guard: &mut MutexGuard<'_, T>) {
            let inner = guard.0.take().expect("guard is held");
            guard.0 = Some(self.0.wait(inner).unwrap_or_else(PoisonError::into_inner));
        }

        /// loom does not model time: a timed wait is an untimed one that may wake spuriously.
        pub(crate) fn wait_until<T>(
            &self,
            guard: &mut MutexGuard<'_, T>,
            deadline: Instant,
        ) -> bool {
            let inner = guard.0.take().expect("guard is held");
            let timeout = deadline.saturating_duration_since(Instant::now());
            let (inner, result) = self
                .0
                .wait_timeout(inner, timeout)
                .unwrap_or_else(PoisonError::into_inner);
            guard.0 = Some(inner);
            result.timed_out()
        }

        pub(crate) fn notify_one(&self) {
            self.0.notify_one();
        }

        pub(crate) fn notify_all(&self) {
            self.0.notify_all();
        }
    }
}
