//! What a node's callbacks share: where their exceptions go (the spin that runs them).
//!
//! Ground rules: a node's [`CallbackEnv`] is shared by its callbacks; its sink is set by
//! the executor the node is added to (`executor.rs`) and read by callbacks on error.

use kairos::exec::Executor;
use parking_lot::Mutex;
use pyo3::prelude::*;
use std::sync::Arc;

/// How long a wait without a timeout waits: a year, i.e. until shutdown or cancel.
pub(crate) const FOREVER: kairos::time::Duration =
    kairos::time::Duration::from_secs(365 * 24 * 3600);

/// Where a callback's exception goes: the spin that runs it.
#[derive(Debug)]
pub(crate) struct ErrorSink {
    pub(crate) error: Mutex<Option<PyErr>>,
    pub(crate) executor: Executor,
}

/// What a node's callbacks share.
#[derive(Debug, Default)]
pub(crate) struct CallbackEnv {
    pub(crate) sink: Mutex<Option<Arc<ErrorSink>>>,
}

impl CallbackEnv {
    /// A callback raised `err`: the spin running it ends and raises it; without an
    /// executor (or after its first error) it is printed.
    pub(crate) fn report(&self, py: Python<'_>, err: PyErr) {
        let sink = self.sink.lock().clone();
        let Some(sink) = sink else {
            return err.print(py);
        };
        let mut slot = sink.error.lock();
        if slot.is_none() {
            *slot = Some(err);
            drop(slot);
            sink.executor.cancel();
        } else {
            drop(slot);
            err.print(py);
        }
    }
}
