//! Nodes and their entities for Python: publishers, subscriptions, timers, services,
//! clients and callback groups, each one the Rust kairos entity it wraps.
//!
//! What this module promises:
//! - Every callback runs on the kairos executor's thread, holding the GIL only while
//!   Python code runs; every blocking wait (`call`, `wait_for_service`) releases the GIL,
//!   so the executor's other workers and other Python threads go on meanwhile.
//! - A blocking wait that could never complete raises `kairos.WouldDeadlock` at once, with
//!   the message kairos gives in Rust: the call is the Rust call, on the same thread.
//! - An exception a callback raises is not lost: it ends the spin and the spin raises it
//!   (as rclpy), or, for a node no executor spins, it is printed.
//!
//! Ground rules: a node's [`CallbackEnv`] is shared by its callbacks; its sink is set
//! by the executor the node is added to (`executor.rs`) and read by callbacks on error.

use crate::convert::{Layout, from_py, to_py};
use crate::errors::{call_error, graph_error};
use crate::future::{CoroutineTask, PyFuture, ResponseSource, ResultSlot};
use crate::msg::{layout_of, message_kind_of, service_kind_of};
use crate::time::{PyClock, duration_arg};
use kairos::exec::{CallbackGroup, CallbackTimer, Executor, GroupKind};
use kairos::graph::{Client, Node, NodeOptions, Publisher, Qos, SimStall};
use kairos::time::StallPolicy;
use kairos_zenoh::Message;
use parking_lot::Mutex;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use std::any::Any;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

/// How long a wait without a timeout waits: a year, i.e. until shutdown or cancel.
pub(crate) const FOREVER: kairos::time::Duration =
    kairos::time::Duration::from_secs(365 * 24 * 3600);

/// Where a callback's exception goes: the spin that runs it.
#[derive(Debug)]
pub(crate) struct ErrorSink {
    pub(crate) error: Mutex<Option<PyErr>>,
    pub(crate) executor: Executor,
}

/// What a node's callbacks share.
#[derive(Debug, Default)]
pub(crate) struct CallbackEnv {
    pub(crate) sink: Mutex<Option<Arc<ErrorSink>>>,
}

impl CallbackEnv {
    /// A callback raised `err`: the spin running it ends and raises it; without an
    /// executor (or after its first error) it is printed.
    pub(crate) fn report(&self, py: Python<'_>, err: PyErr) {
        let sink = self.sink.lock().clone();
        let Some(sink) = sink else {
            return err.print(py);
        };
        let mut slot = sink.error.lock();
        if slot.is_none() {
            *slot = Some(err);
            drop(slot);
            sink.executor.cancel();
        } else {
            drop(slot);
            err.print(py);
        }
    }
}

/// How the trace names a Python callback: its module and qualified name, as rclcpp's
/// traces name a C++ callback by its symbol (`__main__.Talker.timer_callback`).
fn python_name(callable: &Bound<'_, PyAny>) -> String {
    let target = callable
        .getattr("func")
        .unwrap_or_else(|_| callable.clone()); // functools.partial
    let part = |attr: &str| {
        target
            .getattr(attr)
            .and_then(|v| v.extract::<String>())
            .ok()
    };
    match (part("__module__"), part("__qualname__")) {
        (Some(module), Some(name)) => format!("{module}.{name}"),
        (None, Some(name)) => name,
        _ => target
            .repr()
            .map(|r| r.to_string())
            .unwrap_or_else(|_| "<python callable>".into()),
    }
}

/// A callable kept by a Rust closure: `Arc` so async callbacks can be cloned per call.
type Callable = Arc<PyObject>;

fn call0(env: &CallbackEnv, callable: &Callable) {
    Python::with_gil(|py| {
        if let Err(err) = callable.call0(py) {
            env.report(py, err);
        }
    });
}

/// A callback group of one node (rclpy's groups are bound to a node on first use).
#[pyclass(name = "CallbackGroupHandle", module = "kairos._kairos", frozen)]
#[derive(Debug)]
pub struct PyGroup {
    pub(crate) group: CallbackGroup,
}

#[pymethods]
impl PyGroup {
    #[getter]
    fn name(&self) -> &str {
        self.group.name()
    }

    #[getter]
    fn reentrant(&self) -> bool {
        self.group.kind() == GroupKind::Reentrant
    }
}

/// The Rust half of `kairos.node.Node`.
#[pyclass(name = "NodeCore", module = "kairos._kairos", frozen)]
#[derive(Debug)]
pub struct NodeCore {
    pub(crate) node: Node,
    pub(crate) env: Arc<CallbackEnv>,
}

impl NodeCore {
    fn in_group(&self, group: Option<&PyGroup>) -> PyResult<Node> {
        match group {
            None => Ok(self.node.clone()),
            Some(g) => self.node.with_group(&g.group).map_err(graph_error),
        }
    }
}

fn qos(depth: usize, transient_local: bool) -> Qos {
    let qos = Qos::keep_last(depth);
    if transient_local {
        qos.transient_local()
    } else {
        qos
    }
}

#[pymethods]
impl NodeCore {
    /// `sim_stall_policy` (`"wait"`, `"fallback_to_steady"` or `"fail"`) and
    /// `sim_stall_timeout_sec` choose what the node's waits on simulation time do when
    /// `/clock` falls silent (kairos's `NodeOptions::sim_stall`); none: the context's.
    #[new]
    #[pyo3(signature = (name, namespace = "/", use_sim_time = false, sim_stall_policy = None, sim_stall_timeout_sec = 1.0))]
    fn new(
        name: &str,
        namespace: &str,
        use_sim_time: bool,
        sim_stall_policy: Option<&str>,
        sim_stall_timeout_sec: f64,
    ) -> PyResult<Self> {
        crate::init_transport()?;
        let mut options = NodeOptions::new()
            .namespace(namespace)
            .use_sim_time(use_sim_time);
        if let Some(policy) = sim_stall_policy {
            let policy = match policy {
                "wait" => StallPolicy::Wait,
                "fallback_to_steady" => StallPolicy::FallbackToSteady,
                "fail" => StallPolicy::Fail,
                other => {
                    return Err(pyo3::exceptions::PyValueError::new_err(format!(
                        "unknown sim stall policy '{other}': 'wait', 'fallback_to_steady' or 'fail'"
                    )));
                }
            };
            let timeout = Python::with_gil(|py| {
                duration_arg(&sim_stall_timeout_sec.into_pyobject(py)?.into_any())
            })?;
            options = options.sim_stall(SimStall::new(policy, timeout));
        }
        let node = Node::with_options(&kairos::graph::Context::global(), name, options)
            .map_err(graph_error)?;
        Ok(Self {
            node,
            env: Arc::default(),
        })
    }

    #[getter]
    fn name(&self) -> &str {
        self.node.name()
    }

    #[getter]
    fn namespace(&self) -> &str {
        self.node.namespace()
    }

    #[getter]
    fn fully_qualified_name(&self) -> &str {
        self.node.fully_qualified_name()
    }

    /// Logs `message` at `severity` (rcutils' numbers: 10 debug, 20 info, 30 warn, 40
    /// error, 50 fatal) with the node's logger, or its child `child` (dotted suffix, empty
    /// for the node's own): the console in rcutils' format, `/rosout` and the trace, as a
    /// Rust node's line. `file` and `line` are the Python caller's.
    fn log(&self, severity: u8, message: &str, child: &str, file: &str, line: u32) {
        use kairos::logging::Severity;
        let severity = match severity {
            0..=10 => Severity::Debug,
            11..=20 => Severity::Info,
            21..=30 => Severity::Warn,
            31..=40 => Severity::Error,
            _ => Severity::Fatal,
        };
        let logger = self.node.logger();
        if child.is_empty() {
            logger.log(severity, message, file, line);
        } else {
            logger.child(child).log(severity, message, file, line);
        }
    }

    /// The parameter values the program's ROS arguments (`-p`, `--params-file`) give this
    /// node, as `(name, value)` pairs of Python values.
    fn ros_parameter_overrides<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<Vec<(String, Bound<'py, PyAny>)>> {
        use kairos::graph::ParameterValue as V;
        let overrides = self
            .node
            .context()
            .ros_args()
            .map_err(graph_error)?
            .overrides_for(self.node.fully_qualified_name());
        overrides
            .into_iter()
            .map(|(name, value)| {
                let value = match value {
                    V::NotSet => py.None().into_bound(py),
                    V::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
                    V::Integer(i) => i.into_pyobject(py)?.into_any(),
                    V::Double(d) => d.into_pyobject(py)?.into_any(),
                    V::String(s) => s.into_pyobject(py)?.into_any(),
                    V::ByteArray(b) => pyo3::types::PyBytes::new(py, &b).into_any(),
                    V::BoolArray(v) => v.into_pyobject(py)?.into_any(),
                    V::IntegerArray(v) => v.into_pyobject(py)?.into_any(),
                    V::DoubleArray(v) => v.into_pyobject(py)?.into_any(),
                    V::StringArray(v) => v.into_pyobject(py)?.into_any(),
                };
                Ok((name, value))
            })
            .collect()
    }

    fn default_group(&self) -> PyGroup {
        PyGroup {
            group: self.node.default_callback_group().clone(),
        }
    }

    fn create_group(&self, name: &str, reentrant: bool) -> PyGroup {
        let kind = if reentrant {
            GroupKind::Reentrant
        } else {
            GroupKind::MutuallyExclusive
        };
        PyGroup {
            group: self.node.create_callback_group(name, kind),
        }
    }

    #[pyo3(signature = (msg_type, topic, depth, transient_local = false, group = None))]
    fn create_publisher(
        &self,
        msg_type: &Bound<'_, PyAny>,
        topic: &str,
        depth: usize,
        transient_local: bool,
        group: Option<PyRef<'_, PyGroup>>,
    ) -> PyResult<PyPublisher> {
        let kind = message_kind_of(msg_type)?;
        let node = self.in_group(group.as_deref())?;
        let inner = (kind.publisher)(&node, topic, qos(depth, transient_local), msg_type)?;
        Ok(PyPublisher { inner })
    }

    #[pyo3(signature = (msg_type, topic, callback, depth, transient_local = false, group = None, is_async = false))]
    #[allow(clippy::too_many_arguments)]
    fn create_subscription(
        &self,
        msg_type: &Bound<'_, PyAny>,
        topic: &str,
        callback: PyObject,
        depth: usize,
        transient_local: bool,
        group: Option<PyRef<'_, PyGroup>>,
        is_async: bool,
    ) -> PyResult<PySubscription> {
        let kind = message_kind_of(msg_type)?;
        let node = self.in_group(group.as_deref())?;
        let name = python_name(callback.bind(msg_type.py()));
        let handler = Handler {
            callable: Arc::new(callback),
            class: msg_type.clone().unbind(),
            is_async,
            env: self.env.clone(),
        };
        let (inner, handle) =
            (kind.subscription)(&node, topic, qos(depth, transient_local), handler)?;
        kairos::trace::tp::rclcpp_callback_register(handle, &name);
        Ok(PySubscription {
            _inner: Mutex::new(Some(inner)),
        })
    }

    #[pyo3(signature = (period, callback, group = None, is_async = false, clock = None))]
    fn create_timer(
        &self,
        period: &Bound<'_, PyAny>,
        callback: PyObject,
        group: Option<PyRef<'_, PyGroup>>,
        is_async: bool,
        clock: Option<PyRef<'_, PyClock>>,
    ) -> PyResult<PyTimer> {
        let name = python_name(callback.bind(period.py()));
        let period = duration_arg(period)?;
        let node = self.in_group(group.as_deref())?;
        let callable: Callable = Arc::new(callback);
        let env = self.env.clone();
        let scheduled = Arc::new(AtomicI64::new(0));
        let due = scheduled.clone();
        let timer = if is_async {
            node.create_timer_async(period, move |tick| {
                due.store(tick.scheduled.nanos(), Ordering::Relaxed);
                let callable = callable.clone();
                CoroutineTask::new(env, Box::new(move |py| callable.call0(py)))
            })
        } else if let Some(clock) = clock {
            node.create_timer_on(clock.clock.clone(), period, move |tick| {
                due.store(tick.scheduled.nanos(), Ordering::Relaxed);
                call0(&env, &callable)
            })
        } else {
            node.create_timer(period, move |tick| {
                due.store(tick.scheduled.nanos(), Ordering::Relaxed);
                call0(&env, &callable)
            })
        }
        .map_err(graph_error)?;
        kairos::trace::tp::rclcpp_callback_register(timer.callback_handle(), &name);
        Ok(PyTimer { timer, scheduled })
    }

    #[pyo3(signature = (srv_type, name, callback, group = None, is_async = false))]
    fn create_service(
        &self,
        srv_type: &Bound<'_, PyAny>,
        name: &str,
        callback: PyObject,
        group: Option<PyRef<'_, PyGroup>>,
        is_async: bool,
    ) -> PyResult<PyService> {
        let kind = service_kind_of(srv_type)?;
        let node = self.in_group(group.as_deref())?;
        let callback_name = python_name(callback.bind(srv_type.py()));
        let handler = ServiceHandler {
            callable: Arc::new(callback),
            request: srv_type.getattr("Request")?.unbind(),
            response: Arc::new(srv_type.getattr("Response")?.unbind()),
            is_async,
            env: self.env.clone(),
        };
        let (inner, handle) = (kind.service)(&node, name, handler)?;
        kairos::trace::tp::rclcpp_callback_register(handle, &callback_name);
        Ok(PyService {
            _inner: Mutex::new(Some(inner)),
        })
    }

    #[pyo3(signature = (srv_type, name, group = None))]
    fn create_client(
        &self,
        srv_type: &Bound<'_, PyAny>,
        name: &str,
        group: Option<PyRef<'_, PyGroup>>,
    ) -> PyResult<PyClient> {
        let kind = service_kind_of(srv_type)?;
        let node = self.in_group(group.as_deref())?;
        Ok(PyClient {
            inner: (kind.client)(&node, name, srv_type)?,
        })
    }

    /// The node's clock (system time, or simulation time under `use_sim_time`).
    fn clock(&self) -> PyClock {
        PyClock {
            clock: self.node.clock(),
        }
    }

    fn set_use_sim_time(&self, on: bool) -> PyResult<()> {
        self.node.set_use_sim_time(on).map_err(graph_error)
    }
}

/// A subscription callback and what it needs to build the Python message.
pub(crate) struct Handler {
    callable: Callable,
    class: PyObject,
    is_async: bool,
    env: Arc<CallbackEnv>,
}

/// A service callback: `callback(request, response) -> response`, as rclpy; with
/// `is_async`, an `async def` whose return value is the response.
pub(crate) struct ServiceHandler {
    callable: Callable,
    request: PyObject,
    response: Arc<PyObject>,
    is_async: bool,
    env: Arc<CallbackEnv>,
}

/// A Rust entity whose handle keeps it alive; dropping it removes the entity.
type Entity = Box<dyn Any + Send + Sync>;

pub(crate) type MakePublisher =
    fn(&Node, &str, Qos, &Bound<'_, PyAny>) -> PyResult<Box<dyn DynPublisher>>;
/// An entity and its callback's trace handle.
pub(crate) type Made = (Entity, u64);
pub(crate) type MakeSubscription = fn(&Node, &str, Qos, Handler) -> PyResult<Made>;
pub(crate) type MakeService = fn(&Node, &str, ServiceHandler) -> PyResult<Made>;
pub(crate) type MakeClient = fn(&Node, &str, &Bound<'_, PyAny>) -> PyResult<Box<dyn DynClient>>;

pub(crate) trait DynPublisher: Send + Sync {
    fn publish(&self, message: &Bound<'_, PyAny>) -> PyResult<usize>;
    fn topic(&self) -> &str;
    fn subscription_count(&self) -> usize;
}

/// A publisher and the layout of the class it takes.
struct TypedPublisher<T> {
    publisher: Publisher<T>,
    layout: Arc<Layout>,
}

impl<T: Message> DynPublisher for TypedPublisher<T> {
    fn publish(&self, message: &Bound<'_, PyAny>) -> PyResult<usize> {
        let message = from_py::<T>(message, &self.layout)?;
        Ok(self.publisher.publish(message))
    }

    fn topic(&self) -> &str {
        self.publisher.topic()
    }

    fn subscription_count(&self) -> usize {
        self.publisher.subscription_count()
    }
}

pub(crate) fn make_publisher<T: Message>(
    node: &Node,
    topic: &str,
    qos: Qos,
    class: &Bound<'_, PyAny>,
) -> PyResult<Box<dyn DynPublisher>> {
    let layout = layout_of::<T>(class)?;
    let publisher = node
        .create_publisher::<T>(topic, qos)
        .map_err(graph_error)?;
    Ok(Box::new(TypedPublisher { publisher, layout }))
}

pub(crate) fn make_subscription<T: Message>(
    node: &Node,
    topic: &str,
    qos: Qos,
    handler: Handler,
) -> PyResult<Made> {
    let Handler {
        callable,
        class,
        is_async,
        env,
    } = handler;
    let layout = Python::with_gil(|py| layout_of::<T>(class.bind(py)))?;
    let subscription = if is_async {
        node.create_subscription_async(topic, qos, move |message: Arc<T>| {
            let (callable, layout) = (callable.clone(), layout.clone());
            CoroutineTask::new(
                env,
                Box::new(move |py| {
                    let message = to_py::<T>(py, &*message, &layout)?;
                    callable.call1(py, (message,))
                }),
            )
        })
    } else {
        node.create_subscription(topic, qos, move |message: &T| {
            Python::with_gil(|py| {
                let called = to_py::<T>(py, message, &layout)
                    .and_then(|message| callable.call1(py, (message,)));
                if let Err(err) = called {
                    env.report(py, err);
                }
            })
        })
    }
    .map_err(graph_error)?;
    let handle = subscription.callback_handle();
    Ok((Box::new(subscription), handle))
}

pub(crate) fn make_service<Req: Message, Resp: Message>(
    node: &Node,
    name: &str,
    handler: ServiceHandler,
) -> PyResult<Made> {
    let ServiceHandler {
        callable,
        request,
        response,
        is_async,
        env,
    } = handler;
    let (request, response_layout) = Python::with_gil(|py| {
        PyResult::Ok((
            layout_of::<Req>(request.bind(py))?,
            layout_of::<Resp>(response.bind(py))?,
        ))
    })?;
    // The Python request and a fresh response, as the callback's arguments.
    let arguments = {
        let response = response.clone();
        move |py: Python<'_>, req: &Req| {
            let req = to_py(py, req, &request)?;
            let resp = response.bind(py).call0()?.unbind();
            PyResult::Ok((req, resp))
        }
    };
    // What the callback returned, as the Rust response; an exception is reported to the
    // executor and becomes the caller's `CallError::ServicePanicked`, with its message.
    let answer = move |py: Python<'_>, env: &CallbackEnv, out: PyResult<PyObject>| -> Resp {
        match out.and_then(|out| from_py::<Resp>(out.bind(py), &response_layout)) {
            Ok(resp) => resp,
            Err(err) => {
                let message = err.to_string();
                env.report(py, err);
                std::panic::panic_any(format!("the Python service raised {message}"))
            }
        }
    };
    let service = if is_async {
        let (arguments, answer) = (Arc::new(arguments), Arc::new(answer));
        node.create_service_async(name, move |req: Req| {
            let slot: ResultSlot = Arc::default();
            let (callable, arguments) = (callable.clone(), arguments.clone());
            let task = CoroutineTask::new(
                env.clone(),
                Box::new(move |py| {
                    let (req, resp) = arguments(py, &req)?;
                    callable.call1(py, (req, resp))
                }),
            )
            .keeping_result(slot.clone());
            let (env, answer) = (env.clone(), answer.clone());
            async move {
                task.await;
                Python::with_gil(|py| {
                    let out = slot.lock().take().unwrap_or_else(|| {
                        Err(PyRuntimeError::new_err(
                            "the coroutine ended without a result",
                        ))
                    });
                    answer(py, &env, out)
                })
            }
        })
    } else {
        node.create_service(name, move |req: Req| -> Resp {
            Python::with_gil(|py| {
                let out = arguments(py, &req).and_then(|args| callable.call1(py, args));
                answer(py, &env, out)
            })
        })
    }
    .map_err(graph_error)?;
    let handle = service.callback_handle();
    Ok((Box::new(service), handle))
}

pub(crate) trait DynClient: Send + Sync {
    fn call(
        &self,
        py: Python<'_>,
        request: &Bound<'_, PyAny>,
        timeout: kairos::time::Duration,
    ) -> PyResult<PyObject>;
    fn call_async(&self, request: &Bound<'_, PyAny>) -> PyResult<PyFuture>;
    fn wait_for_service(&self, py: Python<'_>, timeout: kairos::time::Duration) -> bool;
    fn service_is_ready(&self) -> bool;
    fn service(&self) -> &str;
}

struct TypedClient<Req: Message, Resp: Message> {
    client: Client<fn(Req) -> Resp>,
    request: Arc<Layout>,
    response: Arc<Layout>,
}

impl<Req: Message, Resp: Message> DynClient for TypedClient<Req, Resp> {
    fn call(
        &self,
        py: Python<'_>,
        request: &Bound<'_, PyAny>,
        timeout: kairos::time::Duration,
    ) -> PyResult<PyObject> {
        let request: Req = from_py(request, &self.request)?;
        let result = py.allow_threads(|| self.client.call(request, timeout));
        match result {
            Ok(response) => to_py(py, &response, &self.response),
            Err(err) => Err(call_error(err)),
        }
    }

    fn call_async(&self, request: &Bound<'_, PyAny>) -> PyResult<PyFuture> {
        let request: Req = from_py(request, &self.request)?;
        Ok(PyFuture::from_source(Box::new(ResponseSource {
            future: self.client.call_async(request),
            layout: self.response.clone(),
        })))
    }

    fn wait_for_service(&self, py: Python<'_>, timeout: kairos::time::Duration) -> bool {
        py.allow_threads(|| self.client.wait_for_service(timeout))
    }

    fn service_is_ready(&self) -> bool {
        self.client.service_is_ready()
    }

    fn service(&self) -> &str {
        self.client.service()
    }
}

pub(crate) fn make_client<Req: Message, Resp: Message>(
    node: &Node,
    name: &str,
    srv_type: &Bound<'_, PyAny>,
) -> PyResult<Box<dyn DynClient>> {
    let request = layout_of::<Req>(&srv_type.getattr("Request")?)?;
    let response = layout_of::<Resp>(&srv_type.getattr("Response")?)?;
    let client = node
        .create_client::<fn(Req) -> Resp>(name)
        .map_err(graph_error)?;
    Ok(Box::new(TypedClient {
        client,
        request,
        response,
    }))
}

#[pyclass(name = "Publisher", module = "kairos", frozen)]
pub struct PyPublisher {
    inner: Box<dyn DynPublisher>,
}

impl fmt::Debug for PyPublisher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Publisher")
            .field("topic", &self.inner.topic())
            .finish()
    }
}

#[pymethods]
impl PyPublisher {
    /// Publishes `msg`; returns how many subscriptions in this process took it.
    fn publish(&self, msg: &Bound<'_, PyAny>) -> PyResult<usize> {
        self.inner.publish(msg)
    }

    #[getter]
    fn topic_name(&self) -> &str {
        self.inner.topic()
    }

    fn get_subscription_count(&self) -> usize {
        self.inner.subscription_count()
    }
}

#[pyclass(name = "Subscription", module = "kairos", frozen)]
pub struct PySubscription {
    _inner: Mutex<Option<Entity>>,
}

impl fmt::Debug for PySubscription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Subscription")
    }
}

#[pymethods]
impl PySubscription {
    /// Removes the subscription from its node, topic and executor.
    fn destroy(&self) {
        self._inner.lock().take();
    }
}

#[pyclass(name = "Service", module = "kairos", frozen)]
pub struct PyService {
    _inner: Mutex<Option<Entity>>,
}

impl fmt::Debug for PyService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Service")
    }
}

#[pymethods]
impl PyService {
    fn destroy(&self) {
        self._inner.lock().take();
    }
}

#[pyclass(name = "Timer", module = "kairos", frozen)]
#[derive(Debug)]
pub struct PyTimer {
    timer: CallbackTimer,
    /// The deadline of the tick running (or run last), in the timer clock's nanoseconds.
    scheduled: Arc<AtomicI64>,
}

#[pymethods]
impl PyTimer {
    fn cancel(&self) {
        self.timer.cancel();
    }

    fn reset(&self) {
        self.timer.reset();
    }

    fn is_canceled(&self) -> bool {
        self.timer.is_cancelled()
    }

    #[getter]
    fn timer_period_ns(&self) -> i64 {
        self.timer.period().as_nanos()
    }

    /// How many times the callback ran; missed periods are counted apart.
    #[getter]
    fn fired_count(&self) -> u64 {
        self.timer.fired_count()
    }

    #[getter]
    fn missed_count(&self) -> u64 {
        self.timer.missed_count()
    }

    /// kairos only: the deadline the running (or last) tick was due at, in nanoseconds of
    /// the timer's clock (0 before the first tick); its lateness is `clock.now()` minus it.
    #[getter]
    fn scheduled_ns(&self) -> i64 {
        self.scheduled.load(Ordering::Relaxed)
    }
}

#[pyclass(name = "Client", module = "kairos", frozen)]
pub struct PyClient {
    inner: Box<dyn DynClient>,
}

impl fmt::Debug for PyClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("service", &self.inner.service())
            .finish()
    }
}

#[pymethods]
impl PyClient {
    /// Sends `request` and blocks (without the GIL) until the response; raises
    /// `WouldDeadlock` at once when it could never come, `TimeoutError` after `timeout_sec`.
    #[pyo3(signature = (request, timeout_sec = None))]
    fn call(
        &self,
        py: Python<'_>,
        request: &Bound<'_, PyAny>,
        timeout_sec: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyObject> {
        let timeout = match timeout_sec {
            Some(t) if !t.is_none() => duration_arg(t)?,
            _ => FOREVER,
        };
        self.inner.call(py, request, timeout)
    }

    /// Sends `request`; the response arrives in the returned future.
    fn call_async(&self, request: &Bound<'_, PyAny>) -> PyResult<PyFuture> {
        self.inner.call_async(request)
    }

    /// Waits (without the GIL) until a server exists; false after `timeout_sec`.
    #[pyo3(signature = (timeout_sec = None))]
    fn wait_for_service(
        &self,
        py: Python<'_>,
        timeout_sec: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        let timeout = match timeout_sec {
            Some(t) if !t.is_none() => duration_arg(t)?,
            _ => FOREVER,
        };
        Ok(self.inner.wait_for_service(py, timeout))
    }

    fn service_is_ready(&self) -> bool {
        self.inner.service_is_ready()
    }

    #[getter]
    fn srv_name(&self) -> &str {
        self.inner.service()
    }
}
