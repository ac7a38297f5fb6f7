//! Lifecycle (managed) nodes for Python: `kairos.lifecycle.LifecycleNode` is a Python
//! node whose state machine, services and events are `kairos_lifecycle`'s, the one Rust
//! nodes use; its transition callbacks are the Python node's methods.
//!
//! What this module promises:
//! - A transition runs the Python node's `on_configure` ... `on_error` with the GIL, from
//!   whoever asked: the `change_state` service on the executor, or `trigger_*` from Python
//!   (which waits without the GIL). A callback that raises, or returns something other
//!   than a `TransitionCallbackReturn`, is an error: printed, and the node goes to error
//!   processing (as in rclpy).
//! - The Rust side holds the Python node weakly: a node no one references goes away.

use crate::node::NodeCore;
use kairos_lifecycle::{
    Activation, CallbackReturn, Lifecycle, LifecycleError, LifecycleNode, State, Transition,
};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use std::sync::Arc;

/// rclpy's `TransitionCallbackReturn` values (the ids of the callback transitions).
const SUCCESS: u8 = 97;
const FAILURE: u8 = 98;
const ERROR: u8 = 99;

/// The Python node's transition methods, reached through a weak reference to it.
struct PythonCallbacks {
    owner: PyObject,
}

impl PythonCallbacks {
    fn call(&self, method: &str, previous: State) -> CallbackReturn {
        Python::with_gil(|py| {
            let Ok(owner) = self.owner.call0(py) else {
                return CallbackReturn::Error;
            };
            if owner.is_none(py) {
                return CallbackReturn::Success; // the node is gone; nothing to do
            }
            let returned = owner
                .call_method1(
                    py,
                    "_kairos_transition",
                    (method, previous.id(), previous.label()),
                )
                .and_then(|value| value.extract::<u8>(py));
            match returned {
                Ok(SUCCESS) => CallbackReturn::Success,
                Ok(FAILURE) => CallbackReturn::Failure,
                Ok(_) => CallbackReturn::Error,
                Err(err) => {
                    err.print(py);
                    CallbackReturn::Error
                }
            }
        })
    }
}

impl Lifecycle for PythonCallbacks {
    fn on_configure(&mut self, previous: State) -> CallbackReturn {
        self.call("on_configure", previous)
    }
    fn on_cleanup(&mut self, previous: State) -> CallbackReturn {
        self.call("on_cleanup", previous)
    }
    fn on_activate(&mut self, previous: State) -> CallbackReturn {
        self.call("on_activate", previous)
    }
    fn on_deactivate(&mut self, previous: State) -> CallbackReturn {
        self.call("on_deactivate", previous)
    }
    fn on_shutdown(&mut self, previous: State) -> CallbackReturn {
        self.call("on_shutdown", previous)
    }
    fn on_error(&mut self, previous: State) -> CallbackReturn {
        self.call("on_error", previous)
    }
}

/// The Rust half of `kairos.lifecycle.LifecycleNode`.
#[pyclass(name = "LifecycleCore", module = "kairos._kairos", frozen)]
#[derive(Debug)]
pub struct PyLifecycle {
    node: LifecycleNode,
}

#[pymethods]
impl PyLifecycle {
    /// Makes `core`'s node a managed node; `owner` is a weak reference to the Python
    /// node whose `_kairos_transition(method, state_id, label)` runs the callbacks.
    /// Without `interface`, no services and no transition events.
    #[new]
    #[pyo3(signature = (core, owner, interface = true))]
    fn new(core: PyRef<'_, NodeCore>, owner: PyObject, interface: bool) -> PyResult<Self> {
        let node =
            LifecycleNode::with_interface(core.node.clone(), PythonCallbacks { owner }, interface)
                .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        Ok(PyLifecycle { node })
    }

    /// `(id, label)` of the state now.
    fn state(&self) -> (u8, &'static str) {
        let state = self.node.state();
        (state.id(), state.label())
    }

    /// Runs `transition` (its label); the callback's `TransitionCallbackReturn` value.
    /// A transition the state does not allow, or one asked for during another, raises.
    fn trigger(&self, py: Python<'_>, transition: &str) -> PyResult<u8> {
        let transition = match transition {
            "configure" => Transition::Configure,
            "cleanup" => Transition::Cleanup,
            "activate" => Transition::Activate,
            "deactivate" => Transition::Deactivate,
            "shutdown" => Transition::Shutdown,
            other => {
                return Err(PyValueError::new_err(format!(
                    "'{other}' is not a lifecycle transition (configure, cleanup, activate, deactivate, shutdown)"
                )));
            }
        };
        match py.allow_threads(|| self.node.trigger(transition)) {
            Ok(_) => Ok(SUCCESS),
            Err(LifecycleError::Callback { returned, .. }) => Ok(match returned {
                CallbackReturn::Success => SUCCESS,
                CallbackReturn::Failure => FAILURE,
                CallbackReturn::Error => ERROR,
            }),
            Err(err) => Err(PyRuntimeError::new_err(err.to_string())),
        }
    }

    /// The activation of a publisher on `topic` this node manages.
    fn activation(&self, topic: &str) -> PyActivation {
        PyActivation {
            activation: self.node.activation(topic),
        }
    }

    /// `change_state` requests refused so far.
    #[getter]
    fn refused_requests(&self) -> u64 {
        self.node.refused_requests()
    }
}

/// Whether a managed publisher may publish now; refused publishes are counted.
#[pyclass(name = "Activation", module = "kairos._kairos", frozen)]
#[derive(Debug)]
pub struct PyActivation {
    activation: Arc<Activation>,
}

#[pymethods]
impl PyActivation {
    #[getter]
    fn is_active(&self) -> bool {
        self.activation.is_active()
    }

    /// Counts a publish that did not happen (reported once per inactive period).
    fn refuse(&self) {
        self.activation.refuse();
    }

    #[getter]
    fn refused(&self) -> u64 {
        self.activation.refused()
    }
}
