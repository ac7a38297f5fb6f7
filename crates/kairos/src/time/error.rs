//! Errors of the time layer. Each says what happened and what to do about it.

use super::{ClockMismatch, Duration, Time};

/// Why a wait ended without its deadline being reached.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WaitError {
    /// The cancel token (stop, shutdown) fired, or the timer waited on was cancelled.
    #[error("the wait was cancelled (stop, shutdown, or the timer was cancelled)")]
    Cancelled,
    /// The deadline was read from another clock than the one waited on.
    #[error(transparent)]
    ClockMismatch(#[from] ClockMismatch),
    /// The node clock switched between simulation and system time during the wait.
    #[error(
        "the node's clock switched between simulation and system time during the wait \
         (use_sim_time changed); read the clock again and wait on the new source"
    )]
    ClockChanged,
    /// The simulated clock stopped advancing and its stall policy is `Fail`.
    #[error(
        "simulation time stalled at {last}: no clock update for {silent_for}; \
         is the simulator paused or gone? (stall policy: fail; choose Wait or FallbackToSteady to keep going, \
         with NodeOptions::sim_stall or Context::with_sim_stall)"
    )]
    Stalled {
        /// The simulated time when the clock stalled.
        last: Time,
        /// How long (steady time) no clock update has come.
        silent_for: Duration,
    },
}

/// Invalid arguments to a time primitive.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TimeError {
    /// A timer's or rate's period that is zero or negative.
    #[error("a period must be positive, got {0}; pass e.g. Duration::from_millis(10)")]
    InvalidPeriod(Duration),
}
