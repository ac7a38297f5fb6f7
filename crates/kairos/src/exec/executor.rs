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
//! # Where each part lives
//! This file: the public [`Executor`] and the state it shares with its workers
//! (`ExecShared`). `executor/session.rs`: spin sessions and helper threads.
//! `executor/dispatch.rs`: running one item (gate, guard, batch, hand-on).
//! `executor/ready_work.rs`: queueing work and the workers' slots. `executor/tasks.rs`:
//! async callbacks. `executor/stop.rs`: `shutdown` and its report.
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
use super::shutdown::{ShutdownReport, StillRunning, Suspended};
use super::task::{Task, TaskPoll};
use super::timekeeper::Timekeeper;
use crate::graph::Node;
use crate::time::CancelToken;
use crate::time::Duration;
use crate::time::settle;
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

mod dispatch;
mod handout;
mod ready_work;
mod session;
pub(crate) use session::executors_of_this_thread;
mod spin_thread;
mod stop;
mod tasks;
#[cfg(test)]
mod tests;

use dispatch::{BATCH, wake_timers};
pub use handout::ReadyCallback;
use session::{FutureWake, HELPER_OF};
pub use spin_thread::SpinThread;
use stop::parked_in_groups;
use tasks::TaskSet;

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
    /// Times a worker went to sleep for lack of work (each costs a wake-up later; see
    /// [`Executor::set_idle_spin`]).
    pub sleeps: u64,
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

#[derive(Debug, Default)]
struct SpinState {
    spinning: bool,
    /// Whether any spin has begun (see `settles_for`).
    spun: bool,
    cancel_pending: bool,
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

    /// The longest [idle spin](Executor::set_idle_spin) window.
    pub const MAX_IDLE_SPIN: Duration = Duration::from_secs(1);

    /// Lets a worker that runs out of work keep polling for more, yielding its core to any
    /// other runnable thread, for up to `window` before it sleeps (0, the default: a few
    /// microseconds of backoff, then sleep).
    ///
    /// Work that arrives within the window starts without waking a sleeping thread: on a
    /// virtual machine that wake-up is 5-30 us of a message's latency, and it keeps the
    /// core from idling into a slower wake-up. The price is a core busy for `window` after
    /// each piece of work: a window longer than the gap between messages keeps a core busy
    /// all the time, per worker. The poll ends at once on `cancel`, `shutdown` or a new
    /// timer, and never delays a timer: it is a way to wait, never a reason to wait longer.
    /// Takes effect at a worker's next wait, also while spinning.
    ///
    /// # Errors
    /// [`ExecError::InvalidIdleSpin`] for a window below zero or above
    /// [`MAX_IDLE_SPIN`](Self::MAX_IDLE_SPIN).
    pub fn set_idle_spin(&self, window: impl Into<Duration>) -> Result<(), ExecError> {
        let window = window.into();
        if window < Duration::ZERO || window > Self::MAX_IDLE_SPIN {
            return Err(ExecError::InvalidIdleSpin { window });
        }
        // In 0..=1 s, checked above: the cast keeps the value.
        self.shared.ready.set_idle_spin_ns(window.as_nanos() as u64);
        Ok(())
    }

    /// The idle spin window (see [`set_idle_spin`](Self::set_idle_spin)).
    pub fn idle_spin(&self) -> Duration {
        Duration::from_nanos(self.shared.ready.idle_spin_ns() as i64)
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

    /// Waits up to `timeout` for one ready callback and hands it out without running it,
    /// for a program that schedules callbacks itself (rclpy's `wait_for_ready_callbacks`):
    /// [`ReadyCallback::run`] runs it on whatever thread the program likes. It has entered
    /// its callback group when handed out, so the group's rules hold wherever it runs; a
    /// handle dropped unrun queues its work again. `None` on timeout or
    /// [`cancel`](Self::cancel); [`ExecError::ShutDown`] once shut down.
    pub fn wait_for_ready(
        &self,
        timeout: impl Into<Duration>,
    ) -> Result<Option<ReadyCallback>, ExecError> {
        let timeout = timeout.into();
        let Some(session) = self.shared.begin_spin("wait_for_ready()")? else {
            return Ok(None);
        };
        let deadline = deadline_after(timeout);
        let mut seen = self.shared.ready.interrupts();
        loop {
            if self.shared.shut_down.load(Ordering::Acquire) {
                return Err(ExecError::ShutDown);
            }
            if session.should_stop() {
                return Ok(None);
            }
            match self.shared.next_item(&mut seen, deadline) {
                Popped::Item(item) => {
                    if let Some(ready) = self.shared.hand_out(item, session.slot()) {
                        return Ok(Some(ready));
                    }
                }
                Popped::Interrupted => {}
                Popped::TimedOut => return Ok(None),
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
        self.spin_for_future(future, timeout, false, "spin_until_future_complete()")?
            .ok_or(ExecError::Timeout { timeout })
    }

    /// Runs at most one callback, waiting up to `timeout` for one, and returns as soon as
    /// `future` completes, even with no callback run (another thread may complete it):
    /// its output if it completed. rclpy's `spin_once_until_future_complete`.
    pub fn spin_once_until_future_complete<F: Future>(
        &self,
        future: F,
        timeout: impl Into<Duration>,
    ) -> Result<Option<F::Output>, ExecError> {
        self.spin_for_future(
            future,
            timeout.into(),
            true,
            "spin_once_until_future_complete()",
        )
    }

    /// Spins until `future` completes (its output), `timeout` passes (`None`) or, when
    /// `once`, one callback ran (`None`, unless that completed the future).
    fn spin_for_future<F: Future>(
        &self,
        future: F,
        timeout: Duration,
        once: bool,
        what: &'static str,
    ) -> Result<Option<F::Output>, ExecError> {
        let Some(mut session) = self.shared.begin_spin(what)? else {
            return Err(ExecError::Cancelled);
        };
        if !once {
            session.start_helpers()?;
        }
        let wake = Arc::new(FutureWake {
            woken: AtomicBool::new(true),
            exec: Arc::downgrade(&self.shared),
        });
        let waker = Waker::from(wake.clone());
        let mut future = pin!(future);
        let deadline = deadline_after(timeout);
        // Read before the first poll: a wake-up after it interrupts the pop below.
        let mut seen = self.shared.ready.interrupts();
        let mut ran_one = false;
        loop {
            if wake.woken.swap(false, Ordering::AcqRel)
                && let Poll::Ready(output) = future.as_mut().poll(&mut Context::from_waker(&waker))
            {
                return Ok(Some(output));
            }
            if ran_one {
                return Ok(None);
            }
            if self.shared.shut_down.load(Ordering::Acquire) {
                return Err(ExecError::ShutDown);
            }
            if session.should_stop() {
                return Err(ExecError::Cancelled);
            }
            match self.shared.next_item(&mut seen, deadline) {
                Popped::Item(item) => {
                    // `once`: the loop polls the future again, then returns.
                    ran_one = session.run(item) && once;
                }
                Popped::Interrupted => {}
                Popped::TimedOut => {
                    if !wake.woken.load(Ordering::Acquire) {
                        return Ok(None);
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
        self.shared.shut_down_by(deadline.into())
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
            sleeps: self.shared.ready.sleeps(),
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

/// The monotonic instant `timeout` from now (a negative timeout is zero); `None` if it is
/// too far away to represent, i.e. never.
pub(crate) fn deadline_after(timeout: Duration) -> Option<Instant> {
    Instant::now().checked_add(timeout.to_std().unwrap_or_default())
}

impl fmt::Debug for ExecShared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExecShared")
            .field("id", &self.id)
            .field("workers", &self.workers)
            .finish_non_exhaustive()
    }
}
