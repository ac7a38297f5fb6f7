//! The managed-node state machine of ROS 2 (rcl_lifecycle's default machine, as the
//! design article "Managed nodes" draws it): four primary states, six transition states,
//! and the transitions between them with the ids `lifecycle_msgs/msg/Transition` gives.
//!
//! A transition a user asks for ([`Transition`]) leads from a primary state into a
//! transition state, where the node's callback runs; what the callback returns
//! ([`CallbackReturn`]) picks the transition out of it: success, failure (back where it
//! came from) or error (into error processing).

use std::fmt;

/// A state of a managed node (`lifecycle_msgs/msg/State`'s ids and rcl's labels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum State {
    /// Not a state a node is ever in; what an unknown id reads as.
    Unknown = 0,
    /// Made, not configured: no resources held.
    Unconfigured = 1,
    /// Configured, not working: publishers do not publish.
    Inactive = 2,
    /// Working.
    Active = 3,
    /// Shut down for good.
    Finalized = 4,
    /// `on_configure` runs.
    Configuring = 10,
    /// `on_cleanup` runs.
    CleaningUp = 11,
    /// `on_shutdown` runs.
    ShuttingDown = 12,
    /// `on_activate` runs.
    Activating = 13,
    /// `on_deactivate` runs.
    Deactivating = 14,
    /// `on_error` runs, after a callback returned an error.
    ErrorProcessing = 15,
}

impl State {
    /// Every state, in id order (what `get_available_states` answers, unknown included,
    /// as rcl registers it).
    pub const ALL: [State; 11] = [
        State::Unknown,
        State::Unconfigured,
        State::Inactive,
        State::Active,
        State::Finalized,
        State::Configuring,
        State::CleaningUp,
        State::ShuttingDown,
        State::Activating,
        State::Deactivating,
        State::ErrorProcessing,
    ];

    /// The state with `id`, [`Unknown`](State::Unknown) for an id no state has.
    pub fn from_id(id: u8) -> State {
        State::ALL
            .into_iter()
            .find(|s| s.id() == id)
            .unwrap_or(State::Unknown)
    }

    /// Its id in `lifecycle_msgs/msg/State`.
    pub fn id(self) -> u8 {
        self as u8
    }

    /// Its label, as rcl_lifecycle names it (`"inactive"`, `"activating"`, ...).
    pub fn label(self) -> &'static str {
        match self {
            State::Unknown => "unknown",
            State::Unconfigured => "unconfigured",
            State::Inactive => "inactive",
            State::Active => "active",
            State::Finalized => "finalized",
            State::Configuring => "configuring",
            State::CleaningUp => "cleaningup",
            State::ShuttingDown => "shuttingdown",
            State::Activating => "activating",
            State::Deactivating => "deactivating",
            State::ErrorProcessing => "errorprocessing",
        }
    }

    /// Whether a node rests in it (a transition state is only passed through).
    pub fn is_primary(self) -> bool {
        self.id() <= 4
    }

    /// The transitions a user may ask for from this state.
    pub fn transitions(self) -> &'static [Transition] {
        use Transition::*;
        match self {
            State::Unconfigured => &[Configure, Shutdown],
            State::Inactive => &[Cleanup, Activate, Shutdown],
            State::Active => &[Deactivate, Shutdown],
            _ => &[],
        }
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// A transition a user (or a supervisor, through `change_state`) asks a node for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transition {
    /// Unconfigured -> Configuring -> Inactive.
    Configure,
    /// Inactive -> CleaningUp -> Unconfigured.
    Cleanup,
    /// Inactive -> Activating -> Active.
    Activate,
    /// Active -> Deactivating -> Inactive.
    Deactivate,
    /// Unconfigured, Inactive or Active -> ShuttingDown -> Finalized.
    Shutdown,
}

impl Transition {
    /// Its label (`"configure"`, ..., `"shutdown"`).
    pub fn label(self) -> &'static str {
        match self {
            Transition::Configure => "configure",
            Transition::Cleanup => "cleanup",
            Transition::Activate => "activate",
            Transition::Deactivate => "deactivate",
            Transition::Shutdown => "shutdown",
        }
    }

    /// Its id in `lifecycle_msgs/msg/Transition` when taken from `from`, and the
    /// transition state it leads to; `None` when `from` does not allow it. (Shutdown has
    /// one id per state it leaves: 5, 6, 7.)
    pub fn from_state(self, from: State) -> Option<(u8, State)> {
        use State::*;
        Some(match (from, self) {
            (Unconfigured, Transition::Configure) => (1, Configuring),
            (Inactive, Transition::Cleanup) => (2, CleaningUp),
            (Inactive, Transition::Activate) => (3, Activating),
            (Active, Transition::Deactivate) => (4, Deactivating),
            (Unconfigured, Transition::Shutdown) => (5, ShuttingDown),
            (Inactive, Transition::Shutdown) => (6, ShuttingDown),
            (Active, Transition::Shutdown) => (7, ShuttingDown),
            _ => return None,
        })
    }

    /// The transition `change_state` asks for from `from`: by label when the request has
    /// one (it takes precedence, as in rclcpp: a request written by hand leaves the id 0),
    /// else by id; `None` when `from` allows no such transition.
    pub fn requested(id: u8, label: &str, from: State) -> Option<Transition> {
        from.transitions().iter().copied().find(|t| {
            if label.is_empty() {
                t.from_state(from).map(|(tid, _)| tid) == Some(id)
            } else {
                t.label() == label
            }
        })
    }
}

impl fmt::Display for Transition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// What a lifecycle callback returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CallbackReturn {
    /// The transition completes.
    Success,
    /// The transition is refused: the node goes back to the state it came from.
    Failure,
    /// Something broke: the node goes to error processing (`on_error`).
    Error,
}

/// The transition out of transition state `state` that `returned` picks: its id, its
/// label and the state it leads to (rcl_lifecycle's table).
pub(crate) fn completion(state: State, returned: CallbackReturn) -> (u8, &'static str, State) {
    use CallbackReturn::*;
    use State::*;
    let (base, on_success, on_failure, on_error) = match state {
        Configuring => (10, Inactive, Unconfigured, ErrorProcessing),
        CleaningUp => (20, Unconfigured, Inactive, ErrorProcessing),
        Activating => (30, Active, Inactive, ErrorProcessing),
        Deactivating => (40, Inactive, Active, ErrorProcessing),
        ShuttingDown => (50, Finalized, Finalized, ErrorProcessing),
        ErrorProcessing => (60, Unconfigured, Finalized, Finalized),
        primary => unreachable!("{primary} is not a transition state"),
    };
    match returned {
        Success => (base, "transition_success", on_success),
        Failure => (base + 1, "transition_failure", on_failure),
        Error => (base + 2, "transition_error", on_error),
    }
}

/// Every transition of the machine: `(id, label, start, goal)`, in id order (what
/// `get_transition_graph` answers).
pub(crate) fn graph() -> Vec<(u8, &'static str, State, State)> {
    let mut all = Vec::new();
    for from in [State::Unconfigured, State::Inactive, State::Active] {
        for t in from.transitions() {
            let (id, to) = t.from_state(from).expect("listed as allowed");
            all.push((id, t.label(), from, to));
        }
    }
    for state in [
        State::Configuring,
        State::CleaningUp,
        State::Activating,
        State::Deactivating,
        State::ShuttingDown,
        State::ErrorProcessing,
    ] {
        for returned in [
            CallbackReturn::Success,
            CallbackReturn::Failure,
            CallbackReturn::Error,
        ] {
            let (id, label, to) = completion(state, returned);
            all.push((id, label, state, to));
        }
    }
    all.sort_by_key(|t| t.0);
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_machine_has_rcl_lifecycles_transitions() {
        let ids: Vec<u8> = graph().iter().map(|t| t.0).collect();
        assert_eq!(
            ids,
            [
                1, 2, 3, 4, 5, 6, 7, 10, 11, 12, 20, 21, 22, 30, 31, 32, 40, 41, 42, 50, 51, 52,
                60, 61, 62
            ]
        );
        for (_, _, start, goal) in graph() {
            assert_ne!(start, goal);
            assert!(
                start.is_primary() != goal.is_primary() || goal == State::ErrorProcessing,
                "{start} -> {goal}"
            );
        }
        assert_eq!(
            completion(State::ErrorProcessing, CallbackReturn::Success).2,
            State::Unconfigured
        );
        assert_eq!(
            completion(State::Activating, CallbackReturn::Failure).2,
            State::Inactive
        );
    }

    #[test]
    fn only_primary_states_allow_requests_and_finalized_allows_none() {
        for state in State::ALL {
            for t in [
                Transition::Configure,
                Transition::Cleanup,
                Transition::Activate,
                Transition::Deactivate,
                Transition::Shutdown,
            ] {
                assert_eq!(
                    t.from_state(state).is_some(),
                    state.transitions().contains(&t),
                    "{state} {t}"
                );
            }
            assert_eq!(State::from_id(state.id()), state);
        }
        assert!(State::Finalized.transitions().is_empty());
        assert!(State::Configuring.transitions().is_empty());
        assert_eq!(State::from_id(99), State::Unknown);
    }

    #[test]
    fn a_request_is_read_by_id_or_by_label_from_the_current_state() {
        use Transition::*;
        assert_eq!(
            Transition::requested(1, "", State::Unconfigured),
            Some(Configure)
        );
        assert_eq!(
            Transition::requested(6, "", State::Inactive),
            Some(Shutdown)
        );
        assert_eq!(
            Transition::requested(5, "", State::Inactive),
            None,
            "5 leaves unconfigured"
        );
        assert_eq!(
            Transition::requested(0, "activate", State::Inactive),
            Some(Activate)
        );
        assert_eq!(Transition::requested(0, "activate", State::Active), None);
        assert_eq!(
            Transition::requested(3, "deactivate", State::Inactive),
            None,
            "label first"
        );
        assert_eq!(
            Transition::requested(7, "shutdown", State::Inactive),
            Some(Shutdown)
        );
        assert_eq!(Transition::requested(99, "", State::Active), None);
    }
}
