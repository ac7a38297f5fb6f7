//! What executor operations report instead of panicking or hanging.

use super::deadlock::WouldDeadlock;

#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ExecError {
    #[error(
        "the executor is already spinning in another thread; spin it from one thread at a time (a multi-threaded executor starts its own workers)"
    )]
    AlreadySpinning,
    #[error(
        "node '{node}' is already added to an executor; remove it there first (an entity belongs to one executor at a time)"
    )]
    AlreadyAttached { node: String },
    #[error("node '{node}' is not added to this executor")]
    NotAttached { node: String },
    #[error("the executor was shut down; create a new one to spin again")]
    ShutDown,
    #[error("a multi-threaded executor needs 1 to 1024 worker threads, got {workers}")]
    InvalidWorkers { workers: usize },
    #[error("the future did not complete within {timeout}")]
    Timeout { timeout: crate::time::Duration },
    #[error("the spin was cancelled (Executor::cancel) before the future completed")]
    Cancelled,
    #[error("could not start an executor worker thread: {0}")]
    Spawn(String),
    #[error(transparent)]
    WouldDeadlock(#[from] WouldDeadlock),
}
