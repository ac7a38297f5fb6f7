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
//! Ground rules: a node's `CallbackEnv` (`env.rs`) is shared by its callbacks; the
//! entities behind them are made per message type in `typed.rs`.

use crate::action_client::PyActionClient;
use crate::action_server::{PyActionServer, ServerCallbacks};
use crate::env::{CallbackEnv, FOREVER};
use crate::errors::graph_error;
use crate::future::{CoroutineTask, PyFuture};
use crate::msg::{action_kind_of, message_kind_of, service_kind_of};
use crate::qos_status::QosEventSource;
use crate::time::{PyClock, duration_arg};
use crate::typed::{Callable, DynClient, DynPublisher, Entity, Handler, ServiceHandler};
use kairos::exec::{CallbackGroup, CallbackTimer, GroupKind, GuardCondition};
use kairos::graph::{
    IntrospectionState, NameKind, Node, NodeOptions, Qos, RosArgs, SimStall, SubscriptionEvents,
};
use kairos::time::StallPolicy;
use parking_lot::{Mutex, RwLock};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

mod entities;

pub use entities::{PyClient, PyGuardCondition, PyPublisher, PyService, PySubscription, PyTimer};

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
    /// A number no other group of this process has (`ReadyCallback.group_id`).
    #[getter]
    fn id(&self) -> u64 {
        self.group.id()
    }

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
    /// `~/get_type_description`, while served.
    type_description: Mutex<Option<kairos_zenoh::type_description::TypeDescriptionService>>,
}

impl NodeCore {
    fn in_group(&self, group: Option<&PyGroup>) -> PyResult<Node> {
        match group {
            None => Ok(self.node.clone()),
            Some(g) => self.node.with_group(&g.group).map_err(graph_error),
        }
    }
}

/// The kairos QoS of an rclpy profile's history, durability and reliability. A KEEP_ALL
/// history is bounded by `depth` (kairos allocates a queue's slots up front; a full one
/// counts its drops), or by [`KEEP_ALL_BOUND`] when the profile's depth is 0.
fn qos(depth: usize, transient_local: bool, keep_all: bool, best_effort: bool) -> Qos {
    let mut qos = if keep_all {
        Qos::keep_all(if depth == 0 { KEEP_ALL_BOUND } else { depth })
    } else {
        Qos::keep_last(depth)
    };
    if transient_local {
        qos = qos.transient_local();
    }
    if best_effort {
        qos = qos.best_effort();
    }
    qos
}

/// The QoS of an rclpy `QoSProfile` (or a depth), as `kairos.qos._qos_args` reads it.
pub(crate) fn qos_of_profile(profile: &Bound<'_, PyAny>) -> PyResult<Qos> {
    let args = profile
        .py()
        .import("kairos.qos")?
        .getattr("_qos_args")?
        .call1((profile,))?;
    let item = |key: &str| -> PyResult<Option<Bound<'_, PyAny>>> {
        args.get_item(key).map(Some).or_else(|e| {
            if e.is_instance_of::<pyo3::exceptions::PyKeyError>(profile.py()) {
                Ok(None)
            } else {
                Err(e)
            }
        })
    };
    let flag = |key: &str| -> PyResult<bool> {
        item(key)?.map_or(Ok(false), |value| value.extract::<bool>())
    };
    let depth: usize = item("depth")?.map_or(Ok(10), |d| d.extract())?;
    let timing: Timing = item("timing")?.map_or(Ok(Timing::default()), |t| t.extract())?;
    Ok(timing.apply(qos(
        depth,
        flag("transient_local")?,
        flag("keep_all")?,
        flag("best_effort")?,
    )))
}

/// An rclpy profile's deadline, lifespan and liveliness, in ns (0: rclpy's "default",
/// infinite), added to `qos`.
#[derive(Debug, Clone, Copy, Default, FromPyObject)]
#[pyo3(from_item_all)]
struct Timing {
    deadline_ns: i64,
    lifespan_ns: i64,
    manual_liveliness: bool,
    lease_ns: i64,
}

impl Timing {
    fn apply(self, mut qos: Qos) -> Qos {
        let duration = |ns: i64| (ns != 0).then(|| kairos::time::Duration::from_nanos(ns));
        qos.deadline = duration(self.deadline_ns);
        qos.lifespan = duration(self.lifespan_ns);
        qos.liveliness = if self.manual_liveliness {
            kairos::graph::Liveliness::ManualByTopic
        } else {
            kairos::graph::Liveliness::Automatic
        };
        qos.liveliness_lease = duration(self.lease_ns);
        qos
    }
}

/// The bound of a KEEP_ALL history whose profile gives no depth.
const KEEP_ALL_BOUND: usize = 1000;

#[pymethods]
impl NodeCore {
    /// `sim_stall_policy` (`"wait"`, `"fallback_to_steady"` or `"fail"`) and
    /// `sim_stall_timeout_sec` choose what the node's waits on simulation time do when
    /// `/clock` falls silent (kairos's `NodeOptions::sim_stall`); none: the context's.
    /// `cli_args` are the node's own ROS arguments (rclpy's `cli_args`);
    /// `context_args` the command line its Python context was initialised with, which
    /// replaces the process's (`init(args=...)`); `use_global_arguments=False` drops both
    /// the context's and the process's. `enable_rosout=False` keeps the node's lines off
    /// `/rosout`.
    #[new]
    #[pyo3(signature = (name, namespace = "/", use_sim_time = false, sim_stall_policy = None, sim_stall_timeout_sec = 1.0, cli_args = None, context_args = None, use_global_arguments = true, enable_rosout = true))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        name: &str,
        namespace: &str,
        use_sim_time: bool,
        sim_stall_policy: Option<&str>,
        sim_stall_timeout_sec: f64,
        cli_args: Option<Vec<String>>,
        context_args: Option<Vec<String>>,
        use_global_arguments: bool,
        enable_rosout: bool,
    ) -> PyResult<Self> {
        crate::session::init_transport()?;
        let parse = |args: Vec<String>| -> PyResult<RosArgs> {
            RosArgs::parse(args).map(|(ros, _rest)| ros).map_err(|e| {
                pyo3::exceptions::PyValueError::new_err(format!(
                    "Failed to parse ROS arguments: {e}"
                ))
            })
        };
        let mut own = match cli_args {
            Some(args) => parse(args)?,
            None => RosArgs::default(),
        };
        let mut global_args = use_global_arguments;
        if let (true, Some(args)) = (use_global_arguments, context_args) {
            own = parse(args)?.followed_by(&own);
            global_args = false;
        }
        let mut options = NodeOptions::new()
            .namespace(namespace)
            .use_sim_time(use_sim_time)
            .use_global_arguments(global_args)
            .arguments(own)
            .enable_rosout(enable_rosout);
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
            type_description: Mutex::new(None),
        })
    }

    /// Serves `~/get_type_description` (rclpy's `start_type_description_service`) from
    /// the types this process carries across processes; `False` when it is not on Zenoh
    /// (no other process could ask).
    fn start_type_description_service(&self) -> PyResult<bool> {
        let Some(transport) = crate::session::transport() else {
            return Ok(false);
        };
        let mut served = self.type_description.lock();
        if served.is_none() {
            *served = Some(
                kairos_zenoh::type_description::serve(&self.node, transport.types())
                    .map_err(graph_error)?,
            );
        }
        Ok(true)
    }

    /// Stops serving `~/get_type_description` (the node is destroyed).
    fn stop_type_description_service(&self) {
        self.type_description.lock().take();
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
        let severity = crate::severity(severity);
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
            .ros_args()
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

    /// A topic (`kind="topic"`) or service name resolved against this node, then
    /// remapped by its ROS arguments unless `only_expand`.
    #[pyo3(signature = (kind, name, only_expand = false))]
    fn resolve_name(&self, kind: &str, name: &str, only_expand: bool) -> PyResult<String> {
        let kind = match kind {
            "topic" => NameKind::Topic,
            "service" => NameKind::Service,
            other => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "unknown name kind '{other}': 'topic' or 'service'"
                )));
            }
        };
        if only_expand {
            kairos::graph::resolve(kind, name, self.node.namespace(), self.node.name())
                .map_err(|e| graph_error(e.into()))
        } else {
            self.node.resolve_name(kind, name).map_err(graph_error)
        }
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

    #[pyo3(signature = (msg_type, topic, depth, transient_local = false, group = None, keep_all = false, best_effort = false, timing = None, events = Vec::new()))]
    #[allow(clippy::too_many_arguments)]
    fn create_publisher(
        &self,
        msg_type: &Bound<'_, PyAny>,
        topic: &str,
        depth: usize,
        transient_local: bool,
        group: Option<PyRef<'_, PyGroup>>,
        keep_all: bool,
        best_effort: bool,
        timing: Option<Timing>,
        events: Vec<(String, PyObject)>,
    ) -> PyResult<PyPublisher> {
        let kind = message_kind_of(msg_type)?;
        let node = self.in_group(group.as_deref())?;
        let qos =
            timing
                .unwrap_or_default()
                .apply(qos(depth, transient_local, keep_all, best_effort));
        let events = events.into_iter().map(|(n, c)| (n, Arc::new(c))).collect();
        let inner = (kind.publisher)(&node, topic, qos, msg_type, (self.env.clone(), events))?;
        Ok(PyPublisher {
            topic: inner.topic().to_owned(),
            inner: RwLock::new(Some(inner)),
        })
    }

    #[pyo3(signature = (msg_type, topic, callback, depth, transient_local = false, group = None, is_async = false, keep_all = false, best_effort = false, timing = None, events = Vec::new()))]
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
        keep_all: bool,
        best_effort: bool,
        timing: Option<Timing>,
        events: Vec<(String, PyObject)>,
    ) -> PyResult<PySubscription> {
        let kind = message_kind_of(msg_type)?;
        let node = self.in_group(group.as_deref())?;
        let name = python_name(callback.bind(msg_type.py()));
        let handler = Handler {
            callable: Arc::new(callback),
            class: msg_type.clone().unbind(),
            is_async,
            env: self.env.clone(),
            events: events.into_iter().map(|(n, c)| (n, Arc::new(c))).collect(),
        };
        let qos =
            timing
                .unwrap_or_default()
                .apply(qos(depth, transient_local, keep_all, best_effort));
        let (inner, handle, events, completer) = (kind.subscription)(&node, topic, qos, handler)?;
        kairos::trace::tp::rclcpp_callback_register(handle, &name);
        Ok(PySubscription {
            topic: node
                .resolve_name(NameKind::Topic, topic)
                .map_err(graph_error)?,
            _inner: Mutex::new(Some(inner)),
            events: Mutex::new(Some(events)),
            graph: node.context().clone(),
            completer,
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
        Ok(PyTimer {
            timer,
            destroyed: AtomicBool::new(false),
            scheduled,
        })
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
            service: node
                .resolve_name(NameKind::Service, name)
                .map_err(graph_error)?,
            inner: Mutex::new(Some(inner)),
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
            destroyed: AtomicBool::new(false),
        })
    }

    /// A client of action `action` (an action class) named `name`, in `group`:
    /// kairos-action's client (see `action_client.rs`).
    #[pyo3(signature = (action, name, group = None))]
    fn create_action_client(
        &self,
        action: &Bound<'_, PyAny>,
        name: &str,
        group: Option<PyRef<'_, PyGroup>>,
    ) -> PyResult<PyActionClient> {
        let kind = action_kind_of(action)?;
        let node = self.in_group(group.as_deref())?;
        let client = (kind.client)(&node, name, action, self.env.clone())?;
        Ok(PyActionClient {
            inner: Mutex::new(Some(client.into())),
        })
    }

    /// Serves action `action` (an action class) as `name`, in `group`: kairos-action's
    /// server, asking `decide_goal(goal)` and `decide_cancel(goal_id)` (either may be
    /// `async def`) and handing each accepted goal to `accepted` (see `action_server.rs`).
    #[pyo3(signature = (action, name, result_timeout, decide_goal, decide_cancel, accepted, group = None))]
    #[allow(clippy::too_many_arguments)]
    fn create_action_server(
        &self,
        action: &Bound<'_, PyAny>,
        name: &str,
        result_timeout: f64,
        decide_goal: PyObject,
        decide_cancel: PyObject,
        accepted: PyObject,
        group: Option<PyRef<'_, PyGroup>>,
    ) -> PyResult<PyActionServer> {
        let kind = action_kind_of(action)?;
        if !(result_timeout.is_finite() && result_timeout >= 0.0) {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "result_timeout is the seconds an ended goal's result is kept, 0 or more, \
                 not {result_timeout}"
            )));
        }
        let node = self.in_group(group.as_deref())?;
        let callbacks = ServerCallbacks {
            decide_goal: Arc::new(decide_goal),
            decide_cancel: Arc::new(decide_cancel),
            accepted: Arc::new(accepted),
            action: action.clone().unbind(),
            env: self.env.clone(),
        };
        let timeout = kairos::time::Duration::from_secs_f64(result_timeout);
        Ok(PyActionServer {
            inner: Mutex::new(Some((kind.server)(&node, name, timeout, callbacks)?)),
        })
    }

    /// A guard condition: `callback` runs on the executor, in `group`, once per
    /// `trigger()`. With `is_async` it may return a coroutine, which the executor then
    /// drives to its end holding the group (what the action server runs goals with).
    #[pyo3(signature = (callback, group = None, is_async = false))]
    fn create_guard_condition(
        &self,
        py: Python<'_>,
        callback: PyObject,
        group: Option<PyRef<'_, PyGroup>>,
        is_async: bool,
    ) -> PyResult<PyGuardCondition> {
        let name = python_name(callback.bind(py));
        let node = self.in_group(group.as_deref())?;
        let callable: Callable = Arc::new(callback);
        let env = self.env.clone();
        let guard = if is_async {
            node.create_guard_condition_async(&name, move || {
                let callable = callable.clone();
                CoroutineTask::new(env.clone(), Box::new(move |py| callable.call0(py)))
            })
        } else {
            node.create_guard_condition(&name, move || call0(&env, &callable))
        };
        Ok(PyGuardCondition {
            guard: Mutex::new(Some(guard)),
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

/// Why `args` (a program's command line) has ROS arguments kairos cannot read, as
/// `(kind, detail)`: `("unknown", flag)` for an argument ROS 2 does not define (rclpy's
/// `UnknownROSArgsError`), `("invalid", message)` for any other fault; `None` when they
/// read.
#[pyfunction]
pub(crate) fn ros_args_error(args: Vec<String>) -> Option<(&'static str, String)> {
    match RosArgs::parse(args) {
        Ok(_) => None,
        Err(kairos::graph::RosArgsError::UnknownFlag { flag }) => Some(("unknown", flag)),
        Err(e) => Some(("invalid", e.to_string())),
    }
}
