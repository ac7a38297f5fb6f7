//! What executor operations report instead of panicking or hanging.

use super::deadlock::WouldDeadlock;

/// Why an executor operation did not do what was asked; each message says what to do.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ExecError {
    /// A spin was asked for while another thread spins the executor.
    #[error(
        "the executor is already spinning in another thread; spin it from one thread at a time (a multi-threaded executor starts its own workers)"
    )]
    AlreadySpinning,
    /// The node belongs to another executor.
    #[error(
        "node '{node}' is already added to an executor; remove it there first (an entity belongs to one executor at a time)"
    )]
    AlreadyAttached {
        /// The node's fully qualified name.
        node: String,
    },
    /// The node to remove is not in this executor.
    #[error("node '{node}' is not added to this executor")]
    NotAttached {
        /// The node's fully qualified name.
        node: String,
    },
    /// The executor was shut down: it spins no more.
    #[error("the executor was shut down; create a new one to spin again")]
    ShutDown,
    /// A worker count outside 1 to [`Executor::MAX_WORKERS`](super::Executor::MAX_WORKERS).
    #[error("a multi-threaded executor needs 1 to 1024 worker threads, got {workers}")]
    InvalidWorkers {
        /// The count asked for.
        workers: usize,
    },
    /// An idle spin window below zero or above [`Executor::MAX_IDLE_SPIN`](super::Executor::MAX_IDLE_SPIN).
    #[error(
        "an idle spin window must be 0 to 1 s (a worker busy-waits that long each time it runs out of work; 0 turns it off), got {window}"
    )]
    InvalidIdleSpin {
        /// The window asked for.
        window: crate::time::Duration,
    },
    /// `spin_until_future_complete` reached its timeout first.
    #[error("the future did not complete within {timeout}")]
    Timeout {
        /// The timeout given.
        timeout: crate::time::Duration,
    },
    /// [`Executor::cancel`](super::Executor::cancel) ended the spin first.
    #[error("the spin was cancelled (Executor::cancel) before the future completed")]
    Cancelled,
    /// The operating system refused a worker thread; the message is its error.
    #[error("could not start an executor worker thread: {0}")]
    Spawn(String),
    /// The blocking wait could never complete; see [`WouldDeadlock`].
    #[error(transparent)]
    WouldDeadlock(#[from] WouldDeadlock),
}
