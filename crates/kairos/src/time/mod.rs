//! Time: clocks, sleeps, timers and rates that are never early and never hang.
//!
//! # Promises
//! - **Never early.** [`Clock::sleep_until`], [`Clock::sleep_until_async`], [`Timer`] and
//!   [`Rate`] return only once the clock they were asked about reads at least the
//!   deadline. Resolution is the nanosecond; the clock is re-read after every wake-up.
//! - **Never hang.** Every wait takes a [`CancelToken`]; cancelling it wakes the wait at
//!   once with [`WaitError::Cancelled`].
//! - **The kernel only waits on the monotonic clock.** System-clock and simulated
//!   deadlines are translated into monotonic waits (the internal `wait` module) and re-evaluated when the
//!   wall clock steps (see [`jump`]) or the simulated clock is published (see [`SimClock`]).
//! - **No silent mixing of clocks.** A [`Time`] carries its [`ClockKind`]; comparing or
//!   subtracting times of different clocks gives `None` or [`ClockMismatch`].
//!
//! # Map
//! [`Duration`] and [`Time`] are values; [`Clock`] reads and waits; [`CancelToken`] is the
//! way out; [`jump`] watches the wall clock and tells [`JumpHandler`]s; [`Timer`] and
//! [`Rate`] keep periodic deadlines; [`SimClock`] is simulation time; [`slack`] sets the
//! kernel's timer slack on waiting threads.

mod cancel;
mod clock;
mod deadline_host;
mod deadline_queue;
mod driver;
mod duration;
mod error;
pub mod jump;
mod point;
mod rate;
mod ros_clock;
pub(crate) mod settle;
mod sim;
pub mod slack;
mod sleep;
mod timer;
mod virtual_clock;
pub(crate) mod wait;
mod wakers;

pub use cancel::{CancelRegistration, CancelToken};
pub use clock::Clock;
pub(crate) use deadline_host::{DeadlineHost, SPIN_WINDOW_NS};
pub(crate) use deadline_queue::DeadlineQueue;
pub use duration::Duration;
pub use error::{TimeError, WaitError};
pub use jump::{ClockChange, ClockJump, JumpHandler, JumpThreshold};
pub use point::{ClockKind, ClockMismatch, Time};
pub use rate::{Rate, RateTick};
pub use ros_clock::RosClock;
pub(crate) use ros_clock::SwitchWaiter;
pub use settle::Inflow;
pub use sim::{DEFAULT_STALL_TIMEOUT, SETTLE_TIMEOUT, SimClock};
pub use sleep::Sleep;
pub use timer::{MissedPeriods, Tick, Timer};
pub use virtual_clock::StallPolicy;
// The pure model of a simulated clock, public for property tests only.
#[doc(hidden)]
pub use virtual_clock::VirtualClock;
