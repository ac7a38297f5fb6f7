//! Settling: waiting until the callbacks a clock update made due have run.
//!
//! Lock-step simulation ([`SimClock::step`](crate::time::SimClock::step), `/clock`) promises
//! that the callbacks a step made due have run before time moves on, identically every
//! run, whichever thread spins the executor that runs them. The step wakes the waiters it
//! made due on its own thread inside [`collect`]: every entity that a wake queues on an
//! executor is *marked* with the step's [`Ticket`]. A worker runs a marked entity inside
//! the ticket's scope, so the entities *its* callback makes ready (a subscription it
//! publishes to, a service it calls, a guard condition it triggers, the entity itself with
//! more work) are marked too; the entity's mark is released when its run ends. The step
//! then waits until the ticket has no marked entity left: the due callbacks and the work
//! they caused have all run (a timer re-arms before its callback, so its next deadline is
//! registered by then), while unrelated work (a steady timer on the same executor) is not
//! waited for. A suspended async callback woken by the step (an `.await` of a simulated
//! sleep) is marked the same way, for its next poll.
//!
//! Work is marked on an executor that spins, or that has never spun yet (a `spin()` on a
//! thread just started may not have begun: the step waits for it rather than racing it).
//! Nothing is marked on an executor that cannot run it meanwhile (shut down, spun before
//! and not now, or spun by the stepping thread itself, e.g. a simulator callback
//! publishing `/clock`): its caller spins it (`while exec.spin_some()? > 0 {}`). The wait
//! is bounded by the caller's deadline: a callback that never returns delays a step, never
//! hangs it (the clock counts it, see `SimClock::settle_timeouts`).
//!
//! # The handshake (who waits for whom, under which lock)
//! - The step: `collect` makes a ticket and wakes inside its scope. Each wake that queues
//!   an entity (or a task) calls [`note`]: [`Mark::set`] adds one to the ticket under the
//!   ticket's lock and stores the mark under the mark's lock, *then* the waker sets the
//!   entity's schedule flag (a read-modify-write) and pushes it if the flag was clear.
//!   The step then waits on the ticket's condition until its count is zero.
//! - The worker: takes the item, clears the schedule flag (a read-modify-write), *then*
//!   [`Mark::take`]s the mark: the count it holds moves to the worker. It runs the entity
//!   in the ticket's scope and releases that count when the run is over.
//! - Either the flag's set comes first (the worker's clear reads it, so it sees the mark
//!   stored before it), or the clear comes first (the set finds the flag clear and queues
//!   the entity again, to run marked). No mark is left without a run that releases it,
//!   and no run releases a mark set after it began: `tests/exec_loom.rs` checks this
//!   (`loom_a_step_waits_for_the_run_it_marked`).
//!
//! # Ground rules
//! A ticket's count changes only under its lock, and reaching zero is signalled under it.
//! An entity's mark is set and taken under the mark's own lock; each set adds one to its
//! ticket and each release removes one, so the count is exact.

use crate::loom::sync::atomic::{AtomicBool, Ordering};
use crate::loom::sync::{Condvar, Mutex};
use std::cell::RefCell;
use std::sync::Arc;
// A hint in a `static` (loom's atomics cannot be made in a const context): it only lets
// threads without a scope skip the thread-local read, and each thread counts itself.
use std::sync::atomic::AtomicUsize;
use std::time::Instant;

/// The marked entities of one step that have not finished their run.
#[derive(Debug, Default)]
pub(crate) struct Ticket {
    pending: Mutex<usize>,
    done: Condvar,
    /// The executors the waiting thread runs (their work cannot run while it waits, so
    /// it is not marked); none for an [`Inflow`]'s, whose waiter is another process.
    waiter_runs: Vec<u64>,
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
            if self.done.wait_until(&mut pending, deadline) {
                return *pending == 0;
            }
        }
        true
    }

    /// Marked entities whose run has not ended.
    pub(crate) fn pending(&self) -> usize {
        *self.pending.lock()
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
/// the ticket, for this thread to wait on; `waiter_runs` gives the executors this thread
/// runs (`exec::executors_of_this_thread`). Nested in another scope, the outer ticket is
/// used.
pub(crate) fn collect(waiter_runs: impl FnOnce() -> Vec<u64>, wake: impl FnOnce()) -> Arc<Ticket> {
    let ticket = SCOPE.with(|s| s.borrow().clone()).unwrap_or_else(|| {
        Arc::new(Ticket {
            waiter_runs: waiter_runs(),
            ..Ticket::default()
        })
    });
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
    /// Marks the next run for `ticket`'s step (see the handshake above).
    pub(crate) fn set(&self, ticket: Arc<Ticket>) {
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

    /// Takes the mark for the run about to start: the caller now holds the ticket's count
    /// and releases it ([`Ticket::release`]) when the run is over. A mark set during the
    /// run is a new one, for the next run.
    #[inline]
    pub(crate) fn take(&self) -> Option<Arc<Ticket>> {
        if !self.marked.load(Ordering::Acquire) {
            return None;
        }
        let mut slot = self.ticket.lock();
        self.marked.store(false, Ordering::Release);
        slot.take()
    }

    /// Whether a step waits for this entity's next run (without the lock).
    #[inline]
    pub(crate) fn is_marked(&self) -> bool {
        self.marked.load(Ordering::Acquire)
    }

    /// The run the step waits for will not happen (detached, abandoned, parked behind a
    /// suspended callback): the step stops waiting for it.
    pub(crate) fn release(&self) {
        if let Some(ticket) = self.take() {
            ticket.release();
        }
    }
}

/// Whether this thread runs in a step's scope (its work is waited for by that step).
pub(crate) fn in_scope() -> bool {
    any_scope() && SCOPE.with(|s| s.borrow().is_some())
}

/// Whether any thread has a scope now (if none, [`note`] marks nothing).
#[inline]
pub(crate) fn any_scope() -> bool {
    SCOPES.load(Ordering::Relaxed) != 0
}

/// Work with `mark` is about to be queued by this thread on an executor: marked if a
/// scope is active and the executor can run it while the ticket's waiter waits (`can_run`,
/// given the executors that waiter runs). Called before the schedule flag is set (see the
/// handshake above).
#[inline]
pub(crate) fn note(mark: &Mark, can_run: impl FnOnce(&[u64]) -> bool) {
    // Only this thread's own scope matters, and it counts itself before it wakes anything.
    if SCOPES.load(Ordering::Relaxed) == 0 {
        return;
    }
    let ticket = SCOPE.with(|s| s.borrow().clone());
    if let Some(ticket) = ticket
        && can_run(&ticket.waiter_runs)
    {
        mark.set(ticket);
    }
}

/// Work that reaches this process from outside it (a transport's samples, requests and
/// replies), followed until it and everything it made ready here has run: what a
/// lock-step replay across processes waits for before it moves time again.
///
/// A transport runs each delivery inside [`Inflow::deliver`]. While the inflow is
/// tracking, the entities a delivery makes ready are marked with the inflow's own ticket,
/// as a step marks the callbacks it makes due (see the handshake above), and so are the
/// entities their runs make ready in turn. [`Inflow::is_quiet`] is true when no delivery
/// is under way and no marked run is left.
///
/// What it promises:
/// - Nothing is marked until [`Inflow::track`] is called: a process that no lock-step
///   replay asks about pays one relaxed load per delivery, and its simulated clock's steps
///   never share marks with deliveries.
/// - A delivery counts from before it hands anything over until the marks it set are in
///   place, so there is no instant at which its work is neither delivering nor marked.
///   [`Inflow::deliveries`] counts every tracked delivery, so a reader that sees the same
///   count before and after reading other state knows no delivery began in between.
/// - Work made ready on an executor that cannot run it meanwhile (see `note`) is not
///   marked: its caller runs it when it spins, outside the inflow's knowledge.
#[derive(Debug)]
pub struct Inflow {
    // Plain atomics: the inflow is not part of the loom model (`tests/exec_loom.rs`).
    tracking: std::sync::atomic::AtomicBool,
    ticket: Arc<Ticket>,
    delivering: AtomicUsize,
    deliveries: std::sync::atomic::AtomicU64,
}

impl Default for Inflow {
    fn default() -> Self {
        Inflow {
            tracking: Default::default(),
            ticket: Arc::default(),
            delivering: AtomicUsize::new(0),
            deliveries: Default::default(),
        }
    }
}

impl Inflow {
    /// An inflow that does not track yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// From now on, deliveries mark the work they make ready.
    pub fn track(&self) {
        self.tracking
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// From now on, deliveries mark nothing again (a replay ended).
    pub fn untrack(&self) {
        self.tracking
            .store(false, std::sync::atomic::Ordering::SeqCst);
    }

    /// Whether [`track`](Self::track) was called (and not undone).
    pub fn is_tracking(&self) -> bool {
        self.tracking.load(Ordering::Relaxed)
    }

    /// Runs `deliver`, which hands something that came from outside to this process's
    /// entities, marking what it makes ready while tracking.
    pub fn deliver<R>(&self, deliver: impl FnOnce() -> R) -> R {
        if !self.tracking.load(Ordering::Relaxed) {
            return deliver();
        }
        self.delivering.fetch_add(1, Ordering::SeqCst);
        self.deliveries.fetch_add(1, Ordering::SeqCst);
        let result = scope(Some(self.ticket.clone()), deliver);
        self.delivering.fetch_sub(1, Ordering::SeqCst);
        result
    }

    /// Runs `f` outside any scope: for work inside a delivery that settles on its own
    /// before it returns (a `/clock` sample applied with
    /// [`SimClock::publish_settled`](crate::time::SimClock::publish_settled), whose step
    /// must wait for its own ticket, not for every delivery's).
    pub fn outside<R>(f: impl FnOnce() -> R) -> R {
        scope(None, f)
    }

    /// Tracked deliveries begun so far.
    pub fn deliveries(&self) -> u64 {
        self.deliveries.load(Ordering::SeqCst)
    }

    /// Whether no delivery is under way and every run a delivery marked has ended.
    pub fn is_quiet(&self) -> bool {
        self.delivering.load(Ordering::SeqCst) == 0 && self.ticket.pending() == 0
    }

    /// Marked runs that have not ended (for a report of what a replay waits for).
    pub fn pending(&self) -> usize {
        self.ticket.pending()
    }
}
