//! Deadlock detection: a blocking wait made on an executor worker checks, before it blocks,
//! that the callbacks able to complete it can still run.
//!
//! Each worker records the callback it is running (its executor and held group) in a
//! thread-local stack of frames. A wait names the entities that must run to complete it
//! (for a service call: the service and the client that delivers its response). If one of
//! them is in a mutually exclusive group this thread holds, or needs a worker of this
//! thread's executor and none is free or ever can be (single-threaded executor, or every
//! other worker is itself blocked), the wait fails at once with [`WouldDeadlock`].
//!
//! Waits across threads are checked too: every blocked wait is recorded in a process-wide
//! wait-for graph (which mutually exclusive groups its thread holds, which groups must run
//! to complete it). A wait whose completers' groups are held by blocked threads that wait,
//! directly or through others, for a group this thread holds closes a cycle: it fails at
//! once with [`DeadlockReason::WaitCycle`], naming both callbacks, and the first waiter
//! completes once this callback returns.
//!
//! An awaited response (`call_async(..).await` in an async callback) is checked when it is
//! first polled: an async callback holds its group until its future completes (as a
//! coroutine task does in rclpy, where the group is released only when the coroutine
//! finishes), so a service in that same mutually exclusive group can never answer it.
//!
//! # Ground rules
//! The frames (`TOP`) are per thread. `WAITS` (the wait-for graph) is read and written only under its
//! lock, and a wait checks for a cycle and records itself in one critical section, so of
//! two waits that close a cycle the second always sees the first.

use super::entity::{Entity, EntityCore};
use super::executor::ExecShared;
use super::group::{CallbackGroup, GroupKind};
use super::shared_waits::{
    self, Combined, GroupRef, RemoteCycle, RemoteWaits, SharedWait, WaitSharing, WaitTarget,
};
use std::cell::Cell;
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
    /// Blocked callbacks in different groups wait for each other (a wait-for cycle).
    WaitCycle,
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
    /// Why the wait could never complete.
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
    request_sent: Option<bool>,
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
            request_sent: None,
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

    /// For a service call: whether its request had already been sent when the wait
    /// failed. A sent request is still served (a service that acts, acts), and its
    /// response is counted in `Client::late_responses`; one not sent never reaches the
    /// server. `None` for other waits.
    pub fn request_sent(&self) -> Option<bool> {
        self.details.request_sent
    }

    /// Says whether the call's request was sent, in the message too.
    pub(crate) fn with_request_sent(mut self, sent: bool) -> Self {
        let details = &mut self.details;
        details.request_sent = Some(sent);
        details.explanation.push_str(if sent {
            " The request was already sent: the server will still run it, and its response will be counted in the client's late_responses()."
        } else {
            " The request was not sent: the server never sees it."
        });
        self
    }
}

/// A callback running on this thread: the executor and the entity, borrowed from the
/// worker that runs it (no reference count is touched on the dispatch path). Frames live
/// on the stack of `in_frame` and link to the one below: a push and a pop are two stores
/// to a thread-local.
struct Frame {
    exec: *const Arc<ExecShared>,
    /// The entity whose callback runs (its group and name are the frame's).
    entity: *const Arc<dyn Entity>,
    /// The frame below this one on this thread (null: none).
    below: *const Frame,
    /// Whether it polls an async callback's task (which holds its group until it
    /// completes), rather than running a callback to its end.
    task: bool,
}

// The dispatch path's second exception to the crate's `deny(unsafe_code)`: cloning two
// `Arc`s per callback for the frame cost four atomic read-modify-writes and a growable
// stack a borrow check and a bounds check, a tenth of a dispatch; the frame borrows them
// instead, for exactly as long as `in_frame` runs.
#[allow(unsafe_code)]
impl Frame {
    fn exec(&self) -> &Arc<ExecShared> {
        // SAFETY: a frame is reachable from `TOP` only while `in_frame`, which made it,
        // runs, and `in_frame` borrows the executor for that whole time (it unlinks the
        // frame before it returns or unwinds); frames are read only on their own thread.
        unsafe { &*self.exec }
    }

    fn entity(&self) -> &Arc<dyn Entity> {
        // SAFETY: as for `exec`: the entity is borrowed by `in_frame` while the frame lives.
        unsafe { &*self.entity }
    }

    fn below(&self) -> Option<&Frame> {
        // SAFETY: the frame below is that of an `in_frame` further down this thread's
        // stack, still running while this one is (frames are unlinked in reverse order).
        unsafe { self.below.as_ref() }
    }

    fn group(&self) -> &CallbackGroup {
        &self.entity().core().group
    }

    fn callback(&self) -> &Arc<str> {
        &self.entity().core().name
    }
}

thread_local! {
    /// The innermost frame of this thread (null: it runs no callback).
    static TOP: Cell<*const Frame> = const { Cell::new(std::ptr::null()) };
}

/// The innermost frame of this thread.
#[allow(unsafe_code)]
fn top<'a>() -> Option<&'a Frame> {
    // SAFETY: `TOP` is null or the frame of an `in_frame` running on this thread; callers
    // use the reference before they return to any code that could unlink it.
    unsafe { TOP.with(Cell::get).as_ref() }
}

/// This thread's frames, outermost first, for the checks made before a blocking wait.
fn with_frames<R>(f: impl FnOnce(&[&Frame]) -> R) -> R {
    let mut frames: Vec<&Frame> = std::iter::successors(top(), |frame| frame.below()).collect();
    frames.reverse();
    f(&frames)
}

/// Runs `f` with the current thread marked as running the callback of `entity` on
/// `exec`: the waits `f` makes are checked against it.
pub(crate) fn in_frame<R>(
    exec: &Arc<ExecShared>,
    entity: &Arc<dyn Entity>,
    f: impl FnOnce() -> R,
) -> R {
    in_frame_of(exec, entity, false, f)
}

/// [`in_frame`] for a poll of the task of `entity`'s async callback.
pub(crate) fn in_task_frame<R>(
    exec: &Arc<ExecShared>,
    entity: &Arc<dyn Entity>,
    f: impl FnOnce() -> R,
) -> R {
    in_frame_of(exec, entity, true, f)
}

fn in_frame_of<R>(
    exec: &Arc<ExecShared>,
    entity: &Arc<dyn Entity>,
    task: bool,
    f: impl FnOnce() -> R,
) -> R {
    /// Unlinks the frame when `f` returns or unwinds, while both borrows still hold.
    struct Unlink(*const Frame);
    impl Drop for Unlink {
        fn drop(&mut self) {
            TOP.with(|top| top.set(self.0));
        }
    }
    let frame = Frame {
        exec: std::ptr::from_ref(exec),
        entity: std::ptr::from_ref(entity),
        below: TOP.with(Cell::get),
        task,
    };
    TOP.with(|top| top.set(&raw const frame));
    let _unlink = Unlink(frame.below);
    // What the layers below see of this callback (`crate::current`).
    let core = entity.core();
    let running = crate::current::callback::Running {
        handle: core.id(),
        shutdown: &exec.shutdown_token,
        logger: core.logger.as_ref(),
    };
    crate::current::callback::enter(&running, f)
}

/// Whether this thread polls an async callback's task now: what it awaits must complete
/// while the callback's group stays held.
pub(crate) fn in_task() -> bool {
    top().is_some_and(|frame| frame.task)
}

/// The executors whose callbacks this thread is running now, innermost first.
pub(crate) fn running_here() -> Vec<u64> {
    std::iter::successors(top(), |frame| frame.below())
        .map(|f| f.exec().id)
        .collect()
}

/// One blocked wait in the wait-for graph.
struct WaitRecord {
    key: u64,
    callback: Arc<str>,
    /// The mutually exclusive groups the waiting thread holds: (id, name).
    holds: Vec<(u64, String)>,
    /// The groups that must run to complete the wait: (id, name, completer name).
    waits_for: Vec<(u64, String, Arc<str>)>,
    /// The service in another process that must answer (see `shared_waits`).
    remote: Option<Arc<str>>,
    /// What the wait was, for the error that ends it.
    operation: String,
    /// Ends the wait with `WouldDeadlock` (set once its request is sent).
    abort: Option<Abort>,
    /// A cycle found before `abort` was set: it fires as soon as it is.
    doomed: Option<WouldDeadlock>,
}

/// Ends a blocked wait with an error.
pub(crate) type Abort = Box<dyn FnOnce(WouldDeadlock) + Send>;

/// What a [`WouldDeadlock`]'s "Fix:" offers for one kind of wait, besides moving the
/// completers to another callback group and spinning a multi-threaded executor (which
/// every fix says).
#[derive(Debug, Clone, Copy)]
pub struct WaitAdvice<'a> {
    /// How to get the result without blocking, as a clause: "use a done callback
    /// (ResponseFuture::on_done)". The fixes add "and return" where it fits.
    pub non_blocking: &'a str,
    /// How to wait without holding a worker, as a clause: "`.await` it in an async
    /// callback".
    pub await_instead: &'a str,
    /// What to put in another callback group, as the fix names it, when that is not the
    /// completing entity by name (`None`: "'subscription /tf'", quoted).
    pub relocate: Option<&'a str>,
}

impl WaitAdvice<'static> {
    /// The advice for a service call.
    pub(crate) const CALL: WaitAdvice<'static> = WaitAdvice {
        non_blocking: "use a done callback (ResponseFuture::on_done)",
        await_instead: "`.await` it in an async callback",
        relocate: None,
    };
}

impl WaitAdvice<'_> {
    /// What the fix says to put in another callback group.
    fn relocate(&self, completer: &EntityCore) -> String {
        match self.relocate {
            Some(what) => what.to_owned(),
            None => format!("'{}'", completer.name),
        }
    }
}

impl WaitRecord {
    fn shared(&self) -> SharedWait {
        let mut waits_for: Vec<WaitTarget> = self
            .waits_for
            .iter()
            .map(|(id, name, completer)| WaitTarget::Group {
                group: GroupRef::local(*id, name),
                completer: completer.to_string(),
            })
            .collect();
        waits_for.extend(
            self.remote
                .iter()
                .map(|service| WaitTarget::Service(service.to_string())),
        );
        SharedWait {
            process: shared_waits::process_id().to_owned(),
            key: self.key,
            callback: self.callback.to_string(),
            holds: held_refs(&self.holds),
            waits_for,
        }
    }
}

/// Held groups `(id, name)` as the shared graph names them.
fn held_refs(holds: &[(u64, String)]) -> Vec<GroupRef> {
    holds
        .iter()
        .map(|(id, name)| GroupRef::local(*id, name))
        .collect()
}

/// This process's waits, as processes share them.
pub(crate) fn shared_snapshot() -> Vec<SharedWait> {
    WAITS.lock().iter().map(WaitRecord::shared).collect()
}

static WAITS: parking_lot::Mutex<Vec<WaitRecord>> = parking_lot::const_mutex(Vec::new());

/// Counts this thread as blocked on its executors until dropped, so that the other
/// workers' waits know it cannot help them, and keeps its wait in the wait-for graph.
pub(crate) struct BlockedWorker {
    execs: Vec<Arc<ExecShared>>,
    record: Option<u64>,
    /// The transport that shared this wait with other processes.
    sharing: Option<Arc<dyn WaitSharing>>,
}

impl BlockedWorker {
    /// Lets a cycle found later through other processes end this wait with `abort`.
    pub(crate) fn on_abort(&self, abort: Abort) {
        let Some(key) = self.record else {
            return;
        };
        let mut waits = WAITS.lock();
        let Some(record) = waits.iter_mut().find(|r| r.key == key) else {
            return;
        };
        match record.doomed.take() {
            Some(error) => {
                drop(waits);
                abort(error);
            }
            None => record.abort = Some(abort),
        }
    }
}

impl Drop for BlockedWorker {
    fn drop(&mut self) {
        for exec in &self.execs {
            exec.blocked_workers.fetch_sub(1, Ordering::AcqRel);
        }
        if let Some(key) = self.record {
            WAITS.lock().retain(|r| r.key != key);
        }
        if let Some(sharing) = &self.sharing {
            sharing.share();
        }
    }
}

impl fmt::Debug for BlockedWorker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("BlockedWorker")
            .field(&self.execs.len())
            .finish()
    }
}

/// A blocked wait whose completers' groups lead back to one this thread holds.
struct Cycle {
    group: String,
    completer: Arc<str>,
    other_callback: Arc<str>,
    other_waits_for: Arc<str>,
    held_group: String,
}

fn find_cycle(
    waits: &[WaitRecord],
    holds: &[(u64, String)],
    start: &[(u64, String, Arc<str>)],
) -> Option<Cycle> {
    for (group, group_name, completer) in start {
        let mut frontier = vec![*group];
        let mut visited = vec![*group];
        while let Some(g) = frontier.pop() {
            for record in waits
                .iter()
                .filter(|r| r.holds.iter().any(|(id, _)| *id == g))
            {
                for (next, _, next_completer) in &record.waits_for {
                    if let Some((_, held)) = holds.iter().find(|(id, _)| id == next) {
                        return Some(Cycle {
                            group: group_name.clone(),
                            completer: completer.clone(),
                            other_callback: record.callback.clone(),
                            other_waits_for: next_completer.clone(),
                            held_group: held.clone(),
                        });
                    }
                    if !visited.contains(next) {
                        visited.push(*next);
                        frontier.push(*next);
                    }
                }
            }
        }
    }
    None
}

/// Checks an `.await` of a response that only `completers` can complete, made inside an
/// async callback: a completer in the mutually exclusive group the callback holds (until
/// its future completes) can never run.
pub(crate) fn check_await(
    operation: &str,
    completers: &[&EntityCore],
) -> Result<(), WouldDeadlock> {
    check_await_advised(operation, completers, &WaitAdvice::CALL)
}

/// [`check_await`] with the fix `advice` gives.
pub(crate) fn check_await_advised(
    operation: &str,
    completers: &[&EntityCore],
    advice: &WaitAdvice<'_>,
) -> Result<(), WouldDeadlock> {
    with_frames(|frames| {
        let Some(top) = frames.last() else {
            return Ok(());
        };
        for completer in completers {
            let Some(exec) = completer.executor() else {
                continue;
            };
            let held = frames
                .iter()
                .any(|f| f.exec().id == exec.id && *f.group() == completer.group);
            if held && completer.group.kind() == GroupKind::MutuallyExclusive {
                return Err(WouldDeadlock::new(
                    operation,
                    top.callback(),
                    completer.group.name(),
                    DeadlockReason::GroupHeld,
                    format!(
                        "it needs '{}' to run, which is in the mutually exclusive callback group '{}'; an async callback holds its group until its future completes (as a coroutine does in rclpy), so the awaited response could never come.",
                        completer.name,
                        completer.group.name()
                    ),
                    format!(
                        "put {} in another callback group (Node::create_callback_group, Node::with_group), or {} and return.",
                        advice.relocate(completer),
                        advice.non_blocking
                    ),
                ));
            }
        }
        Ok(())
    })
}

/// A blocking wait's server in another process, and the transport that shares waits.
pub(crate) struct RemoteServer<'a> {
    pub(crate) service: &'a str,
    pub(crate) sharing: Arc<dyn WaitSharing>,
}

/// Checks a blocking wait that only `completers` (in this process) or `remote` (in
/// another) can complete.
pub(crate) fn check_blocking_wait(
    operation: &str,
    completers: &[&EntityCore],
    remote: Option<RemoteServer<'_>>,
) -> Result<BlockedWorker, WouldDeadlock> {
    check_blocking_wait_advised(operation, completers, remote, &WaitAdvice::CALL)
}

/// [`check_blocking_wait`] with the fix `advice` gives.
pub(crate) fn check_blocking_wait_advised(
    operation: &str,
    completers: &[&EntityCore],
    remote: Option<RemoteServer<'_>>,
    advice: &WaitAdvice<'_>,
) -> Result<BlockedWorker, WouldDeadlock> {
    // Heard before the lock on `WAITS` is taken: the transport's lock is never taken inside it.
    // Only a callback holds groups: a call from `main` needs no look at the others.
    let heard = remote
        .as_ref()
        .filter(|_| top().is_some())
        .map(|r| r.sharing.remote());
    with_frames(|frames| {
        let Some(top) = frames.last() else {
            return Ok(BlockedWorker {
                execs: Vec::new(),
                record: None,
                sharing: None,
            });
        };
        let would_deadlock = |group: &str, reason, explanation: String, fix: String| {
            WouldDeadlock::new(operation, top.callback(), group, reason, explanation, fix)
        };
        for completer in completers {
            let Some(exec) = completer.executor() else {
                continue;
            };
            let held = frames
                .iter()
                .any(|f| f.exec().id == exec.id && *f.group() == completer.group);
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
                        "{} and return, or put {} in another callback group and spin a multi-threaded executor (`.await` in an async callback does not help here: it holds its group until it completes).",
                        advice.non_blocking,
                        advice.relocate(completer)
                    ),
                ));
            }
        }
        for completer in completers {
            let Some(exec) = completer.executor() else {
                continue;
            };
            if !frames.iter().any(|f| f.exec().id == exec.id) {
                continue;
            }
            let workers = exec.workers;
            if workers == 1 || exec.blocked_workers.load(Ordering::Acquire) + 1 >= workers {
                let why = if workers == 1 {
                    "the executor is single-threaded and its only thread is the one waiting"
                        .to_owned()
                } else {
                    format!("all {workers} workers of the executor are blocked waiting")
                };
                return Err(would_deadlock(
                    top.group().name(),
                    DeadlockReason::NoFreeWorker,
                    format!(
                        "it needs '{}' (group '{}') to run, but {why}.",
                        completer.name,
                        completer.group.name()
                    ),
                    format!(
                        "{}, or {}, or spin a multi-threaded executor with {} in a callback group other than '{}'.",
                        advice.await_instead,
                        advice.non_blocking,
                        advice.relocate(completer),
                        top.group().name()
                    ),
                ));
            }
        }
        let mut holds: Vec<(u64, String)> = Vec::new();
        for frame in frames.iter() {
            let group = frame.group();
            if group.kind() == GroupKind::MutuallyExclusive
                && !holds.iter().any(|(id, _)| *id == group.shared.id)
            {
                holds.push((group.shared.id, group.name().to_owned()));
            }
        }
        let waits_for: Vec<(u64, String, Arc<str>)> = completers
            .iter()
            .filter(|c| c.group.kind() == GroupKind::MutuallyExclusive)
            .map(|c| (c.group.shared.id, c.group.name().to_owned(), c.name.clone()))
            .collect();
        let remote_service = remote.as_ref().map(|r| Arc::<str>::from(r.service));
        let record = if holds.is_empty() || (waits_for.is_empty() && remote_service.is_none()) {
            None
        } else {
            let mut waits = WAITS.lock();
            if let (Some(service), Some(heard)) = (&remote_service, heard) {
                let local = waits.iter().map(WaitRecord::shared).collect();
                let graph = Combined::new(local, heard);
                let target = [WaitTarget::Service(service.to_string())];
                if let Some(cycle) = graph.find_cycle(&held_refs(&holds), &target, None) {
                    return Err(remote_cycle_error(
                        operation,
                        top.callback(),
                        &graph,
                        &cycle,
                    ));
                }
            }
            if let Some(cycle) = find_cycle(&waits, &holds, &waits_for) {
                return Err(would_deadlock(
                    &cycle.group,
                    DeadlockReason::WaitCycle,
                    format!(
                        "it needs '{}' (group '{}') to run, but callback '{}' holds that group and is itself blocked waiting for '{}', which needs group '{}' that this callback holds: each would wait for the other.",
                        cycle.completer,
                        cycle.group,
                        cycle.other_callback,
                        cycle.other_waits_for,
                        cycle.held_group
                    ),
                    format!(
                        "make one of the two calls non-blocking (a done callback, ResponseFuture::on_done, and return), or put '{}' or '{}' in a callback group that neither caller holds.",
                        cycle.completer, cycle.other_waits_for
                    ),
                ));
            }
            static NEXT_KEY: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
            let key = NEXT_KEY.fetch_add(1, Ordering::Relaxed);
            waits.push(WaitRecord {
                key,
                callback: top.callback().clone(),
                holds,
                waits_for,
                remote: remote_service,
                operation: operation.to_owned(),
                abort: None,
                doomed: None,
            });
            Some(key)
        };
        // Shared before the request is sent: the server's process hears this wait first.
        let sharing = record.and(remote.map(|r| r.sharing));
        if let Some(sharing) = &sharing {
            sharing.share();
        }
        let mut blocked: Vec<Arc<ExecShared>> = Vec::new();
        for frame in frames.iter() {
            if !blocked.iter().any(|e| e.id == frame.exec().id) {
                frame.exec().blocked_workers.fetch_add(1, Ordering::AcqRel);
                blocked.push(frame.exec().clone());
            }
        }
        Ok(BlockedWorker {
            execs: blocked,
            record,
            sharing,
        })
    })
}

/// The error of a wait that closes a cycle through other processes.
fn remote_cycle_error(
    operation: &str,
    callback: &str,
    graph: &Combined,
    cycle: &RemoteCycle,
) -> WouldDeadlock {
    let other_process = graph.label(&cycle.other.process);
    WouldDeadlock::new(
        operation,
        callback,
        &cycle.group.name,
        DeadlockReason::WaitCycle,
        format!(
            "it needs '{}' (group {}) to run, but callback '{}' in process {} holds that group and is itself blocked waiting for '{}', which needs group '{}' that this callback holds in process {}: each would wait for the other.",
            cycle.completer,
            graph.where_is(&cycle.group),
            cycle.other.callback,
            other_process,
            cycle.other_waits_for,
            cycle.held.name,
            graph.label(shared_waits::process_id()),
        ),
        format!(
            "make one of the two calls non-blocking (a done callback, ResponseFuture::on_done, and return), or put '{}' or '{}' in a callback group that neither caller holds.",
            cycle.completer, cycle.other_waits_for
        ),
    )
}

/// Checks this process's blocked calls to other processes against what `heard` says
/// (waits another process shared since): a wait now on a cycle, and the one [`victim`]
/// picks on it, ends with `WouldDeadlock`. Returns how many ended.
///
/// [`victim`]: shared_waits::victim
pub(crate) fn recheck(heard: RemoteWaits) -> usize {
    let mut aborts: Vec<(Abort, WouldDeadlock)> = Vec::new();
    {
        let mut waits = WAITS.lock();
        let local: Vec<SharedWait> = waits.iter().map(WaitRecord::shared).collect();
        let graph = Combined::new(local.clone(), heard);
        for (record, shared) in waits.iter_mut().zip(&local) {
            if record.remote.is_none() || record.doomed.is_some() {
                continue;
            }
            let Some(cycle) = graph.find_cycle(
                &shared.holds,
                &shared.waits_for,
                Some((&shared.process, shared.key)),
            ) else {
                continue;
            };
            let mut members: Vec<&SharedWait> = cycle.members.iter().collect();
            members.push(shared);
            if shared_waits::victim(&members) != Some(shared) {
                continue;
            }
            let error = remote_cycle_error(&record.operation, &record.callback, &graph, &cycle);
            match record.abort.take() {
                Some(abort) => aborts.push((abort, error)),
                None => record.doomed = Some(error),
            }
        }
    }
    let ended = aborts.len();
    for (abort, error) in aborts {
        abort(error);
    }
    ended
}

/// Checks that `exec` is not being spun from inside one of its own callbacks.
pub(crate) fn check_not_nested(exec: &ExecShared, operation: &str) -> Result<(), WouldDeadlock> {
    with_frames(|frames| {
        match frames.iter().rev().find(|f| f.exec().id == exec.id) {
            None => Ok(()),
            Some(frame) => Err(WouldDeadlock::new(
                operation,
                frame.callback(),
                frame.group().name(),
                DeadlockReason::NestedSpin,
                format!(
                    "this thread is running a callback of the same executor and holds its callback group '{}'; a nested spin could wait for callbacks of that group, which cannot start until this callback returns.",
                    frame.group().name()
                ),
                "`.await` the future in an async callback, or use a done callback; spin an executor only from outside its callbacks.".to_owned(),
            )),
        }
    })
}
