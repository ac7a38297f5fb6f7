//! What `Executor::shutdown` found: the callbacks still running when its deadline passed.

use crate::time::Duration;
use std::fmt;

/// A callback that had not returned when the shutdown deadline passed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StillRunning {
    pub callback: String,
    /// How long it had been running when the report was made (to the coarse monotonic
    /// clock's resolution, a few milliseconds).
    pub running_for: Duration,
}

/// The outcome of `Executor::shutdown(deadline)`, which never waits past its deadline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShutdownReport {
    /// Callbacks still running at the deadline (their threads are left behind, detached).
    pub still_running: Vec<StillRunning>,
    /// How long the shutdown waited.
    pub waited: Duration,
}

impl ShutdownReport {
    /// Every callback had returned by the deadline (and every worker thread had left its
    /// loop). An `async` callback suspended at an `.await` is not running and not reported.
    pub fn is_clean(&self) -> bool {
        self.still_running.is_empty()
    }
}

impl fmt::Display for ShutdownReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_clean() {
            return write!(f, "clean shutdown after {}", self.waited);
        }
        write!(
            f,
            "shutdown deadline passed after {} with callbacks still running:",
            self.waited
        )?;
        for running in &self.still_running {
            write!(
                f,
                " '{}' (running for {})",
                running.callback, running.running_for
            )?;
        }
        Ok(())
    }
}
