//! [`Clock`]: a cheap handle that reads one clock and waits on it.
//!
//! Every wait here follows one loop: check cancellation, read the clock the caller asked
//! about, return if the deadline is reached, otherwise park on a *monotonic* deadline (see
//! [`wait`](super::wait)) and go round again. The clock is re-read after every wake-up,
//! so a sleep can be late but never early, whatever woke it and whatever the clock did.
//!
//! - `Steady`: parks until the deadline itself (the clock *is* the monotonic clock).
//! - `System`: parks for the remaining wall time measured on the monotonic clock; the
//!   wall monitor wakes it on a forward step, a backward step only makes the loop go
//!   round again. The kernel never sees a realtime deadline.
//! - `Sim`: registers in the simulated clock's deadline queue and parks until a publish
//!   reaches the deadline; cancellation wakes it too.

use super::jump::{self, JumpHandler, JumpThreshold};
use super::sim::SimClock;
use super::slack::ensure_fine_slack;
use super::wait::{mono_now, park_until_mono, thread_waker, wall_now};
use super::{CancelToken, ClockJump, ClockKind, ClockMismatch, Duration, Sleep, Time, WaitError};

/// A handle to one clock: system (wall), steady (monotonic) or simulated.
#[derive(Debug, Clone)]
pub struct Clock {
    source: Source,
}

#[derive(Debug, Clone)]
enum Source {
    System,
    Steady,
    Sim(SimClock),
}

/// How a wait that may also end on a clock jump ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WaitEnd {
    Reached,
    /// The clock jumped since the generation the caller passed.
    Jumped,
}

impl Clock {
    /// The wall clock, `CLOCK_REALTIME`, read through libc.
    pub fn system() -> Clock {
        Clock {
            source: Source::System,
        }
    }

    /// The monotonic clock, `CLOCK_MONOTONIC`.
    pub fn steady() -> Clock {
        Clock {
            source: Source::Steady,
        }
    }

    pub(crate) fn from_sim(sim: SimClock) -> Clock {
        Clock {
            source: Source::Sim(sim),
        }
    }

    pub fn kind(&self) -> ClockKind {
        match self.source {
            Source::System => ClockKind::System,
            Source::Steady => ClockKind::Steady,
            Source::Sim(_) => ClockKind::Sim,
        }
    }

    /// The simulated clock behind this handle, if it is one.
    pub fn as_sim(&self) -> Option<&SimClock> {
        match &self.source {
            Source::Sim(sim) => Some(sim),
            _ => None,
        }
    }

    #[inline]
    pub fn now(&self) -> Time {
        match &self.source {
            Source::System => Time::new(ClockKind::System, wall_now()),
            Source::Steady => Time::new(ClockKind::Steady, mono_now()),
            Source::Sim(sim) => sim.now(),
        }
    }

    /// Blocks until this clock reads at least `deadline`, or `cancel` fires.
    /// A deadline at or before now returns at once.
    pub fn sleep_until(&self, deadline: Time, cancel: &CancelToken) -> Result<(), WaitError> {
        self.block_until(deadline, cancel, None).map(|_| ())
    }

    /// Blocks for at least `duration` of this clock, or until `cancel` fires.
    pub fn sleep_for(&self, duration: Duration, cancel: &CancelToken) -> Result<(), WaitError> {
        self.sleep_until(self.now() + duration, cancel)
    }

    /// A future that completes once this clock reads at least `deadline`, or with
    /// [`WaitError::Cancelled`] when `cancel` fires.
    pub fn sleep_until_async(&self, deadline: Time, cancel: &CancelToken) -> Sleep {
        Sleep::new(self.clone(), deadline, cancel.clone())
    }

    /// Registers jump callbacks on this clock, as rclcpp's `create_jump_callback`:
    /// `before` runs before the runtime reacts to the jump, `after` afterwards with the jump.
    /// A steady clock never jumps; its handler is never called.
    pub fn create_jump_handler(
        &self,
        threshold: JumpThreshold,
        before: impl Fn() + Send + Sync + 'static,
        after: impl Fn(&ClockJump) + Send + Sync + 'static,
    ) -> JumpHandler {
        match &self.source {
            Source::System => jump::add_wall_handler(threshold, Box::new(before), Box::new(after)),
            Source::Steady => JumpHandler::inert(),
            Source::Sim(sim) => {
                sim.inner
                    .handlers
                    .add(threshold, Box::new(before), Box::new(after))
            }
        }
    }

    /// A counter of this clock's discontinuities (wall steps, simulation resets); `None`
    /// for the steady clock, which has none. Samples the wall clock for a pending step.
    pub(crate) fn jump_generation(&self) -> Option<u64> {
        match &self.source {
            Source::System => Some(jump::monitor().poll()),
            Source::Steady => None,
            Source::Sim(sim) => Some(sim.generation()),
        }
    }

    /// Net size of the jumps after generation `since`.
    pub(crate) fn jumped_since(&self, since: u64) -> Duration {
        match &self.source {
            Source::System => jump::monitor().net_since(since),
            Source::Steady => Duration::ZERO,
            Source::Sim(sim) => sim.net_since(since),
        }
    }

    /// The wait loop. With `jump_generation`, also returns [`WaitEnd::Jumped`] as soon as
    /// the clock's jump generation differs from it.
    pub(crate) fn block_until(
        &self,
        deadline: Time,
        cancel: &CancelToken,
        jump_generation: Option<u64>,
    ) -> Result<WaitEnd, WaitError> {
        if deadline.kind() != self.kind() {
            return Err(ClockMismatch {
                expected: self.kind(),
                found: deadline.kind(),
            }
            .into());
        }
        let deadline = deadline.nanos();
        ensure_fine_slack();
        let waker = thread_waker();
        let _cancel_registration = cancel.register(&waker);
        let jumped = |clock: &Clock| match jump_generation {
            Some(g) => clock.jump_generation().is_some_and(|now| now != g),
            None => false,
        };
        match &self.source {
            Source::Steady => loop {
                if cancel.is_cancelled() {
                    return Err(WaitError::Cancelled);
                }
                if mono_now() >= deadline {
                    return Ok(WaitEnd::Reached);
                }
                park_until_mono(Some(deadline));
            },
            Source::System => {
                let _sleeper = jump::register_current_thread();
                loop {
                    if cancel.is_cancelled() {
                        return Err(WaitError::Cancelled);
                    }
                    if jumped(self) {
                        return Ok(WaitEnd::Jumped);
                    }
                    let now = wall_now();
                    if now >= deadline {
                        return Ok(WaitEnd::Reached);
                    }
                    park_until_mono(Some(mono_now().saturating_add(deadline - now)));
                }
            }
            Source::Sim(sim) => {
                let mut key = None;
                let result = loop {
                    if cancel.is_cancelled() {
                        break Err(WaitError::Cancelled);
                    }
                    if jumped(self) {
                        break Ok(WaitEnd::Jumped);
                    }
                    if sim.register(deadline, &mut key, &waker) {
                        break Ok(WaitEnd::Reached);
                    }
                    park_until_mono(None);
                };
                sim.unregister(key);
                result
            }
        }
    }
}
