//! The lifecycle node: a kairos node with the managed-node state machine, served to
//! supervisors as rclcpp serves it.
//!
//! # Ground rules
//! - Transitions run one at a time: the callbacks' lock is held for a whole transition,
//!   and a transition asked for meanwhile (from another thread, or from inside a
//!   callback) is refused with [`LifecycleError::InProgress`] at once, never waited for.
//! - Every state change is published on `~/transition_event` (two per transition: into
//!   the transition state, and out of it), and its publishers' gates follow the state:
//!   open while `Activating` or `Active`, closed otherwise.
//! - A callback that panics is an [`CallbackReturn::Error`] (as an exception is in
//!   rclcpp): the node goes to error processing, and the panic is logged.

use crate::error::LifecycleError;
use crate::publisher::{Activation, LifecyclePublisher};
use crate::state::{CallbackReturn, State, Transition, completion, graph};
use kairos::graph::{GraphError, Node, Payload, Publisher, Qos, Service};
use kairos_msgs::lifecycle_msgs::msg::{
    State as StateMsg, Transition as TransitionMsg, TransitionDescription, TransitionEvent,
};
use kairos_msgs::lifecycle_msgs::srv::{
    ChangeStateRequest, ChangeStateResponse, GetAvailableStatesRequest, GetAvailableStatesResponse,
    GetAvailableTransitionsRequest, GetAvailableTransitionsResponse, GetStateRequest,
    GetStateResponse,
};
use parking_lot::Mutex;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

/// What a managed node does on each transition. Every callback gets the state the node
/// was in before the transition and succeeds by default.
pub trait Lifecycle: Send + 'static {
    /// Unconfigured -> Inactive: acquire resources, read parameters.
    fn on_configure(&mut self, _previous: State) -> CallbackReturn {
        CallbackReturn::Success
    }
    /// Inactive -> Unconfigured: release what `on_configure` acquired.
    fn on_cleanup(&mut self, _previous: State) -> CallbackReturn {
        CallbackReturn::Success
    }
    /// Inactive -> Active: start working (the node's lifecycle publishers publish from
    /// here on).
    fn on_activate(&mut self, _previous: State) -> CallbackReturn {
        CallbackReturn::Success
    }
    /// Active -> Inactive: stop working (its lifecycle publishers no longer publish).
    fn on_deactivate(&mut self, _previous: State) -> CallbackReturn {
        CallbackReturn::Success
    }
    /// Any primary state -> Finalized.
    fn on_shutdown(&mut self, _previous: State) -> CallbackReturn {
        CallbackReturn::Success
    }
    /// After a callback returned `Error`: success goes to Unconfigured, anything else to
    /// Finalized.
    fn on_error(&mut self, _previous: State) -> CallbackReturn {
        CallbackReturn::Success
    }
}

/// A lifecycle with no work of its own (every transition succeeds).
#[derive(Debug, Default)]
pub struct NoCallbacks;

impl Lifecycle for NoCallbacks {}

struct Shared {
    node: Node,
    state: Mutex<State>,
    /// Held for a whole transition.
    callbacks: Mutex<Box<dyn Lifecycle>>,
    /// `None` without the communication interface.
    events: Option<Publisher<TransitionEvent>>,
    gates: Mutex<Vec<Weak<Activation>>>,
    /// `change_state` requests refused (a transition the state does not allow, or one
    /// asked for during another).
    refused: AtomicU64,
}

/// A managed node: the node, its state machine, the services `~/change_state`,
/// `~/get_state`, `~/get_available_states`, `~/get_available_transitions`,
/// `~/get_transition_graph` and the topic `~/transition_event` (`lifecycle_msgs`, so
/// `ros2 lifecycle` and ROS 2 supervisors drive it), and the lifecycle publishers it
/// manages. It starts Unconfigured.
pub struct LifecycleNode {
    shared: Arc<Shared>,
    _services: Vec<Box<dyn std::any::Any + Send + Sync>>,
}

impl fmt::Debug for LifecycleNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LifecycleNode")
            .field("node", &self.shared.node.fully_qualified_name())
            .field("state", &self.state())
            .finish()
    }
}

fn state_msg(state: State) -> StateMsg {
    StateMsg {
        id: state.id(),
        label: state.label().into(),
    }
}

fn keep<T: Send + Sync + 'static>(service: T) -> Box<dyn std::any::Any + Send + Sync> {
    Box::new(service)
}

impl LifecycleNode {
    /// Makes `node` a managed node whose transitions run `callbacks`.
    pub fn new(node: Node, callbacks: impl Lifecycle) -> Result<Self, LifecycleError> {
        Self::with_interface(node, callbacks, true)
    }

    /// A managed node with (`interface`: as [`LifecycleNode::new`]) or without its
    /// communication interface: without it, no services and no `~/transition_event`
    /// (rclcpp's `enable_communication_interface = false`), so only the program's own
    /// code triggers transitions.
    pub fn with_interface(
        node: Node,
        callbacks: impl Lifecycle,
        interface: bool,
    ) -> Result<Self, LifecycleError> {
        let graph_error = |source: GraphError| LifecycleError::Graph {
            node: node.fully_qualified_name().to_owned(),
            source,
        };
        let events = interface
            .then(|| node.create_publisher("~/transition_event", Qos::keep_last(10)))
            .transpose()
            .map_err(graph_error)?;
        let shared = Arc::new(Shared {
            events,
            node: node.clone(),
            state: Mutex::new(State::Unconfigured),
            callbacks: Mutex::new(Box::new(callbacks)),
            gates: Mutex::new(Vec::new()),
            refused: AtomicU64::new(0),
        });
        let services = if interface {
            Self::serve(&shared).map_err(graph_error)?
        } else {
            Vec::new()
        };
        Ok(LifecycleNode {
            shared,
            _services: services,
        })
    }

    fn serve(
        shared: &Arc<Shared>,
    ) -> Result<Vec<Box<dyn std::any::Any + Send + Sync>>, GraphError> {
        let node = &shared.node;
        let on_change = Arc::downgrade(shared);
        let change: Service<ChangeStateRequest, ChangeStateResponse> =
            node.create_service("~/change_state", move |request: ChangeStateRequest| {
                let success = on_change
                    .upgrade()
                    .is_some_and(|shared| shared.change_state(&request.transition));
                ChangeStateResponse { success }
            })?;
        let on_get = Arc::downgrade(shared);
        let get: Service<GetStateRequest, GetStateResponse> =
            node.create_service("~/get_state", move |_: GetStateRequest| GetStateResponse {
                current_state: state_msg(
                    on_get.upgrade().map_or(State::Unknown, |s| *s.state.lock()),
                ),
            })?;
        let states: Service<GetAvailableStatesRequest, GetAvailableStatesResponse> = node
            .create_service("~/get_available_states", |_: GetAvailableStatesRequest| {
                GetAvailableStatesResponse {
                    available_states: State::ALL.into_iter().map(state_msg).collect(),
                }
            })?;
        let on_transitions = Arc::downgrade(shared);
        let transitions: Service<GetAvailableTransitionsRequest, GetAvailableTransitionsResponse> =
            node.create_service(
                "~/get_available_transitions",
                move |_: GetAvailableTransitionsRequest| {
                    let state = on_transitions
                        .upgrade()
                        .map_or(State::Unknown, |s| *s.state.lock());
                    GetAvailableTransitionsResponse {
                        available_transitions: descriptions(|start| start == state),
                    }
                },
            )?;
        let whole: Service<GetAvailableTransitionsRequest, GetAvailableTransitionsResponse> = node
            .create_service(
                "~/get_transition_graph",
                |_: GetAvailableTransitionsRequest| GetAvailableTransitionsResponse {
                    available_transitions: descriptions(|_| true),
                },
            )?;
        Ok(vec![
            keep(change),
            keep(get),
            keep(states),
            keep(transitions),
            keep(whole),
        ])
    }

    /// The node.
    pub fn node(&self) -> &Node {
        &self.shared.node
    }

    /// Its state now.
    pub fn state(&self) -> State {
        *self.shared.state.lock()
    }

    /// `change_state` requests refused so far: transitions the state did not allow, or
    /// asked for while another ran.
    pub fn refused_requests(&self) -> u64 {
        self.shared.refused.load(Ordering::Relaxed)
    }

    /// A publisher of `T` on `topic` that publishes only while the node is active.
    pub fn create_publisher<T: Payload>(
        &self,
        topic: &str,
        qos: Qos,
    ) -> Result<LifecyclePublisher<T>, GraphError> {
        let publisher = self.shared.node.create_publisher::<T>(topic, qos)?;
        let gate = self.activation(publisher.topic());
        Ok(LifecyclePublisher::new(publisher, gate))
    }

    /// An [`Activation`] for an entity on `topic` this node manages: open while the node
    /// is activating or active, following its transitions for as long as it is held.
    pub fn activation(&self, topic: &str) -> Arc<Activation> {
        let mut gates = self.shared.gates.lock();
        let open = matches!(*self.shared.state.lock(), State::Active | State::Activating);
        let gate = Activation::new(topic.to_owned(), self.shared.node.logger().clone(), open);
        gates.retain(|g| g.strong_count() > 0);
        gates.push(Arc::downgrade(&gate));
        gate
    }

    /// Runs `transition`: the node's callback, then the transition its result picks.
    /// `Ok` with the new state when the callback succeeded.
    pub fn trigger(&self, transition: Transition) -> Result<State, LifecycleError> {
        self.shared.trigger(transition)
    }

    /// [`trigger`](Self::trigger)`(Transition::Configure)`.
    pub fn configure(&self) -> Result<State, LifecycleError> {
        self.trigger(Transition::Configure)
    }

    /// [`trigger`](Self::trigger)`(Transition::Activate)`.
    pub fn activate(&self) -> Result<State, LifecycleError> {
        self.trigger(Transition::Activate)
    }

    /// [`trigger`](Self::trigger)`(Transition::Deactivate)`.
    pub fn deactivate(&self) -> Result<State, LifecycleError> {
        self.trigger(Transition::Deactivate)
    }

    /// [`trigger`](Self::trigger)`(Transition::Cleanup)`.
    pub fn cleanup(&self) -> Result<State, LifecycleError> {
        self.trigger(Transition::Cleanup)
    }

    /// [`trigger`](Self::trigger)`(Transition::Shutdown)`.
    pub fn shutdown(&self) -> Result<State, LifecycleError> {
        self.trigger(Transition::Shutdown)
    }
}

/// The machine's transitions whose start state `start` accepts, as messages.
fn descriptions(start: impl Fn(State) -> bool) -> Vec<TransitionDescription> {
    graph()
        .into_iter()
        .filter(|(_, _, from, _)| start(*from))
        .map(|(id, label, from, to)| TransitionDescription {
            transition: TransitionMsg {
                id,
                label: label.into(),
            },
            start_state: state_msg(from),
            goal_state: state_msg(to),
        })
        .collect()
}

impl Shared {
    fn name(&self) -> String {
        self.node.fully_qualified_name().to_owned()
    }

    /// The `change_state` service: the transition the request names, from the state now.
    fn change_state(&self, request: &TransitionMsg) -> bool {
        let state = *self.state.lock();
        let Some(transition) = Transition::requested(request.id, &request.label, state) else {
            self.refused.fetch_add(1, Ordering::Relaxed);
            let allowed: Vec<String> = state
                .transitions()
                .iter()
                .map(|t| format!("{} ({})", t.label(), t.from_state(state).map_or(0, |x| x.0)))
                .collect();
            self.node.logger().warn(format_args!(
                "change_state refused: transition id {} label '{}' is not one {state} allows (it allows: {})",
                request.id,
                request.label,
                if allowed.is_empty() { "none".into() } else { allowed.join(", ") }
            ));
            return false;
        };
        match self.trigger(transition) {
            Ok(_) => true,
            Err(error) => {
                if matches!(
                    error,
                    LifecycleError::InProgress { .. } | LifecycleError::NotAllowed { .. }
                ) {
                    self.refused.fetch_add(1, Ordering::Relaxed);
                }
                self.node
                    .logger()
                    .warn(format_args!("change_state: {error}"));
                false
            }
        }
    }

    fn trigger(&self, transition: Transition) -> Result<State, LifecycleError> {
        let Some(mut callbacks) = self.callbacks.try_lock() else {
            return Err(LifecycleError::InProgress {
                node: self.name(),
                transition,
            });
        };
        let from = *self.state.lock();
        let Some((id, during)) = transition.from_state(from) else {
            return Err(LifecycleError::NotAllowed {
                node: self.name(),
                state: from,
                transition,
            });
        };
        self.enter(id, transition.label(), from, during);
        let returned = self.run(&mut **callbacks, during, from);
        let (id, label, to) = completion(during, returned);
        self.enter(id, label, during, to);
        let (returned, to) = if to == State::ErrorProcessing {
            let recovered = self.run(&mut **callbacks, State::ErrorProcessing, during);
            let (id, label, after) = completion(State::ErrorProcessing, recovered);
            self.enter(id, label, State::ErrorProcessing, after);
            (returned, after)
        } else {
            (returned, to)
        };
        match returned {
            CallbackReturn::Success => Ok(to),
            returned => Err(LifecycleError::Callback {
                node: self.name(),
                transition,
                returned,
                state: to,
            }),
        }
    }

    /// Moves to `to` by transition `id`: the gates follow, the event goes out.
    fn enter(&self, id: u8, label: &str, from: State, to: State) {
        *self.state.lock() = to;
        let open = matches!(to, State::Active | State::Activating);
        self.gates.lock().retain(|gate| match gate.upgrade() {
            Some(gate) => {
                gate.set_active(open);
                true
            }
            None => false,
        });
        let timestamp = u64::try_from(self.node.clock().now().nanos()).unwrap_or(0);
        let Some(events) = &self.events else {
            return;
        };
        events.publish(TransitionEvent {
            timestamp,
            transition: TransitionMsg {
                id,
                label: label.into(),
            },
            start_state: state_msg(from),
            goal_state: state_msg(to),
        });
    }

    /// The callback of transition state `during`; a panic is an `Error`, logged.
    fn run(&self, callbacks: &mut dyn Lifecycle, during: State, previous: State) -> CallbackReturn {
        let outcome = catch_unwind(AssertUnwindSafe(|| match during {
            State::Configuring => callbacks.on_configure(previous),
            State::CleaningUp => callbacks.on_cleanup(previous),
            State::Activating => callbacks.on_activate(previous),
            State::Deactivating => callbacks.on_deactivate(previous),
            State::ShuttingDown => callbacks.on_shutdown(previous),
            _ => callbacks.on_error(previous),
        }));
        outcome.unwrap_or_else(|panic| {
            let text = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".into());
            self.node.logger().error(format_args!(
                "the lifecycle callback of {during} panicked: {text}; that is an error, the node goes to error processing"
            ));
            CallbackReturn::Error
        })
    }
}
