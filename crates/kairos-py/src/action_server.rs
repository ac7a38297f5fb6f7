//! Python's action servers (`kairos.action.ActionServer`) are `kairos-action`'s
//! [`ActionServer`], made per action type as `typed.rs` makes topics and services: the
//! goal table, ROS 2's cancel policy, the three services, the status and feedback topics,
//! result keeping and expiry, and the goal trace exist once, in Rust, for Rust and Python
//! servers alike.
//!
//! Ground rules:
//! - Python decides: `decide_goal(goal)` and `decide_cancel(goal_id)` are called on the
//!   executor in the server's group and may be coroutines (rclpy's callbacks may be
//!   `async def`); what they raise is reported to the spin and rejects the goal or cancel.
//! - `accepted(goal)` gets each accepted goal's [`PyActionGoal`] before the client hears
//!   of it; Python runs rclpy's accepted and execute callbacks from there.
//! - A Python goal ends in rcl_action's order: `end(status)` sets the final status (the
//!   status topic says so at once), `send_result(result)` hands the result to every client
//!   waiting for it. A goal handle dropped before its goal ended aborts it, and an ended
//!   goal whose result was never sent sends the default result, so no client waits for ever.

use crate::convert::{Layout, from_py, layout_of, to_py};
use crate::env::CallbackEnv;
use crate::errors::graph_error;
use crate::future::{CoroutineTask, ResultSlot};
use crate::typed::Callable;
use kairos::graph::{ActionType, Node};
use kairos::time::Duration;
use kairos_action::{
    ActionServer, ActionServerOptions, CancelResponse, Decision, GoalResponse, GoalStatus,
    PendingResult, ServerGoalHandle,
};
use parking_lot::Mutex;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::sync::Arc;

/// What a Python action server asks and tells.
pub(crate) struct ServerCallbacks {
    /// `decide_goal(goal) -> bool`, or a coroutine returning it.
    pub(crate) decide_goal: Callable,
    /// `decide_cancel(goal_id: bytes) -> bool`, or a coroutine returning it.
    pub(crate) decide_cancel: Callable,
    /// `accepted(goal: ActionGoal)`.
    pub(crate) accepted: Callable,
    /// The action class (`Goal`, `Result` and `Feedback` are its message classes).
    pub(crate) action: PyObject,
    pub(crate) env: Arc<CallbackEnv>,
}

/// Makes the server of one action type.
pub(crate) type MakeActionServer =
    fn(&Node, &str, Duration, ServerCallbacks) -> PyResult<Box<dyn DynActionServer>>;

/// An action server of some action type.
pub(crate) trait DynActionServer: Send + Sync {
    /// The ids of the goals it knows (running, or ended with their result kept), oldest
    /// first; expired results are forgotten first.
    fn goal_ids(&self) -> Vec<[u8; 16]>;
}

impl<A: ActionType> DynActionServer for ActionServer<A> {
    fn goal_ids(&self) -> Vec<[u8; 16]> {
        ActionServer::goal_ids(self)
            .into_iter()
            .map(|id| id.0)
            .collect()
    }
}

/// An accepted goal of some action type.
trait DynGoal: Send + Sync {
    fn status(&self) -> GoalStatus;
    fn execute(&self) -> Option<String>;
    fn end(&self, status: GoalStatus) -> Option<String>;
    fn publish_feedback(&self, feedback: &Bound<'_, PyAny>) -> PyResult<()>;
    fn send_result(&self, result: Option<&Bound<'_, PyAny>>) -> PyResult<()>;
}

struct TypedGoal<A: ActionType> {
    handle: ServerGoalHandle<A>,
    pending: Mutex<Option<PendingResult<A>>>,
    feedback: Arc<Layout>,
    result: Arc<Layout>,
}

impl<A: ActionType> DynGoal for TypedGoal<A> {
    fn status(&self) -> GoalStatus {
        self.handle.status()
    }

    fn execute(&self) -> Option<String> {
        self.handle.execute().err().map(|e| e.to_string())
    }

    fn end(&self, status: GoalStatus) -> Option<String> {
        match self.handle.end_result_pending(status) {
            Ok(pending) => {
                *self.pending.lock() = Some(pending);
                None
            }
            Err(error) => Some(error.to_string()),
        }
    }

    fn publish_feedback(&self, feedback: &Bound<'_, PyAny>) -> PyResult<()> {
        let feedback = from_py::<A::Feedback>(feedback, &self.feedback)?;
        self.handle.publish_feedback(feedback);
        Ok(())
    }

    fn send_result(&self, result: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let result = match result {
            Some(result) => from_py::<A::Result>(result, &self.result)?,
            None => A::Result::default(),
        };
        if let Some(pending) = self.pending.lock().take() {
            pending.send(result);
        }
        Ok(())
    }
}

/// One accepted goal of a Python action server (`ServerGoalHandle._core`).
#[pyclass(name = "ActionGoal", module = "kairos._kairos", frozen)]
pub struct PyActionGoal {
    inner: Box<dyn DynGoal>,
    id: [u8; 16],
    request: PyObject,
}

impl std::fmt::Debug for PyActionGoal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ActionGoal")
            .field("goal", &kairos_action::GoalId(self.id))
            .field("status", &self.inner.status())
            .finish()
    }
}

#[pymethods]
impl PyActionGoal {
    /// The goal id's 16 bytes.
    #[getter]
    fn goal_id<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.id)
    }

    /// The goal message the client sent.
    #[getter]
    fn request(&self, py: Python<'_>) -> PyObject {
        self.request.clone_ref(py)
    }

    /// The goal's status (`action_msgs/msg/GoalStatus` code).
    #[getter]
    fn status(&self) -> i8 {
        self.inner.status().code()
    }

    /// Marks the accepted goal executing; why not, if the state machine refuses.
    fn execute(&self, py: Python<'_>) -> Option<String> {
        py.allow_threads(|| self.inner.execute())
    }

    /// Ends the goal with the terminal `status`, its result to follow; why not, if the
    /// state machine refuses.
    fn end(&self, py: Python<'_>, status: i8) -> Option<String> {
        py.allow_threads(|| self.inner.end(GoalStatus::from_code(status)))
    }

    /// Publishes `feedback` (an instance of the action's `Feedback`) for this goal.
    fn publish_feedback(&self, feedback: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inner.publish_feedback(feedback)
    }

    /// Hands the ended goal's `result` (an instance of the action's `Result`; `None`: its
    /// default) to every client waiting for it. Nothing happens if it was sent already.
    #[pyo3(signature = (result = None))]
    fn send_result(&self, result: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        self.inner.send_result(result)
    }
}

/// A Python action server's Rust half (`ActionServer._core`).
#[pyclass(name = "ActionServerCore", module = "kairos._kairos", frozen)]
pub struct PyActionServer {
    pub(crate) inner: Mutex<Option<Box<dyn DynActionServer>>>,
}

impl std::fmt::Debug for PyActionServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ActionServerCore")
            .field("serving", &self.inner.lock().is_some())
            .finish()
    }
}

#[pymethods]
impl PyActionServer {
    /// The ids (16 bytes each) of the goals the server knows, oldest first; results kept
    /// past the server's result timeout are forgotten first.
    fn goal_ids<'py>(&self, py: Python<'py>) -> Vec<Bound<'py, PyBytes>> {
        let ids = py.allow_threads(|| {
            self.inner
                .lock()
                .as_ref()
                .map(|server| server.goal_ids())
                .unwrap_or_default()
        });
        ids.iter().map(|id| PyBytes::new(py, id)).collect()
    }

    /// Takes the server's services and topics off the graph.
    fn destroy(&self, py: Python<'_>) {
        let server = self.inner.lock().take();
        py.allow_threads(move || drop(server));
    }
}

/// What a Python decision said: its return value's truth, `false` if it raised (which
/// the spin then raises).
fn decided(env: &CallbackEnv, slot: &ResultSlot) -> bool {
    Python::with_gil(|py| match slot.lock().take() {
        Some(Ok(value)) => value.bind(py).is_truthy().unwrap_or(false),
        Some(Err(err)) => {
            env.report(py, err);
            false
        }
        None => false,
    })
}

/// `callable(argument)` on the executor: a plain function's return value, or a
/// coroutine's once it returns.
fn ask(
    env: &Arc<CallbackEnv>,
    callable: &Callable,
    argument: impl FnOnce(Python<'_>) -> PyResult<PyObject> + Send + 'static,
) -> Decision<bool> {
    let slot: ResultSlot = Arc::default();
    let callable = callable.clone();
    let task = CoroutineTask::new(
        env.clone(),
        Box::new(move |py| callable.call1(py, (argument(py)?,))),
    )
    .keeping_result(slot.clone());
    let env = env.clone();
    Box::pin(async move {
        task.await;
        decided(&env, &slot)
    })
}

/// The [`MakeActionServer`] of action type `A`.
pub(crate) fn make_action_server<A: ActionType>(
    node: &Node,
    name: &str,
    result_timeout: Duration,
    callbacks: ServerCallbacks,
) -> PyResult<Box<dyn DynActionServer>> {
    let ServerCallbacks {
        decide_goal,
        decide_cancel,
        accepted,
        action,
        env,
    } = callbacks;
    let (goal_layout, feedback, result) = Python::with_gil(|py| {
        let action = action.bind(py);
        PyResult::Ok((
            layout_of::<A::Goal>(&action.getattr("Goal")?)?,
            layout_of::<A::Feedback>(&action.getattr("Feedback")?)?,
            layout_of::<A::Result>(&action.getattr("Result")?)?,
        ))
    })?;
    let on_goal = {
        let (env, layout) = (env.clone(), goal_layout.clone());
        move |_id, goal: Arc<A::Goal>| -> Decision<GoalResponse> {
            let layout = layout.clone();
            let decision = ask(&env, &decide_goal, move |py| to_py(py, &*goal, &layout));
            Box::pin(async move {
                if decision.await {
                    GoalResponse::AcceptAndDefer
                } else {
                    GoalResponse::Reject
                }
            })
        }
    };
    let on_cancel = {
        let env = env.clone();
        move |id: kairos_action::GoalId, _goal| -> Decision<CancelResponse> {
            let decision = ask(&env, &decide_cancel, move |py| {
                Ok(PyBytes::new(py, &id.0).into_any().unbind())
            });
            Box::pin(async move {
                if decision.await {
                    CancelResponse::Accept
                } else {
                    CancelResponse::Reject
                }
            })
        }
    };
    let on_accepted = move |handle: ServerGoalHandle<A>| {
        Python::with_gil(|py| {
            let made = to_py(py, &**handle.goal(), &goal_layout).and_then(|request| {
                let goal = PyActionGoal {
                    id: handle.id().0,
                    request,
                    inner: Box::new(TypedGoal {
                        handle,
                        pending: Mutex::new(None),
                        feedback: feedback.clone(),
                        result: result.clone(),
                    }),
                };
                accepted.call1(py, (goal,))
            });
            if let Err(err) = made {
                env.report(py, err);
            }
        });
    };
    let options = ActionServerOptions { result_timeout };
    let server = ActionServer::<A>::with_async_decisions(
        node,
        name,
        options,
        on_goal,
        on_cancel,
        on_accepted,
    )
    .map_err(graph_error)?;
    Ok(Box::new(server))
}

/// Adds this module's classes to `_kairos`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyActionGoal>()?;
    m.add_class::<PyActionServer>()?;
    Ok(())
}
