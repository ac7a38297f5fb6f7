//! Guard conditions: a callback another thread (or callback) can trigger.

use super::callback::Callback;
use super::entity::{Entity, EntityCore, Execution};
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Runs its callback once per [`trigger`](GuardCondition::trigger) on the executor of its
/// node, in the group the node was in when it was made (an `async` callback holds that
/// group until its future completes). Dropping the handle removes it.
#[must_use = "the guard condition is removed when its handle is dropped"]
pub struct GuardCondition {
    pub(crate) inner: Arc<GuardInner>,
    pub(crate) on_drop: Option<Box<dyn FnOnce() + Send + Sync>>,
}

pub(crate) struct GuardInner {
    core: EntityCore,
    pending: AtomicU64,
    callback: Callback<()>,
}

impl GuardInner {
    pub(crate) fn new(core: EntityCore, callback: Callback<()>) -> Self {
        Self {
            core,
            pending: AtomicU64::new(0),
            callback,
        }
    }

    /// Triggers unless a trigger is pending already (so a burst of events runs the
    /// callback once, after the last of them has happened).
    pub(crate) fn trigger_coalesced(&self) {
        if self
            .pending
            .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            self.core.notify();
        }
    }
}

impl GuardCondition {
    /// Makes the callback run (once per trigger) on the executor.
    pub fn trigger(&self) {
        self.inner.pending.fetch_add(1, Ordering::AcqRel);
        self.inner.core.notify();
    }

    /// Triggers that have not run yet.
    pub fn pending(&self) -> u64 {
        self.inner.pending.load(Ordering::Acquire)
    }
}

impl Entity for GuardInner {
    fn core(&self) -> &EntityCore {
        &self.core
    }

    fn execute(&self) -> Execution {
        let taken = self
            .pending
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
        if taken.is_err() {
            return Execution::Idle;
        }
        self.callback.run(&self.core, ())
    }

    fn has_work(&self) -> bool {
        self.pending.load(Ordering::Acquire) > 0
    }

    fn batches(&self) -> bool {
        true
    }
}

impl Drop for GuardCondition {
    fn drop(&mut self) {
        self.inner.core.destroy();
        if let Some(on_drop) = self.on_drop.take() {
            on_drop();
        }
    }
}

impl fmt::Debug for GuardCondition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GuardCondition")
            .field("name", &self.inner.core.name)
            .finish_non_exhaustive()
    }
}
