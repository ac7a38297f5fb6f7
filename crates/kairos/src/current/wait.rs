//! What a managed thread is blocked in, so a stop that times out can say it.
//!
//! Each managed thread installs a [`WaitStatus`] in a thread-local; every kairos wait
//! describes itself there for its duration. Threads without one pay a thread-local check.

use parking_lot::Mutex;
use std::cell::RefCell;
use std::sync::Arc;

#[derive(Debug, Default)]
pub(crate) struct WaitStatus {
    current: Mutex<Option<String>>,
}

impl WaitStatus {
    pub(crate) fn current(&self) -> Option<String> {
        self.current.lock().clone()
    }
}

thread_local! {
    static STATUS: RefCell<Option<Arc<WaitStatus>>> = const { RefCell::new(None) };
}

pub(crate) fn install(status: Arc<WaitStatus>) {
    STATUS.with(|s| *s.borrow_mut() = Some(status));
}

/// Clears the description when the wait ends.
#[derive(Debug)]
pub(crate) struct WaitScope(Option<Arc<WaitStatus>>);

impl Drop for WaitScope {
    fn drop(&mut self) {
        if let Some(status) = &self.0 {
            *status.current.lock() = None;
        }
    }
}

/// Records what the current thread waits for, if it is a managed thread.
pub(crate) fn describe(describe: impl FnOnce() -> String) -> WaitScope {
    let status = STATUS.with(|s| s.borrow().clone());
    if let Some(status) = &status {
        *status.current.lock() = Some(describe());
    }
    WaitScope(status)
}
