//! What can go wrong with a lifecycle transition, and what to do about it.

use crate::state::{CallbackReturn, State, Transition};
use kairos::graph::GraphError;

/// Why a transition did not complete.
#[derive(Debug, thiserror::Error)]
pub enum LifecycleError {
    /// The node's state does not allow the transition.
    #[error(
        "node '{node}' is {state}: {transition} is not a transition it allows (from {state}: {})",
        allowed_text(*state)
    )]
    NotAllowed {
        /// The node.
        node: String,
        /// Its state.
        state: State,
        /// What was asked.
        transition: Transition,
    },
    /// A transition was asked for while another one runs (e.g. from inside a lifecycle
    /// callback): transitions run one at a time.
    #[error(
        "node '{node}': {transition} was asked for while another transition runs; ask again when it ended (not from a lifecycle callback)"
    )]
    InProgress {
        /// The node.
        node: String,
        /// What was asked.
        transition: Transition,
    },
    /// The callback did not succeed; the node is now in `state`.
    #[error("node '{node}': {transition} ended with {returned:?}; the node is {state}")]
    Callback {
        /// The node.
        node: String,
        /// What was asked.
        transition: Transition,
        /// What the callback (or, after an error, `on_error`) returned.
        returned: CallbackReturn,
        /// Where the node ended up.
        state: State,
    },
    /// Creating the node's lifecycle services or topic failed.
    #[error("node '{node}': {source}")]
    Graph {
        /// The node.
        node: String,
        /// Why.
        #[source]
        source: GraphError,
    },
}

fn allowed_text(state: State) -> String {
    let allowed: Vec<&str> = state.transitions().iter().map(|t| t.label()).collect();
    if allowed.is_empty() {
        "none".into()
    } else {
        allowed.join(", ")
    }
}
