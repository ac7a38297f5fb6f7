//! Executors: the threads that run callbacks.
//!
//! One type, [`Executor`], single-threaded or multi-threaded (N workers: the thread that
//! spins plus N-1 it starts). Work is event driven: a ready entity is queued once and
//! served in arrival order, so a busy timer cannot starve a service. Every way in has a way
//! out: `spin` ends on [`Executor::cancel`] or [`Executor::shutdown`], the other spins take a
//! timeout, and `shutdown(deadline)` never waits past its deadline for a stuck callback,
//! it names it in the [`ShutdownReport`]. Spinning an executor from inside its own callback,
//! or from two threads at once, is an error, not a hang.

use super::deadlock::{RunningFrame, check_not_nested};
use super::entity::{Entity, Execution, Ready};
use super::error::ExecError;
use super::group::CallbackGroup;
use super::ready::{Popped, ReadyQueue};
use super::shutdown::{ShutdownReport, StillRunning};
use super::task::{Task, TaskPoll};
use crate::graph::Node;
use crate::time::Duration;
use parking_lot::{Condvar, Mutex};
use std::any::Any;
use std::cell::Cell;
use std::fmt;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, JoinHandle, ThreadId};
use std::time::Instant;

/// Runs the callbacks of the nodes added to it. Clones are handles to the same executor,
/// so another thread can [`cancel`](Executor::cancel) or [`shutdown`](Executor::shutdown) it.
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
    /// Bumped when a spin ends or is cancelled: workers of older spins stop.
    epoch: AtomicU64,
    shut_down: AtomicBool,
    running: Mutex<Running>,
    /// Notified when a callback returns or a worker thread exits.
    idle: Condvar,
    live_helpers: AtomicUsize,
    helpers: Mutex<Vec<JoinHandle<()>>>,
    nodes: Mutex<Vec<Node>>,
    callbacks: AtomicU64,
    panicked: AtomicU64,
}

#[derive(Debug, Default)]
struct SpinState {
    spinning: bool,
    cancel_pending: bool,
}

/// The callbacks running now, in slots reused as callbacks end.
#[derive(Debug, Default)]
struct Running {
    slots: Vec<Option<RunningCall>>,
    free: Vec<usize>,
}

#[derive(Debug)]
struct RunningCall {
    callback: Arc<str>,
    /// Coarse monotonic nanoseconds (a few ms resolution, a fraction of `Instant::now`'s
    /// cost on every dispatch): enough to say how long a stuck callback has run.
    since_ns: i64,
    thread: ThreadId,
}

impl Running {
    fn start(&mut self, call: RunningCall) -> usize {
        match self.free.pop() {
            Some(slot) => {
                self.slots[slot] = Some(call);
                slot
            }
            None => {
                self.slots.push(Some(call));
                self.slots.len() - 1
            }
        }
    }

    fn end(&mut self, slot: usize) {
        if let Some(entry) = self.slots.get_mut(slot)
            && entry.take().is_some()
        {
            self.free.push(slot);
        }
    }

    fn calls(&self) -> impl Iterator<Item = &RunningCall> {
        self.slots.iter().flatten()
    }
}

fn coarse_now_ns() -> i64 {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::MonotonicCoarse);
    now.tv_sec
        .saturating_mul(1_000_000_000)
        .saturating_add(now.tv_nsec)
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
        Self {
            shared: Arc::new(ExecShared {
                id: crate::trace::next_handle(),
                workers,
                ready: ReadyQueue::new(),
                blocked_workers: AtomicUsize::new(0),
                spin: Mutex::new(SpinState::default()),
                epoch: AtomicU64::new(0),
                shut_down: AtomicBool::new(false),
                running: Mutex::new(Running::default()),
                idle: Condvar::new(),
                live_helpers: AtomicUsize::new(0),
                helpers: Mutex::new(Vec::new()),
                nodes: Mutex::new(Vec::new()),
                callbacks: AtomicU64::new(0),
                panicked: AtomicU64::new(0),
            }),
        }
    }

    /// A handle to the executor of `shared` (the signal handler keeps weak ones).
    pub(crate) fn from_shared(shared: Arc<ExecShared>) -> Self {
        Self { shared }
    }

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
            if let Popped::Item(item) = self.shared.ready.pop(&mut seen, None) {
                self.shared.run_ready(item);
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
            match self.shared.ready.pop(&mut seen, deadline) {
                Popped::Item(item) => {
                    if self.shared.run_ready(item) {
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
        for _ in 0..self.shared.ready.len() {
            if session.should_stop() {
                break;
            }
            let Some(item) = self.shared.ready.try_pop() else {
                break;
            };
            ran += usize::from(self.shared.run_ready(item));
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
            let out_of_time =
                dispatched % 16 == 0 && until.is_some_and(|until| Instant::now() >= until);
            if out_of_time || session.should_stop() {
                break;
            }
            let Some(item) = self.shared.ready.try_pop() else {
                break;
            };
            ran += usize::from(self.shared.run_ready(item));
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
            match self.shared.ready.pop(&mut seen, deadline) {
                Popped::Item(item) => {
                    self.shared.run_ready(item);
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

    /// Stops the executor for good: spins return, no new callback starts, and this waits
    /// up to `deadline` for running callbacks and worker threads. Callbacks still running
    /// then are named in the report and their threads left behind, never joined.
    pub fn shutdown(&self, deadline: impl Into<Duration>) -> ShutdownReport {
        let deadline = deadline.into();
        let exec = &self.shared;
        let start = Instant::now();
        let until = deadline_after(deadline);
        exec.shut_down.store(true, Ordering::Release);
        exec.epoch.fetch_add(1, Ordering::AcqRel);
        exec.ready.interrupt();
        for node in exec.nodes.lock().drain(..) {
            node.detach();
        }
        let me = thread::current().id();
        let mut running = exec.running.lock();
        loop {
            let busy = running.calls().any(|call| call.thread != me);
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
        let mut still_running: Vec<StillRunning> = running
            .calls()
            .filter(|call| call.thread != me)
            .map(|call| StillRunning {
                callback: call.callback.to_string(),
                running_for: Duration::from_nanos(now_ns - call.since_ns),
            })
            .collect();
        drop(running);
        still_running.sort_by_key(|running| std::cmp::Reverse(running.running_for));
        exec.reap_helpers();
        let report = ShutdownReport {
            still_running,
            waited: start.elapsed().into(),
        };
        for running in &report.still_running {
            let ns = u64::try_from(running.running_for.as_nanos()).unwrap_or(0);
            crate::trace::tp::shutdown_report(exec.id, &running.callback, "still_running_ns", ns);
        }
        report
    }

    pub fn stats(&self) -> ExecutorStats {
        ExecutorStats {
            callbacks: self.shared.callbacks.load(Ordering::Relaxed),
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
    epoch: u64,
    helpers: bool,
}

impl SpinSession<'_> {
    fn should_stop(&self) -> bool {
        self.exec.should_stop(self.epoch)
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
        Ok(Some(SpinSession {
            exec: self,
            epoch: self.epoch.load(Ordering::Acquire),
            helpers: false,
        }))
    }

    fn should_stop(&self, epoch: u64) -> bool {
        self.epoch.load(Ordering::Acquire) != epoch || self.shut_down.load(Ordering::Acquire)
    }

    fn helper_loop(self: Arc<Self>, epoch: u64) {
        HELPER_OF.with(|helper_of| helper_of.set(self.id));
        let mut seen = self.ready.interrupts();
        loop {
            if self.should_stop(epoch) {
                break;
            }
            if let Popped::Item(item) = self.ready.pop(&mut seen, None) {
                self.run_ready(item);
            }
        }
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

    /// Runs one item of ready work; true if a callback ran.
    fn run_ready(self: &Arc<Self>, item: Ready) -> bool {
        match item {
            Ready::Entity(entity) => self.run_entity(entity),
            Ready::Task(task) => {
                self.poll_task(&task);
                true
            }
        }
    }

    fn run_entity(self: &Arc<Self>, entity: Arc<dyn Entity>) -> bool {
        let core = entity.core();
        if core.is_destroyed() || !core.is_attached_to(self) {
            return false;
        }
        let group = core.group.clone();
        let Some(Ready::Entity(entity)) = group.shared.gate.enter_or_park(Ready::Entity(entity))
        else {
            return false;
        };
        let core = entity.core();
        crate::trace::tp::rclcpp_executor_execute(core.id(), self.id);
        core.taken();
        let outcome = self.guarded(&group, &core.name, || entity.execute());
        match outcome {
            Ok(Execution::Idle) => {
                self.leave(&group);
                false
            }
            Ok(Execution::Pending(future)) => {
                self.callbacks.fetch_add(1, Ordering::Relaxed);
                let task = Task::new(future, entity.clone(), self);
                self.poll_task(&task);
                true
            }
            Ok(Execution::Done) | Err(_) => {
                self.callbacks.fetch_add(1, Ordering::Relaxed);
                self.finish(&group, &entity, outcome.err());
                true
            }
        }
    }

    fn poll_task(self: &Arc<Self>, task: &Arc<Task>) {
        let origin = &task.origin;
        let group = origin.core().group.clone();
        match self.guarded(&group, &origin.core().name, || task.poll()) {
            Ok(TaskPoll::Pending | TaskPoll::Stale) => {}
            Ok(TaskPoll::Completed) => {
                crate::trace::tp::callback_end(origin.core().id());
                self.finish(&group, origin, None)
            }
            Err(panic) => {
                crate::trace::tp::callback_end(origin.core().id());
                task.abandon();
                self.finish(&group, origin, Some(panic));
            }
        }
    }

    /// A callback ended: release its group and queue the entity again if it has more work.
    fn finish(
        &self,
        group: &CallbackGroup,
        entity: &Arc<dyn Entity>,
        panic: Option<Box<dyn Any + Send>>,
    ) {
        if panic.is_some() {
            self.panicked.fetch_add(1, Ordering::Relaxed);
        }
        self.leave(group);
        if entity.has_work() {
            entity.core().notify();
        }
    }

    fn leave(&self, group: &CallbackGroup) {
        if let Some(next) = group.shared.gate.leave() {
            self.ready.push_front(next);
        }
    }

    /// Runs `f` as callback `name` of `group`: recorded for deadlock checks and shutdown
    /// reports, its panic caught.
    fn guarded<R>(
        self: &Arc<Self>,
        group: &CallbackGroup,
        name: &Arc<str>,
        f: impl FnOnce() -> R,
    ) -> std::thread::Result<R> {
        let ticket = {
            let call = RunningCall {
                callback: name.clone(),
                since_ns: coarse_now_ns(),
                thread: thread::current().id(),
            };
            self.running.lock().start(call)
        };
        let result = {
            let _frame = RunningFrame::enter(self, group, name);
            catch_unwind(AssertUnwindSafe(f))
        };
        let mut running = self.running.lock();
        running.end(ticket);
        if self.shut_down.load(Ordering::Acquire) {
            self.idle.notify_all();
        }
        result
    }
}

impl fmt::Debug for ExecShared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExecShared")
            .field("id", &self.id)
            .field("workers", &self.workers)
            .finish_non_exhaustive()
    }
}
