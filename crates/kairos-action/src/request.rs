//! An action client's request as a future: the answer to a goal, a result or a cancel
//! request, to `.await` in an async callback or to hand a done callback.
//!
//! What an [`ActionFuture`] promises:
//! - It is one call of one of the action's services, with what the client does with the
//!   answer (follow the accepted goal, note its status, trace the step) applied when the
//!   answer comes, whoever takes it. So it keeps the call's guarantees: awaited in a
//!   callback whose group the server needs, it fails at once with `WouldDeadlock`; a
//!   server that goes away fails it; dropping it abandons the request, and a goal not yet
//!   accepted is no longer followed.
//! - A done callback ([`ActionFuture::on_done`], [`ActionFuture::on_done_spun`]) runs where
//!   the service call's would: on the client's executor, in the client's callback group.

use kairos::graph::{CallError, ResponseFuture};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// The answer to a request of an [`ActionClient`](crate::ActionClient), once it comes.
///
/// Awaited in a callback whose group the server needs, it fails at once with
/// `WouldDeadlock`; a server that goes away fails it; dropped, it abandons the request
/// (a goal not yet accepted is no longer followed). Done callbacks run on the client's
/// executor, in its callback group.
#[must_use = "a request's answer is lost unless awaited or given a done callback"]
pub struct ActionFuture<T> {
    pending: Box<dyn Pending<T>>,
}

impl<T> fmt::Debug for ActionFuture<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ActionFuture").finish_non_exhaustive()
    }
}

/// A service call's response and what to make of it, whatever the service.
trait Pending<T>: Send {
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<T>;
    fn on_done(self: Box<Self>, done: Box<dyn FnOnce(T) + Send>, spun: bool);
}

struct Answer<Resp, F> {
    response: ResponseFuture<Resp>,
    finish: Option<F>,
}

impl<Resp, T: 'static, F> Pending<T> for Answer<Resp, F>
where
    Resp: Send + 'static,
    F: FnOnce(Result<Resp, CallError>) -> T + Send + 'static,
{
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<T> {
        Pin::new(&mut self.response).poll(cx).map(|response| {
            let finish = self
                .finish
                .take()
                .expect("ActionFuture polled after it completed");
            finish(response)
        })
    }

    fn on_done(self: Box<Self>, done: Box<dyn FnOnce(T) + Send>, spun: bool) {
        let Answer { response, finish } = *self;
        let Some(finish) = finish else { return };
        let callback = move |response| done(finish(response));
        if spun {
            response.on_done_spun(callback);
        } else {
            response.on_done(callback);
        }
    }
}

impl<T: 'static> ActionFuture<T> {
    /// `response`, made into `finish(response)` when it comes.
    pub(crate) fn new<Resp: Send + 'static>(
        response: ResponseFuture<Resp>,
        finish: impl FnOnce(Result<Resp, CallError>) -> T + Send + 'static,
    ) -> Self {
        Self {
            pending: Box::new(Answer {
                response,
                finish: Some(finish),
            }),
        }
    }

    /// Runs `callback` with the answer, as a callback of the client on its executor (in
    /// its callback group), as `ResponseFuture::on_done` does.
    pub fn on_done(self, callback: impl FnOnce(T) + Send + 'static) {
        self.pending.on_done(Box::new(callback), false);
    }

    /// Like [`on_done`](Self::on_done), but the callback always runs on an executor: an
    /// answer that comes while the client's node is in none waits until one runs it (as
    /// rclpy's futures complete under a spin), as `ResponseFuture::on_done_spun` does.
    pub fn on_done_spun(self, callback: impl FnOnce(T) + Send + 'static) {
        self.pending.on_done(Box::new(callback), true);
    }
}

impl<T> Future for ActionFuture<T> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        self.get_mut().pending.poll(cx)
    }
}
