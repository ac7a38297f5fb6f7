//! Why a waiting lookup gave no transform, and what to do about it.
//!
//! What this module promises:
//! - **tf2's errors as they are.** A lookup that fails without waiting, or whose wait
//!   ran out, is a [`Tf2Error`]: a timeout is [`Tf2Error::Timeout`], carrying the error
//!   the last attempt gave (the frames that exist, the range of stamps held) as
//!   `last_error`; [`TransformError::last_tf2_error`] reaches it in one step.
//! - **Every other way a wait ends has its own variant**: a wait that could never
//!   complete ([`WouldDeadlock`], the runtime's own error, naming the group and the fix),
//!   a cancel token, a shutdown (of the executor running the caller, or of the program),
//!   and the clock (a node switching `use_sim_time` mid-wait, a stalled simulation). Each
//!   keeps the last attempt's error too, so no fact is lost however the wait ended.

use kairos::exec::WouldDeadlock;
use kairos::time::{Duration, WaitError};
use kairos_tf2::{Stamp, Tf2Error};

/// Why a lookup or check that may wait gave no transform.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum TransformError {
    /// tf2's answer: the lookup failed without waiting (a timeout of zero, an invalid
    /// frame id), or no transform came within the timeout ([`Tf2Error::Timeout`], with the
    /// last attempt's error).
    #[error(transparent)]
    Tf2(#[from] Tf2Error),
    /// The wait could never complete: the transforms could only arrive through a
    /// callback that cannot run while the caller blocks (see [`WouldDeadlock`]).
    #[error(transparent)]
    WouldDeadlock(#[from] WouldDeadlock),
    /// The cancel token given to the wait fired.
    #[error(
        "the wait for the transform from '{source_frame}' to '{target_frame}' at {time} was cancelled after {waited}{}",
        last_text(last_error)
    )]
    Cancelled {
        /// The target frame.
        target_frame: String,
        /// The source frame.
        source_frame: String,
        /// The time asked for.
        time: Stamp,
        /// How long the wait lasted, on the buffer's clock.
        waited: Duration,
        /// Why the last attempt failed.
        last_error: Option<Box<Tf2Error>>,
    },
    /// The executor whose callback waited shut down, or the program is shutting down
    /// (SIGINT/SIGTERM).
    #[error(
        "the wait for the transform from '{source_frame}' to '{target_frame}' at {time} ended after {waited}: {}{}",
        if *program { "the program is shutting down (SIGINT/SIGTERM)" } else { "the executor running this callback shut down" },
        last_text(last_error)
    )]
    ShutDown {
        /// The target frame.
        target_frame: String,
        /// The source frame.
        source_frame: String,
        /// The time asked for.
        time: Stamp,
        /// How long the wait lasted, on the buffer's clock.
        waited: Duration,
        /// Whether it was the program (a signal) rather than the caller's executor.
        program: bool,
        /// Why the last attempt failed.
        last_error: Option<Box<Tf2Error>>,
    },
    /// The buffer's clock ended the wait: a node clock switched between simulation and
    /// system time, or a simulation stalled under the `Fail` policy.
    #[error(
        "the wait for the transform from '{source_frame}' to '{target_frame}' at {time} ended: {reason}{}",
        last_text(last_error)
    )]
    Clock {
        /// The target frame.
        target_frame: String,
        /// The source frame.
        source_frame: String,
        /// The time asked for.
        time: Stamp,
        /// What the clock did (the message says what to do).
        reason: WaitError,
        /// Why the last attempt failed.
        last_error: Option<Box<Tf2Error>>,
    },
}

impl TransformError {
    /// The tf2 error behind this one: the error itself for [`TransformError::Tf2`] (for a
    /// timeout, the last attempt's error, if one ran), the last attempt's error for a wait
    /// that ended otherwise; `None` for [`TransformError::WouldDeadlock`].
    pub fn last_tf2_error(&self) -> Option<&Tf2Error> {
        match self {
            TransformError::Tf2(Tf2Error::Timeout {
                last_error: Some(last),
                ..
            }) => Some(last),
            TransformError::Tf2(e) => Some(e),
            TransformError::WouldDeadlock(_) => None,
            TransformError::Cancelled { last_error, .. }
            | TransformError::ShutDown { last_error, .. }
            | TransformError::Clock { last_error, .. } => last_error.as_deref(),
        }
    }
}

fn last_text(last: &Option<Box<Tf2Error>>) -> String {
    match last {
        Some(e) => format!(" (last: {e})"),
        None => String::new(),
    }
}
