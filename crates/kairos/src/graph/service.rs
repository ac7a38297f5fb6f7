//! Services: a request/response callback the executor runs once per request. A service
//! whose callback panics answers that request with [`CallError::ServicePanicked`]; the
//! executor goes on.

use super::client::{CallError, ClientInner};
use super::node::Node;
use crate::exec::entity::{CallbackScope, Entity, EntityCore, Execution};
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

pub(crate) struct Request<Req, Resp> {
    pub(crate) seq: u64,
    pub(crate) request: Req,
    pub(crate) client: Weak<ClientInner<Req, Resp>>,
}

pub(crate) struct ServiceInner<Req, Resp> {
    pub(crate) core: EntityCore,
    pub(crate) name: Arc<str>,
    requests: Mutex<VecDeque<Request<Req, Resp>>>,
    callback: Box<dyn Fn(Req) -> Resp + Send + Sync>,
    handled: AtomicU64,
}

impl<Req: Send + 'static, Resp: Send + 'static> ServiceInner<Req, Resp> {
    pub(crate) fn new(
        core: EntityCore,
        name: Arc<str>,
        callback: Box<dyn Fn(Req) -> Resp + Send + Sync>,
    ) -> Self {
        Self {
            core,
            name,
            requests: Mutex::new(VecDeque::new()),
            callback,
            handled: AtomicU64::new(0),
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
        }) = self.requests.lock().pop_front()
        else {
            return Execution::Idle;
        };
        let scope = CallbackScope::enter(&self.core);
        let result = catch_unwind(AssertUnwindSafe(|| (self.callback)(request)));
        drop(scope);
        let result = result.map_err(|panic| CallError::ServicePanicked {
            service: self.name.to_string(),
            seq,
            message: panic_message(&*panic),
        });
        self.handled.fetch_add(1, Ordering::Relaxed);
        if let Some(client) = client.upgrade() {
            client.respond(seq, result);
        }
        Execution::Done
    }

    fn has_work(&self) -> bool {
        !self.requests.lock().is_empty()
    }
}

/// A service server; dropping it removes the service and fails its pending requests.
#[must_use = "the service is removed when its handle is dropped"]
pub struct Service<Req: Send + 'static, Resp: Send + 'static> {
    pub(crate) inner: Arc<ServiceInner<Req, Resp>>,
    pub(crate) node: Node,
    /// Its declarations on the transport, when one carries this service.
    pub(crate) _remote: Option<super::transport::Declaration>,
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

impl<Req: Send + 'static, Resp: Send + 'static> Drop for Service<Req, Resp> {
    fn drop(&mut self) {
        self.inner.core.destroy();
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
