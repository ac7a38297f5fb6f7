//! Deadlock detection: a blocking wait made on an executor worker checks, before it blocks,
//! that the callbacks able to complete it can still run.
//!
//! Each worker records the callback it is running (its executor and held group) in a
//! thread-local stack of frames. A wait names the entities that must run to complete it
//! (for a service call: the service and the client that delivers its response). If one of
//! them is in a mutually exclusive group this thread holds, or needs a worker of this
//! thread's executor and none is free or ever can be (single-threaded executor, or every
//! other worker is itself blocked), the wait fails at once with [`WouldDeadlock`].

use super::entity::EntityCore;
use super::executor::ExecShared;
use super::group::{CallbackGroup, GroupKind};
use std::cell::RefCell;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// Why a blocking wait could never complete.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DeadlockReason {
    /// The completing callback is in a mutually exclusive group this thread holds.
    GroupHeld,
    /// The completing callback needs a worker of this executor and none can ever be free.
    NoFreeWorker,
    /// The executor was asked to spin from inside one of its own callbacks.
    NestedSpin,
}

/// A blocking wait that would never complete, reported instead of hanging.
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "{} inside callback '{}' would deadlock: {} Fix: {}",
    details.operation,
    details.callback,
    details.explanation,
    details.fix
)]
pub struct WouldDeadlock {
    pub reason: DeadlockReason,
    /// The callback group at the heart of the deadlock.
    pub group: String,
    details: Box<Details>,
}

#[derive(Debug, Clone)]
struct Details {
    operation: String,
    callback: String,
    explanation: String,
    fix: String,
}

impl WouldDeadlock {
    fn new(
        operation: &str,
        callback: &str,
        group: &str,
        reason: DeadlockReason,
        explanation: String,
        fix: String,
    ) -> Self {
        let details = Details {
            operation: operation.to_owned(),
            callback: callback.to_owned(),
            explanation,
            fix,
        };
        Self {
            reason,
            group: group.to_owned(),
            details: Box::new(details),
        }
    }

    /// What was called (e.g. `call() to service '/add'`).
    pub fn operation(&self) -> &str {
        &self.details.operation
    }

    /// The callback that made the call.
    pub fn callback(&self) -> &str {
        &self.details.callback
    }
}

struct Frame {
    exec: Arc<ExecShared>,
    group: CallbackGroup,
    callback: Arc<str>,
}

thread_local! {
    static FRAMES: RefCell<Vec<Frame>> = const { RefCell::new(Vec::new()) };
}

/// Marks the current thread as running `callback` of `group` on `exec` until dropped.
pub(crate) struct RunningFrame(());

impl RunningFrame {
    pub(crate) fn enter(
        exec: &Arc<ExecShared>,
        group: &CallbackGroup,
        callback: &Arc<str>,
    ) -> Self {
        FRAMES.with(|frames| {
            frames.borrow_mut().push(Frame {
                exec: exec.clone(),
                group: group.clone(),
                callback: callback.clone(),
            })
        });
        Self(())
    }
}

impl Drop for RunningFrame {
    fn drop(&mut self) {
        FRAMES.with(|frames| frames.borrow_mut().pop());
    }
}

/// Counts this thread as blocked on its executors until dropped, so that the other
/// workers' waits know it cannot help them.
pub(crate) struct BlockedWorker(Vec<Arc<ExecShared>>);

impl Drop for BlockedWorker {
    fn drop(&mut self) {
        for exec in &self.0 {
            exec.blocked_workers.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

impl fmt::Debug for BlockedWorker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("BlockedWorker").field(&self.0.len()).finish()
    }
}

/// Checks a blocking wait that only `completers` can complete.
pub(crate) fn check_blocking_wait(
    operation: &str,
    completers: &[&EntityCore],
) -> Result<BlockedWorker, WouldDeadlock> {
    FRAMES.with(|frames| {
        let frames = frames.borrow();
        let Some(top) = frames.last() else { return Ok(BlockedWorker(Vec::new())) };
        let would_deadlock = |group: &str, reason, explanation: String, fix: String| {
            WouldDeadlock::new(operation, &top.callback, group, reason, explanation, fix)
        };
        for completer in completers {
            let Some(exec) = completer.executor() else { continue };
            let held = frames.iter().any(|f| f.exec.id == exec.id && f.group == completer.group);
            if held && completer.group.kind() == GroupKind::MutuallyExclusive {
                return Err(would_deadlock(
                    completer.group.name(),
                    DeadlockReason::GroupHeld,
                    format!(
                        "it needs '{}' to run, which is in the mutually exclusive callback group '{}' that this callback holds.",
                        completer.name,
                        completer.group.name()
                    ),
                    format!(
                        "`.await` it in an async callback, or use a done callback (ResponseFuture::on_done), or put '{}' in another callback group and spin a multi-threaded executor.",
                        completer.name
                    ),
                ));
            }
        }
        for completer in completers {
            let Some(exec) = completer.executor() else { continue };
            if !frames.iter().any(|f| f.exec.id == exec.id) {
                continue;
            }
            let workers = exec.workers;
            if workers == 1 || exec.blocked_workers.load(Ordering::Acquire) + 1 >= workers {
                let why = if workers == 1 {
                    "the executor is single-threaded and its only thread is the one waiting".to_owned()
                } else {
                    format!("all {workers} workers of the executor are blocked waiting")
                };
                return Err(would_deadlock(
                    top.group.name(),
                    DeadlockReason::NoFreeWorker,
                    format!("it needs '{}' (group '{}') to run, but {why}.", completer.name, completer.group.name()),
                    format!(
                        "`.await` it in an async callback, or use a done callback (ResponseFuture::on_done), or spin a multi-threaded executor with '{}' in a callback group other than '{}'.",
                        completer.name,
                        top.group.name()
                    ),
                ));
            }
        }
        let mut blocked: Vec<Arc<ExecShared>> = Vec::new();
        for frame in frames.iter() {
            if !blocked.iter().any(|e| e.id == frame.exec.id) {
                frame.exec.blocked_workers.fetch_add(1, Ordering::AcqRel);
                blocked.push(frame.exec.clone());
            }
        }
        Ok(BlockedWorker(blocked))
    })
}

/// Checks that `exec` is not being spun from inside one of its own callbacks.
pub(crate) fn check_not_nested(exec: &ExecShared, operation: &str) -> Result<(), WouldDeadlock> {
    FRAMES.with(|frames| {
        let frames = frames.borrow();
        match frames.iter().rev().find(|f| f.exec.id == exec.id) {
            None => Ok(()),
            Some(frame) => Err(WouldDeadlock::new(
                operation,
                &frame.callback,
                frame.group.name(),
                DeadlockReason::NestedSpin,
                format!(
                    "this thread is running a callback of the same executor and holds its callback group '{}'; a nested spin could wait for callbacks of that group, which cannot start until this callback returns.",
                    frame.group.name()
                ),
                "`.await` the future in an async callback, or use a done callback; spin an executor only from outside its callbacks.".to_owned(),
            )),
        }
    })
}
