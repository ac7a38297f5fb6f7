//! A goal's life in the trace: one `kairos:goal` event per step, at the server and at the
//! client, each naming the goal by its UUID. Goal ids are the same in every process, so
//! the analyzer joins a client's steps with its server's exactly, across processes and
//! hosts, without inference.
//!
//! Each function costs one relaxed load while no trace session runs: the id is formatted
//! only when the event is recorded.

use crate::goal::{GoalId, GoalStatus};
use kairos::trace::tp;

/// A step of a goal: the `event` field's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Client: the goal request left.
    Sent,
    /// Both: the server accepted the goal (client: the response said so).
    Accepted,
    /// Both: the server rejected the goal.
    Rejected,
    /// Server: the goal started executing.
    Executing,
    /// Both: feedback published (server) or received for a followed goal (client).
    Feedback,
    /// Client: a cancel request left.
    CancelSent,
    /// Both: a cancel was accepted; the goal winds down.
    Canceling,
    /// Client: the server refused the cancel.
    CancelRefused,
    /// Server: the goal ended with this terminal status.
    Ended,
    /// Client: the result arrived.
    Result,
    /// Server: the goal's kept result was forgotten (the result timeout passed).
    Expired,
}

impl Step {
    fn name(self, status: GoalStatus) -> &'static str {
        match self {
            Step::Sent => "sent",
            Step::Accepted => "accepted",
            Step::Rejected => "rejected",
            Step::Executing => "executing",
            Step::Feedback => "feedback",
            Step::CancelSent => "cancel_sent",
            Step::Canceling => "canceling",
            Step::CancelRefused => "cancel_refused",
            Step::Ended => match status {
                GoalStatus::Succeeded => "succeeded",
                GoalStatus::Canceled => "canceled",
                _ => "aborted",
            },
            Step::Result => "result",
            Step::Expired => "expired",
        }
    }
}

/// Records `step` of goal `id` at the server or client `handle`; `status` is the goal's
/// status after the step.
pub(crate) fn goal(handle: u64, id: GoalId, step: Step, status: GoalStatus) {
    if tp::enabled() {
        tp::goal(
            handle,
            &id.to_string(),
            step.name(status),
            i32::from(status.code()),
        );
    }
}
