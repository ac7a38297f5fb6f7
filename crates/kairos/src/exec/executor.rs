//! Executors: the threads that run callbacks.
//!
//! One type, [`Executor`], single-threaded or multi-threaded (N workers: the thread that
//! spins plus N-1 it starts). Work is event driven: a ready entity is queued once and
//! served in arrival order, so a busy timer cannot starve a service. Every way in has a way
//! out: `spin` ends on [`Executor::cancel`] or [`Executor::shutdown`], the other spins take a
//! timeout, and `shutdown(deadline)` never waits past its deadline for a stuck callback,
//! it names it in the [`ShutdownReport`]. Spinning an executor from inside its own callback,
//! or from two threads at once, is an error, not a hang.
//!
//! # How a spin runs, is cancelled and shuts down
//!
//! **Spin.** Every spin (`spin`, `spin_once`, `spin_some`, `spin_all`,
//! `spin_until_future_complete`) opens a `SpinSession` in `begin_spin`: under the `spin`
//! lock it refuses a second concurrent spin (`AlreadySpinning`), consumes a pending cancel
//! (the spin then returns at once), sets `spinning`, notifies `spin_started` (which
//! `spin_thread` waits on) and records the current `epoch`. `spin` and
//! `spin_until_future_complete` on a multi-threaded executor start `workers - 1` helper
//! threads for the session; each helper counts itself in `live_helpers`, marks its thread
//! with `HELPER_OF`, and loops like the spinning thread: check `should_stop`, pop one item
//! from the ready queue (blocking), run it. The thread that spins a single-threaded
//! executor pops through `next_item`, which also keeps the executor's timers (see
//! `timekeeper`): it wakes the due ones and waits no later than the earliest deadline.
//!
//! **Run one item.** `run_ready` takes an item (an entity, or a woken async task), enters
//! the item's simulated-step scope if a step marked it (see `settle`), and `run_entity`
//! skips a destroyed or detached entity (passing on its group if a release had handed it
//! the group), enters the callback group's gate or parks the item there, clears the
//! entity's schedule flag (so an event from now on queues it again) and runs its callback
//! under `guarded`: shown in the worker's slot (see `running`; what `shutdown` reports)
//! and in this thread's deadlock frames, its panic caught. When it returns, `finish`
//! leaves the gate, queueing the oldest work parked behind it at the front of the ready
//! queue, and re-queues the entity, at the back, with the worker's own reference if it
//! has more work. Under `spin` (and on helper threads) a subscription with a plain
//! callback runs a *batch*: it keeps its schedule flag and runs its queued messages one
//! callback after another, each guarded as above, while no other work is queued or parked
//! behind its group, up to `BATCH` (`run_batch`); then it is re-queued or its flag released
//! (`EntityCore::requeue_held`).
//!
//! **Cancel.** `cancel` under the `spin` lock: if a spin is in progress it bumps `epoch`
//! and interrupts the ready queue, so every worker of that session sees `should_stop` at
//! its next turn (after the callback it is running returns) and returns; otherwise it sets
//! `cancel_pending`, so the next spin returns at once, as rclcpp's `cancel` does before a
//! spin. Ending a session (`SpinSession::drop`) clears `spinning` and bumps `epoch` too,
//! which stops the helpers it started; they decrement `live_helpers` under the `running`
//! lock and notify `idle` as they exit.
//!
//! **Shut down.** `shutdown` sets `shut_down` (store and fence, `running::shut_down`),
//! bumps `epoch`, interrupts the queue and trips `shutdown_token` (waking kairos waits
//! inside callbacks), then detaches the nodes and fails their queued responses. It waits
//! on `idle` under the `running` lock, until its deadline, for the worker slots to show no
//! callback on another thread and helpers to exit. A worker that took an item before the
//! shutdown shows the callback in its slot, fences, then checks `shut_down` before
//! starting it (`guarded`), so every callback either shows in the report or never starts. Suspended async tasks are swept once under the `tasks` lock; a task
//! being polled meanwhile is abandoned by its worker after the poll (it sees `swept`).
//! Finally the ready queue is drained, dropping what it held, and finished helpers joined.
//!
//! # Ground rules
//! - `spin` (lock): `spinning` and `cancel_pending` change only under it; `epoch` is bumped
//!   under it by `cancel` and by a session's end (and without it by `shutdown`, which
//!   also sets `shut_down` first); workers read `epoch` and `shut_down` without a lock.
//! - `running` (lock): the registry of worker slots (each written by its worker alone,
//!   without this lock: see `running`'s ground rules); `live_helpers` decrements and
//!   `idle` notifications happen under it, so `shutdown`'s wait on `idle` cannot miss one.
//! - `tasks` (lock): a task is inserted when its first poll suspends and removed exactly
//!   once (by completion, by its worker after a sweep, or by the sweep), and whoever
//!   removes it releases its group.
//! - The ready queue, the gates and the schedule flags have their own protocols (see
//!   `ready` and `gate`); nothing here holds one of their locks while calling a callback.

use super::deadlock::{self, check_not_nested};
use super::entity::{BoxFuture, Entity, EntityCore, Execution, Ready};
use super::error::ExecError;
use super::group::CallbackGroup;
use super::ready::{Popped, ReadyQueue};
use super::running::{RunningCall, WorkerSlot, coarse_now_ns};
use super::settle;
use super::shutdown::{ShutdownReport, StillRunning, Suspended};
use super::task::{Task, TaskPoll};
use super::timekeeper::Timekeeper;
use crate::graph::Node;
use crate::time::CancelToken;
use crate::time::Duration;
use parking_lot::{Condvar, Mutex};
use std::cell::Cell;
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, JoinHandle};
use std::time::Instant;

/// Runs the callbacks of the nodes added to it. Clones are handles to the same executor,
/// so another thread can [`cancel`](Executor::cancel) or [`shutdown`](Executor::shutdown) it.
///
/// # Examples
///
/// ```
/// use kairos::exec::Executor;
/// use kairos::graph::{Context, Node, Qos};
/// use kairos::time::Duration;
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicUsize, Ordering};
///
/// let node = Node::new_in(&Context::new(), "listener", "/")?;
/// let heard = Arc::new(AtomicUsize::new(0));
/// let counter = heard.clone();
/// let _sub = node.create_subscription("chatter", Qos::keep_last(10), move |_: &String| {
///     counter.fetch_add(1, Ordering::Relaxed);
/// })?;
/// let publisher = node.create_publisher::<String>("chatter", Qos::keep_last(10))?;
///
/// let executor = Executor::single_threaded();
/// executor.add_node(&node)?;
/// publisher.publish("hello".to_owned());
/// // The callbacks ready now, on this thread; `spin()` runs them until shutdown.
/// assert_eq!(executor.spin_some()?, 1);
/// assert_eq!(heard.load(Ordering::Relaxed), 1);
///
/// // Never waits past its deadline; reports any callback still running.
/// let report = executor.shutdown(Duration::from_secs(1));
/// assert!(report.is_clean(), "{report}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct Executor {
    shared: Arc<ExecShared>,
}

/// Counters of what an executor did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ExecutorStats {
    /// Callbacks started (an async callback counts once, however often it is polled).
    pub callbacks: u64,
    /// Callbacks that panicked; the executor caught the panic and went on.
    pub panicked: u64,
}

pub(crate) struct ExecShared {
    pub(crate) id: u64,
    pub(crate) workers: usize,
    pub(crate) ready: ReadyQueue<Ready>,
    /// Workers blocked in a wait (see `deadlock`), which cannot run callbacks meanwhile.
    pub(crate) blocked_workers: AtomicUsize,
    spin: Mutex<SpinState>,
    /// Notified (under `spin`) when a spin begins.
    spin_started: Condvar,
    /// Bumped when a spin ends or is cancelled: workers of older spins stop.
    epoch: AtomicU64,
    shut_down: AtomicBool,
    /// The workers' slots (see `running`): what each runs now.
    running: Mutex<Vec<Weak<WorkerSlot>>>,
    /// Notified when a callback returns or a worker thread exits.
    idle: Condvar,
    live_helpers: AtomicUsize,
    helpers: Mutex<Vec<JoinHandle<()>>>,
    nodes: Mutex<Vec<Node>>,
    /// Callbacks of the slots that are gone (live slots count their own, see `running`).
    callbacks: AtomicU64,
    panicked: AtomicU64,
    /// Tripped by `shutdown`: wakes every kairos wait made inside this executor's callbacks.
    pub(crate) shutdown_token: CancelToken,
    /// The async callbacks started and not yet completed (suspended or being polled).
    tasks: Mutex<TaskSet>,
    /// A single-threaded executor's own timer deadlines, waited on by its spinning
    /// thread (see `timekeeper`); `None` with several workers.
    pub(crate) timekeeper: Option<Arc<Timekeeper>>,
}

/// The live tasks of an executor. Shutdown *sweeps* them once (abandoning each one not
/// being polled, under this lock); a task being polled then is abandoned by its worker when
/// the poll returns, which it learns from `swept` under the same lock, so every task is
/// abandoned exactly once and none is missed.
#[derive(Debug, Default)]
struct TaskSet {
    live: HashMap<u64, Arc<Task>>,
    swept: bool,
}

#[derive(Debug, Default)]
struct SpinState {
    spinning: bool,
    /// Whether any spin has begun (see `settles_for_this_thread`).
    spun: bool,
    cancel_pending: bool,
}

/// The callbacks the live slots show as running.
fn running_calls(slots: &[Weak<WorkerSlot>]) -> impl Iterator<Item = RunningCall> + '_ {
    slots
        .iter()
        .filter_map(Weak::upgrade)
        .filter_map(|slot| slot.running())
}

impl Executor {
    /// An executor whose callbacks all run on the thread that spins it.
    pub fn single_threaded() -> Self {
        Self::with_workers(1)
    }

    /// The most worker threads an executor may have.
    pub const MAX_WORKERS: usize = 1024;

    /// An executor with `workers` threads: the one that spins it and `workers - 1` it starts.
    pub fn multi_threaded(workers: usize) -> Result<Self, ExecError> {
        if workers == 0 || workers > Self::MAX_WORKERS {
            return Err(ExecError::InvalidWorkers { workers });
        }
        Ok(Self::with_workers(workers))
    }

    /// A multi-threaded executor with max(2, available cores) workers.
    pub fn multi_threaded_default() -> Self {
        let cores = thread::available_parallelism().map_or(2, usize::from);
        Self::with_workers(cores.max(2))
    }

    fn with_workers(workers: usize) -> Self {
        // Before any of its callbacks runs: a slot's fences pair with shutdown's.
        crate::fence::init();
        Self {
            shared: Arc::new_cyclic(|me| ExecShared {
                timekeeper: (workers == 1).then(|| {
                    let me: Weak<ExecShared> = me.clone();
                    Arc::new(Timekeeper::new(Box::new(move || {
                        if let Some(exec) = me.upgrade() {
                            exec.ready.interrupt();
                        }
                    })))
                }),
                id: crate::trace::next_handle(),
                workers,
                ready: ReadyQueue::new(),
                blocked_workers: AtomicUsize::new(0),
                spin: Mutex::new(SpinState::default()),
                spin_started: Condvar::new(),
                epoch: AtomicU64::new(0),
                shut_down: AtomicBool::new(false),
                running: Mutex::new(Vec::new()),
                idle: Condvar::new(),
                live_helpers: AtomicUsize::new(0),
                helpers: Mutex::new(Vec::new()),
                nodes: Mutex::new(Vec::new()),
                callbacks: AtomicU64::new(0),
                panicked: AtomicU64::new(0),
                shutdown_token: CancelToken::new(),
                tasks: Mutex::new(TaskSet::default()),
            }),
        }
    }

    /// A handle to the executor of `shared` (the signal handler keeps weak ones).
    pub(crate) fn from_shared(shared: Arc<ExecShared>) -> Self {
        Self { shared }
    }

    /// How many threads run callbacks: 1 for a single-threaded executor.
    pub fn workers(&self) -> usize {
        self.shared.workers
    }

    /// Adds every entity of `node`, present and future, to this executor.
    pub fn add_node(&self, node: &Node) -> Result<(), ExecError> {
        if self.shared.shut_down.load(Ordering::Acquire) {
            return Err(ExecError::ShutDown);
        }
        node.attach(&self.shared)?;
        self.shared.nodes.lock().push(node.clone());
        Ok(())
    }

    /// Removes `node`; its entities stop running here (one already running completes).
    pub fn remove_node(&self, node: &Node) -> Result<(), ExecError> {
        let mut nodes = self.shared.nodes.lock();
        let Some(index) = nodes.iter().position(|n| n.same_node(node)) else {
            return Err(ExecError::NotAttached {
                node: node.fully_qualified_name().to_owned(),
            });
        };
        nodes.swap_remove(index).detach();
        Ok(())
    }

    /// Runs callbacks until [`cancel`](Self::cancel) or [`shutdown`](Self::shutdown).
    pub fn spin(&self) -> Result<(), ExecError> {
        let Some(mut session) = self.shared.begin_spin("spin()")? else {
            return Ok(());
        };
        session.start_helpers()?;
        let mut seen = self.shared.ready.interrupts();
        loop {
            if session.should_stop() {
                return Ok(());
            }
            if let Popped::Item(item) = self.shared.next_item(&mut seen, None) {
                session.run_batched(item);
            }
        }
    }

    /// Runs at most one callback, waiting up to `timeout` for one; true if one ran.
    pub fn spin_once(&self, timeout: impl Into<Duration>) -> Result<bool, ExecError> {
        let timeout = timeout.into();
        let Some(session) = self.shared.begin_spin("spin_once()")? else {
            return Ok(false);
        };
        let deadline = deadline_after(timeout);
        let mut seen = self.shared.ready.interrupts();
        loop {
            if session.should_stop() {
                return Ok(false);
            }
            match self.shared.next_item(&mut seen, deadline) {
                Popped::Item(item) => {
                    if session.run(item) {
                        return Ok(true);
                    }
                }
                Popped::Interrupted => {}
                Popped::TimedOut => return Ok(false),
            }
        }
    }

    /// Runs the work that is ready now, each ready entity once, without waiting; returns
    /// how many callbacks ran.
    pub fn spin_some(&self) -> Result<usize, ExecError> {
        let Some(session) = self.shared.begin_spin("spin_some()")? else {
            return Ok(0);
        };
        let mut ran = 0;
        self.shared.fire_due_timers();
        for _ in 0..self.shared.ready.len() {
            if session.should_stop() {
                break;
            }
            let Some(item) = self.shared.ready.try_pop() else {
                break;
            };
            ran += usize::from(session.run(item));
        }
        Ok(ran)
    }

    /// Runs ready work until none is left or `max_duration` has passed; returns how many
    /// callbacks ran.
    pub fn spin_all(&self, max_duration: impl Into<Duration>) -> Result<usize, ExecError> {
        let max_duration = max_duration.into();
        let Some(session) = self.shared.begin_spin("spin_all()")? else {
            return Ok(0);
        };
        let until = deadline_after(max_duration);
        let mut ran = 0;
        for dispatched in 0usize.. {
            // Reading the clock costs as much as a dispatch: check it every few items.
            if dispatched % 16 == 0 {
                // Timers that became due meanwhile queue behind the work already there.
                self.shared.fire_due_timers();
                if until.is_some_and(|until| Instant::now() >= until) {
                    break;
                }
            }
            if session.should_stop() {
                break;
            }
            let item = match self.shared.ready.try_pop() {
                Some(item) => item,
                // Timers that became due meanwhile are ready work too.
                None if self.shared.fire_due_timers() => match self.shared.ready.try_pop() {
                    Some(item) => item,
                    None => break,
                },
                None => break,
            };
            ran += usize::from(session.run(item));
        }
        Ok(ran)
    }

    /// Runs callbacks until `future` completes and returns its output, or fails after
    /// `timeout`, on cancel or shutdown. Called from inside one of this executor's own
    /// callbacks it returns [`ExecError::WouldDeadlock`] at once.
    pub fn spin_until_future_complete<F: Future>(
        &self,
        future: F,
        timeout: impl Into<Duration>,
    ) -> Result<F::Output, ExecError> {
        let timeout = timeout.into();
        let Some(mut session) = self.shared.begin_spin("spin_until_future_complete()")? else {
            return Err(ExecError::Cancelled);
        };
        session.start_helpers()?;
        let wake = Arc::new(FutureWake {
            woken: AtomicBool::new(true),
            exec: Arc::downgrade(&self.shared),
        });
        let waker = Waker::from(wake.clone());
        let mut future = pin!(future);
        let deadline = deadline_after(timeout);
        // Read before the first poll: a wake-up after it interrupts the pop below.
        let mut seen = self.shared.ready.interrupts();
        loop {
            if wake.woken.swap(false, Ordering::AcqRel)
                && let Poll::Ready(output) = future.as_mut().poll(&mut Context::from_waker(&waker))
            {
                return Ok(output);
            }
            if self.shared.shut_down.load(Ordering::Acquire) {
                return Err(ExecError::ShutDown);
            }
            if session.should_stop() {
                return Err(ExecError::Cancelled);
            }
            match self.shared.next_item(&mut seen, deadline) {
                Popped::Item(item) => {
                    session.run(item);
                }
                Popped::Interrupted => {}
                Popped::TimedOut => {
                    if !wake.woken.load(Ordering::Acquire) {
                        return Err(ExecError::Timeout { timeout });
                    }
                }
            }
        }
    }

    /// Makes the spin in progress return (after the callbacks running now); if none is in
    /// progress, the next spin returns at once.
    pub fn cancel(&self) {
        let mut spin = self.shared.spin.lock();
        if spin.spinning {
            self.shared.epoch.fetch_add(1, Ordering::AcqRel);
            drop(spin);
            self.shared.ready.interrupt();
        } else {
            spin.cancel_pending = true;
        }
    }

    /// Whether a thread is spinning this executor now.
    pub fn is_spinning(&self) -> bool {
        self.shared.spin.lock().spinning
    }

    /// Spins this executor on a new thread and returns once the spin has begun: from then
    /// on a simulated step ([`SimClock::step`](crate::time::SimClock::step), `/clock`)
    /// waits for the callbacks it makes due on this executor, so stepping right after this
    /// call is deterministic. Stop it with [`SpinThread::stop`] (or
    /// [`shutdown`](Self::shutdown)).
    pub fn spin_thread(&self) -> Result<SpinThread, ExecError> {
        let exec = self.clone();
        let handle = thread::Builder::new()
            .name(format!("kairos-exec{}-spin", self.shared.id))
            .spawn(move || exec.spin())
            .map_err(|err| ExecError::Spawn(err.to_string()))?;
        let mut spin = self.shared.spin.lock();
        while !spin.spinning {
            if handle.is_finished() {
                drop(spin);
                return match handle.join() {
                    Ok(Err(err)) => Err(err),
                    // Cancelled before it began, or it panicked: not spinning.
                    _ => Err(ExecError::Cancelled),
                };
            }
            // Woken by `begin_spin`; the timeout only covers a spin that failed at once.
            self.shared
                .spin_started
                .wait_for(&mut spin, std::time::Duration::from_millis(50));
        }
        drop(spin);
        Ok(SpinThread {
            exec: self.clone(),
            handle: Some(handle),
        })
    }

    /// Stops the executor for good: spins return, no new callback starts (not even one a
    /// worker had already taken from the queue), and this waits up to `deadline` for
    /// running callbacks and worker threads. In order:
    /// 1. the shutdown token is tripped: a callback blocked in a kairos wait (a sleep, a
    ///    timer wait, a service call) wakes with `Cancelled` and can return;
    /// 2. nodes are detached; responses queued in their clients have their done callbacks
    ///    run now, on this thread, with [`CallError::ExecutorShutDown`](crate::graph::CallError);
    ///    work parked behind a busy callback group is dropped (and counted);
    /// 3. running callbacks get until the deadline; those still running then are named in
    ///    the report and their threads left behind, never joined;
    /// 4. async callbacks suspended at an `.await` are abandoned (their futures dropped,
    ///    which frees what they hold) and named in the report.
    pub fn shutdown(&self, deadline: impl Into<Duration>) -> ShutdownReport {
        let deadline = deadline.into();
        let exec = &self.shared;
        let start = Instant::now();
        let until = deadline_after(deadline);
        super::running::shut_down(&exec.shut_down);
        exec.epoch.fetch_add(1, Ordering::AcqRel);
        exec.ready.interrupt();
        exec.shutdown_token.cancel();
        let nodes: Vec<Node> = exec.nodes.lock().drain(..).collect();
        let entities: Vec<Arc<dyn Entity>> = nodes.iter().flat_map(Node::entities).collect();
        let parked_entities = parked_in_groups(&entities);
        let live_tasks = exec.tasks.lock().live.len();
        for node in &nodes {
            node.detach();
        }
        let queued_responses = entities.iter().map(|e| e.fail_queued()).sum();
        let me = thread::current().id();
        let mut running = exec.running.lock();
        loop {
            let busy = running_calls(&running).any(|call| call.thread != me);
            // A shutdown called from a callback on a worker thread cannot wait for that thread.
            let own = usize::from(HELPER_OF.with(Cell::get) == exec.id);
            if !busy && exec.live_helpers.load(Ordering::Acquire) <= own {
                break;
            }
            let timed_out = match until {
                Some(until) => exec.idle.wait_until(&mut running, until).timed_out(),
                None => {
                    exec.idle.wait(&mut running);
                    false
                }
            };
            if timed_out {
                break;
            }
        }
        let now_ns = coarse_now_ns();
        let mut still_running: Vec<StillRunning> = running_calls(&running)
            .filter(|call| call.thread != me)
            .map(|call| StillRunning {
                callback: callback_name(&entities, call.entity),
                running_for: Duration::from_nanos(now_ns - call.since_ns),
            })
            .collect();
        drop(running);
        still_running.sort_by_key(|running| std::cmp::Reverse(running.running_for));
        let mut suspended = exec.abandon_tasks(now_ns);
        suspended.sort_by_key(|task| std::cmp::Reverse(task.suspended_for));
        // Queued work never runs now; dropping it frees the entities and tasks it holds.
        drop(exec.ready.drain());
        exec.reap_helpers();
        let report = ShutdownReport {
            still_running,
            suspended,
            live_tasks,
            parked_entities,
            queued_responses,
            waited: start.elapsed().into(),
        };
        for running in &report.still_running {
            let ns = u64::try_from(running.running_for.as_nanos()).unwrap_or(0);
            crate::trace::tp::shutdown_report(exec.id, &running.callback, "still_running_ns", ns);
        }
        for task in &report.suspended {
            let ns = u64::try_from(task.suspended_for.as_nanos()).unwrap_or(0);
            crate::trace::tp::shutdown_report(exec.id, &task.callback, "suspended_ns", ns);
        }
        report
    }

    /// Async callbacks started and not completed: suspended at an `.await` or being polled.
    pub fn live_tasks(&self) -> usize {
        self.shared.tasks.lock().live.len()
    }

    /// Ready work of this executor's nodes waiting behind a busy mutually exclusive group.
    pub fn parked_entities(&self) -> usize {
        let entities: Vec<Arc<dyn Entity>> = self
            .shared
            .nodes
            .lock()
            .iter()
            .flat_map(Node::entities)
            .collect();
        parked_in_groups(&entities)
    }

    /// Responses that arrived for this executor's clients and wait for their done callback
    /// to run.
    pub fn queued_responses(&self) -> usize {
        let entities: Vec<Arc<dyn Entity>> = self
            .shared
            .nodes
            .lock()
            .iter()
            .flat_map(Node::entities)
            .collect();
        entities.iter().map(|e| e.queued_responses()).sum()
    }

    /// A token that is cancelled when this executor shuts down: pass it to waits that must
    /// end then. (Kairos waits made inside this executor's callbacks end anyway.)
    pub fn shutdown_token(&self) -> CancelToken {
        self.shared.shutdown_token.child()
    }

    /// What the executor has done so far: callbacks started, and those that panicked.
    pub fn stats(&self) -> ExecutorStats {
        let running = self.shared.running.lock();
        let live: u64 = running
            .iter()
            .filter_map(Weak::upgrade)
            .map(|slot| slot.callbacks())
            .sum();
        ExecutorStats {
            callbacks: self.shared.callbacks.load(Ordering::Relaxed) + live,
            panicked: self.shared.panicked.load(Ordering::Relaxed),
        }
    }
}

impl Default for Executor {
    fn default() -> Self {
        Self::single_threaded()
    }
}

impl fmt::Debug for Executor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Executor")
            .field("id", &self.shared.id)
            .field("workers", &self.shared.workers)
            .finish()
    }
}

/// An executor spinning on its own thread (see [`Executor::spin_thread`]). Dropping it
/// cancels the spin without waiting for the thread.
#[must_use = "the spin is cancelled when this handle is dropped"]
pub struct SpinThread {
    exec: Executor,
    handle: Option<JoinHandle<Result<(), ExecError>>>,
}

impl SpinThread {
    /// Cancels the spin and joins the thread (which returns once the callbacks running now
    /// have returned); the spin's result.
    pub fn stop(mut self) -> Result<(), ExecError> {
        self.exec.cancel();
        match self.handle.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(_)) | None => Err(ExecError::Cancelled),
        }
    }
}

impl Drop for SpinThread {
    fn drop(&mut self) {
        if self.handle.is_some() {
            self.exec.cancel();
        }
    }
}

impl fmt::Debug for SpinThread {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SpinThread")
            .field("exec", &self.exec)
            .finish()
    }
}

/// The monotonic instant `timeout` from now (a negative timeout is zero); `None` if it is
/// too far away to represent, i.e. never.
pub(crate) fn deadline_after(timeout: Duration) -> Option<Instant> {
    Instant::now().checked_add(timeout.to_std().unwrap_or_default())
}

/// Wakes a `spin_until_future_complete` when its future can make progress.
struct FutureWake {
    woken: AtomicBool,
    exec: Weak<ExecShared>,
}

impl Wake for FutureWake {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Release);
        if let Some(exec) = self.exec.upgrade() {
            exec.ready.interrupt();
        }
    }
}

thread_local! {
    /// The id of the executor this thread is a worker of (0: none).
    static HELPER_OF: Cell<u64> = const { Cell::new(0) };
}

/// One spin in progress; ending it stops the workers it started.
struct SpinSession<'a> {
    exec: &'a Arc<ExecShared>,
    /// What the spinning thread runs, for `shutdown` to see.
    slot: Arc<WorkerSlot>,
    epoch: u64,
    helpers: bool,
}

impl SpinSession<'_> {
    fn should_stop(&self) -> bool {
        self.exec.should_stop(self.epoch)
    }

    /// Runs one item of ready work on the spinning thread; true if a callback ran.
    fn run(&self, item: Ready) -> bool {
        self.exec.run_ready(item, &self.slot, 1)
    }

    /// Like [`run`](Self::run), but a subscription may run a batch of its queued messages
    /// while nothing else is ready (`spin` only: `spin_once` and `spin_some` promise one
    /// callback per item).
    fn run_batched(&self, item: Ready) {
        self.exec.run_ready(item, &self.slot, BATCH);
    }

    /// Starts the other workers of a multi-threaded executor for this spin.
    fn start_helpers(&mut self) -> Result<(), ExecError> {
        let exec = self.exec;
        if exec.workers < 2 {
            return Ok(());
        }
        exec.reap_helpers();
        self.helpers = true;
        let mut helpers = exec.helpers.lock();
        for index in 1..exec.workers {
            let worker = exec.clone();
            let epoch = self.epoch;
            exec.live_helpers.fetch_add(1, Ordering::AcqRel);
            let spawned = thread::Builder::new()
                .name(format!("kairos-exec{}-w{index}", exec.id))
                .spawn(move || worker.helper_loop(epoch));
            match spawned {
                Ok(handle) => helpers.push(handle),
                Err(err) => {
                    exec.live_helpers.fetch_sub(1, Ordering::AcqRel);
                    return Err(ExecError::Spawn(err.to_string()));
                }
            }
        }
        Ok(())
    }
}

impl Drop for SpinSession<'_> {
    fn drop(&mut self) {
        self.exec.retire(&self.slot);
        let mut spin = self.exec.spin.lock();
        spin.spinning = false;
        self.exec.epoch.fetch_add(1, Ordering::AcqRel);
        drop(spin);
        if self.helpers {
            self.exec.ready.interrupt();
        }
    }
}

impl ExecShared {
    fn begin_spin(self: &Arc<Self>, operation: &str) -> Result<Option<SpinSession<'_>>, ExecError> {
        check_not_nested(self, operation)?;
        if self.shut_down.load(Ordering::Acquire) {
            return Err(ExecError::ShutDown);
        }
        let mut spin = self.spin.lock();
        if spin.spinning {
            return Err(ExecError::AlreadySpinning);
        }
        if std::mem::take(&mut spin.cancel_pending) {
            return Ok(None);
        }
        spin.spinning = true;
        spin.spun = true;
        self.spin_started.notify_all();
        Ok(Some(SpinSession {
            slot: self.new_slot(),
            exec: self,
            epoch: self.epoch.load(Ordering::Acquire),
            helpers: false,
        }))
    }

    /// The next item of ready work, as [`ReadyQueue::pop`]; the thread that spins a
    /// single-threaded executor also keeps its timers here (see `timekeeper`).
    pub(crate) fn next_item(&self, seen: &mut u64, deadline: Option<Instant>) -> Popped<Ready> {
        match &self.timekeeper {
            Some(keeper) => keeper.next_item(&self.ready, seen, deadline, wake_timers),
            None => self.ready.pop(seen, deadline),
        }
    }

    /// Wakes this executor's timers that are due (a single-threaded executor keeps them
    /// itself); true if any was.
    pub(crate) fn fire_due_timers(&self) -> bool {
        self.timekeeper
            .as_ref()
            .is_some_and(|keeper| keeper.look(wake_timers).woke)
    }

    fn should_stop(&self, epoch: u64) -> bool {
        self.epoch.load(Ordering::Acquire) != epoch || self.shut_down.load(Ordering::Acquire)
    }

    fn helper_loop(self: Arc<Self>, epoch: u64) {
        HELPER_OF.with(|helper_of| helper_of.set(self.id));
        let slot = self.new_slot();
        let mut seen = self.ready.interrupts();
        loop {
            if self.should_stop(epoch) {
                break;
            }
            if let Popped::Item(item) = self.ready.pop(&mut seen, None) {
                self.run_ready(item, &slot, BATCH);
            }
        }
        self.retire(&slot);
        drop(slot);
        let _running = self.running.lock();
        self.live_helpers.fetch_sub(1, Ordering::AcqRel);
        self.idle.notify_all();
    }

    /// Joins the worker threads that have finished; the others are left to finish alone.
    fn reap_helpers(&self) {
        let mut helpers = self.helpers.lock();
        let (finished, alive): (Vec<_>, Vec<_>) =
            helpers.drain(..).partition(JoinHandle::is_finished);
        *helpers = alive;
        drop(helpers);
        for handle in finished {
            // A finished thread joins at once; its callbacks' panics were already caught.
            let _ = handle.join();
        }
    }

    /// Queues ready work.
    #[inline]
    pub(crate) fn push_ready(self: &Arc<Self>, item: Ready) {
        if self.shut_down.load(Ordering::Acquire) {
            // Nothing runs any more; a late wake must not keep what it holds alive.
            return;
        }
        self.ready.push(item);
    }

    /// Queues work that was already waiting (released by a callback group) at the front.
    fn push_ready_front(self: &Arc<Self>, item: Ready) {
        if self.shut_down.load(Ordering::Acquire) {
            return;
        }
        self.ready.push_front(item);
    }

    /// Whether a simulated step made on this thread should wait for work it queues here
    /// (see `settle`): yes while a thread spins it, and before its first spin (a `spin()`
    /// on a thread just started has not begun yet); not when it cannot run the work
    /// meanwhile: shut down, spun before and not now (its caller spins it between steps),
    /// or spun by this very thread.
    pub(crate) fn settles_for_this_thread(&self) -> bool {
        if self.shut_down.load(Ordering::Acquire)
            || HELPER_OF.with(Cell::get) == self.id
            || super::deadlock::runs_on(self.id)
        {
            return false;
        }
        let spin = self.spin.lock();
        spin.spinning || !spin.spun
    }

    /// A slot for the calling thread's callbacks, registered for `shutdown` to read.
    fn new_slot(&self) -> Arc<WorkerSlot> {
        let slot = Arc::new(WorkerSlot::new());
        let mut slots = self.running.lock();
        slots.retain(|slot| slot.strong_count() > 0);
        slots.push(Arc::downgrade(&slot));
        slot
    }

    /// The calling thread is done with its `slot`: its count joins the executor's total.
    fn retire(&self, slot: &WorkerSlot) {
        let _running = self.running.lock();
        self.callbacks
            .fetch_add(slot.take_callbacks(), Ordering::Relaxed);
    }

    /// Runs one item of ready work (up to `batch` callbacks of a batching entity, see
    /// [`run_batch`](Self::run_batch)); true if a callback ran.
    fn run_ready(self: &Arc<Self>, item: Ready, slot: &WorkerSlot, batch: usize) -> bool {
        match item {
            Ready::Entity(entity) => self.run_entity(entity, slot, batch) == Run::Ran,
            Ready::Task(task) => {
                // The flag first, then the mark (see `settle`'s handshake).
                let ticket = task.begin_poll();
                in_step_scope(ticket, || self.poll_task(&task, slot));
                true
            }
        }
    }

    fn run_entity(
        self: &Arc<Self>,
        entity: Arc<dyn Entity>,
        slot: &WorkerSlot,
        batch: usize,
    ) -> Run {
        let core = entity.core();
        let group = &core.group;
        if core.is_destroyed() || !core.is_attached_to(self) {
            // This item may have been handed the group by a release: hand it on, or work
            // parked behind it would wait for a release that never comes.
            if let Some(next) = group.shared.gate.kick() {
                hand_on(next);
            }
            return Run::Skipped;
        }
        // Only a parked item needs a reference of its own; entering keeps this one.
        if !group
            .shared
            .gate
            .enter_or_park_with(|| Ready::Entity(entity.clone()))
        {
            // A parked entity keeps a step's mark until it runs, unless what holds its
            // group is an async callback suspended at an `.await` (see `settle`).
            if group.shared.is_held_by_suspended() {
                core.settle().release();
            }
            return Run::Parked;
        }
        // A step's mark is run plainly: the flag released before the run, so the mark is
        // the step's alone (see `EntityCore::requeue_held`).
        if batch > 0
            && entity.batches()
            && (group.shared.gate.is_exclusive() || self.workers == 1)
            && !core.settle().is_marked()
        {
            return self.run_batch(entity, slot, batch);
        }
        core.taken();
        // After the flag: a step that marked the entity before this point is seen here,
        // one that marks it later finds the flag clear and queues it again.
        let ticket = core.settle().take();
        in_step_scope(ticket, || self.run_taken(entity, slot))
    }

    /// The rest of [`run_entity`](Self::run_entity), once the entity is taken.
    fn run_taken(self: &Arc<Self>, entity: Arc<dyn Entity>, slot: &WorkerSlot) -> Run {
        let core = entity.core();
        let group = &core.group;
        let Some(outcome) = self.guarded(&entity, slot, || {
            crate::trace::tp::rclcpp_executor_execute(core.id(), self.id);
            entity.execute()
        }) else {
            // Shut down after this item was taken: it must not start.
            self.leave(group);
            return Run::Skipped;
        };
        match outcome {
            Ok(Execution::Idle) => {
                self.leave(group);
                Run::Skipped
            }
            Ok(Execution::Pending(future)) => {
                slot.count_callback();
                self.start_task(*future, &entity, slot);
                Run::Ran
            }
            Ok(Execution::Done) | Err(Panicked) => {
                slot.count_callback();
                self.finish(entity, outcome.is_err());
                Run::Ran
            }
        }
    }

    /// Runs consecutive units of work of `entity`, which has entered its group's gate, in
    /// one dispatch: up to `limit` callbacks (1 for `spin_once` and `spin_some`, which
    /// promise one callback per item; [`BATCH`] under `spin`), each started, traced,
    /// shown in `slot` and guarded like a single one, for as long as nothing else could
    /// run instead (see [`more_for_batch`](Self::more_for_batch), which under `spin` also
    /// waits a moment for the next message, as an idle worker would anyway). The batch
    /// ends as soon as other work is queued on this executor or parked behind the group
    /// (so fairness between entities is that of one callback per dispatch), the spin is
    /// cancelled or the executor shut down (no further callback starts), or a simulated
    /// step marks the entity (it then runs again in the step's scope).
    ///
    /// The entity's schedule flag stays set for the whole batch, so a publisher meanwhile
    /// pays one swap and no queue push, and the entity never overlaps itself (a reentrant
    /// group batches only on a single-threaded executor). At the end the worker queues the
    /// entity again with the flag it still holds, or releases the flag and looks again
    /// (`EntityCore::requeue_held`): a dispatch of one callback costs two read-modify-writes
    /// less than a plain one, which releases the flag before and sets it after.
    fn run_batch(
        self: &Arc<Self>,
        entity: Arc<dyn Entity>,
        slot: &WorkerSlot,
        limit: usize,
    ) -> Run {
        let core = entity.core();
        let group = &core.group;
        let epoch = self.epoch.load(Ordering::Acquire);
        let mut ran = 0;
        // One deadlock frame for the whole batch (only this thread reads it), left before
        // the group is: `leave` and the re-queue run outside any callback.
        let suspended = deadlock::in_frame(self, &entity, || {
            loop {
                let Some(outcome) = self.guarded_in_frame(core, slot, || {
                    crate::trace::tp::rclcpp_executor_execute(core.id(), self.id);
                    entity.execute()
                }) else {
                    // Shut down: no further callback starts.
                    return None;
                };
                match outcome {
                    Ok(Execution::Done) => {}
                    Ok(Execution::Idle) => return None,
                    Ok(Execution::Pending(future)) => return Some(*future),
                    Err(Panicked) => {
                        slot.count_callback();
                        self.panicked.fetch_add(1, Ordering::Relaxed);
                        ran += 1;
                        return None;
                    }
                }
                slot.count_callback();
                ran += 1;
                if ran >= limit || !self.more_for_batch(&entity, core, epoch, limit > 1, ran) {
                    return None;
                }
            }
        });
        if let Some(future) = suspended {
            // Not a batching callback after all: run it as a task, the flag released.
            slot.count_callback();
            core.taken();
            self.start_task(future, &entity, slot);
            return Run::Ran;
        }
        self.leave(group);
        // A timer that ended the batch goes ahead of the subscription's next turn.
        self.fire_due_timers();
        EntityCore::requeue_held(entity, self);
        if ran > 0 { Run::Ran } else { Run::Skipped }
    }

    /// Whether the batch of `entity` goes on: it has more work and nothing else could run
    /// instead (nothing queued on this executor or parked behind its group, no cancel or
    /// shutdown, no simulated step waiting for it). With `wait`, an entity that has no
    /// work yet is given the backoff a worker spins for before it sleeps (the one `pop`
    /// spins for otherwise), still yielding at once to anything else: a publisher that is
    /// only a little slower than its callback then keeps paying one swap per message, not
    /// a ready-queue push, and the worker is not woken again for each.
    fn more_for_batch(
        &self,
        entity: &Arc<dyn Entity>,
        core: &EntityCore,
        epoch: u64,
        wait: bool,
        ran: usize,
    ) -> bool {
        let backoff = crossbeam_utils::Backoff::new();
        // A due timer of this executor is other work too; asked every few callbacks and
        // while waiting (it costs a clock read once a timer is registered).
        let mut timers = ran % TIMER_LOOK_EVERY == 0;
        loop {
            let others = self.ready.has_queued()
                || (timers
                    && self
                        .timekeeper
                        .as_ref()
                        .is_some_and(|keeper| keeper.any_due()))
                || core.group.shared.gate.has_parked()
                || self.epoch.load(Ordering::Acquire) != epoch
                || self.shut_down.load(Ordering::Acquire)
                || core.settle().is_marked();
            if others {
                return false;
            }
            if entity.has_work() {
                return true;
            }
            if !wait || backoff.is_completed() {
                return false;
            }
            backoff.snooze();
            timers = true;
        }
    }

    /// An async callback of `entity` suspended for the first time: its future becomes a
    /// live task, polled now. If shutdown swept the live tasks since the callback started,
    /// nobody would ever poll or drop it (an async service's future answers its caller when
    /// dropped), so it is abandoned at once and the group released.
    fn start_task(
        self: &Arc<Self>,
        future: BoxFuture,
        entity: &Arc<dyn Entity>,
        slot: &WorkerSlot,
    ) {
        let task = Task::new(future, entity.clone(), self);
        let mut tasks = self.tasks.lock();
        if tasks.swept {
            drop(tasks);
            task.abandon();
            self.leave(&entity.core().group);
            return;
        }
        tasks.live.insert(task.id, task.clone());
        drop(tasks);
        task.begin_poll();
        self.poll_task(&task, slot);
    }

    fn poll_task(self: &Arc<Self>, task: &Arc<Task>, slot: &WorkerSlot) {
        let origin = &task.origin;
        let group = origin.core().group.clone();
        group.shared.set_held_by_suspended(false);
        let Some(polled) = self.guarded(origin, slot, || task.poll()) else {
            // Shut down: `shutdown` abandons the task (or does it below, once polled).
            return;
        };
        match polled {
            Ok(TaskPoll::Stale) => {}
            Ok(TaskPoll::Pending) => {
                // Suspended, it holds its group for as long as it waits: a simulated step
                // must not wait for the work parked behind it (see `settle`).
                group.shared.set_held_by_suspended(true);
                group.shared.gate.for_each_parked(|item| {
                    if let Ready::Entity(entity) = item {
                        entity.core().settle().release();
                    }
                });
                // Shut down and swept while this poll ran: nobody will poll the task again.
                let mut tasks = self.tasks.lock();
                if tasks.swept && tasks.live.remove(&task.id).is_some() {
                    drop(tasks);
                    task.abandon();
                    self.leave(&group);
                }
            }
            Ok(TaskPoll::Completed) => {
                crate::trace::tp::callback_end(origin.core().id());
                if self.forget_task(task) {
                    self.finish(origin.clone(), false)
                }
            }
            Err(Panicked) => {
                crate::trace::tp::callback_end(origin.core().id());
                task.abandon();
                if self.forget_task(task) {
                    self.finish(origin.clone(), true);
                }
            }
        }
    }

    /// Removes a task from the live set; true if this call removed it (so exactly one
    /// caller releases its group).
    fn forget_task(&self, task: &Task) -> bool {
        self.tasks.lock().live.remove(&task.id).is_some()
    }

    /// Abandons every live task that is not being polled right now (a task being polled
    /// is abandoned by its worker when the poll returns) and releases their groups.
    fn abandon_tasks(&self, now_ns: i64) -> Vec<Suspended> {
        let mut abandoned = Vec::new();
        {
            let mut tasks = self.tasks.lock();
            tasks.swept = true;
            let ids: Vec<u64> = tasks.live.keys().copied().collect();
            for id in ids {
                let Some(future) = tasks.live.get(&id).and_then(|task| task.try_take_future())
                else {
                    continue;
                };
                if let Some(task) = tasks.live.remove(&id) {
                    abandoned.push((task, future));
                }
            }
        }
        let mut suspended = Vec::new();
        for (task, future) in abandoned {
            suspended.push(Suspended {
                callback: task.origin.core().name.to_string(),
                suspended_for: Duration::from_nanos(now_ns - task.started_ns),
            });
            // Dropped outside every lock: a future's destructor may do anything.
            drop(future);
            task.settle.release();
            self.leave(&task.origin.core().group);
        }
        suspended
    }

    /// A callback ended: release its group and queue the entity again if it has more work.
    fn finish(self: &Arc<Self>, entity: Arc<dyn Entity>, panicked: bool) {
        if panicked {
            self.panicked.fetch_add(1, Ordering::Relaxed);
        }
        self.leave(&entity.core().group);
        if entity.has_work() {
            EntityCore::requeue(entity, self);
        }
    }

    fn leave(&self, group: &CallbackGroup) {
        if let Some(next) = group.shared.gate.leave() {
            hand_on(next);
        }
    }

    /// Runs `f` as the callback of `entity`: shown in `slot` for shutdown
    /// reports, recorded for deadlock checks, its panic caught. `None` (and `f` not run)
    /// once the executor is shut down (see `running`'s ground rules: a callback either
    /// shows in the report or never starts).
    #[inline]
    fn guarded<R>(
        self: &Arc<Self>,
        entity: &Arc<dyn Entity>,
        slot: &WorkerSlot,
        f: impl FnOnce() -> R,
    ) -> Option<Result<R, Panicked>> {
        self.guarded_in_frame(entity.core(), slot, || deadlock::in_frame(self, entity, f))
    }

    /// [`guarded`](Self::guarded) for a caller that has entered the deadlock frame of the
    /// entity with `core` already (a batch enters it once for all its callbacks).
    #[inline]
    fn guarded_in_frame<R>(
        &self,
        core: &EntityCore,
        slot: &WorkerSlot,
        f: impl FnOnce() -> R,
    ) -> Option<Result<R, Panicked>> {
        if !slot.start(core.id(), coarse_now_ns(), &self.shut_down) {
            self.idle_notify();
            return None;
        }
        // The payload is dropped here: a panic is counted, and the executor goes on.
        let result = catch_unwind(AssertUnwindSafe(f)).map_err(|_| Panicked);
        if slot.end(&self.shut_down) {
            self.idle_notify();
        }
        Some(result)
    }

    /// Tells a `shutdown` waiting for running callbacks that one ended (or never started).
    fn idle_notify(&self) {
        let _running = self.running.lock();
        self.idle.notify_all();
    }
}

/// The most callbacks of one entity a worker runs in one dispatch (see
/// [`ExecShared::run_batch`]): bounds how long it keeps its group's gate and its own
/// schedule flag, and how late it notices work that a stale queue-length hint hides.
const BATCH: usize = 32;

/// How often a batch asks whether one of the executor's timers is due: a due timer waits
/// for at most this many of a subscription's callbacks.
const TIMER_LOOK_EVERY: usize = 4;

/// A callback panicked; the executor caught the panic (and dropped its payload).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Panicked;

/// How running one ready entity ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Run {
    /// Its callback ran.
    Ran,
    /// Nothing ran (destroyed, detached, shut down, or no work after all).
    Skipped,
    /// It waits in its callback group's gate.
    Parked,
}

/// Runs `run` in the scope of the step whose mark `ticket` is (taken from the item about to
/// run), then releases that mark; without one, in the caller's scope.
fn in_step_scope<R>(ticket: Option<Arc<settle::Ticket>>, run: impl FnOnce() -> R) -> R {
    match ticket {
        Some(ticket) => {
            let result = settle::scope(Some(ticket.clone()), run);
            ticket.release();
            result
        }
        None => run(),
    }
}

/// Wakes a single-threaded executor's due timers (see `timekeeper`) outside any
/// simulated step's scope: a spin made inside a step-marked callback of another executor
/// must not mark them for that step (the time driver's thread never had a scope either).
fn wake_timers(due: &mut Vec<Waker>) {
    settle::scope(None, || due.drain(..).for_each(Waker::wake));
}

/// Queues work released by a callback group on the executor its entity is attached to
/// (none: it is dropped; the entity is queued again when it is attached and notified).
fn hand_on(next: Ready) {
    let exec = match &next {
        Ready::Entity(entity) => entity.core().executor(),
        Ready::Task(task) => task.executor(),
    };
    if let Some(exec) = exec {
        exec.push_ready_front(next);
    }
}

/// The name of the callback of entity `id`, one of `entities` (the executor's when its
/// shutdown began); an entity of a node removed since is named by its id.
fn callback_name(entities: &[Arc<dyn Entity>], id: u64) -> String {
    entities
        .iter()
        .find(|entity| entity.core().id() == id)
        .map_or_else(
            || format!("callback {id} (of a node removed from the executor)"),
            |entity| entity.core().name.to_string(),
        )
}

/// How many items are parked in the distinct callback groups of `entities`.
fn parked_in_groups(entities: &[Arc<dyn Entity>]) -> usize {
    let mut seen: Vec<&CallbackGroup> = Vec::new();
    let mut parked = 0;
    for entity in entities {
        let group = &entity.core().group;
        if !seen.contains(&group) {
            seen.push(group);
            parked += group.parked();
        }
    }
    parked
}

impl fmt::Debug for ExecShared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExecShared")
            .field("id", &self.id)
            .field("workers", &self.workers)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Context;

    /// Issue 13, defect 3: a worker that took an item from the queue just before a shutdown
    /// must not start its callback after `shutdown` has returned. Replayed step by step:
    /// the item is taken, the executor shut down, then the worker runs what it took.
    #[test]
    fn an_item_taken_before_shutdown_does_not_start_after_it() {
        let node = Node::new_in(&Context::new(), "node", "/").unwrap();
        let exec = Executor::single_threaded();
        exec.add_node(&node).unwrap();
        let ran = Arc::new(AtomicU64::new(0));
        let count = ran.clone();
        let guard = node.create_guard_condition("late", move || {
            count.fetch_add(1, Ordering::SeqCst);
        });
        guard.trigger();
        let taken = exec
            .shared
            .ready
            .try_pop()
            .expect("the guard condition is queued");
        let report = exec.shutdown(Duration::ZERO);
        assert!(report.is_clean(), "{report}");
        // The worker had checked that the entity was attached before the shutdown detached
        // it (the window the campaign hit): replayed by attaching it again.
        guard.inner.core().attach(&exec.shared);
        let slot = exec.shared.new_slot();
        let started = exec.shared.run_ready(taken, &slot, 1);
        assert!(!started, "no callback may start after shutdown returned");
        assert_eq!(ran.load(Ordering::SeqCst), 0);
        assert!(
            !node.default_callback_group().is_busy(),
            "the group was left"
        );
    }

    /// The timekeeper's handshake: a deadline registered from another thread, earlier
    /// than the one the spinning thread waits for (or while it waits with no timer at
    /// all), ends that wait; it is woken once reached, never before.
    #[test]
    fn an_earlier_deadline_registered_from_another_thread_ends_the_keepers_wait() {
        an_earlier_deadline_ends_the_wait(true);
        an_earlier_deadline_ends_the_wait(false);
    }

    fn an_earlier_deadline_ends_the_wait(far_timer: bool) {
        use crate::time::DeadlineHost;
        use crate::time::wait::{mono_now, thread_waker};
        let exec = Executor::single_threaded();
        let keeper = exec.shared.timekeeper.clone().expect("single-threaded");
        let (far_key, near_key) = (&mut None, &mut None);
        let idle = thread_waker();
        if far_timer {
            keeper.register(mono_now() + 3_600_000_000_000, far_key, &idle);
        }
        let woken = Arc::new(std::sync::atomic::AtomicI64::new(0));
        let (near_at, registered) = (
            Arc::new(std::sync::atomic::AtomicI64::new(0)),
            woken.clone(),
        );
        let near = Waker::from(Arc::new(StampOnWake(registered)));
        let waiting = std::thread::scope(|scope| {
            let waiter = scope.spawn(|| {
                let mut seen = exec.shared.ready.interrupts();
                // Ends at the interrupt (the caller looks again), not after 20 s.
                let limit = Instant::now() + std::time::Duration::from_secs(20);
                let popped = exec.shared.next_item(&mut seen, Some(limit));
                assert!(
                    matches!(popped, Popped::Interrupted),
                    "the wait went on past the nudge (far timer: {far_timer})"
                );
                // The next looks wait for the near deadline and wake it (a look returns
                // only for work or its caller's deadline: looks of 10 ms).
                let until = Instant::now() + std::time::Duration::from_secs(20);
                while woken.load(Ordering::Acquire) == 0 && Instant::now() < until {
                    let soon = Instant::now() + std::time::Duration::from_millis(10);
                    let _ = exec.shared.next_item(&mut seen, Some(soon));
                }
            });
            // Once the spinning thread waits (for the far deadline, or for work only),
            // register a near one.
            let until = Instant::now() + std::time::Duration::from_secs(20);
            while !keeper.is_waiting() && Instant::now() < until {
                std::thread::yield_now();
            }
            let at = mono_now() + 2_000_000;
            near_at.store(at, Ordering::Release);
            keeper.register(at, near_key, &near);
            waiter.join().is_ok()
        });
        assert!(waiting, "the spinning thread panicked");
        let at = woken.load(Ordering::Acquire);
        assert!(at != 0, "the near deadline was never woken");
        assert!(
            at >= near_at.load(Ordering::Acquire),
            "woken before its deadline"
        );
    }

    /// Stores the monotonic time of its wake-up.
    struct StampOnWake(Arc<std::sync::atomic::AtomicI64>);
    impl Wake for StampOnWake {
        fn wake(self: Arc<Self>) {
            self.0
                .store(crate::time::wait::mono_now(), Ordering::Release);
        }
    }

    /// A timekeeper that counts its interrupts.
    fn counting() -> (Timekeeper, Arc<std::sync::atomic::AtomicUsize>) {
        let count = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = Arc::clone(&count);
        let keeper = Timekeeper::new(Box::new(move || {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }));
        (keeper, count)
    }

    /// Only a registration that would shorten the spinning thread's wait interrupts it: a
    /// re-arm made by the spinning thread itself (not waiting) or a later deadline costs
    /// no interrupt, an earlier one (or any, during a wait with no timer) does.
    #[test]
    fn a_registration_interrupts_only_a_wait_it_shortens() {
        use crate::time::DeadlineHost;
        let interrupts =
            |keeper: &Timekeeper, count: &std::sync::atomic::AtomicUsize, deadline: i64| {
                let before = count.load(std::sync::atomic::Ordering::SeqCst);
                keeper.register(deadline, &mut None, Waker::noop());
                count.load(std::sync::atomic::Ordering::SeqCst) - before
            };
        let far = crate::time::wait::mono_now() + 3_600_000_000_000;
        let (keeper, count) = counting();
        assert_eq!(interrupts(&keeper, &count, far), 0, "not waiting");
        assert!(keeper.begin_wait(Some(far)));
        assert_eq!(interrupts(&keeper, &count, far + 1), 0, "a later deadline");
        assert_eq!(
            interrupts(&keeper, &count, far - 1),
            1,
            "an earlier deadline"
        );
        keeper.end_wait();
        assert_eq!(interrupts(&keeper, &count, far - 2), 0, "the wait is over");

        let (keeper, count) = counting();
        assert!(keeper.begin_wait(None));
        assert_eq!(interrupts(&keeper, &count, far), 1, "a wait with no timer");
        keeper.end_wait();
        assert!(
            !keeper.begin_wait(Some(far + 1)),
            "a wait past a registered deadline"
        );
    }
}
