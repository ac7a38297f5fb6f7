//! The entities a node makes, as Python sees them: each with rclpy's lifetime shape
//! (`destroy`, `with entity:`, a `handle` that raises `InvalidHandle` once destroyed).

use super::*;

/// What an entity's `handle` gives: `with entity.handle:` (rclpy's shape) does nothing
/// while the entity lives; once it is destroyed, reading `handle` raises `InvalidHandle`.
#[pyclass(name = "EntityHandle", module = "kairos._kairos", frozen)]
#[derive(Debug)]
pub struct PyEntityHandle {
    /// A publisher's or subscription's QoS events, for rcl's event handles.
    pub(super) events: Option<QosEventSource>,
}

#[pymethods]
impl PyEntityHandle {
    /// `publisher` or `subscription` (the entities with QoS events), else `None`.
    fn qos_event_kind(&self) -> Option<&'static str> {
        self.events.as_ref().map(QosEventSource::kind)
    }

    /// The status of QoS event `event` now (see `qos_status`).
    fn qos_event_status(&self, event: &str) -> PyResult<(u64, u64, &'static str)> {
        match &self.events {
            Some(events) => events.status(event),
            None => Err(pyo3::exceptions::PyTypeError::new_err(
                "only a publisher or a subscription has QoS events",
            )),
        }
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, _exc: &Bound<'_, PyTuple>) -> bool {
        false
    }
}

pub(super) fn entity_handle(
    py: Python<'_>,
    alive: bool,
    what: &str,
    events: Option<QosEventSource>,
) -> PyResult<PyEntityHandle> {
    if alive {
        return Ok(PyEntityHandle { events });
    }
    let invalid = py.import("kairos.exceptions")?.getattr("InvalidHandle")?;
    Err(PyErr::from_value(
        invalid.call1((format!("the {what} was destroyed"),))?,
    ))
}

/// rclpy's lifetime shape for an entity class with `is_alive` and `destroy`: `handle`
/// (`with entity.handle:`, `InvalidHandle` once destroyed), and `with` destroys it.
macro_rules! entity_lifetime {
    ($class:ty, $what:literal) => {
        #[pymethods]
        impl $class {
            /// rclpy's handle: `with entity.handle:`; `InvalidHandle` once destroyed.
            #[getter]
            fn handle(&self, py: Python<'_>) -> PyResult<PyEntityHandle> {
                entity_handle(py, self.is_alive(), $what, self.qos_event_source())
            }

            fn __enter__(slf: Py<Self>) -> Py<Self> {
                slf
            }

            /// Leaving `with node.create_...(...) as entity:` destroys it, as in rclpy.
            #[pyo3(signature = (*_exc))]
            fn __exit__(&self, _exc: &Bound<'_, PyTuple>) -> bool {
                self.destroy();
                false
            }
        }
    };
}

#[pyclass(name = "Publisher", module = "kairos", frozen, weakref, dict)]
pub struct PyPublisher {
    /// None once destroyed.
    pub(super) inner: RwLock<Option<Box<dyn DynPublisher>>>,
    pub(super) topic: String,
}

impl fmt::Debug for PyPublisher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Publisher")
            .field("topic", &self.topic)
            .finish()
    }
}

#[pymethods]
impl PyPublisher {
    /// Publishes `msg`; returns how many subscriptions in this process took it. A
    /// destroyed publisher raises `RuntimeError`, as rclpy's raises `InvalidHandle`.
    fn publish(&self, msg: &Bound<'_, PyAny>) -> PyResult<usize> {
        match &*self.inner.read() {
            Some(publisher) => publisher.publish(msg),
            None => Err(pyo3::exceptions::PyRuntimeError::new_err(format!(
                "the publisher of '{}' was destroyed",
                self.topic
            ))),
        }
    }

    #[getter]
    fn topic_name(&self) -> &str {
        &self.topic
    }

    fn get_subscription_count(&self) -> usize {
        self.inner
            .read()
            .as_ref()
            .map_or(0, |p| p.subscription_count())
    }

    /// rclpy's `wait_for_all_acked`, with what kairos knows: a publish has handed the
    /// message to every subscription queue of the process and to Zenoh's reliable
    /// transport when it returns, and Zenoh has no end-to-end acknowledgment to wait
    /// for (rmw_zenoh answers the same). True at once; a destroyed publisher raises.
    #[pyo3(signature = (timeout = None))]
    fn wait_for_all_acked(&self, timeout: Option<&Bound<'_, PyAny>>) -> PyResult<bool> {
        if let Some(timeout) = timeout {
            crate::time::duration_arg(timeout)?;
        }
        match &*self.inner.read() {
            Some(_) => Ok(true),
            None => Err(pyo3::exceptions::PyRuntimeError::new_err(format!(
                "the publisher of '{}' was destroyed",
                self.topic
            ))),
        }
    }

    /// Shows the publisher is alive without publishing (manual-by-topic liveliness).
    fn assert_liveliness(&self) {
        if let Some(publisher) = self.inner.read().as_ref() {
            publisher.assert_liveliness();
        }
    }

    /// Removes the publisher from its node and topic (and the graph).
    fn destroy(&self) {
        let taken = self.inner.write().take();
        drop(taken);
    }
}

#[pyclass(name = "Subscription", module = "kairos", frozen, weakref, dict)]
pub struct PySubscription {
    pub(super) _inner: Mutex<Option<Entity>>,
    /// Its QoS events, for rcl's event handles (`None` once destroyed: they hold the node).
    pub(super) events: Mutex<Option<SubscriptionEvents>>,
    pub(super) topic: String,
    /// The graph the subscription's node is in (which does not keep the node alive).
    pub(super) graph: kairos::graph::Context,
    /// What a blocking wait for its messages needs to run (it does not keep it alive).
    pub(crate) completer: kairos::exec::WaitCompleter,
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
        // Dropped after the lock is released: the entity's callback may hold the last
        // reference to a Python object whose `__del__` destroys this entity again.
        let taken = (self._inner.lock().take(), self.events.lock().take());
        drop(taken);
    }

    /// The resolved topic name.
    #[getter]
    fn topic_name(&self) -> &str {
        &self.topic
    }

    /// How many publishers of the topic the graph has now, in this process and beyond.
    fn get_publisher_count(&self) -> usize {
        self.graph
            .graph()
            .count(kairos::graph::EntityKind::Publisher, &self.topic)
    }
}

#[pyclass(name = "Service", module = "kairos", frozen, weakref)]
pub struct PyService {
    pub(super) inner: Mutex<Option<Box<dyn crate::typed::DynService>>>,
    pub(super) service: String,
}

impl fmt::Debug for PyService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Service")
    }
}

#[pymethods]
impl PyService {
    fn destroy(&self) {
        // Dropped after the lock is released: the entity's callback may hold the last
        // reference to a Python object whose `__del__` destroys this entity again.
        let taken = self.inner.lock().take();
        drop(taken);
    }

    /// The resolved service name.
    #[getter]
    fn service_name(&self) -> &str {
        &self.service
    }

    /// rclpy's `Service.configure_introspection`: publishes each request received and
    /// response sent on `<service>/_service_event` (`OFF`, `METADATA` or `CONTENTS`),
    /// stamped by `clock`, with QoS `service_event_qos_profile`.
    fn configure_introspection(
        &self,
        clock: &Bound<'_, PyAny>,
        service_event_qos_profile: &Bound<'_, PyAny>,
        introspection_state: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let (clock, qos, state) =
            introspection_args(clock, service_event_qos_profile, introspection_state)?;
        match &*self.inner.lock() {
            Some(service) => service.configure_introspection(&clock, qos, state),
            None => Err(pyo3::exceptions::PyRuntimeError::new_err(
                "the service has been destroyed",
            )),
        }
    }
}

/// `configure_introspection`'s arguments as rclpy takes them: a `Clock` (or its core), a
/// `QoSProfile` (or a depth) and a `ServiceIntrospectionState` (or its int).
fn introspection_args(
    clock: &Bound<'_, PyAny>,
    qos: &Bound<'_, PyAny>,
    state: &Bound<'_, PyAny>,
) -> PyResult<(kairos::time::Clock, Qos, IntrospectionState)> {
    let core = if clock.is_instance_of::<crate::time::PyClock>() {
        clock.clone()
    } else {
        clock.getattr("_core").map_err(|_| {
            pyo3::exceptions::PyTypeError::new_err(format!(
                "configure_introspection takes an rclpy Clock (node.get_clock()), not {}",
                clock.repr().map(|r| r.to_string()).unwrap_or_default()
            ))
        })?
    };
    let clock = core
        .extract::<PyRef<'_, crate::time::PyClock>>()?
        .clock
        .clone();
    let qos = super::qos_of_profile(qos)?;
    let state = match state
        .call_method0("__int__")
        .and_then(|v| v.extract::<i64>())
    {
        Ok(0) => IntrospectionState::Off,
        Ok(1) => IntrospectionState::Metadata,
        Ok(2) => IntrospectionState::Contents,
        _ => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "introspection_state is a ServiceIntrospectionState (OFF, METADATA or CONTENTS), not {}",
                state.repr().map(|r| r.to_string()).unwrap_or_default()
            )));
        }
    };
    Ok((clock, qos, state))
}

/// rclpy's `GuardCondition`: `trigger()` makes its callback run once on the executor.
#[pyclass(name = "GuardCondition", module = "kairos", frozen, weakref)]
#[derive(Debug)]
pub struct PyGuardCondition {
    pub(super) guard: Mutex<Option<GuardCondition>>,
}

#[pymethods]
impl PyGuardCondition {
    /// Makes the callback run once more; a destroyed guard condition ignores it.
    fn trigger(&self) {
        if let Some(guard) = &*self.guard.lock() {
            guard.trigger();
        }
    }

    /// Removes it from its node and executor; triggers not yet run are dropped.
    fn destroy(&self) {
        // Dropped after the lock is released: the entity's callback may hold the last
        // reference to a Python object whose `__del__` destroys this entity again.
        let taken = self.guard.lock().take();
        drop(taken);
    }
}

#[pyclass(name = "Timer", module = "kairos", frozen, weakref, dict)]
#[derive(Debug)]
pub struct PyTimer {
    pub(super) timer: CallbackTimer,
    pub(super) destroyed: AtomicBool,
    /// The deadline of the tick running (or run last), in the timer clock's nanoseconds.
    pub(super) scheduled: Arc<AtomicI64>,
}

#[pymethods]
impl PyTimer {
    fn cancel(&self) {
        self.timer.cancel();
    }

    /// Cancels the timer for good (`destroy_timer`).
    fn destroy(&self) {
        self.timer.cancel();
        self.destroyed.store(true, Ordering::Relaxed);
    }

    fn reset(&self) {
        self.timer.reset();
    }

    fn is_canceled(&self) -> bool {
        self.timer.is_cancelled()
    }

    /// Nanoseconds of the timer's clock until its next deadline (0 or less: due now);
    /// None while cancelled.
    fn time_until_next_call(&self) -> Option<i64> {
        (!self.timer.is_cancelled()).then(|| self.timer.time_until_trigger().as_nanos())
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

#[pyclass(name = "Client", module = "kairos", frozen, weakref)]
pub struct PyClient {
    pub(super) inner: Box<dyn DynClient>,
    pub(super) destroyed: AtomicBool,
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
    /// rclpy's `Client.configure_introspection`: publishes each request sent and response
    /// received on `<service>/_service_event`, as a service's does.
    fn configure_introspection(
        &self,
        clock: &Bound<'_, PyAny>,
        service_event_qos_profile: &Bound<'_, PyAny>,
        introspection_state: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let (clock, qos, state) =
            introspection_args(clock, service_event_qos_profile, introspection_state)?;
        self.inner.configure_introspection(&clock, qos, state)
    }

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

    /// The service's resolved name (rclpy's `service_name`).
    #[getter]
    fn service_name(&self) -> &str {
        self.inner.service()
    }

    /// Marks the client destroyed (`destroy_client`); its `handle` is invalid from now on,
    /// and it publishes no more introspection events (its event publisher goes).
    fn destroy(&self) {
        self.destroyed.store(true, Ordering::Relaxed);
        // Turning introspection off makes nothing and cannot fail.
        let steady = kairos::time::Clock::steady();
        let off = IntrospectionState::Off;
        let _ = self
            .inner
            .configure_introspection(&steady, Qos::default(), off);
    }
}

impl PyPublisher {
    fn is_alive(&self) -> bool {
        self.inner.read().is_some()
    }

    fn qos_event_source(&self) -> Option<QosEventSource> {
        self.inner
            .read()
            .as_ref()
            .map(|p| QosEventSource::Publisher(p.events()))
    }
}
entity_lifetime!(PyPublisher, "publisher");

impl PySubscription {
    fn is_alive(&self) -> bool {
        self._inner.lock().is_some()
    }

    fn qos_event_source(&self) -> Option<QosEventSource> {
        self.events.lock().clone().map(QosEventSource::Subscription)
    }
}
entity_lifetime!(PySubscription, "subscription");

impl PyService {
    fn is_alive(&self) -> bool {
        self.inner.lock().is_some()
    }

    fn qos_event_source(&self) -> Option<QosEventSource> {
        None
    }
}
entity_lifetime!(PyService, "service");

impl PyGuardCondition {
    fn is_alive(&self) -> bool {
        self.guard.lock().is_some()
    }

    fn qos_event_source(&self) -> Option<QosEventSource> {
        None
    }
}
entity_lifetime!(PyGuardCondition, "guard condition");

impl PyTimer {
    fn is_alive(&self) -> bool {
        !self.destroyed.load(Ordering::Relaxed)
    }

    fn qos_event_source(&self) -> Option<QosEventSource> {
        None
    }
}
entity_lifetime!(PyTimer, "timer");

impl PyClient {
    fn is_alive(&self) -> bool {
        !self.destroyed.load(Ordering::Relaxed)
    }

    fn qos_event_source(&self) -> Option<QosEventSource> {
        None
    }
}
entity_lifetime!(PyClient, "client");
