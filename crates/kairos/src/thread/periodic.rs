//! [`PeriodicTask`]: a managed thread that runs a body every period on any clock, the
//! shape of a sensor server's loop.
//!
//! The loop waits on a [`Timer`] (absolute deadlines, missed periods counted) with the
//! thread's cancel token, so a stop request wakes it at once on any clock, including a
//! simulated clock that has stopped advancing. If the clock's stall policy is `Fail`, the
//! wait error ends the loop and the task finishes by itself.

use super::{ManagedThread, StopReport};
use crate::time::{Clock, Duration, Tick, TimeError, Timer, WaitError};
use parking_lot::Mutex;
use std::sync::Arc;

/// A body run every period of any clock on its own managed thread. The loop waits on a
/// [`Timer`] with the thread's cancel token, so [`stop`](Self::stop) wakes it at once, even
/// on a simulated clock that stopped; a `Fail` stall policy ends the loop by itself.
#[derive(Debug)]
pub struct PeriodicTask {
    thread: ManagedThread,
    ended: Arc<Mutex<Option<WaitError>>>,
}

impl PeriodicTask {
    /// Starts `body` every `period` of `clock`, first one period from now.
    pub fn spawn(
        name: impl Into<String>,
        clock: Clock,
        period: impl Into<Duration>,
        mut body: impl FnMut(&Tick) + Send + 'static,
    ) -> Result<PeriodicTask, PeriodicTaskError> {
        let period = period.into();
        let timer = Timer::new(clock, period)?;
        let ended = Arc::new(Mutex::new(None));
        let end = Arc::clone(&ended);
        let thread = ManagedThread::spawn(name, move |token| {
            loop {
                match timer.wait(token) {
                    Ok(tick) => body(&tick),
                    Err(WaitError::Cancelled) => return,
                    Err(err) => {
                        *end.lock() = Some(err);
                        return;
                    }
                }
            }
        })?;
        Ok(PeriodicTask { thread, ended })
    }

    /// The task's thread name.
    pub fn name(&self) -> &str {
        self.thread.name()
    }

    /// Why the loop ended on its own (e.g. `Stalled` under the `Fail` policy), if it did.
    pub fn ended_with(&self) -> Option<WaitError> {
        self.ended.lock().clone()
    }

    /// Whether the loop has ended (stopped, or ended on its own).
    pub fn is_finished(&self) -> bool {
        self.thread.is_finished()
    }

    /// Stops the loop: wakes its wait at once, waits for the thread at most `timeout`.
    pub fn stop(self, timeout: impl Into<Duration>) -> StopReport {
        let timeout = timeout.into();
        self.thread.stop(timeout)
    }
}

/// Why a [`PeriodicTask`] could not start.
#[derive(Debug, thiserror::Error)]
pub enum PeriodicTaskError {
    #[error(transparent)]
    Time(#[from] TimeError),
    #[error("cannot start the task's thread: {0}")]
    Spawn(#[from] std::io::Error),
}
