//! Clients: `call_async` returns a [`ResponseFuture`] that can be awaited (in an async
//! callback), waited on with a timeout, or given a done callback; `call` is the blocking
//! form. Each request has a sequence number. A blocking wait made inside a callback that
//! could never complete returns [`CallError::WouldDeadlock`] at once.
//!
//! A response wakes its future directly; only a done callback runs as a callback of the
//! client (in the client's group, on its executor), as in rclpy.

use super::context::Context;
use super::node::Node;
use super::service::Request;
use crate::exec::WouldDeadlock;
use crate::exec::deadline_after;
use crate::exec::deadlock::{Abort, BlockedWorker, RemoteServer, check_await, check_blocking_wait};
use crate::exec::entity::{Entity, EntityCore, Execution};
use crate::time::Duration;
use kairos_interface::ServiceCall;
use parking_lot::{Condvar, Mutex};
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context as TaskContext, Poll, Wake, Waker};

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

/// A response waiting for its done callback to run.
type Answered<Resp> = (Arc<Slot<Resp>>, Result<Resp, CallError>);

type DoneCallback<Resp> = Box<dyn FnOnce(Result<Resp, CallError>) + Send>;

struct Slot<Resp> {
    /// The request's sequence number.
    seq: u64,
    /// Whether a request was sent (a response will come), or the result was known at once.
    sent: bool,
    state: Mutex<SlotState<Resp>>,
    ready: Condvar,
}

struct SlotState<Resp> {
    result: Option<Result<Resp, CallError>>,
    waker: Option<Waker>,
    on_done: Option<DoneCallback<Resp>>,
    /// The caller stopped waiting before the response arrived (see [`Client::late_responses`]).
    given_up: bool,
    /// `on_done` must run on an executor, even if the client has none when the response
    /// arrives (see [`ResponseFuture::on_done_spun`]).
    spun: bool,
}

impl<Resp> Slot<Resp> {
    fn new(seq: u64, result: Option<Result<Resp, CallError>>) -> Arc<Self> {
        Arc::new(Self {
            seq,
            sent: result.is_none(),
            state: Mutex::new(SlotState {
                result,
                waker: None,
                on_done: None,
                given_up: false,
                spun: false,
            }),
            ready: Condvar::new(),
        })
    }

    /// Hands the response to the caller; false (the response dropped) if the caller gave
    /// up first. Decided under the slot's lock, which the caller gives up under too.
    fn fulfil(&self, result: Result<Resp, CallError>) -> bool {
        let mut state = self.state.lock();
        if state.given_up {
            return false;
        }
        if let Some(on_done) = state.on_done.take() {
            drop(state);
            on_done(result);
            return true;
        }
        state.result = Some(result);
        let waker = state.waker.take();
        drop(state);
        self.ready.notify_all();
        if let Some(waker) = waker {
            waker.wake();
        }
        true
    }

    /// The caller stops waiting (its future is dropped): a response that arrives from now
    /// on is late. True if one had arrived and was never read: it is dropped, late too (a
    /// result made without a request, such as `ServiceUnavailable`, is no response).
    fn give_up(&self) -> bool {
        let mut state = self.state.lock();
        state.given_up = true;
        state.result.take().is_some() && self.sent
    }

    fn has_done_callback(&self) -> bool {
        self.state.lock().on_done.is_some()
    }
}

/// Wakes a blocking [`ResponseFuture::wait`] (used for the shutdown token).
struct SlotWaker<Resp>(std::sync::Weak<Slot<Resp>>);

impl<Resp: Send + 'static> Wake for SlotWaker<Resp> {
    fn wake(self: Arc<Self>) {
        if let Some(slot) = self.0.upgrade() {
            // Under the lock: the waiter is either before its check or inside its wait.
            let _state = slot.state.lock();
            slot.ready.notify_all();
        }
    }
}

pub(crate) struct ClientInner<Req, Resp> {
    pub(crate) core: EntityCore,
    pub(crate) service: Arc<str>,
    context: Context,
    next_seq: AtomicU64,
    pending: Mutex<HashMap<u64, Arc<Slot<Resp>>>>,
    /// Responses whose done callback waits to run on the client's executor.
    done: Mutex<VecDeque<Answered<Resp>>>,
    late: AtomicU64,
    /// Calls servers in other processes, when a transport carries this service.
    remote: Option<Arc<dyn super::transport::RemoteClient>>,
    _request: std::marker::PhantomData<fn(Req)>,
}

impl<Req: Send + 'static, Resp: Send + 'static> ClientInner<Req, Resp> {
    pub(crate) fn new(
        core: EntityCore,
        service: Arc<str>,
        context: Context,
        remote: Option<Arc<dyn super::transport::RemoteClient>>,
    ) -> Self {
        Self {
            core,
            service,
            context,
            next_seq: AtomicU64::new(1),
            pending: Mutex::new(HashMap::new()),
            done: Mutex::new(VecDeque::new()),
            late: AtomicU64::new(0),
            remote,
            _request: std::marker::PhantomData,
        }
    }

    /// The server in another process a blocking call waits for, when the transport shares
    /// waits (so the call is checked for cycles through other processes).
    fn remote_server(&self) -> Option<RemoteServer<'_>> {
        self.remote.as_ref()?;
        let sharing = self.context.transport()?.wait_sharing()?;
        Some(RemoteServer {
            service: &self.service,
            sharing,
        })
    }

    /// A response arrived (on the service's thread).
    pub(crate) fn respond(&self, seq: u64, result: Result<Resp, CallError>) {
        let Some(slot) = self.pending.lock().remove(&seq) else {
            // The client was dropped with the call pending (its caller got `ClientDropped`).
            self.late.fetch_add(1, Ordering::Relaxed);
            return;
        };
        let delivered = if slot.has_done_callback() {
            self.deliver_done(slot, result);
            true
        } else {
            slot.fulfil(result)
        };
        if !delivered {
            // The caller gave up first: counted, never lost silently.
            self.late.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Hands a response whose future has a done callback to the client's executor, where
    /// the callback runs as a callback of the client; with no executor it runs here.
    fn deliver_done(&self, slot: Arc<Slot<Resp>>, result: Result<Resp, CallError>) {
        let spun = slot.state.lock().spun;
        if self.core.executor().is_none() && !spun {
            // A done callback's caller never gives up: it always runs.
            slot.fulfil(result);
            return;
        }
        self.done.lock().push_back((slot, result));
        self.core.notify();
        // Detached between the check and the push: the executor's shutdown may have failed
        // its queue before this entry arrived, and no worker will take it now. (A spun
        // callback waits for the next executor, or fails when the client is dropped.)
        if self.core.executor().is_none() && !spun {
            self.fail_done_queue();
        }
    }

    /// The caller of `slot` stopped waiting. The slot stays pending until its response
    /// arrives, which is then counted late (and so is a response it never read).
    fn give_up(&self, slot: &Slot<Resp>) {
        if slot.give_up() {
            self.late.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Runs the done callbacks of the responses queued for the executor with
    /// `ExecutorShutDown`: they will not run there now. Returns how many.
    fn fail_done_queue(&self) -> usize {
        let queued: Vec<Answered<Resp>> = self.done.lock().drain(..).collect();
        let failed = queued.len();
        for (slot, result) in queued {
            let seq = slot.seq;
            // The response itself is dropped here: counted as late, never silently.
            drop(result);
            self.late.fetch_add(1, Ordering::Relaxed);
            let _ = slot.fulfil(Err(CallError::ExecutorShutDown {
                service: self.service.to_string(),
                seq,
            }));
        }
        failed
    }
}

impl<Req: Send + 'static, Resp: Send + 'static> Entity for ClientInner<Req, Resp> {
    fn core(&self) -> &EntityCore {
        &self.core
    }

    fn execute(&self) -> Execution {
        let Some((slot, result)) = self.done.lock().pop_front() else {
            return Execution::Idle;
        };
        let _ = slot.fulfil(result);
        Execution::Done
    }

    fn has_work(&self) -> bool {
        !self.done.lock().is_empty()
    }

    fn queued_responses(&self) -> usize {
        self.done.lock().len()
    }

    fn fail_queued(&self) -> usize {
        self.fail_done_queue()
    }
}

/// What a response future needs from its client, whatever the request type.
trait CallSite<Resp>: Send + Sync {
    fn service(&self) -> &str;
    /// The entity that must run for the call to complete (the service), if it exists.
    fn server(&self) -> Option<Arc<dyn Entity>>;
    /// The server in another process, when there is none here (see `remote_server`).
    fn remote_server(&self) -> Option<RemoteServer<'_>>;
    /// The caller stopped waiting for `slot` (see [`ClientInner::give_up`]).
    fn give_up(&self, slot: &Slot<Resp>);
    /// A done callback was given after its response arrived: run it where it would have
    /// run had it come first.
    fn deliver_done(&self, slot: Arc<Slot<Resp>>, result: Result<Resp, CallError>);
}

impl<Req: Send + 'static, Resp: Send + 'static> CallSite<Resp> for ClientInner<Req, Resp> {
    fn service(&self) -> &str {
        &self.service
    }

    fn server(&self) -> Option<Arc<dyn Entity>> {
        let server = self.context.server::<Req, Resp>(&self.service)?;
        Some(server)
    }

    fn remote_server(&self) -> Option<RemoteServer<'_>> {
        ClientInner::remote_server(self)
    }

    fn give_up(&self, slot: &Slot<Resp>) {
        ClientInner::give_up(self, slot);
    }

    fn deliver_done(&self, slot: Arc<Slot<Resp>>, result: Result<Resp, CallError>) {
        ClientInner::deliver_done(self, slot, result);
    }
}

/// The response to one request: `.await` it, [`wait`](Self::wait) for it, or hand it a
/// done callback with [`on_done`](Self::on_done). Dropping it abandons the request (a
/// response arriving later is counted as late).
#[must_use = "a response future does nothing unless awaited, waited on or given a done callback"]
pub struct ResponseFuture<Resp> {
    slot: Arc<Slot<Resp>>,
    seq: u64,
    call_site: Arc<dyn CallSite<Resp>>,
    detached: bool,
    /// Whether the first poll checked that the await can complete.
    checked: bool,
    /// The request, not sent yet: it was made in an async callback that holds the
    /// service's group, so awaiting it could never complete (see [`Client::call_async`]).
    held: Mutex<Option<HeldRequest>>,
}

/// Sends a held request.
type HeldRequest = Box<dyn FnOnce() + Send>;

impl<Resp: Send + 'static> ResponseFuture<Resp> {
    /// The request's sequence number (per client, from 1).
    pub fn sequence(&self) -> u64 {
        self.seq
    }

    /// Whether the response has arrived.
    pub fn is_done(&self) -> bool {
        self.slot.state.lock().result.is_some()
    }

    /// Blocks until the response arrives or `timeout` passes. Inside a callback whose
    /// executor could never run the service meanwhile, returns `WouldDeadlock` at once.
    pub fn wait(self, timeout: impl Into<Duration>) -> Result<Resp, CallError> {
        let timeout = timeout.into();
        let operation = format!(
            "waiting for the response of service '{}'",
            self.call_site.service()
        );
        self.wait_as(&operation, timeout)
    }

    fn wait_as(self, operation: &str, timeout: Duration) -> Result<Resp, CallError> {
        let server = self.call_site.server();
        let completers: Vec<&EntityCore> = server.iter().map(|s| s.core()).collect();
        let remote = match server {
            None => self.call_site.remote_server(),
            Some(_) => None,
        };
        let blocked = match check_blocking_wait(operation, &completers, remote) {
            Ok(blocked) => blocked,
            Err(error) => return Err(self.refused(error)),
        };
        self.send_held();
        blocked.on_abort(self.abort());
        self.wait_blocked(blocked, timeout)
    }

    /// Ends a blocking wait for this response with `WouldDeadlock` (a cycle through other
    /// processes found after the wait began).
    fn abort(&self) -> Abort {
        let slot = Arc::downgrade(&self.slot);
        Box::new(move |error| {
            if let Some(slot) = slot.upgrade() {
                let error = error.with_request_sent(true);
                let _ = slot.fulfil(Err(CallError::WouldDeadlock(error)));
            }
        })
    }

    /// Waits as a worker already counted blocked (`_blocked`, from the deadlock check).
    fn wait_blocked(self, _blocked: BlockedWorker, timeout: Duration) -> Result<Resp, CallError> {
        let deadline = deadline_after(timeout);
        // Inside a callback, the executor's shutdown ends the wait; anywhere, Ctrl-C does.
        let shutdown = crate::current::callback::shutdown_token();
        let program = crate::signal::shutdown_token();
        let waker = Waker::from(Arc::new(SlotWaker(Arc::downgrade(&self.slot))));
        let _registration = shutdown.as_ref().map(|token| token.register(&waker));
        let _program_registration = program.register(&waker);
        let mut state = self.slot.state.lock();
        loop {
            if let Some(result) = state.result.take() {
                return result;
            }
            if program.is_cancelled() {
                return Err(CallError::ProgramShutDown {
                    service: self.call_site.service().to_owned(),
                    seq: self.seq,
                });
            }
            if shutdown.as_ref().is_some_and(|token| token.is_cancelled()) {
                return Err(CallError::ExecutorShutDown {
                    service: self.call_site.service().to_owned(),
                    seq: self.seq,
                });
            }
            let timed_out = match deadline {
                Some(deadline) => self.slot.ready.wait_until(&mut state, deadline).timed_out(),
                None => {
                    self.slot.ready.wait(&mut state);
                    false
                }
            };
            if timed_out && state.result.is_none() {
                return Err(CallError::Timeout {
                    service: self.call_site.service().to_owned(),
                    timeout,
                });
            }
        }
    }

    /// Runs `callback` with the response: as a callback of the client on its executor
    /// (in the client's callback group), whether the response arrives before or after
    /// this call, as rclpy's `add_done_callback` does; at once, on this thread, only when
    /// the client has no executor. Where the callback runs never depends on which thread
    /// won a race.
    pub fn on_done(self, callback: impl FnOnce(Result<Resp, CallError>) + Send + 'static) {
        self.set_done(callback, false);
    }

    /// Like [`on_done`](Self::on_done), but the callback always runs on an executor: a
    /// response that arrives while the client's node is in none waits in the client until
    /// an executor runs the node (as a response waits in rclpy's client until a spin takes
    /// it). Dropping the client runs it with `ExecutorShutDown` (and counts the response
    /// late).
    pub fn on_done_spun(self, callback: impl FnOnce(Result<Resp, CallError>) + Send + 'static) {
        self.set_done(callback, true);
    }

    fn set_done(
        mut self,
        callback: impl FnOnce(Result<Resp, CallError>) + Send + 'static,
        spun: bool,
    ) {
        self.send_held();
        self.detached = true;
        let mut state = self.slot.state.lock();
        state.on_done = Some(Box::new(callback));
        state.spun = spun;
        let Some(result) = state.result.take() else {
            return;
        };
        drop(state);
        self.call_site.deliver_done(self.slot.clone(), result);
    }
}

impl<Resp> ResponseFuture<Resp> {
    /// Sends the request if it was held (see [`Client::call_async`]).
    fn send_held(&self) {
        let held = self.held.lock().take();
        if let Some(send) = held {
            send();
        }
    }

    /// The error for a wait that could never complete: a held request is dropped unsent,
    /// and the error says whether the server has the request.
    fn refused(&self, error: WouldDeadlock) -> CallError {
        let sent = self.held.lock().take().is_none();
        CallError::WouldDeadlock(error.with_request_sent(sent))
    }
}

impl<Resp> Future for ResponseFuture<Resp> {
    type Output = Result<Resp, CallError>;

    /// The first poll inside an async callback checks that the response can come: a
    /// service in the mutually exclusive group that callback holds (until it completes)
    /// never could, and the await fails at once with `WouldDeadlock` (see `exec`).
    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let mut state = this.slot.state.lock();
        if let Some(result) = state.result.take() {
            return Poll::Ready(result);
        }
        if !this.checked {
            this.checked = true;
            drop(state);
            let operation = format!(
                "awaiting the response of service '{}'",
                this.call_site.service()
            );
            let server = this.call_site.server();
            let completers: Vec<&EntityCore> = server.iter().map(|s| s.core()).collect();
            if let Err(error) = check_await(&operation, &completers) {
                return Poll::Ready(Err(this.refused(error)));
            }
            this.send_held();
            state = this.slot.state.lock();
            if let Some(result) = state.result.take() {
                return Poll::Ready(result);
            }
        }
        state.waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

impl<Resp> Drop for ResponseFuture<Resp> {
    /// A future dropped unpolled still sends a held request, as `call_async` promised (a
    /// request made and never awaited is sent, its response counted late).
    fn drop(&mut self) {
        if !self.detached {
            if let Some(send) = self.held.get_mut().take() {
                send();
            }
            self.call_site.give_up(&self.slot);
        }
    }
}

impl<Resp> fmt::Debug for ResponseFuture<Resp> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponseFuture")
            .field("service", &self.call_site.service())
            .field("seq", &self.seq)
            .finish_non_exhaustive()
    }
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
        let inner = &self.inner;
        let seq = inner.next_seq.fetch_add(1, Ordering::Relaxed);
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
                inner.pending.lock().insert(seq, slot);
                let client = Arc::downgrade(&inner);
                server.enqueue(Request {
                    seq,
                    request,
                    client,
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

impl<Req: Send + 'static, Resp: Send + 'static> Drop for Registration<Req, Resp> {
    /// When the client's last handle is dropped, every request still pending ends: its
    /// done callback runs (or its awaiting task wakes) with `ClientDropped`; a queued
    /// response's done callback with `ExecutorShutDown`. Nothing waits for ever on a
    /// client that is gone.
    fn drop(&mut self) {
        self.inner.core.destroy();
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
