//! The response to one request: the slot its client fills, and the future that awaits,
//! waits on or hands a done callback what comes in it.

use super::CallError;
use crate::exec::WouldDeadlock;
use crate::exec::deadline_after;
use crate::exec::deadlock::{Abort, BlockedWorker, RemoteServer, check_await, check_blocking_wait};
use crate::exec::entity::{Entity, EntityCore};
use crate::time::Duration;
use parking_lot::{Condvar, Mutex};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll, Wake, Waker};
/// A response waiting for its done callback to run.
pub(super) type Answered<Resp> = (Arc<Slot<Resp>>, Result<Resp, CallError>);

pub(super) type DoneCallback<Resp> = Box<dyn FnOnce(Result<Resp, CallError>) + Send>;

pub(super) struct Slot<Resp> {
    /// The request's sequence number.
    pub(super) seq: u64,
    /// Whether a request was sent (a response will come), or the result was known at once.
    pub(super) sent: bool,
    pub(super) state: Mutex<SlotState<Resp>>,
    pub(super) ready: Condvar,
}

pub(super) struct SlotState<Resp> {
    pub(super) result: Option<Result<Resp, CallError>>,
    pub(super) waker: Option<Waker>,
    pub(super) on_done: Option<DoneCallback<Resp>>,
    /// The caller stopped waiting before the response arrived (see [`Client::late_responses`](super::Client::late_responses)).
    pub(super) given_up: bool,
    /// `on_done` must run on an executor, even if the client has none when the response
    /// arrives (see [`ResponseFuture::on_done_spun`]).
    pub(super) spun: bool,
}

impl<Resp> Slot<Resp> {
    pub(super) fn new(seq: u64, result: Option<Result<Resp, CallError>>) -> Arc<Self> {
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
    pub(super) fn fulfil(&self, result: Result<Resp, CallError>) -> bool {
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
    pub(super) fn give_up(&self) -> bool {
        let mut state = self.state.lock();
        state.given_up = true;
        state.result.take().is_some() && self.sent
    }

    pub(super) fn has_done_callback(&self) -> bool {
        self.state.lock().on_done.is_some()
    }
}

/// Wakes a blocking [`ResponseFuture::wait`] (used for the shutdown token).
pub(super) struct SlotWaker<Resp>(std::sync::Weak<Slot<Resp>>);

impl<Resp: Send + 'static> Wake for SlotWaker<Resp> {
    fn wake(self: Arc<Self>) {
        if let Some(slot) = self.0.upgrade() {
            // Under the lock: the waiter is either before its check or inside its wait.
            let _state = slot.state.lock();
            slot.ready.notify_all();
        }
    }
}

/// What a response future needs from its client, whatever the request type.
pub(super) trait CallSite<Resp>: Send + Sync {
    fn service(&self) -> &str;
    /// The entity that must run for the call to complete (the service), if it exists.
    fn server(&self) -> Option<Arc<dyn Entity>>;
    /// The server in another process, when there is none here (see `remote_server`).
    fn remote_server(&self) -> Option<RemoteServer<'_>>;
    /// The caller stopped waiting for `slot` (see [`ClientInner::give_up`](super::ClientInner::give_up)).
    fn give_up(&self, slot: &Slot<Resp>);
    /// A done callback was given after its response arrived: run it where it would have
    /// run had it come first.
    fn deliver_done(&self, slot: Arc<Slot<Resp>>, result: Result<Resp, CallError>);
}

/// The response to one request: `.await` it, [`wait`](Self::wait) for it, or hand it a
/// done callback with [`on_done`](Self::on_done). Dropping it abandons the request (a
/// response arriving later is counted as late).
#[must_use = "a response future does nothing unless awaited, waited on or given a done callback"]
pub struct ResponseFuture<Resp> {
    pub(super) slot: Arc<Slot<Resp>>,
    pub(super) seq: u64,
    pub(super) call_site: Arc<dyn CallSite<Resp>>,
    pub(super) detached: bool,
    /// Whether the first poll checked that the await can complete.
    pub(super) checked: bool,
    /// The request, not sent yet: it was made in an async callback that holds the
    /// service's group, so awaiting it could never complete (see [`Client::call_async`](super::Client::call_async)).
    pub(super) held: Mutex<Option<HeldRequest>>,
}

/// Sends a held request.
pub(super) type HeldRequest = Box<dyn FnOnce() + Send>;

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

    pub(super) fn wait_as(self, operation: &str, timeout: Duration) -> Result<Resp, CallError> {
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
    pub(super) fn abort(&self) -> Abort {
        let slot = Arc::downgrade(&self.slot);
        Box::new(move |error| {
            if let Some(slot) = slot.upgrade() {
                let error = error.with_request_sent(true);
                let _ = slot.fulfil(Err(CallError::WouldDeadlock(error)));
            }
        })
    }

    /// Waits as a worker already counted blocked (`_blocked`, from the deadlock check).
    pub(super) fn wait_blocked(
        self,
        _blocked: BlockedWorker,
        timeout: Duration,
    ) -> Result<Resp, CallError> {
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

    pub(super) fn set_done(
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
    /// Sends the request if it was held (see [`Client::call_async`](super::Client::call_async)).
    pub(super) fn send_held(&self) {
        let held = self.held.lock().take();
        if let Some(send) = held {
            send();
        }
    }

    /// The error for a wait that could never complete: a held request is dropped unsent,
    /// and the error says whether the server has the request.
    pub(super) fn refused(&self, error: WouldDeadlock) -> CallError {
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
