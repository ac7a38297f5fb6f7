//! Threads the runtime owns, and how they stop: never by a join without a deadline.
//!
//! Story 1 froze a simulator because a destructor joined a thread that slept on a clock
//! that would never advance. Here every owned thread is a [`ManagedThread`]: it runs its
//! body with a [`CancelToken`], and [`ManagedThread::stop`] cancels that token (which wakes
//! every kairos wait the thread is in, on any clock), then waits for the thread only until
//! a deadline. A thread still running then is *reported*, by name, with how long it ran
//! and what it was waiting on, and detached: the caller always gets control back.
//!
//! [`PeriodicTask`] is the common shape on top: a body run every period on any clock.

mod periodic;

pub use periodic::PeriodicTask;

use crate::current::wait::{self, WaitStatus};
use crate::time::{CancelToken, Clock, Duration, Time};
use std::fmt;
use std::sync::Arc;
use std::sync::mpsc;

/// How a [`ManagedThread::stop`] ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopOutcome {
    /// The thread finished within the deadline.
    Stopped,
    /// The thread's body panicked; the message is kept.
    Panicked(String),
    /// The thread was still running at the deadline and has been detached.
    StillRunning {
        /// What the thread was blocked in, if it was in a kairos wait.
        waiting_on: Option<String>,
    },
}

/// What [`ManagedThread::stop`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StopReport {
    /// The thread's name.
    pub name: String,
    /// Whether it stopped by the deadline, and if not what it waited on.
    pub outcome: StopOutcome,
    /// How long the thread had been running when the stop returned.
    pub ran_for: Duration,
    /// How long the stop took.
    pub stop_took: Duration,
}

impl StopReport {
    /// Whether the thread stopped by the deadline.
    pub fn stopped(&self) -> bool {
        self.outcome == StopOutcome::Stopped
    }
}

impl fmt::Display for StopReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.outcome {
            StopOutcome::Stopped => {
                write!(f, "thread '{}' stopped in {}", self.name, self.stop_took)
            }
            StopOutcome::Panicked(msg) => write!(f, "thread '{}' panicked: {msg}", self.name),
            StopOutcome::StillRunning { waiting_on } => write!(
                f,
                "thread '{}' did not stop within {} (running for {}, {}); detached",
                self.name,
                self.stop_took,
                self.ran_for,
                waiting_on
                    .as_deref()
                    .map_or("not in a kairos wait".into(), |w| format!("waiting on {w}"))
            ),
        }
    }
}

/// A thread owned by the runtime, stopped through [`stop`](Self::stop).
#[derive(Debug)]
pub struct ManagedThread {
    name: String,
    token: CancelToken,
    started: Time,
    status: Arc<WaitStatus>,
    done: mpsc::Receiver<Result<(), String>>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl ManagedThread {
    /// Starts `body` on a named thread. The body should return once its token is cancelled;
    /// every kairos wait it makes with that token does so at once.
    pub fn spawn(
        name: impl Into<String>,
        body: impl FnOnce(&CancelToken) + Send + 'static,
    ) -> std::io::Result<ManagedThread> {
        let name = name.into();
        if name.contains('\0') {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("thread name {name:?} contains a NUL byte; give a name without one"),
            ));
        }
        let token = CancelToken::new();
        let status = Arc::new(WaitStatus::default());
        let (done_tx, done) = mpsc::channel();
        let (t, s) = (token.clone(), Arc::clone(&status));
        let handle = std::thread::Builder::new()
            .name(name.clone())
            .spawn(move || {
                wait::install(s);
                let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(&t)));
                let _ = done_tx.send(result.map_err(|p| panic_message(p.as_ref())));
            })?;
        Ok(ManagedThread {
            name,
            token,
            started: Clock::steady().now(),
            status,
            done,
            handle: Some(handle),
        })
    }

    /// The thread's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The token the thread's body runs with.
    pub fn token(&self) -> &CancelToken {
        &self.token
    }

    /// What the thread is blocked in right now, if it is in a kairos wait: the runtime
    /// can say, while it is stuck, who waits for what.
    pub fn waiting_on(&self) -> Option<String> {
        self.status.current()
    }

    /// Whether the body has returned.
    pub fn is_finished(&self) -> bool {
        self.handle.as_ref().is_none_or(|h| h.is_finished())
    }

    /// Asks the thread to stop (cancelling its token) and waits for it at most `timeout`.
    pub fn stop(mut self, timeout: impl Into<Duration>) -> StopReport {
        let timeout = timeout.into();
        let steady = Clock::steady();
        let asked = steady.now();
        self.token.cancel();
        let waited = self.done.recv_timeout(timeout.to_std().unwrap_or_default());
        let now = steady.now();
        let ran_for = now.since(self.started).unwrap_or(Duration::ZERO);
        let stop_took = now.since(asked).unwrap_or(Duration::ZERO);
        let outcome = match waited {
            Ok(Ok(())) => StopOutcome::Stopped,
            Ok(Err(msg)) => StopOutcome::Panicked(msg),
            Err(_) => StopOutcome::StillRunning {
                waiting_on: self.status.current(),
            },
        };
        if matches!(outcome, StopOutcome::StillRunning { .. }) {
            // Detach: dropping the handle never blocks.
            self.handle.take();
        } else if let Some(h) = self.handle.take() {
            // The body has returned (it sent its result): this join only waits for the
            // thread's exit code path, which cannot block.
            let _ = h.join();
        }
        StopReport {
            name: std::mem::take(&mut self.name),
            outcome,
            ran_for,
            stop_took,
        }
    }
}

impl Drop for ManagedThread {
    /// A thread dropped without `stop` is still asked to stop, and detached.
    fn drop(&mut self) {
        self.token.cancel();
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-string panic payload".into())
}
