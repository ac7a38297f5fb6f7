//! Python's action clients (`kairos.action.ActionClient`) are `kairos-action`'s
//! [`ActionClient`], made per action type as `action_server.rs` makes servers: sending
//! goals, following their status and feedback, asking for results and cancels, and
//! tracing each step exist once, in Rust, for Rust and Python clients alike.
//!
//! Ground rules:
//! - Goals follow rclpy's rule ([`GoalOptions::feedback_until_result`]): a goal's feedback
//!   callback is called until its result comes, even after its Python handle is gone.
//! - Every `*_async` answer is a [`PyFuture`] over an [`ActionFuture`]: it completes where
//!   rclpy's does, in a done callback on the client's executor, or when awaited.
//! - Answers reach Python as rclpy has them: a send-goal answer is the goal's
//!   [`PyActionClientGoal`] (`None` when rejected), a result is the action's
//!   `GetResult.Response` (status `STATUS_UNKNOWN` and the default result for a goal the
//!   server does not know), a cancel answer is `CancelGoal.Response` as the server sent it.
//! - A feedback callback that raises is reported to the spin running it, as a
//!   subscription's is.

use crate::convert::{Layout, from_py, layout_of, to_py};
use crate::env::CallbackEnv;
use crate::errors::{call_error, graph_error};
use crate::future::{Convert, DoneFn, Outcome, PyFuture, Source};
use crate::typed::Callable;
use kairos::graph::{ActionType, Node, ServiceType};
use kairos::time::Duration;
use kairos_action::{
    ActionClient, ActionError, ActionFuture, ClientGoalHandle, GoalId, GoalOptions, GoalOutcome,
};
use kairos_msgs::action_msgs::srv::CancelGoalResponse;
use parking_lot::Mutex;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

/// Makes the client of one action type: `(node, name, action class, env)`.
pub(crate) type MakeActionClient =
    fn(&Node, &str, &Bound<'_, PyAny>, Arc<CallbackEnv>) -> PyResult<Box<dyn DynActionClient>>;

/// An action client of some action type.
pub(crate) trait DynActionClient: Send + Sync {
    fn send_goal_async(
        &self,
        goal: &Bound<'_, PyAny>,
        id: GoalId,
        on_feedback: Option<Callable>,
    ) -> PyResult<PyFuture>;
    fn send_goal(
        &self,
        py: Python<'_>,
        goal: &Bound<'_, PyAny>,
        id: GoalId,
        on_feedback: Option<Callable>,
        timeout: Duration,
    ) -> PyResult<Option<PyActionClientGoal>>;
    fn wait_for_server(&self, timeout: Duration) -> bool;
    fn server_is_ready(&self) -> bool;
    fn unmatched_feedback(&self) -> u64;
}

/// The layouts and callbacks a client of action `A` converts with.
struct Conversions {
    goal: Arc<Layout>,
    feedback_message: Arc<Layout>,
    result_response: Arc<Layout>,
    cancel_response: Arc<Layout>,
    env: Arc<CallbackEnv>,
}

struct TypedClient<A: ActionType> {
    client: ActionClient<A>,
    conversions: Arc<Conversions>,
}

impl<A: ActionType> TypedClient<A> {
    fn options(&self, id: GoalId, on_feedback: Option<Callable>) -> GoalOptions<A> {
        let options = GoalOptions::new().id(id).feedback_until_result();
        let Some(callable) = on_feedback else {
            return options;
        };
        let conversions = self.conversions.clone();
        options.on_feedback(move |feedback| {
            let message = A::feedback_message(id.0, feedback);
            Python::with_gil(|py| {
                let called = to_py(py, &message, &conversions.feedback_message)
                    .and_then(|message| callable.call1(py, (message,)));
                if let Err(err) = called {
                    conversions.env.report(py, err);
                }
            });
        })
    }
}

impl<A: ActionType> DynActionClient for TypedClient<A> {
    fn send_goal_async(
        &self,
        goal: &Bound<'_, PyAny>,
        id: GoalId,
        on_feedback: Option<Callable>,
    ) -> PyResult<PyFuture> {
        let goal = from_py::<A::Goal>(goal, &self.conversions.goal)?;
        let sent = self
            .client
            .send_goal_async(goal, self.options(id, on_feedback));
        let conversions = self.conversions.clone();
        Ok(PyFuture::response(Box::new(AnswerSource::new(
            sent,
            move |answer| goal_answer(answer, &conversions),
        ))))
    }

    fn send_goal(
        &self,
        py: Python<'_>,
        goal: &Bound<'_, PyAny>,
        id: GoalId,
        on_feedback: Option<Callable>,
        timeout: Duration,
    ) -> PyResult<Option<PyActionClientGoal>> {
        let goal = from_py::<A::Goal>(goal, &self.conversions.goal)?;
        let options = self.options(id, on_feedback);
        let answer = py.allow_threads(|| self.client.send_goal_with(goal, options, timeout));
        match answer {
            Ok(handle) => Ok(Some(client_goal(handle, &self.conversions))),
            Err(ActionError::Rejected { .. }) => Ok(None),
            Err(error) => Err(action_error(error)),
        }
    }

    fn wait_for_server(&self, timeout: Duration) -> bool {
        self.client.wait_for_server(timeout)
    }

    fn server_is_ready(&self) -> bool {
        self.client.server_is_ready()
    }

    fn unmatched_feedback(&self) -> u64 {
        self.client.unmatched_feedback()
    }
}

fn action_error(error: ActionError) -> PyErr {
    match error {
        ActionError::Call { source, .. } => call_error(source),
        other => PyRuntimeError::new_err(other.to_string()),
    }
}

fn client_goal<A: ActionType>(
    handle: ClientGoalHandle<A>,
    conversions: &Arc<Conversions>,
) -> PyActionClientGoal {
    PyActionClientGoal {
        id: handle.id().0,
        stamp: handle.stamp(),
        inner: Box::new(TypedGoal {
            handle,
            conversions: conversions.clone(),
        }),
    }
}

fn goal_answer<A: ActionType>(
    answer: Result<ClientGoalHandle<A>, ActionError>,
    conversions: &Arc<Conversions>,
) -> Outcome {
    match answer {
        Ok(handle) => {
            let goal = client_goal(handle, conversions);
            Ok(Box::new(move |py| Ok(Py::new(py, goal)?.into_any())))
        }
        Err(ActionError::Rejected { .. }) => Ok(Box::new(|py| Ok(py.None()))),
        Err(error) => Err(action_error(error)),
    }
}

/// The `GetResult.Response` of how a goal ended: a goal the server does not know (or
/// forgot) is `STATUS_UNKNOWN` with the default result, as rclpy hands it over.
fn result_answer<A: ActionType>(
    answer: Result<GoalOutcome<A::Result>, ActionError>,
    conversions: &Arc<Conversions>,
) -> Outcome {
    let response = match answer {
        Ok(outcome) => A::get_result_response(outcome.status.code(), outcome.result),
        Err(ActionError::UnknownGoal { .. }) => A::get_result_response(0, A::Result::default()),
        Err(error) => return Err(action_error(error)),
    };
    let layout = conversions.result_response.clone();
    Ok(Box::new(move |py| to_py(py, &response, &layout)))
}

fn cancel_answer(
    answer: Result<CancelGoalResponse, ActionError>,
    conversions: &Arc<Conversions>,
) -> Outcome {
    let response = answer.map_err(action_error)?;
    let layout = conversions.cancel_response.clone();
    Ok(Box::new(move |py| to_py(py, &response, &layout)))
}

/// The answer of an [`ActionFuture`], as a [`PyFuture`]'s source.
struct AnswerSource<T> {
    future: ActionFuture<T>,
    /// Taken by the one completion, polled or delivered.
    convert: Option<Box<dyn FnOnce(T) -> Outcome + Send>>,
}

impl<T: 'static> AnswerSource<T> {
    fn new(future: ActionFuture<T>, convert: impl FnOnce(T) -> Outcome + Send + 'static) -> Self {
        Self {
            future,
            convert: Some(Box::new(convert)),
        }
    }
}

impl<T: Send + 'static> Source for AnswerSource<T> {
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Outcome> {
        Pin::new(&mut self.future).poll(cx).map(|answer| {
            let convert = self.convert.take().expect("a source completes once");
            convert(answer)
        })
    }

    fn on_done(self: Box<Self>, done: DoneFn) -> Result<(), Box<dyn Source>> {
        let AnswerSource { future, convert } = *self;
        let convert = convert.expect("a source completes once");
        future.on_done_spun(move |answer| done(convert(answer)));
        Ok(())
    }
}

/// An accepted goal of some action type.
trait DynGoal: Send + Sync {
    fn status(&self) -> i8;
    fn get_result(&self, py: Python<'_>, timeout: Duration) -> PyResult<PyObject>;
    fn get_result_async(&self) -> PyFuture;
    fn cancel(&self, py: Python<'_>, timeout: Duration) -> PyResult<PyObject>;
    fn cancel_async(&self) -> PyFuture;
}

struct TypedGoal<A: ActionType> {
    handle: ClientGoalHandle<A>,
    conversions: Arc<Conversions>,
}

impl<A: ActionType> DynGoal for TypedGoal<A> {
    fn status(&self) -> i8 {
        self.handle.status().code()
    }

    fn get_result(&self, py: Python<'_>, timeout: Duration) -> PyResult<PyObject> {
        let answer = py.allow_threads(|| self.handle.get_result(timeout));
        converted(py, result_answer::<A>(answer, &self.conversions))
    }

    fn get_result_async(&self) -> PyFuture {
        let conversions = self.conversions.clone();
        PyFuture::response(Box::new(AnswerSource::new(
            self.handle.get_result_async(),
            move |answer| result_answer::<A>(answer, &conversions),
        )))
    }

    fn cancel(&self, py: Python<'_>, timeout: Duration) -> PyResult<PyObject> {
        let answer = py.allow_threads(|| self.handle.cancel_answer(timeout));
        converted(py, cancel_answer(answer, &self.conversions))
    }

    fn cancel_async(&self) -> PyFuture {
        let conversions = self.conversions.clone();
        PyFuture::response(Box::new(AnswerSource::new(
            self.handle.cancel_async(),
            move |answer| cancel_answer(answer, &conversions),
        )))
    }
}

fn converted(py: Python<'_>, outcome: Outcome) -> PyResult<PyObject> {
    let convert: Convert = outcome?;
    convert(py)
}

/// One goal a Python action client sent and its server accepted (`ClientGoalHandle._core`).
#[pyclass(name = "ActionClientGoal", module = "kairos._kairos", frozen)]
pub struct PyActionClientGoal {
    inner: Box<dyn DynGoal>,
    id: [u8; 16],
    stamp: (i32, u32),
}

impl std::fmt::Debug for PyActionClientGoal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ActionClientGoal")
            .field("goal", &GoalId(self.id))
            .field("status", &self.inner.status())
            .finish()
    }
}

#[pymethods]
impl PyActionClientGoal {
    /// The goal id's 16 bytes.
    #[getter]
    fn goal_id<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.id)
    }

    /// When the server accepted it: `(sec, nanosec)` of the server's clock.
    #[getter]
    fn stamp(&self) -> (i32, u32) {
        self.stamp
    }

    /// The goal's last status the server published (`action_msgs/msg/GoalStatus` code).
    #[getter]
    fn status(&self) -> i8 {
        self.inner.status()
    }

    /// Waits (without the GIL) up to `timeout` seconds for the goal's `GetResult.Response`.
    fn get_result(&self, py: Python<'_>, timeout: f64) -> PyResult<PyObject> {
        self.inner.get_result(py, seconds(timeout))
    }

    /// A future of the goal's `GetResult.Response`.
    fn get_result_async(&self) -> PyFuture {
        self.inner.get_result_async()
    }

    /// Asks the server to cancel the goal and waits (without the GIL) up to `timeout`
    /// seconds for its `CancelGoal.Response`.
    fn cancel(&self, py: Python<'_>, timeout: f64) -> PyResult<PyObject> {
        self.inner.cancel(py, seconds(timeout))
    }

    /// A future of the server's `CancelGoal.Response`.
    fn cancel_async(&self) -> PyFuture {
        self.inner.cancel_async()
    }
}

/// A timeout in seconds as rclpy reads it: infinite (or NaN) waits until shutdown, zero
/// or less does not wait.
fn seconds(timeout: f64) -> Duration {
    if timeout.is_nan() || timeout >= crate::env::FOREVER.as_secs_f64() {
        crate::env::FOREVER
    } else {
        Duration::from_secs_f64(timeout.max(0.0))
    }
}

/// A Python action client's Rust half (`ActionClient._core`).
#[pyclass(name = "ActionClientCore", module = "kairos._kairos", frozen)]
pub struct PyActionClient {
    pub(crate) inner: Mutex<Option<Arc<dyn DynActionClient>>>,
}

impl std::fmt::Debug for PyActionClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ActionClientCore")
            .field("alive", &self.inner.lock().is_some())
            .finish()
    }
}

impl PyActionClient {
    fn client(&self) -> PyResult<Arc<dyn DynActionClient>> {
        self.inner.lock().clone().ok_or_else(|| {
            PyRuntimeError::new_err("the action client was destroyed; make a new one")
        })
    }
}

fn goal_id(id: &[u8]) -> PyResult<GoalId> {
    let bytes: [u8; 16] = id.try_into().map_err(|_| {
        pyo3::exceptions::PyValueError::new_err(format!(
            "a goal id is 16 bytes (unique_identifier_msgs/UUID), not {}",
            id.len()
        ))
    })?;
    Ok(GoalId(bytes))
}

#[pymethods]
impl PyActionClient {
    /// Sends `goal` with id `goal_id` (16 bytes); a future of its `ActionClientGoal`, or of
    /// `None` if the server rejected it. `feedback_callback(feedback_message)` gets its
    /// feedback until its result comes.
    #[pyo3(signature = (goal, goal_id, feedback_callback = None))]
    fn send_goal_async(
        &self,
        goal: &Bound<'_, PyAny>,
        goal_id: &[u8],
        feedback_callback: Option<PyObject>,
    ) -> PyResult<PyFuture> {
        let id = self::goal_id(goal_id)?;
        self.client()?
            .send_goal_async(goal, id, feedback_callback.map(Arc::new))
    }

    /// [`send_goal_async`](Self::send_goal_async), waiting (without the GIL) up to
    /// `timeout` seconds for the answer.
    #[pyo3(signature = (goal, goal_id, feedback_callback, timeout))]
    fn send_goal(
        &self,
        py: Python<'_>,
        goal: &Bound<'_, PyAny>,
        goal_id: &[u8],
        feedback_callback: Option<PyObject>,
        timeout: f64,
    ) -> PyResult<Option<PyActionClientGoal>> {
        let id = self::goal_id(goal_id)?;
        self.client()?.send_goal(
            py,
            goal,
            id,
            feedback_callback.map(Arc::new),
            seconds(timeout),
        )
    }

    /// Waits (without the GIL) up to `timeout` seconds for a server of the action.
    fn wait_for_server(&self, py: Python<'_>, timeout: f64) -> PyResult<bool> {
        let client = self.client()?;
        Ok(py.allow_threads(|| client.wait_for_server(seconds(timeout))))
    }

    fn server_is_ready(&self) -> PyResult<bool> {
        Ok(self.client()?.server_is_ready())
    }

    /// Feedback messages for goals this client does not follow (any more).
    #[getter]
    fn unmatched_feedback(&self) -> PyResult<u64> {
        Ok(self.client()?.unmatched_feedback())
    }

    /// Takes the client's services and topics off the graph.
    fn destroy(&self, py: Python<'_>) {
        let client = self.inner.lock().take();
        py.allow_threads(move || drop(client));
    }
}

/// The [`MakeActionClient`] of action type `A`.
pub(crate) fn make_action_client<A: ActionType>(
    node: &Node,
    name: &str,
    action: &Bound<'_, PyAny>,
    env: Arc<CallbackEnv>,
) -> PyResult<Box<dyn DynActionClient>> {
    let types = action.getattr("Impl")?;
    let conversions = Conversions {
        goal: layout_of::<A::Goal>(&action.getattr("Goal")?)?,
        feedback_message: layout_of::<A::FeedbackMessage>(&types.getattr("FeedbackMessage")?)?,
        result_response: layout_of::<<A::GetResult as ServiceType>::Response>(
            &types.getattr("GetResultService")?.getattr("Response")?,
        )?,
        cancel_response: layout_of::<CancelGoalResponse>(
            &types.getattr("CancelGoalService")?.getattr("Response")?,
        )?,
        env,
    };
    let client = ActionClient::<A>::new(node, name).map_err(graph_error)?;
    Ok(Box::new(TypedClient {
        client,
        conversions: Arc::new(conversions),
    }))
}

/// Adds this module's classes to `_kairos`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyActionClientGoal>()?;
    m.add_class::<PyActionClient>()?;
    Ok(())
}
