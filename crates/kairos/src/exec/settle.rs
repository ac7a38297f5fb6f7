//! Settling: waiting until the executors that a clock update made busy are quiet again.
//!
//! Lock-step simulation ([`SimClock::step`](crate::time::SimClock::step), `/clock`) promises
//! that the callbacks a step made due have run before time moves on, identically every
//! run, whichever thread spins the executor that runs them. The step wakes the waiters it
//! made due on its own thread; each wake that queues work on an executor is *noted* here
//! (a thread-local list, active only while a step wakes), and the step then waits until
//! each noted executor is *quiet*: nothing queued and no callback running, so everything
//! the woken callbacks queued in turn has run too.
//!
//! The wait is skipped for an executor that cannot make progress meanwhile (not spinning,
//! shut down, or spun by the stepping thread itself: a simulator callback publishing
//! `/clock`), and it is bounded by the caller's deadline: a callback that never returns
//! delays a step by that much, never for ever.
//!
//! # Ground rules
//! `ExecShared::busy` counts ready items queued or being run; it is incremented before an
//! item is pushed and decremented after the worker that popped it has run it. A waiter
//! registers in `quiet_waiters` before reading `busy` under `quiet_lock`; the worker that
//! brings `busy` to zero reads `quiet_waiters` after, and notifies under `quiet_lock`.
//! Both sides use `SeqCst`, so one of them always sees the other: no lost wake-up.

use super::executor::ExecShared;
use std::cell::{Cell, RefCell};
use std::sync::{Arc, Weak};
use std::time::Instant;

thread_local! {
    static COLLECTING: Cell<bool> = const { Cell::new(false) };
    static NOTED: RefCell<Vec<Weak<ExecShared>>> = const { RefCell::new(Vec::new()) };
}

/// Work was queued on `exec` by this thread: remembered if a step is collecting.
#[inline]
pub(crate) fn note(exec: &Arc<ExecShared>) {
    if COLLECTING.with(Cell::get) {
        NOTED.with(|noted| {
            let mut noted = noted.borrow_mut();
            if !noted.iter().any(|w| w.as_ptr() == Arc::as_ptr(exec)) {
                noted.push(Arc::downgrade(exec));
            }
        });
    }
}

/// Runs `wake` (which wakes waiters on this thread) and returns the executors it queued
/// work on.
pub(crate) fn collect(wake: impl FnOnce()) -> Vec<Weak<ExecShared>> {
    let outer = COLLECTING.with(|c| c.replace(true));
    wake();
    COLLECTING.with(|c| c.set(outer));
    if outer {
        // A nested collection (a wake that stepped another clock): the outer one settles.
        return Vec::new();
    }
    NOTED.with(|noted| std::mem::take(&mut *noted.borrow_mut()))
}

/// Waits, until `deadline` at the latest, for each executor in `execs` to be quiet.
/// Returns false if the deadline passed first.
pub(crate) fn wait_quiet(execs: &[Weak<ExecShared>], deadline: Instant) -> bool {
    execs
        .iter()
        .filter_map(Weak::upgrade)
        .all(|exec| exec.wait_quiet(deadline))
}
