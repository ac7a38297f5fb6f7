//! What `Executor::shutdown` found: the callbacks still running when its deadline passed,
//! the async callbacks it abandoned at an `.await`, and the work it dropped.

use crate::time::Duration;
use std::fmt;

/// A callback that had not returned when the shutdown deadline passed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StillRunning {
    /// The callback's label, e.g. `timer 100 ms (node /planner)`.
    pub callback: String,
    /// How long it had been running when the report was made (to the coarse monotonic
    /// clock's resolution, a few milliseconds).
    pub running_for: Duration,
}

/// An async callback that was suspended at an `.await` when the executor shut down: it
/// will never be polled again, so shutdown dropped its future (and what it held).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suspended {
    /// The callback's label, e.g. `subscription /scan (node /planner)`.
    pub callback: String,
    /// How long since the callback started (coarse monotonic clock).
    pub suspended_for: Duration,
}

/// The outcome of `Executor::shutdown(deadline)`, which never waits past its deadline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShutdownReport {
    /// Callbacks still running at the deadline (their threads are left behind, detached).
    pub still_running: Vec<StillRunning>,
    /// Async callbacks suspended at an `.await`, abandoned by the shutdown.
    pub suspended: Vec<Suspended>,
    /// Async callbacks live when shutdown began (suspended, or being polled).
    pub live_tasks: usize,
    /// Ready work that was parked behind a busy callback group and will not run.
    pub parked_entities: usize,
    /// Responses that had arrived for a done callback that had not run yet; each of those
    /// callbacks ran during the shutdown with `CallError::ExecutorShutDown`.
    pub queued_responses: usize,
    /// How long the shutdown waited.
    pub waited: Duration,
}

impl ShutdownReport {
    /// Every callback had returned by the deadline (and every worker thread had left its
    /// loop), and no async callback was left suspended at an `.await`.
    pub fn is_clean(&self) -> bool {
        self.still_running.is_empty() && self.suspended.is_empty()
    }
}

impl fmt::Display for ShutdownReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_clean() {
            write!(f, "clean shutdown after {}", self.waited)?;
        } else {
            write!(f, "shutdown after {}", self.waited)?;
        }
        if !self.still_running.is_empty() {
            write!(f, "; deadline passed with callbacks still running:")?;
            for running in &self.still_running {
                write!(
                    f,
                    " '{}' (running for {})",
                    running.callback, running.running_for
                )?;
            }
        }
        if !self.suspended.is_empty() {
            write!(f, "; async callbacks abandoned at an .await:")?;
            for task in &self.suspended {
                write!(
                    f,
                    " '{}' (started {} ago)",
                    task.callback, task.suspended_for
                )?;
            }
        }
        if self.parked_entities > 0 {
            write!(
                f,
                "; {} ready callbacks parked behind a busy group did not run",
                self.parked_entities
            )?;
        }
        if self.queued_responses > 0 {
            write!(
                f,
                "; {} queued responses had their done callbacks failed with ExecutorShutDown",
                self.queued_responses
            )?;
        }
        Ok(())
    }
}
