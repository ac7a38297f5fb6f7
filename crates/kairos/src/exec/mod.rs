//! Execution: executors, callback groups, async callbacks, deadlock detection, shutdown.
//!
//! What this module promises:
//! - Readiness is event driven and served in arrival order (the `ready` module): dispatch costs
//!   O(ready) and a busy entity cannot starve another.
//! - Callback groups ([`CallbackGroup`]) gate which ready work may start, with rclcpp/rclpy
//!   semantics; an `async` callback holds its group until its future completes.
//! - A blocking wait made on an executor worker that could never complete returns
//!   [`WouldDeadlock`] at once, naming the group and the fix, instead of hanging.
//! - Nothing waits without a way out: spins end on cancel, shutdown or a timeout, and
//!   [`Executor::shutdown`] returns by its deadline with a [`ShutdownReport`] naming any
//!   callback that is still running.
//!
#![doc = include_str!("callback_groups.md")]

pub(crate) mod deadlock;
pub(crate) mod entity;
mod error;
mod executor;
mod gate;
mod group;
mod guard;
pub(crate) mod ready;
mod shutdown;
pub(crate) mod task;
mod timer;

pub use deadlock::{DeadlockReason, WouldDeadlock};
pub use error::ExecError;
pub(crate) use executor::{ExecShared, deadline_after};
pub use executor::{Executor, ExecutorStats};
pub use group::{CallbackGroup, GroupKind};
pub use guard::GuardCondition;
pub(crate) use guard::GuardInner;
pub use shutdown::{ShutdownReport, StillRunning};
pub use timer::CallbackTimer;
pub(crate) use timer::{TimerCallback, TimerInner};
