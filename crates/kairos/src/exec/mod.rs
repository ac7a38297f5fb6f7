//! Execution: executors, callback groups, async callbacks, deadlock detection, shutdown.
//!
//! What this module promises:
//! - Readiness is event driven and served in arrival order (the `ready` module): dispatch costs
//!   O(ready) and a busy entity cannot starve another.
//! - A single-threaded executor waits on its own timers' earliest deadline (the
//!   `timekeeper` module): its timers cost no other thread.
//! - Callback groups ([`CallbackGroup`]) gate which ready work may start, with rclcpp/rclpy
//!   semantics; an `async` callback holds its group until its future completes, as a
//!   coroutine task does in rclpy (its executor releases the group only when the coroutine
//!   finishes). So work of the same mutually exclusive group never interleaves with an
//!   async callback's `.await`s, and an awaited response whose service is in that group
//!   could never come: the await fails at once with [`WouldDeadlock`] (never a silent
//!   wait). Put such a service in a group of its own, or use a done callback.
//! - Blocking waits that form a cycle across groups and threads (two callbacks each calling
//!   the other's service with `call()`) are detected: one gets [`WouldDeadlock`] naming both;
//!   across processes too, on a transport that shares waits ([`shared_waits`]).
//! - Lock-step simulation: a [`SimClock`](crate::time::SimClock) step waits until the
//!   callbacks it made due on a spinning executor have run (see `settle`);
//!   [`Executor::spin_thread`] spins on a thread and returns once the spin has begun.
//! - A blocking wait made on an executor worker that could never complete returns
//!   [`WouldDeadlock`] at once, naming the group and the fix, instead of hanging.
//!   Crates built on kairos make the same check for their own waits (a tf2 buffer's
//!   lookup with a timeout): [`check_blocking_wait`] and [`check_await`] with the
//!   [`WaitCompleter`]s of the subscriptions that complete them.
//! - Nothing waits without a way out: spins end on cancel, shutdown or a timeout, and
//!   [`Executor::shutdown`] returns by its deadline with a [`ShutdownReport`] naming any
//!   callback that is still running or suspended at an `.await`, and counting the work it
//!   dropped; it trips a token that wakes kairos waits made inside its callbacks, no
//!   callback starts after it returns, and nothing it dropped stays referenced.
//! - The state is visible while it runs: [`Executor::live_tasks`],
//!   [`Executor::parked_entities`], [`Executor::queued_responses`], [`CallbackGroup::parked`],
//!   [`Client::queued_responses`](crate::graph::Client::queued_responses).
//!
#![doc = include_str!("callback_groups.md")]

mod blocking;
pub(crate) mod callback;
pub(crate) mod deadlock;
pub(crate) mod entity;
mod error;
mod executor;
mod gate;
mod group;
mod guard;
pub(crate) mod ready;
mod running;
pub mod shared_waits;
mod shutdown;
pub(crate) mod task;
mod timekeeper;
mod timer;

pub use blocking::{BlockingWait, WaitCompleter, check_await, check_blocking_wait};
pub use deadlock::{DeadlockReason, WaitAdvice, WouldDeadlock};
pub use error::ExecError;
pub(crate) use executor::{ExecShared, deadline_after, executors_of_this_thread};
pub use executor::{Executor, ExecutorStats, ReadyCallback, SpinThread};
pub use group::{CallbackGroup, GroupKind};
pub use guard::GuardCondition;
pub(crate) use guard::GuardInner;
pub use shutdown::{ShutdownReport, StillRunning, Suspended};
pub use timer::CallbackTimer;

/// Whether this thread runs a kairos callback now (a plain one, or one poll of an `async`
/// one): what a binding asks to tell a wait made from a callback, which the executor's
/// rules govern, from one made from a program's own thread.
pub fn in_callback() -> bool {
    crate::current::callback::handle().is_some()
}
pub(crate) use timer::{TimerCallback, TimerInner};
