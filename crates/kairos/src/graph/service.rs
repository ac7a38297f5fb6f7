//! Services: a request/response callback the executor runs once per request. A service
//! whose callback panics answers that request with [`CallError::ServicePanicked`]; the
//! executor goes on.
//!
//! Several servers may serve one name, as ROS 2 allows (two nodes of one name, a driver
//! started twice). Each request reaches exactly one of them: the oldest server still
//! alive, and the next oldest once it is gone. ROS 2 leaves the choice undefined (DDS hands
//! every request to every server and the client keeps the first answer, so a call's side
//! effect may happen once per server); in kairos it happens once.
//!
//! An async service ([`Node::create_service_async`]) answers with what its future gives.
//! The future is an executor task like an async timer's: the group stays held until it
//! completes, and the service stays the entity that completes its callers' calls (so a
//! blocking call from its own held group is still `WouldDeadlock` at once). Its panic is
//! `ServicePanicked`, and a future dropped unanswered (its executor shut down while it
//! was suspended) fails the call with `ExecutorShutDown`: no caller waits for ever.

use super::client::{CallError, ClientInner};
use super::error::GraphError;
use super::introspection::{Caller, Introspection, IntrospectionState};
use super::node::Node;
use super::qos::Qos;
use crate::exec::entity::BoxFuture;
use crate::exec::entity::{CallbackScope, Entity, EntityCore, Execution};
use crate::time::Clock;
use kairos_interface::service_event::EventKind;
use kairos_interface::{Message, ServiceRequest};
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::task::{Context, Poll};

/// The future an async service's callback gives for one request.
pub(crate) type ResponseFuture<Resp> = Pin<Box<dyn Future<Output = Resp> + Send + 'static>>;

/// A service's callback: run to its end, or a future the executor polls.
pub(crate) enum ServiceCallback<Req, Resp> {
    Sync(Box<dyn Fn(Req) -> Resp + Send + Sync>),
    Async(Box<dyn Fn(Req) -> ResponseFuture<Resp> + Send + Sync>),
}

pub(crate) struct Request<Req, Resp> {
    pub(crate) seq: u64,
    pub(crate) request: Req,
    pub(crate) client: Weak<ClientInner<Req, Resp>>,
    /// The client that made the call, as its introspection events name it (in another
    /// process when the request came through the transport).
    pub(crate) caller: Caller,
}

pub(crate) struct ServiceInner<Req, Resp> {
    pub(crate) core: EntityCore,
    pub(crate) name: Arc<str>,
    requests: Mutex<VecDeque<Request<Req, Resp>>>,
    callback: ServiceCallback<Req, Resp>,
    /// Shared with the answers of suspended async callbacks, which count themselves.
    handled: Arc<AtomicU64>,
    /// Shared with the answers, which publish `RESPONSE_SENT`.
    introspection: Arc<Introspection<Req, Resp>>,
}

impl<Req: Send + 'static, Resp: Send + 'static> ServiceInner<Req, Resp> {
    pub(crate) fn new(
        core: EntityCore,
        name: Arc<str>,
        callback: ServiceCallback<Req, Resp>,
    ) -> Self {
        Self {
            core,
            name,
            requests: Mutex::new(VecDeque::new()),
            callback,
            handled: Arc::new(AtomicU64::new(0)),
            introspection: Arc::default(),
        }
    }

    /// Queues a request; a service being dropped answers it `ServiceGone` at once.
    pub(crate) fn enqueue(&self, request: Request<Req, Resp>) {
        let mut requests = self.requests.lock();
        // Checked under the lock its `Drop` drains, after marking the service destroyed.
        if self.core.is_destroyed() {
            drop(requests);
            self.gone(request);
            return;
        }
        requests.push_back(request);
        drop(requests);
        self.core.notify();
    }

    fn gone(&self, request: Request<Req, Resp>) {
        let Request { seq, client, .. } = request;
        if let Some(client) = client.upgrade() {
            let service = self.name.to_string();
            client.respond(seq, Err(CallError::ServiceGone { service, seq }));
        }
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(message) = panic.downcast_ref::<&str>() {
        (*message).to_owned()
    } else if let Some(message) = panic.downcast_ref::<String>() {
        message.clone()
    } else {
        "a non-string panic payload".to_owned()
    }
}

impl<Req: Send + 'static, Resp: Send + 'static> Entity for ServiceInner<Req, Resp> {
    fn core(&self) -> &EntityCore {
        &self.core
    }

    fn execute(&self) -> Execution {
        let Some(Request {
            seq,
            request,
            client,
            caller,
        }) = self.requests.lock().pop_front()
        else {
            return Execution::Idle;
        };
        self.introspection
            .request(EventKind::RequestReceived, caller, &request);
        let answer = Answer {
            service: self.name.clone(),
            seq,
            client,
            handled: self.handled.clone(),
            caller,
            introspection: self.introspection.clone(),
        };
        match &self.callback {
            ServiceCallback::Sync(callback) => {
                let scope = CallbackScope::enter(&self.core);
                let result = catch_unwind(AssertUnwindSafe(|| callback(request)));
                drop(scope);
                answer.send(result);
                Execution::Done
            }
            ServiceCallback::Async(callback) => {
                CallbackScope::start_async(&self.core);
                // Making the future runs user code too: a panic there is answered at once
                // and the task completes on its first poll (tracing the callback's end).
                match catch_unwind(AssertUnwindSafe(|| callback(request))) {
                    Ok(future) => Execution::Pending(Box::new(Box::pin(Answering {
                        future,
                        answer: Some(answer),
                    }))),
                    Err(panic) => {
                        answer.send(Err(panic));
                        let done: BoxFuture = Box::pin(std::future::ready(()));
                        Execution::Pending(Box::new(done))
                    }
                }
            }
        }
    }

    fn has_work(&self) -> bool {
        !self.requests.lock().is_empty()
    }
}

/// Where the answer to one request goes.
struct Answer<Req: Send + 'static, Resp: Send + 'static> {
    service: Arc<str>,
    seq: u64,
    client: Weak<ClientInner<Req, Resp>>,
    handled: Arc<AtomicU64>,
    caller: Caller,
    introspection: Arc<Introspection<Req, Resp>>,
}

impl<Req: Send + 'static, Resp: Send + 'static> Answer<Req, Resp> {
    /// Answers with the callback's response, or `ServicePanicked` with its panic.
    fn send(self, result: std::thread::Result<Resp>) {
        let result = result.map_err(|panic| CallError::ServicePanicked {
            service: self.service.to_string(),
            seq: self.seq,
            message: panic_message(&*panic),
        });
        self.handled.fetch_add(1, Ordering::Relaxed);
        if let Ok(response) = &result {
            self.introspection
                .response(EventKind::ResponseSent, self.caller, response);
        }
        self.respond(result);
    }

    fn respond(&self, result: Result<Resp, CallError>) {
        if let Some(client) = self.client.upgrade() {
            client.respond(self.seq, result);
        }
    }
}

/// An async service's future for one request: polls the user's future, panics caught,
/// and answers the caller when it completes.
struct Answering<Req: Send + 'static, Resp: Send + 'static> {
    future: ResponseFuture<Resp>,
    /// `None` once answered.
    answer: Option<Answer<Req, Resp>>,
}

impl<Req: Send + 'static, Resp: Send + 'static> Future for Answering<Req, Resp> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        if this.answer.is_none() {
            return Poll::Ready(());
        }
        let polled = catch_unwind(AssertUnwindSafe(|| this.future.as_mut().poll(cx)));
        let result = match polled {
            Ok(Poll::Pending) => return Poll::Pending,
            Ok(Poll::Ready(response)) => Ok(response),
            Err(panic) => Err(panic),
        };
        if let Some(answer) = this.answer.take() {
            answer.send(result);
        }
        Poll::Ready(())
    }
}

impl<Req: Send + 'static, Resp: Send + 'static> Drop for Answering<Req, Resp> {
    fn drop(&mut self) {
        // Dropped before it completed: the executor shut down while it was suspended.
        if let Some(answer) = self.answer.take() {
            let (service, seq) = (answer.service.to_string(), answer.seq);
            answer.respond(Err(CallError::ExecutorShutDown { service, seq }));
        }
    }
}

/// A service server; dropping it removes the service and fails its pending requests.
#[must_use = "the service is removed when its handle is dropped"]
pub struct Service<Req: Send + 'static, Resp: Send + 'static> {
    pub(crate) inner: Arc<ServiceInner<Req, Resp>>,
    pub(crate) node: Node,
    /// Its declarations on the transport, when one carries this service.
    pub(crate) _remote: Option<super::transport::Declaration>,
    /// Its place in the graph.
    pub(crate) _in_graph: super::view::GraphEntry,
}

impl<Req: Send + 'static, Resp: Send + 'static> Service<Req, Resp> {
    /// The handle the trace knows this entity's callback by (`rclcpp_callback_register`'s
    /// `callback`), so that a language binding can name the callback it runs with
    /// `kairos::trace::tp::rclcpp_callback_register(handle, name)`.
    pub fn callback_handle(&self) -> u64 {
        self.inner.core().id()
    }

    /// The resolved service name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// Requests handled so far (answered or panicked).
    pub fn handled(&self) -> u64 {
        self.inner.handled.load(Ordering::Relaxed)
    }
}

impl<Req, Resp> Service<Req, Resp>
where
    Req: ServiceRequest<Response = Resp>,
    Resp: Message + Clone,
{
    /// Publishes this service's calls on `<service>/_service_event` (see
    /// [`IntrospectionState`]): each request received and response sent, stamped by
    /// `clock`, with `qos`. [`IntrospectionState::Off`] stops it. Fails only when the event
    /// publisher cannot be made (a transport that refuses it).
    pub fn configure_introspection(
        &self,
        clock: &Clock,
        qos: Qos,
        state: IntrospectionState,
    ) -> Result<(), GraphError> {
        let introspection = &self.inner.introspection;
        introspection.configure(&self.node, &self.inner.name, clock, qos, state)
    }
}

impl<Req: Send + 'static, Resp: Send + 'static> Drop for Service<Req, Resp> {
    fn drop(&mut self) {
        self.inner.core.destroy();
        self.inner.introspection.turn_off();
        self.node.context().unregister_server(&self.inner);
        self.node.forget(self.inner.core.id());
        let pending: Vec<_> = self.inner.requests.lock().drain(..).collect();
        for request in pending {
            self.inner.gone(request);
        }
    }
}

impl<Req: Send + 'static, Resp: Send + 'static> fmt::Debug for Service<Req, Resp> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Service")
            .field("name", &self.inner.name)
            .finish_non_exhaustive()
    }
}
