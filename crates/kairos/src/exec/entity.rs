//! Executor entities: anything that becomes ready and runs a callback (subscriptions,
//! timers, services, clients, guard conditions), and the event-driven readiness they share.
//!
//! An entity is attached to at most one executor. When an event makes it ready it pushes
//! itself on that executor's ready queue (once, however many events arrive before a worker
//! takes it); a worker runs one unit of its work and re-queues it behind newer work if more
//! remains. Futures inside an entity (a timer's sleep, an awaited response) wake it
//! through [`EntityCore::waker`].

use super::executor::ExecShared;
use super::group::CallbackGroup;
use super::ready::ScheduleFlag;
use super::task::Task;
use crate::time::settle;
use parking_lot::Mutex;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::task::{Wake, Waker};

/// The future of an `async` callback, polled by the executor.
pub(crate) type BoxFuture = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// What running one unit of an entity's work gave.
pub(crate) enum Execution {
    /// Nothing was ready after all (a spurious wake-up).
    Idle,
    /// The callback ran to its end.
    Done,
    /// An async callback suspended; the executor keeps polling it, holding the group.
    /// (Boxed once more, so that an `Execution` is two words, returned in registers on
    /// the dispatch path: the rare async start pays the allocation.)
    Pending(Box<BoxFuture>),
}

pub(crate) trait Entity: Send + Sync + 'static {
    fn core(&self) -> &EntityCore;
    /// Runs one unit of ready work: a plain callback to its end, an async one until it
    /// first suspends.
    fn execute(&self) -> Execution;
    /// Whether more work is ready (the entity is then queued again, behind newer work).
    fn has_work(&self) -> bool;
    /// Whether a worker may run several units of its work in one dispatch while nothing
    /// else is ready (see `ExecShared::run_batch`): only for callbacks that run to their end
    /// (a suspended one would hold the schedule flag).
    fn batches(&self) -> bool {
        false
    }
    /// It was attached to `exec`: queue it if it has work (a timer arms here, so a
    /// simulated step made right after `add_node` already sees its deadline).
    fn attached(&self, exec: &Arc<ExecShared>) {
        let _ = exec;
        self.core().notify();
    }
    /// Responses waiting for their done callback to run (clients only).
    fn queued_responses(&self) -> usize {
        0
    }
    /// Its executor shut down (or its node was removed): whatever it queued for a
    /// callback that will now never run there is failed, saying why; returns how many.
    fn fail_queued(&self) -> usize {
        0
    }
}

/// Brackets one run of a user callback with `ros2:callback_start` / `callback_end` (the
/// callback handle is the entity's id). An async callback's end is traced by the executor
/// when its future completes: [`CallbackScope::start_async`].
pub(crate) struct CallbackScope(u64);

impl CallbackScope {
    #[inline]
    pub(crate) fn enter(core: &EntityCore) -> CallbackScope {
        crate::trace::tp::callback_start(core.id, 1);
        CallbackScope(core.id)
    }

    /// Starts an async callback; the executor traces its end.
    #[inline]
    pub(crate) fn start_async(core: &EntityCore) {
        crate::trace::tp::callback_start(core.id, 1);
    }
}

impl Drop for CallbackScope {
    #[inline]
    fn drop(&mut self) {
        crate::trace::tp::callback_end(self.0);
    }
}

/// One item of ready work.
pub(crate) enum Ready {
    Entity(Arc<dyn Entity>),
    /// A suspended async callback that was woken.
    Task(Arc<Task>),
}

/// What every entity has: identity, group, and its link to an executor.
pub(crate) struct EntityCore {
    pub(crate) name: Arc<str>,
    pub(crate) group: CallbackGroup,
    /// On its own cache line: a publisher swaps it on every message, while the worker
    /// running the entity reads the fields around it.
    scheduled: crossbeam_utils::CachePadded<ScheduleFlag>,
    executor: Mutex<Option<Weak<ExecShared>>>,
    /// The id of the executor in `executor` (0: none), readable without the lock.
    executor_id: AtomicU64,
    me: Weak<dyn Entity>,
    waker: Waker,
    destroyed: AtomicBool,
    /// The simulated step waiting for this entity's next run (see `settle`).
    settle: settle::Mark,
    id: u64,
    /// The logger of the entity's node: `log::info!` in its callback logs with it.
    pub(crate) logger: Option<crate::logging::Logger>,
}

struct EntityWaker(Weak<dyn Entity>);

impl Wake for EntityWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if let Some(entity) = self.0.upgrade() {
            entity.core().notify();
        }
    }
}

impl EntityCore {
    /// `me` is the entity that owns this core (from `Arc::new_cyclic`).
    pub(crate) fn new(
        name: impl Into<Arc<str>>,
        group: CallbackGroup,
        me: Weak<dyn Entity>,
        logger: Option<crate::logging::Logger>,
    ) -> Self {
        let id = crate::trace::next_handle();
        let name = name.into();
        crate::trace::tp::rclcpp_callback_register(id, &name);
        let waker = Waker::from(Arc::new(EntityWaker(me.clone())));
        Self {
            name,
            group,
            scheduled: crossbeam_utils::CachePadded::new(ScheduleFlag::new()),
            executor: Mutex::new(None),
            executor_id: AtomicU64::new(0),
            me,
            waker,
            destroyed: AtomicBool::new(false),
            settle: settle::Mark::default(),
            id,
            logger,
        }
    }

    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// A waker that makes this entity ready.
    pub(crate) fn waker(&self) -> &Waker {
        &self.waker
    }

    /// Something happened: queue the entity on its executor unless it is queued already.
    pub(crate) fn notify(&self) {
        if !settle::any_scope() {
            // No simulated step to mark it for: an entity already queued costs one swap,
            // no lock (a burst of messages to a queued subscription).
            if !self.scheduled.set() {
                return;
            }
            // The flag is ours: queue the entity, or clear the flag under the lock that
            // `attach` takes, so an attach racing this still queues it.
            let slot = self.executor.lock();
            let queued = slot
                .as_ref()
                .and_then(Weak::upgrade)
                .zip(self.me.upgrade())
                .map(|(exec, me)| exec.push_ready(Ready::Entity(me)));
            if queued.is_none() {
                self.scheduled.clear();
            }
            return;
        }
        let slot = self.executor.lock();
        let Some(exec) = slot.as_ref().and_then(Weak::upgrade) else {
            return;
        };
        settle::note(&self.settle, |waiter_runs| exec.settles_for(waiter_runs));
        if self.scheduled.set() {
            match self.me.upgrade() {
                Some(me) => exec.push_ready(Ready::Entity(me)),
                None => self.scheduled.clear(),
            }
        }
    }

    /// A worker of `exec` ran `me` and it has more work: queue it again, behind what
    /// arrived meanwhile, with the worker's own reference (no lock, no new reference).
    /// The schedule flag is set before the attachment is checked, so a detach racing
    /// this leaves at worst a stale item that its worker skips, never a set flag with no
    /// item (see `detach`).
    pub(crate) fn requeue(me: Arc<dyn Entity>, exec: &Arc<ExecShared>) {
        let core = me.core();
        if core.is_attached_to(exec) {
            settle::note(&core.settle, |waiter_runs| exec.settles_for(waiter_runs));
        }
        if !core.scheduled.set() {
            return;
        }
        if core.is_attached_to(exec) {
            exec.push_ready(Ready::Entity(me));
        } else {
            core.scheduled.clear();
            core.notify();
        }
    }

    /// A worker of `exec` ran a batch of `me` without releasing its schedule flag (see
    /// `ExecShared::run_batch`): queue it again if it has more work (or a simulated step
    /// marked it meanwhile), else release the flag and look again, so that work published
    /// while the flag was held is never left without a queued item.
    #[inline]
    pub(crate) fn requeue_held(me: Arc<dyn Entity>, exec: &Arc<ExecShared>) {
        let core = me.core();
        let wanted = || me.has_work() || core.settle.is_marked();
        if !wanted() {
            // The release is a read-modify-write: a producer whose `set` it overwrites
            // published its work before, and the check below sees it (see `ScheduleFlag`).
            core.scheduled.clear();
            if wanted() {
                Self::requeue(me, exec);
            }
            return;
        }
        // Still ours: push the worker's own reference, behind what arrived meanwhile.
        if core.is_attached_to(exec) {
            settle::note(&core.settle, |waiter_runs| exec.settles_for(waiter_runs));
            exec.push_ready(Ready::Entity(me));
        } else {
            core.scheduled.clear();
            core.notify();
        }
    }

    /// The simulated step waiting for this entity's next run (see `settle`).
    pub(crate) fn settle(&self) -> &settle::Mark {
        &self.settle
    }

    /// A worker took the entity from the ready queue: later events must queue it again.
    pub(crate) fn taken(&self) {
        self.scheduled.clear();
    }

    pub(crate) fn attach(&self, exec: &Arc<ExecShared>) {
        let mut slot = self.executor.lock();
        *slot = Some(Arc::downgrade(exec));
        self.executor_id.store(exec.id, Ordering::Release);
        drop(slot);
        // An entity may have become ready before, and a timer needs a first poll to arm.
        if let Some(me) = self.me.upgrade() {
            me.attached(exec);
        }
    }

    pub(crate) fn detach(&self) {
        let mut slot = self.executor.lock();
        *slot = None;
        self.executor_id.store(0, Ordering::Release);
        drop(slot);
        self.scheduled.clear();
        // It will not run here: a step waiting for it must not.
        self.settle.release();
        // Work parked behind a busy group would hold this entity (and the group, which
        // it holds in turn) for ever: take it out.
        let me = self.me.as_ptr() as *const ();
        let parked = self.group.shared.gate.unpark(|item| match item {
            Ready::Entity(entity) => std::ptr::eq(Arc::as_ptr(entity) as *const (), me),
            Ready::Task(_) => false,
        });
        drop(parked);
    }

    pub(crate) fn executor(&self) -> Option<Arc<ExecShared>> {
        self.executor.lock().as_ref().and_then(Weak::upgrade)
    }

    pub(crate) fn is_attached_to(&self, exec: &ExecShared) -> bool {
        self.executor_id.load(Ordering::Acquire) == exec.id
    }

    /// Its handle was dropped: the entity never runs again.
    pub(crate) fn destroy(&self) {
        self.destroyed.store(true, Ordering::Release);
        self.detach();
    }

    pub(crate) fn is_destroyed(&self) -> bool {
        self.destroyed.load(Ordering::Acquire)
    }
}

impl fmt::Debug for EntityCore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EntityCore")
            .field("name", &self.name)
            .field("group", &self.group.name())
            .finish_non_exhaustive()
    }
}
