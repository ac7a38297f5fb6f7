//! [`CancelToken`]: the way out of every blocking wait.
//!
//! # Guarantees
//! - `cancel()` is sticky and idempotent: once cancelled, a token stays cancelled, and
//!   every wait registered on it, now or later, returns [`WaitError::Cancelled`](super::WaitError).
//! - No lost wake-up: a waiter registers its waker *then* checks the flag; `cancel()` sets
//!   the flag *then* takes the waker list under the same lock. Whichever comes first, the
//!   waiter either sees the flag or is in the list that `cancel()` wakes.
//! - A child token is cancelled when its parent is; cancelling a child leaves the parent alone.
//!
//! # Ground rules
//! The flag is an atomic read without the lock on every loop of a wait. The waker list and
//! the children are only touched under `state`; wakers are woken after the lock is released
//! so a waker that re-enters the token cannot deadlock.

use super::wakers::Wakers;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::task::Waker;

/// A shareable, one-shot cancellation signal (shutdown, stop, cancel).
#[derive(Debug, Clone, Default)]
pub struct CancelToken {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    cancelled: AtomicBool,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    wakers: Wakers,
    children: Vec<Weak<Inner>>,
}

impl CancelToken {
    /// A token not cancelled yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// A token that is cancelled when `self` is (and may also be cancelled on its own).
    pub fn child(&self) -> CancelToken {
        let child = CancelToken::new();
        let mut state = self.inner.state.lock();
        state.children.retain(|w| w.strong_count() > 0);
        state.children.push(Arc::downgrade(&child.inner));
        drop(state);
        if self.is_cancelled() {
            child.cancel();
        }
        child
    }

    /// Cancels the token and wakes every wait registered on it and on its children.
    pub fn cancel(&self) {
        self.inner.cancel();
    }

    /// Whether the token (or a parent) was cancelled.
    #[inline]
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::Acquire)
    }

    /// How many waits are registered on this token right now (for tests and diagnostics).
    #[doc(hidden)]
    pub fn registered_waits(&self) -> usize {
        self.inner.state.lock().wakers.len()
    }

    /// Registers `waker` to be woken on cancellation, until the returned guard is dropped:
    /// how a wait built outside this crate also ends on this token. Check
    /// [`is_cancelled`](Self::is_cancelled) after registering, never before only.
    pub fn register(&self, waker: &Waker) -> CancelRegistration {
        let key = self.inner.state.lock().wakers.add(waker);
        CancelRegistration {
            inner: Arc::clone(&self.inner),
            key,
        }
    }
}

impl Inner {
    fn cancel(&self) {
        if self.cancelled.swap(true, Ordering::AcqRel) {
            return;
        }
        let (wakers, children) = {
            let mut state = self.state.lock();
            (state.wakers.take(), std::mem::take(&mut state.children))
        };
        wakers.into_iter().for_each(Waker::wake);
        for child in children.iter().filter_map(Weak::upgrade) {
            child.cancel();
        }
    }
}

/// Keeps a waker registered on a [`CancelToken`]; unregisters it when dropped.
#[derive(Debug)]
#[must_use = "the waker is unregistered when the registration is dropped"]
pub struct CancelRegistration {
    inner: Arc<Inner>,
    key: u64,
}

impl CancelRegistration {
    /// Replaces the registered waker (an async task may be polled with a new one).
    pub fn update(&self, waker: &Waker) {
        self.inner.state.lock().wakers.update(self.key, waker);
    }
}

impl Drop for CancelRegistration {
    fn drop(&mut self) {
        self.inner.state.lock().wakers.remove(self.key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::task::Wake;

    struct Flag(AtomicBool);
    impl Wake for Flag {
        fn wake(self: Arc<Self>) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    #[test]
    fn cancel_wakes_registered_and_children() {
        let parent = CancelToken::new();
        let child = parent.child();
        let flag = Arc::new(Flag(AtomicBool::new(false)));
        let _reg = child.register(&Waker::from(Arc::clone(&flag)));
        parent.cancel();
        assert!(child.is_cancelled());
        assert!(flag.0.load(Ordering::SeqCst));
    }

    #[test]
    fn child_of_cancelled_parent_is_cancelled_and_child_does_not_cancel_parent() {
        let parent = CancelToken::new();
        let other = parent.child();
        other.cancel();
        assert!(!parent.is_cancelled());
        parent.cancel();
        assert!(parent.child().is_cancelled());
    }

    #[test]
    fn dropped_registration_is_not_woken() {
        let token = CancelToken::new();
        let flag = Arc::new(Flag(AtomicBool::new(false)));
        drop(token.register(&Waker::from(Arc::clone(&flag))));
        token.cancel();
        assert!(!flag.0.load(Ordering::SeqCst));
    }
}
