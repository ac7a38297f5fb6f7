//! Clients: `call_async` returns a [`ResponseFuture`] that can be awaited (in an async
//! callback), waited on with a timeout, or given a done callback; `call` is the blocking
//! form. Each request has a sequence number. A blocking wait made inside a callback that
//! could never complete returns [`CallError::WouldDeadlock`] at once.
//!
//! A response wakes its future directly; only a done callback runs as a callback of the
//! client (in the client's group, on its executor), as in rclpy.

use super::error::GraphError;
use super::introspection::{Caller, IntrospectionState};
use super::node::Node;
use super::qos::Qos;
use super::service::Request;
use crate::exec::WouldDeadlock;
use crate::exec::deadline_after;
use crate::exec::deadlock::{check_await, check_blocking_wait};
use crate::exec::entity::{Entity, EntityCore};
use crate::time::Clock;
use crate::time::Duration;
use kairos_interface::ServiceCall;
use kairos_interface::service_event::EventKind;
use kairos_interface::{Message, ServiceRequest};
use parking_lot::Mutex;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::Ordering;

mod inner;
mod response;

pub(crate) use inner::ClientInner;
pub use response::ResponseFuture;
use response::{CallSite, HeldRequest, Slot};

/// Why a service call gave no response.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// No server serves the service.
    #[error(
        "no server for service '{service}'; create it (Node::create_service) or wait for it (Client::wait_for_service)"
    )]
    ServiceUnavailable {
        /// The service's resolved name.
        service: String,
    },
    /// The service's callback panicked on this request.
    #[error("service '{service}' panicked handling request #{seq}: {message}")]
    ServicePanicked {
        /// The service's resolved name.
        service: String,
        /// The request's sequence number.
        seq: u64,
        /// The panic's message.
        message: String,
    },
    /// The server was dropped before it answered.
    #[error("service '{service}' was removed before it answered request #{seq}")]
    ServiceGone {
        /// The service's resolved name.
        service: String,
        /// The request's sequence number.
        seq: u64,
    },
    /// No response within the call's timeout.
    #[error("no response from service '{service}' within {timeout}")]
    Timeout {
        /// The service's resolved name.
        service: String,
        /// The timeout given.
        timeout: Duration,
    },
    /// The executor that was to deliver the response shut down first.
    #[error(
        "the executor shut down before the response to request #{seq} of service '{service}' was delivered"
    )]
    ExecutorShutDown {
        /// The service's resolved name.
        service: String,
        /// The request's sequence number.
        seq: u64,
    },
    /// The program is shutting down (SIGINT or SIGTERM) while the caller waited.
    #[error(
        "the program is shutting down (SIGINT/SIGTERM): the wait for request #{seq} of service '{service}' ended"
    )]
    ProgramShutDown {
        /// The service's resolved name.
        service: String,
        /// The request's sequence number.
        seq: u64,
    },
    /// The client was dropped while the request was pending.
    #[error("the client of service '{service}' was dropped before request #{seq} was answered")]
    ClientDropped {
        /// The service's resolved name.
        service: String,
        /// The request's sequence number.
        seq: u64,
    },
    /// The blocking call could never complete; see [`WouldDeadlock`].
    #[error(transparent)]
    WouldDeadlock(#[from] WouldDeadlock),
    /// The transport to another process failed to carry the request or its response.
    #[error("request #{seq} to service '{service}' failed in transport: {reason}")]
    Transport {
        /// The service's resolved name.
        service: String,
        /// The request's sequence number.
        seq: u64,
        /// What the transport reported.
        reason: String,
    },
}

/// A client of one service. Clones are cheap handles to the same client (one sequence of
/// requests), so several callbacks can share it; dropping the last one removes it and
/// abandons its pending requests.
///
/// `S` is the service as a caller names it ([`ServiceCall`]): a generated
/// [`ServiceType`](kairos_interface::ServiceType) such as `AddTwoInts`, or
/// `fn(Request) -> Response`.
#[must_use = "the client is removed when its handle is dropped"]
pub struct Client<S: ServiceCall> {
    pub(crate) inner: Arc<ClientInner<S::Request, S::Response>>,
    registration: Arc<Registration<S::Request, S::Response>>,
}

/// Shared by a client's handles: the last one dropped removes the client from its node.
struct Registration<Req: Send + 'static, Resp: Send + 'static> {
    inner: Arc<ClientInner<Req, Resp>>,
    node: Node,
    _in_graph: super::view::GraphEntry,
}

impl<S: ServiceCall> Client<S> {
    pub(crate) fn new(
        inner: Arc<ClientInner<S::Request, S::Response>>,
        node: Node,
        in_graph: super::view::GraphEntry,
    ) -> Self {
        let registration = Arc::new(Registration {
            inner: inner.clone(),
            node,
            _in_graph: in_graph,
        });
        Self {
            inner,
            registration,
        }
    }
}

impl<S: ServiceCall> Clone for Client<S> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            registration: self.registration.clone(),
        }
    }
}

impl<S: ServiceCall> Client<S> {
    /// Sends `request`; the future resolves with the response (or why there is none).
    ///
    /// Awaited inside an async callback, the response must come while that callback holds
    /// its group: if the service is in that mutually exclusive group on the same executor
    /// it never could, and the await fails at once with [`CallError::WouldDeadlock`].
    /// Where that is known when `call_async` is called (in an async callback that holds the
    /// service's group), the request is held rather than sent: the failed await drops it
    /// (the error's [`WouldDeadlock::request_sent`] says `Some(false)`), while a done
    /// callback, a blocking wait that can complete, or a future dropped unawaited sends it
    /// as usual. Otherwise the request leaves at once, and an await found impossible later
    /// says `Some(true)`: the server still runs the request and its response is counted in
    /// [`late_responses`](Self::late_responses).
    pub fn call_async(&self, request: S::Request) -> ResponseFuture<S::Response> {
        self.call_async_as(request, None)
    }

    /// [`call_async`](Self::call_async) on behalf of `caller`, a client in another process
    /// whose request the transport serves through this client (so the server's
    /// introspection events name that client and its sequence number).
    pub(crate) fn call_async_as(
        &self,
        request: S::Request,
        caller: Option<Caller>,
    ) -> ResponseFuture<S::Response> {
        let inner = &self.inner;
        let seq = inner.next_seq.fetch_add(1, Ordering::Relaxed);
        let caller = caller.unwrap_or_else(|| inner.caller(seq));
        let call_site: Arc<dyn CallSite<S::Response>> = inner.clone();
        let Some(server) = inner
            .context
            .server::<S::Request, S::Response>(&inner.service)
        else {
            if let Some(remote) = inner.remote.as_ref().filter(|r| r.is_ready()) {
                return self.call_remote(remote, request, seq, call_site);
            }
            let unavailable = Err(CallError::ServiceUnavailable {
                service: inner.service.to_string(),
            });
            return ResponseFuture {
                slot: Slot::new(seq, Some(unavailable)),
                seq,
                call_site,
                detached: false,
                checked: false,
                held: Mutex::new(None),
            };
        };
        let held = crate::exec::deadlock::in_task() && {
            let operation = format!("awaiting the response of service '{}'", inner.service);
            check_await(&operation, &[server.core()]).is_err()
        };
        let slot = Slot::new(seq, None);
        let send = {
            let (inner, slot) = (inner.clone(), slot.clone());
            move || {
                // Only a request that leaves is reported sent (a held one may be dropped).
                inner
                    .introspection
                    .request(EventKind::RequestSent, caller, &request);
                inner.pending.lock().insert(seq, slot);
                let client = Arc::downgrade(&inner);
                server.enqueue(Request {
                    seq,
                    request,
                    client,
                    caller,
                });
            }
        };
        let held = if held {
            Some(Box::new(send) as HeldRequest)
        } else {
            send();
            None
        };
        ResponseFuture {
            slot,
            seq,
            call_site,
            detached: false,
            checked: false,
            held: Mutex::new(held),
        }
    }

    /// Sends `request` to a server in another process; its reply (or failure) fulfils the
    /// future as a local response would.
    fn call_remote(
        &self,
        remote: &Arc<dyn super::transport::RemoteClient>,
        request: S::Request,
        seq: u64,
        call_site: Arc<dyn CallSite<S::Response>>,
    ) -> ResponseFuture<S::Response> {
        let caller = self.inner.caller(seq);
        self.inner
            .introspection
            .request(EventKind::RequestSent, caller, &request);
        let slot = Slot::new(seq, None);
        self.inner.pending.lock().insert(seq, slot.clone());
        let client = Arc::downgrade(&self.inner);
        let service = self.inner.service.to_string();
        remote.call(
            Box::new(request),
            seq,
            Box::new(move |result| {
                let result = result.and_then(|response| {
                    response.downcast::<S::Response>().map(|r| *r).map_err(|_| {
                        CallError::Transport {
                            service,
                            seq,
                            reason: "the transport answered with another response type".into(),
                        }
                    })
                });
                if let Some(client) = client.upgrade() {
                    client.respond(seq, result);
                }
            }),
        );
        ResponseFuture {
            slot,
            seq,
            call_site,
            detached: false,
            // The await check finds no server in this process, so nothing to refuse.
            checked: false,
            held: Mutex::new(None),
        }
    }

    /// Sends `request` and blocks for the response, at most `timeout`. Inside a callback
    /// whose executor could never run the service meanwhile, returns `WouldDeadlock` at once.
    pub fn call(
        &self,
        request: S::Request,
        timeout: impl Into<Duration>,
    ) -> Result<S::Response, CallError> {
        let timeout = timeout.into();
        let operation = format!("call() to service '{}'", self.inner.service);
        let server = self
            .inner
            .context
            .server::<S::Request, S::Response>(&self.inner.service);
        let completers: Vec<&EntityCore> = server.iter().map(|s| s.core()).collect();
        let remote = match server {
            None => self.inner.remote_server(),
            Some(_) => None,
        };
        // Checked, and this worker counted as blocked, before the request is sent: a request
        // that can never be served is not sent at all, and a callback it starts on another
        // worker (or in another process) sees this one blocked (checking after sending races
        // with that callback).
        let blocked = check_blocking_wait(&operation, &completers, remote)
            .map_err(|error| CallError::WouldDeadlock(error.with_request_sent(false)))?;
        let response = self.call_async(request);
        response.send_held();
        blocked.on_abort(response.abort());
        response.wait_blocked(blocked, timeout)
    }

    /// Whether the service has a server now.
    pub fn service_is_ready(&self) -> bool {
        self.inner
            .context
            .server::<S::Request, S::Response>(&self.inner.service)
            .is_some()
            || self.inner.remote.as_ref().is_some_and(|r| r.is_ready())
    }

    /// Waits up to `timeout` for the service to have a server; true if it has.
    pub fn wait_for_service(&self, timeout: impl Into<Duration>) -> bool {
        let deadline = deadline_after(timeout.into());
        match &self.inner.remote {
            // The transport sees local servers too (they announce themselves on it).
            Some(remote) => self.service_is_ready() || remote.wait_ready(deadline),
            None => self
                .inner
                .context
                .wait_for_server(&self.inner.service, deadline),
        }
    }

    /// The resolved service name.
    pub fn service(&self) -> &str {
        &self.inner.service
    }

    /// Responses no caller received, because the caller had given up. "Given up" covers
    /// exactly:
    /// - a response future dropped before its response arrived, or with its response
    ///   unread: a `call` or `wait` that returned `Timeout`, `WouldDeadlock` or (its
    ///   executor shutting down) `ExecutorShutDown`; an awaiting async callback abandoned
    ///   at shutdown; a future the program dropped;
    /// - a done callback whose response was queued on the client's executor when it shut
    ///   down: the callback ran with `ExecutorShutDown` instead;
    /// - the client dropped with the call pending (its caller got `ClientDropped`).
    ///
    /// A call that received its response, or an error the server side sent (`ServiceGone`,
    /// `ServicePanicked`, `ExecutorShutDown` from the server's executor), is never counted.
    pub fn late_responses(&self) -> u64 {
        self.inner.late.load(Ordering::Relaxed)
    }

    /// Responses that arrived and wait for their done callback to run on the executor.
    pub fn queued_responses(&self) -> usize {
        self.inner.done.lock().len()
    }

    /// Requests sent and not answered yet (awaited, waited on or with a done callback).
    pub fn pending_requests(&self) -> usize {
        self.inner.pending.lock().len()
    }
}

impl<S> Client<S>
where
    S: ServiceCall,
    S::Request: ServiceRequest<Response = S::Response>,
    S::Response: Message + Clone,
{
    /// Publishes this client's calls on `<service>/_service_event` (see
    /// [`IntrospectionState`]): each request sent and response received, stamped by
    /// `clock`, with `qos`. [`IntrospectionState::Off`] stops it. Fails only when the event
    /// publisher cannot be made (a transport that refuses it).
    pub fn configure_introspection(
        &self,
        clock: &Clock,
        qos: Qos,
        state: IntrospectionState,
    ) -> Result<(), GraphError> {
        let node = &self.registration.node;
        let introspection = &self.inner.introspection;
        introspection.configure(node, &self.inner.service, clock, qos, state)
    }
}

impl<Req: Send + 'static, Resp: Send + 'static> Drop for Registration<Req, Resp> {
    /// When the client's last handle is dropped, every request still pending ends: its
    /// done callback runs (or its awaiting task wakes) with `ClientDropped`; a queued
    /// response's done callback with `ExecutorShutDown`. Nothing waits for ever on a
    /// client that is gone.
    fn drop(&mut self) {
        self.inner.core.destroy();
        self.inner.introspection.turn_off();
        self.node.forget(self.inner.core.id());
        self.inner.fail_done_queue();
        let pending: Vec<Arc<Slot<Resp>>> = self
            .inner
            .pending
            .lock()
            .drain()
            .map(|(_, slot)| slot)
            .collect();
        for slot in pending {
            let seq = slot.seq;
            let _ = slot.fulfil(Err(CallError::ClientDropped {
                service: self.inner.service.to_string(),
                seq,
            }));
        }
    }
}

impl<S: ServiceCall> fmt::Debug for Client<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("service", &self.inner.service)
            .finish_non_exhaustive()
    }
}
