//! The Rust entities behind Python's, made per message type: each generic function here
//! is the one place a Python publisher, subscription, service or client meets the Rust
//! type of its messages (`msg.rs`'s registry holds them, by ROS type name).

use crate::convert::{Layout, from_py, layout_of, to_py};
use crate::env::CallbackEnv;
use crate::errors::{call_error, graph_error};
use crate::future::{CoroutineTask, PyFuture, ResponseSource, ResultSlot};
use kairos::graph::{
    Client, IntrospectionState, Message, Node, Publisher, PublisherEvents, Qos, QosEventHandler,
    ServiceRequest, SubscriptionEvents,
};
use parking_lot::Mutex;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use std::any::Any;
use std::sync::Arc;

/// A callable kept by a Rust closure: `Arc` so async callbacks can be cloned per call.
pub(crate) type Callable = Arc<PyObject>;

/// A subscription callback and what it needs to build the Python message.
pub(crate) struct Handler {
    pub(crate) callable: Callable,
    pub(crate) class: PyObject,
    pub(crate) is_async: bool,
    pub(crate) env: Arc<CallbackEnv>,
    pub(crate) events: QosCallbacks,
}

/// QoS event callbacks by rclpy's name of the event (`deadline`, `liveliness`,
/// `incompatible_qos`, `incompatible_type`, `message_lost`, `matched`); each is called with the status's numbers (see
/// `kairos/event_handler.py`, which builds rclpy's info objects from them).
pub(crate) type QosCallbacks = Vec<(String, Callable)>;

/// Calls a QoS event callback with `args`, reporting what it raises to the executor.
fn event_call<A>(env: &Arc<CallbackEnv>, callable: &Callable, args: A)
where
    A: for<'py> pyo3::IntoPyObject<'py, Target = pyo3::types::PyTuple>,
{
    Python::with_gil(|py| {
        if let Err(err) = callable.call1(py, args) {
            env.report(py, err);
        }
    });
}

fn unknown_event(name: &str, of: &str) -> PyErr {
    pyo3::exceptions::PyValueError::new_err(format!(
        "a {of} has no QoS event {name:?}; it has {}",
        if of == "publisher" {
            "deadline, liveliness, incompatible_qos, incompatible_type and matched"
        } else {
            "deadline, liveliness, incompatible_qos, incompatible_type, message_lost and matched"
        }
    ))
}

/// rcl's name of a policy that did not match (`INVALID` before any did).
pub(crate) fn policy_name(policy: Option<kairos::graph::QosPolicy>) -> &'static str {
    policy.map_or("INVALID", |p| p.as_str())
}

/// A service callback: `callback(request, response) -> response`, as rclpy; with
/// `is_async`, an `async def` whose return value is the response.
pub(crate) struct ServiceHandler {
    pub(crate) callable: Callable,
    pub(crate) request: PyObject,
    pub(crate) response: Arc<PyObject>,
    pub(crate) is_async: bool,
    pub(crate) env: Arc<CallbackEnv>,
}

/// A Rust entity whose handle keeps it alive; dropping it removes the entity.
pub(crate) type Entity = Box<dyn Any + Send + Sync>;

pub(crate) type MakePublisher = fn(
    &Node,
    &str,
    Qos,
    &Bound<'_, PyAny>,
    (Arc<CallbackEnv>, QosCallbacks),
) -> PyResult<Box<dyn DynPublisher>>;
/// A subscription, its callback's trace handle, its QoS events (for rcl's event
/// handles, see `qos_status`), and what a blocking wait for its messages needs to run
/// (a tf2 buffer's, see `tf2`).
pub(crate) type MadeSubscription = (Entity, u64, SubscriptionEvents, kairos::exec::WaitCompleter);
pub(crate) type MakeSubscription = fn(&Node, &str, Qos, Handler) -> PyResult<MadeSubscription>;
pub(crate) type MakeService = fn(&Node, &str, ServiceHandler) -> PyResult<MadeService>;
/// A service and its callback's trace handle.
pub(crate) type MadeService = (Box<dyn DynService>, u64);

/// A service of any type, as a Python `Service` holds it.
pub(crate) trait DynService: Send + Sync {
    /// rclpy's `Service.configure_introspection`.
    fn configure_introspection(
        &self,
        clock: &kairos::time::Clock,
        qos: Qos,
        state: IntrospectionState,
    ) -> PyResult<()>;
}

impl<Req, Resp> DynService for kairos::graph::Service<Req, Resp>
where
    Req: ServiceRequest<Response = Resp>,
    Resp: Message + Clone,
{
    fn configure_introspection(
        &self,
        clock: &kairos::time::Clock,
        qos: Qos,
        state: IntrospectionState,
    ) -> PyResult<()> {
        kairos::graph::Service::configure_introspection(self, clock, qos, state)
            .map_err(graph_error)
    }
}
pub(crate) type MakeClient = fn(&Node, &str, &Bound<'_, PyAny>) -> PyResult<Box<dyn DynClient>>;

pub(crate) trait DynPublisher: Send + Sync {
    fn publish(&self, message: &Bound<'_, PyAny>) -> PyResult<usize>;
    fn topic(&self) -> &str;
    fn subscription_count(&self) -> usize;
    fn assert_liveliness(&self);
    fn events(&self) -> PublisherEvents;
}

/// A publisher and the layout of the class it takes.
struct TypedPublisher<T> {
    publisher: Publisher<T>,
    layout: Arc<Layout>,
    _events: Vec<QosEventHandler>,
}

impl<T: Message> DynPublisher for TypedPublisher<T> {
    /// A message of the publisher's class, or its serialized form (`bytes`, as
    /// `serialize_message` returns and rclpy's `publish` takes), decoded here so that
    /// subscriptions in the process get the message itself.
    fn publish(&self, message: &Bound<'_, PyAny>) -> PyResult<usize> {
        let py = message.py();
        let message = match message.downcast::<pyo3::types::PyBytes>() {
            Ok(bytes) => kairos_msgs::message::decode::<T>(bytes.as_bytes()).map_err(|e| {
                pyo3::exceptions::PyTypeError::new_err(format!(
                    "the bytes published are not a serialized {}: {e}",
                    T::TYPE_NAME
                ))
            })?,
            Err(_) => from_py::<T>(message, &self.layout)?,
        };
        // A `/clock` publish steps simulated time in this process and waits (lock-step)
        // for what the step woke, threads sleeping on that clock among them; they need
        // the interpreter to run, so that publish waits without holding it. Every other
        // publish keeps it: handing it over per message costs back-to-back Python
        // publishers ~40 % of their throughput (`python -m kairos.bench`).
        if self.publisher.topic() == kairos::graph::CLOCK_TOPIC {
            let publisher = &self.publisher;
            return Ok(py.allow_threads(move || publisher.publish(message)));
        }
        Ok(self.publisher.publish(message))
    }

    fn topic(&self) -> &str {
        self.publisher.topic()
    }

    fn subscription_count(&self) -> usize {
        self.publisher.subscription_count()
    }

    fn assert_liveliness(&self) {
        self.publisher.assert_liveliness();
    }

    fn events(&self) -> PublisherEvents {
        self.publisher.events()
    }
}

/// A matched status as rclpy's `QoS*MatchedInfo` takes it.
fn matched_values(s: kairos::graph::Matched) -> (u64, u64, u64, i64) {
    (
        s.total_count,
        s.total_count_change,
        s.current_count,
        s.current_count_change,
    )
}

/// Registers a publisher's QoS event `callbacks` (not generic: compiled once, not per
/// message type).
fn publisher_events(
    publisher: PublisherEvents,
    env: &Arc<CallbackEnv>,
    callbacks: QosCallbacks,
) -> PyResult<Vec<QosEventHandler>> {
    let mut events = Vec::new();
    for (name, callable) in callbacks {
        let env = env.clone();
        events.push(match name.as_str() {
            "deadline" => publisher.on_deadline_missed(move |s| {
                event_call(&env, &callable, (s.total_count, s.total_count_change))
            }),
            "liveliness" => publisher.on_liveliness_lost(move |s| {
                event_call(&env, &callable, (s.total_count, s.total_count_change))
            }),
            "incompatible_qos" => publisher.on_incompatible_qos(move |s| {
                let policy = policy_name(s.last_policy);
                event_call(
                    &env,
                    &callable,
                    (s.total_count, s.total_count_change, policy),
                )
            }),
            "incompatible_type" => publisher.on_incompatible_type(move |s| {
                event_call(&env, &callable, (s.total_count, s.total_count_change))
            }),
            "matched" => publisher
                .on_publication_matched(move |s| event_call(&env, &callable, matched_values(s))),
            other => return Err(unknown_event(other, "publisher")),
        });
    }
    Ok(events)
}

/// Registers a subscription's QoS event `callbacks` (not generic, as
/// [`publisher_events`]).
fn subscription_events(
    subscription: SubscriptionEvents,
    env: &Arc<CallbackEnv>,
    callbacks: QosCallbacks,
) -> PyResult<Vec<QosEventHandler>> {
    let mut events = Vec::new();
    for (name, callable) in callbacks {
        let env = env.clone();
        events.push(match name.as_str() {
            "deadline" => subscription.on_deadline_missed(move |s| {
                event_call(&env, &callable, (s.total_count, s.total_count_change))
            }),
            "liveliness" => subscription.on_liveliness_changed(move |s| {
                let counts = (s.alive_count, s.not_alive_count);
                let changes = (s.alive_count_change, s.not_alive_count_change);
                event_call(&env, &callable, (counts.0, counts.1, changes.0, changes.1))
            }),
            "incompatible_qos" => subscription.on_incompatible_qos(move |s| {
                let policy = policy_name(s.last_policy);
                event_call(
                    &env,
                    &callable,
                    (s.total_count, s.total_count_change, policy),
                )
            }),
            "incompatible_type" => subscription.on_incompatible_type(move |s| {
                event_call(&env, &callable, (s.total_count, s.total_count_change))
            }),
            "message_lost" => subscription.on_message_lost(move |s| {
                event_call(&env, &callable, (s.total_count, s.total_count_change))
            }),
            "matched" => subscription
                .on_subscription_matched(move |s| event_call(&env, &callable, matched_values(s))),
            other => return Err(unknown_event(other, "subscription")),
        });
    }
    Ok(events)
}

pub(crate) fn make_publisher<T: Message>(
    node: &Node,
    topic: &str,
    qos: Qos,
    class: &Bound<'_, PyAny>,
    (env, callbacks): (Arc<CallbackEnv>, QosCallbacks),
) -> PyResult<Box<dyn DynPublisher>> {
    let layout = layout_of::<T>(class)?;
    let publisher = node
        .create_publisher::<T>(topic, qos)
        .map_err(graph_error)?;
    let events = publisher_events(publisher.events(), &env, callbacks)?;
    Ok(Box::new(TypedPublisher {
        publisher,
        layout,
        _events: events,
    }))
}

pub(crate) fn make_subscription<T: Message>(
    node: &Node,
    topic: &str,
    qos: Qos,
    handler: Handler,
) -> PyResult<MadeSubscription> {
    let Handler {
        callable,
        class,
        is_async,
        env,
        events: callbacks,
    } = handler;
    let event_env = env.clone();
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
    let events = subscription_events(subscription.events(), &event_env, callbacks)?;
    let handle = subscription.callback_handle();
    let source = subscription.events();
    let completer = subscription.completer();
    Ok((Box::new((subscription, events)), handle, source, completer))
}

pub(crate) fn make_service<Req: ServiceRequest<Response = Resp>, Resp: Message + Clone>(
    node: &Node,
    name: &str,
    handler: ServiceHandler,
) -> PyResult<MadeService> {
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
    fn configure_introspection(
        &self,
        clock: &kairos::time::Clock,
        qos: Qos,
        state: IntrospectionState,
    ) -> PyResult<()>;
}

struct TypedClient<Req: Message, Resp: Message> {
    client: Client<fn(Req) -> Resp>,
    request: Arc<Layout>,
    response: Arc<Layout>,
}

impl<Req: ServiceRequest<Response = Resp>, Resp: Message + Clone> DynClient
    for TypedClient<Req, Resp>
{
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
        Ok(PyFuture::response(Box::new(ResponseSource {
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

    fn configure_introspection(
        &self,
        clock: &kairos::time::Clock,
        qos: Qos,
        state: IntrospectionState,
    ) -> PyResult<()> {
        self.client
            .configure_introspection(clock, qos, state)
            .map_err(graph_error)
    }
}

pub(crate) fn make_client<Req: ServiceRequest<Response = Resp>, Resp: Message + Clone>(
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

/// What a relay keeps: its entities (alive while it lives) and the last message it saw.
pub(crate) struct Relayed {
    _entities: Box<dyn std::any::Any + Send + Sync>,
    pub(crate) last: Arc<Mutex<Option<String>>>,
}

pub(crate) type MakeRelay = fn(&Node, &str, &str) -> PyResult<Relayed>;

/// A Rust subscription of `T` on `input` that republishes each message on `output` as the
/// same `Arc<T>` (no copy), keeping the last one as JSON for the tests to read.
pub(crate) fn make_relay<T: Message>(node: &Node, input: &str, output: &str) -> PyResult<Relayed> {
    let publisher = node
        .create_publisher::<T>(output, Qos::keep_last(100))
        .map_err(graph_error)?;
    let last = Arc::new(Mutex::new(None));
    let seen = last.clone();
    let subscription = node
        .create_subscription(input, Qos::keep_last(100), move |m: Arc<T>| {
            *seen.lock() = serde_json::to_string(&*m).ok();
            publisher.publish_arc(m);
        })
        .map_err(graph_error)?;
    Ok(Relayed {
        _entities: Box::new(subscription),
        last,
    })
}
