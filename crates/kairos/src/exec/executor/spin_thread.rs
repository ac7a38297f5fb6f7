//! An executor spinning on a thread of its own.

use super::*;

/// An executor spinning on its own thread (see [`Executor::spin_thread`]). Dropping it
/// cancels the spin without waiting for the thread.
#[must_use = "the spin is cancelled when this handle is dropped"]
pub struct SpinThread {
    pub(super) exec: Executor,
    pub(super) handle: Option<JoinHandle<Result<(), ExecError>>>,
}

impl SpinThread {
    /// Cancels the spin and joins the thread (which returns once the callbacks running now
    /// have returned); the spin's result.
    pub fn stop(mut self) -> Result<(), ExecError> {
        self.exec.cancel();
        match self.handle.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(_)) | None => Err(ExecError::Cancelled),
        }
    }
}

impl Drop for SpinThread {
    fn drop(&mut self) {
        if self.handle.is_some() {
            self.exec.cancel();
        }
    }
}

impl fmt::Debug for SpinThread {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SpinThread")
            .field("exec", &self.exec)
            .finish()
    }
}
