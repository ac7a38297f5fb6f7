//! Settling: waiting until the callbacks a clock update made due have run.
//!
//! Lock-step simulation ([`SimClock::step`](crate::time::SimClock::step), `/clock`) promises
//! that the callbacks a step made due have run before time moves on, identically every
//! run, whichever thread spins the executor that runs them. The step wakes the waiters it
//! made due on its own thread inside [`collect`]: every entity that a wake queues on an
//! executor is *marked* with the step's [`Ticket`]. A worker runs a marked entity inside
//! the ticket's scope, so the entities *its* callback makes ready (a subscription it
//! publishes to, a service it calls, a guard condition it triggers) are marked too; the
//! entity's mark is released when its run ends. The step then waits until the ticket has
//! no marked entity left: the due callbacks and the work they caused have all run, while
//! unrelated work (a steady timer on the same executor) is not waited for. A suspended
//! async callback woken by the step (an `.await` of a simulated sleep) is marked the same
//! way, for its next poll.
//!
//! Nothing is marked on an executor that cannot run it meanwhile (not spinning, shut down,
//! or spun by the stepping thread itself, e.g. a simulator callback publishing `/clock`):
//! its caller spins it (`while exec.spin_some()? > 0 {}`). The wait is bounded by the
//! caller's deadline: a callback that never returns delays a step, never hangs it.
//!
//! # Ground rules
//! A ticket's count changes only under its lock, and reaching zero is signalled under it.
//! An entity's mark (`EntityCore::settle`) is set and taken under the entity's own lock;
//! each set adds one to its ticket and each take removes one, so the count is exact.

use super::executor::ExecShared;
use parking_lot::{Condvar, Mutex};
use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

/// The marked entities of one step that have not finished their run.
#[derive(Debug, Default)]
pub(crate) struct Ticket {
    pending: Mutex<usize>,
    done: Condvar,
}

impl Ticket {
    pub(crate) fn add(&self) {
        *self.pending.lock() += 1;
    }

    pub(crate) fn release(&self) {
        let mut pending = self.pending.lock();
        *pending = pending.saturating_sub(1);
        if *pending == 0 {
            self.done.notify_all();
        }
    }

    /// Waits until no marked entity is left, or `deadline`; false if it timed out.
    pub(crate) fn wait(&self, deadline: Instant) -> bool {
        let mut pending = self.pending.lock();
        while *pending > 0 {
            if self.done.wait_until(&mut pending, deadline).timed_out() {
                return *pending == 0;
            }
        }
        true
    }
}

thread_local! {
    /// The ticket whose entities this thread marks when it makes them ready.
    static SCOPE: RefCell<Option<Arc<Ticket>>> = const { RefCell::new(None) };
}

/// How many threads have a scope now: while none has, [`note`] is one relaxed load (it
/// runs on every notify, the dispatch hot path).
static SCOPES: AtomicUsize = AtomicUsize::new(0);

/// Runs `f` with `ticket` as this thread's scope (none: no marking).
pub(crate) fn scope<R>(ticket: Option<Arc<Ticket>>, f: impl FnOnce() -> R) -> R {
    if ticket.is_none() && SCOPE.with(|s| s.borrow().is_none()) {
        return f();
    }
    let entering = ticket.is_some();
    if entering {
        SCOPES.fetch_add(1, Ordering::SeqCst);
    }
    let outer = SCOPE.with(|s| s.replace(ticket));
    let result = f();
    SCOPE.with(|s| *s.borrow_mut() = outer);
    if entering {
        SCOPES.fetch_sub(1, Ordering::SeqCst);
    }
    result
}

/// Runs `wake` (which wakes waiters on this thread) in a new ticket's scope and returns
/// the ticket, to wait on. Nested in another scope, the outer ticket is used.
pub(crate) fn collect(wake: impl FnOnce()) -> Arc<Ticket> {
    let ticket = SCOPE
        .with(|s| s.borrow().clone())
        .unwrap_or_else(|| Arc::new(Ticket::default()));
    scope(Some(ticket.clone()), wake);
    ticket
}

/// The ticket of the step waiting for one entity's or task's next run, with a flag
/// readable without the lock.
#[derive(Debug, Default)]
pub(crate) struct Mark {
    ticket: Mutex<Option<Arc<Ticket>>>,
    marked: AtomicBool,
}

impl Mark {
    fn set(&self, ticket: Arc<Ticket>) {
        let mut slot = self.ticket.lock();
        if let Some(old) = slot.as_ref() {
            if Arc::ptr_eq(old, &ticket) {
                return;
            }
            // A mark left by an earlier step whose wait ended (its executor stopped
            // spinning): the step now waiting takes it over.
            old.release();
        }
        ticket.add();
        *slot = Some(ticket);
        self.marked.store(true, Ordering::Release);
    }

    /// The step waiting for this run, if any.
    #[inline]
    pub(crate) fn ticket(&self) -> Option<Arc<Ticket>> {
        if !self.marked.load(Ordering::Acquire) {
            return None;
        }
        self.ticket.lock().clone()
    }

    /// Whether a step waits for this entity's next run (without the lock).
    #[inline]
    pub(crate) fn is_marked(&self) -> bool {
        self.marked.load(Ordering::Acquire)
    }

    /// The run the step waited for has ended (or will not happen).
    pub(crate) fn release(&self) {
        if !self.marked.load(Ordering::Acquire) {
            return;
        }
        let ticket = {
            let mut slot = self.ticket.lock();
            self.marked.store(false, Ordering::Release);
            slot.take()
        };
        if let Some(ticket) = ticket {
            ticket.release();
        }
    }
}

/// Whether any thread has a scope now (if none, [`note`] marks nothing).
#[inline]
pub(crate) fn any_scope() -> bool {
    SCOPES.load(Ordering::Relaxed) != 0
}

/// Work with `mark` was queued on `exec` by this thread: marked if a scope is active and
/// `exec` can run it meanwhile.
#[inline]
pub(crate) fn note(mark: &Mark, exec: &ExecShared) {
    // Only this thread's own scope matters, and it counts itself before it wakes anything.
    if SCOPES.load(Ordering::Relaxed) == 0 {
        return;
    }
    let ticket = SCOPE.with(|s| s.borrow().clone());
    if let Some(ticket) = ticket
        && exec.settles_for_this_thread()
    {
        mark.set(ticket);
    }
}
