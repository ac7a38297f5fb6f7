//! What can go wrong with an action, and what to do about it.

use crate::goal::{GoalId, GoalStatus};
use kairos::graph::{CallError, GraphError};

/// Why an action client's request failed.
#[derive(Debug, thiserror::Error)]
pub enum ActionError {
    /// Creating the action's services or topics failed.
    #[error("action '{action}': {source}")]
    Graph {
        /// The action.
        action: String,
        /// Why.
        #[source]
        source: GraphError,
    },
    /// The call to one of the action's services failed (timeout, no server, shutdown,
    /// `WouldDeadlock`, a server that went away).
    #[error("action '{action}': {source}")]
    Call {
        /// The action.
        action: String,
        /// Why, with the service and what to do.
        #[source]
        source: CallError,
    },
    /// The server rejected the goal.
    #[error("action '{action}': the server rejected goal {goal}")]
    Rejected {
        /// The action.
        action: String,
        /// The goal.
        goal: GoalId,
    },
    /// The server refused to cancel the goal (`return_code` of `action_msgs/srv/CancelGoal`).
    #[error(
        "action '{action}': the server did not cancel goal {goal}: {}",
        cancel_code_text(*code)
    )]
    CancelRefused {
        /// The action.
        action: String,
        /// The goal.
        goal: GoalId,
        /// `CancelGoal`'s return code.
        code: i8,
    },
    /// The server does not know the goal (it never had it, or forgot its result after its
    /// result timeout).
    #[error(
        "action '{action}': the server does not know goal {goal} (never sent, or its result \
         expired: ask for results within the server's result_timeout)"
    )]
    UnknownGoal {
        /// The action.
        action: String,
        /// The goal.
        goal: GoalId,
    },
}

fn cancel_code_text(code: i8) -> &'static str {
    match code {
        1 => "it rejected the cancel request",
        2 => "it does not know the goal",
        3 => "the goal had already ended",
        _ => "an unknown return code",
    }
}

/// A goal transition a server's code asked for that the goal state machine does not allow.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "goal {goal}: cannot go from {from:?} to {to:?} (a goal executes, may be canceled, and \
     ends once: succeeded, canceled or aborted)"
)]
pub struct GoalError {
    /// The goal.
    pub goal: GoalId,
    /// Its status.
    pub from: GoalStatus,
    /// The status asked for.
    pub to: GoalStatus,
}
