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
//!   reaches the deadline, or until the moment the stall policy needs a look (the stall
//!   begins; the fallback clock reaches the deadline); cancellation wakes it too.

use super::jump::{self, JumpHandler, JumpThreshold, WallSample};
use super::ros_clock::RosClock;
use super::sim::{SimClock, WaitStep};
use super::slack::ensure_fine_slack;
use super::wait::{mono_now, park_until_mono, thread_waker, wall_now};
use super::{CancelToken, ClockJump, ClockKind, ClockMismatch, Duration, Sleep, Time, WaitError};
use std::sync::Arc;

/// A handle to one clock: system (wall), steady (monotonic) or simulated.
///
/// # Examples
///
/// ```
/// use kairos::time::{CancelToken, Clock, Duration, WaitError};
///
/// let steady = Clock::steady();
/// let deadline = steady.now() + Duration::from_millis(5);
/// steady.sleep_until(deadline, &CancelToken::new())?;
/// assert!(steady.now().nanos() >= deadline.nanos(), "never early");
///
/// // A deadline read from another clock is refused, never misread.
/// let wall_deadline = Clock::system().now() + Duration::from_millis(5);
/// let refused = steady.sleep_until(wall_deadline, &CancelToken::new());
/// assert!(matches!(refused, Err(WaitError::ClockMismatch(_))));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Clock {
    source: Source,
}

#[derive(Debug, Clone)]
enum Source {
    System,
    Steady,
    Sim(SimClock),
    Ros(RosClock),
}

/// What happened to a clock since a jump generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JumpsSince {
    /// Steps of the same source, netting to this delta.
    Net(Duration),
    /// The clock switched source (simulation time activated or deactivated).
    SourceChanged,
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

    pub(crate) fn from_ros(ros: RosClock) -> Clock {
        Clock {
            source: Source::Ros(ros),
        }
    }

    pub(crate) fn from_sim(sim: SimClock) -> Clock {
        Clock {
            source: Source::Sim(sim),
        }
    }

    /// Which clock this is; a node clock reports the source it follows now.
    pub fn kind(&self) -> ClockKind {
        match &self.source {
            Source::System => ClockKind::System,
            Source::Steady => ClockKind::Steady,
            Source::Sim(_) => ClockKind::Sim,
            Source::Ros(ros) => {
                if ros.use_sim_time() {
                    ClockKind::Sim
                } else {
                    ClockKind::System
                }
            }
        }
    }

    /// The simulated clock behind this handle, if it reads simulation time now.
    pub fn as_sim(&self) -> Option<&SimClock> {
        match &self.source {
            Source::Sim(sim) => Some(sim),
            Source::Ros(ros) if ros.use_sim_time() => Some(ros.sim()),
            _ => None,
        }
    }

    /// The node clock behind this handle, if it is one.
    pub fn as_ros(&self) -> Option<&RosClock> {
        match &self.source {
            Source::Ros(ros) => Some(ros),
            _ => None,
        }
    }

    /// The clock's reading now.
    #[inline]
    pub fn now(&self) -> Time {
        match &self.source {
            Source::System => Time::new(ClockKind::System, wall_now()),
            Source::Steady => Time::new(ClockKind::Steady, mono_now()),
            Source::Sim(sim) => sim.now(),
            Source::Ros(ros) => ros.active().now(),
        }
    }

    /// Blocks until this clock reads at least `deadline`, or `cancel` fires.
    /// A deadline at or before now returns at once.
    pub fn sleep_until(&self, deadline: Time, cancel: &CancelToken) -> Result<(), WaitError> {
        let clock = crate::trace::clock(self.kind());
        crate::trace::tp::sleep_start(clock, deadline.nanos());
        let result = self
            .block_until(deadline, cancel, None, &|| None)
            .map(|_| ());
        crate::trace::tp::sleep_end(clock, deadline.nanos(), self.now().nanos());
        result
    }

    /// Blocks for at least `duration` of this clock, or until `cancel` fires.
    pub fn sleep_for(
        &self,
        duration: impl Into<Duration>,
        cancel: &CancelToken,
    ) -> Result<(), WaitError> {
        let duration = duration.into();
        self.sleep_until(self.now() + duration, cancel)
    }

    /// Blocks until `ready` gives a value (`Ok(Some(..))`), this clock reads at least
    /// `deadline` (`Ok(None)`), or `cancel` fires (or, inside an executor's callback, that
    /// executor shuts down): [`WaitError::Cancelled`]. The wait of [`sleep_until`]
    /// (monotonic parking, simulated deadlines, node-clock switches), for a condition set
    /// by another thread: a crate built on kairos waits for its own event this way.
    ///
    /// `ready` is called first, then after every wake-up, with the waker that wakes this
    /// wait. It must register that waker with whatever will make it ready *before* it
    /// checks (as a [`CancelToken`] wait does), so that no wake-up is lost; `ready` is
    /// checked once more when the deadline is reached, before `Ok(None)`.
    ///
    /// [`sleep_until`]: Self::sleep_until
    pub fn wait_until_ready<R>(
        &self,
        deadline: Time,
        cancel: &CancelToken,
        ready: impl FnMut(&std::task::Waker) -> Option<R>,
    ) -> Result<Option<R>, WaitError> {
        let waker = thread_waker();
        let ready = std::cell::RefCell::new(ready);
        let found = std::cell::RefCell::new(None);
        let interrupt = || {
            if found.borrow().is_none() {
                *found.borrow_mut() = (ready.borrow_mut())(&waker);
            }
            found.borrow().is_some().then_some(Ok(WaitEnd::Reached))
        };
        self.block_until(deadline, cancel, None, &interrupt)?;
        Ok(found.into_inner())
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
            Source::Ros(ros) => {
                // Source changes from the node clock itself; steps from whichever source is
                // in force when they happen.
                let (before, after) = (Arc::new(before), Arc::new(after));
                let forward = |sim_mode: bool| {
                    let (r, b, a) = (ros.clone(), Arc::clone(&before), Arc::clone(&after));
                    let r2 = r.clone();
                    (
                        Box::new(move || {
                            if r.use_sim_time() == sim_mode {
                                b()
                            }
                        }) as Box<dyn Fn() + Send + Sync>,
                        Box::new(move |j: &ClockJump| {
                            if r2.use_sim_time() == sim_mode {
                                a(j)
                            }
                        }) as Box<dyn Fn(&ClockJump) + Send + Sync>,
                    )
                };
                let (wb, wa) = forward(false);
                let (sb, sa) = forward(true);
                let (b, a) = (Arc::clone(&before), Arc::clone(&after));
                JumpHandler::combine(vec![
                    ros.inner.handlers.add(
                        threshold,
                        Box::new(move || b()),
                        Box::new(move |j| a(j)),
                    ),
                    jump::add_wall_handler(threshold, wb, wa),
                    ros.sim().inner.handlers.add(threshold, sb, sa),
                ])
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
            // The switch count in the high bits, the active source's generation below.
            Source::Ros(ros) => {
                let (switches, active) = ros.snapshot();
                let source = active.jump_generation().unwrap_or(0);
                Some((switches << 40) | (source & SOURCE_GENERATION_MASK))
            }
        }
    }

    /// What happened after generation `since`.
    pub(crate) fn jumped_since(&self, since: u64) -> JumpsSince {
        match &self.source {
            Source::System => JumpsSince::Net(jump::monitor().net_since(since)),
            Source::Steady => JumpsSince::Net(Duration::ZERO),
            Source::Sim(sim) => JumpsSince::Net(sim.net_since(since)),
            Source::Ros(ros) => {
                if since >> 40 != ros.switch_generation() {
                    JumpsSince::SourceChanged
                } else {
                    ros.active().jumped_since(since & SOURCE_GENERATION_MASK)
                }
            }
        }
    }

    /// The wait loop. With `jump_generation`, also returns [`WaitEnd::Jumped`] as soon as
    /// the clock's jump generation differs from it. `interrupt` is checked on every turn
    /// (the caller's own reasons to stop: a timer cancelled or reset); whatever makes it
    /// answer must also wake this thread.
    pub(crate) fn block_until(
        &self,
        deadline: Time,
        cancel: &CancelToken,
        jump_generation: Option<u64>,
        interrupt: &dyn Fn() -> Option<Result<WaitEnd, WaitError>>,
    ) -> Result<WaitEnd, WaitError> {
        let Source::Ros(ros) = &self.source else {
            return self.block_until_source(deadline, cancel, jump_generation, interrupt);
        };
        let _switch = ros.register_waiter(&thread_waker());
        let (generation, active) = ros.snapshot();
        if deadline.kind() != active.kind() && deadline.kind() != ClockKind::Steady {
            // A deadline read from the node clock before it switched source.
            return Err(WaitError::ClockChanged);
        }
        // The active source's own generation (the low bits) for its jump checks.
        let source_generation = jump_generation.map(|g| g & SOURCE_GENERATION_MASK);
        let switched_or_interrupted = || {
            if ros.switch_generation() != generation {
                Some(Err(WaitError::ClockChanged))
            } else {
                interrupt()
            }
        };
        active.block_until_source(
            deadline,
            cancel,
            source_generation,
            &switched_or_interrupted,
        )
    }

    fn block_until_source(
        &self,
        deadline: Time,
        cancel: &CancelToken,
        jump_generation: Option<u64>,
        interrupt: &dyn Fn() -> Option<Result<WaitEnd, WaitError>>,
    ) -> Result<WaitEnd, WaitError> {
        if deadline.kind() != self.kind() {
            return Err(ClockMismatch {
                expected: self.kind(),
                found: deadline.kind(),
            }
            .into());
        }
        let _status = crate::current::wait::describe(|| {
            format!("sleep until {deadline} on the {} clock", self.kind())
        });
        let deadline = deadline.nanos();
        ensure_fine_slack();
        let waker = thread_waker();
        let _cancel_registration = cancel.register(&waker);
        // Inside an executor's callback the wait also ends when that executor shuts down.
        let shutdown = crate::current::callback::shutdown_token();
        let _shutdown_registration = shutdown.as_ref().map(|token| token.register(&waker));
        // Every reason to end the wait other than reaching the deadline, checked each turn.
        let stop = || {
            if cancel.is_cancelled() || shutdown.as_ref().is_some_and(CancelToken::is_cancelled) {
                return Some(Err(WaitError::Cancelled));
            }
            if let Some(end) = interrupt() {
                return Some(end);
            }
            let jumped =
                jump_generation.is_some_and(|g| self.jump_generation().is_some_and(|now| now != g));
            jumped.then_some(Ok(WaitEnd::Jumped))
        };
        if let Source::Ros(_) = &self.source {
            // `block_until` resolves a node clock to its active source before waiting.
            return Err(WaitError::ClockChanged);
        }
        let _sleeper = matches!(self.source, Source::System).then(jump::register_current_thread);
        let participant = self.as_sim().map(SimClock::participant);
        let mut key = None;
        let result = loop {
            if let Some(end) = stop() {
                break end;
            }
            let step = self.wait_step(deadline, |sim| {
                sim.poll_wait(deadline, &mut key, &waker, participant)
            });
            match step {
                WaitStep::Reached => break Ok(WaitEnd::Reached),
                WaitStep::Failed(err) => break Err(err),
                WaitStep::Pending(recheck_at) => park_until_mono(recheck_at),
            }
        };
        if let Some(sim) = self.as_sim() {
            sim.unregister(key);
        }
        result
    }

    /// One look at this clock for a wait until `deadline` (nanoseconds of this clock): the
    /// one decision behind both ways of waiting. A blocking wait parks its thread until
    /// the steady time this returns, an async [`Sleep`](super::Sleep) registers it with
    /// the timer driver; both look again when woken. `sim` polls a simulated source with
    /// the caller's own waker registration. The clock must be a resolved source, not a
    /// node clock.
    pub(crate) fn wait_step(
        &self,
        deadline: i64,
        sim: impl FnOnce(&SimClock) -> WaitStep,
    ) -> WaitStep {
        if let Some(clock) = self.as_sim() {
            return sim(clock);
        }
        if self.kind() == ClockKind::Steady {
            return match mono_now() >= deadline {
                true => WaitStep::Reached,
                false => WaitStep::Pending(Some(deadline)),
            };
        }
        // A wall-clock deadline becomes a steady one for this look only: the wall clock is
        // read again after each wake-up, so a step of it moves the wait with it.
        let now = wall_now();
        if now >= deadline {
            WaitStep::Reached
        } else {
            WaitStep::Pending(Some(
                mono_now().saturating_add(deadline.saturating_sub(now)),
            ))
        }
    }

    /// Wakes `waker` at the next sample of the simulated clock this clock reads now (a
    /// waiter that failed on a stall re-arms then); false if it reads no simulated clock.
    pub(crate) fn wake_on_next_sample(&self, waker: &std::task::Waker) -> bool {
        let active = match &self.source {
            Source::Ros(ros) => ros.active(),
            _ => self.clone(),
        };
        match active.as_sim() {
            Some(sim) => {
                sim.wake_on_next_sample(waker);
                true
            }
            None => false,
        }
    }

    /// The jump generation and the time, read consistently: retried if a jump or a source
    /// switch happened between the reads, so the time belongs to the generation.
    pub(crate) fn observe(&self) -> (Option<u64>, Time) {
        let (generation, now, _) = self.observe_sampled();
        (generation, now)
    }

    /// [`observe`](Self::observe), with the wall sample the time was read from when the
    /// clock reads the wall clock now: a wait that follows can use it instead of reading
    /// the clocks again.
    pub(crate) fn observe_sampled(&self) -> (Option<u64>, Time, Option<WallSample>) {
        match &self.source {
            // One wall sample gives the time and the check for a step (jump.rs).
            Source::System => {
                let (generation, sample) = jump::monitor().observe();
                let now = Time::new(ClockKind::System, sample.wall);
                return (Some(generation), now, Some(sample));
            }
            // The active source observed, kept only if no switch came in between.
            Source::Ros(ros) => loop {
                let (switches, active) = ros.snapshot();
                let (generation, now, sample) = active.observe_sampled();
                if ros.switch_generation() == switches {
                    let source = generation.unwrap_or(0) & SOURCE_GENERATION_MASK;
                    return (Some((switches << 40) | source), now, sample);
                }
            },
            Source::Steady | Source::Sim(_) => {}
        }
        loop {
            let before = self.jump_generation();
            let now = self.now();
            if self.jump_generation() == before {
                return (before, now, None);
            }
        }
    }
}

/// The low bits of a node clock's jump generation: its active source's own generation.
const SOURCE_GENERATION_MASK: u64 = (1 << 40) - 1;
