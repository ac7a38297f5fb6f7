//! [`Timer`]: periodic deadlines on any clock that never drift and never fire early.
//!
//! The schedule, missed-period and clock-jump rules are documented on [`Timer`], where
//! rustdoc shows them.
//!
//! # Ground rules
//! All schedule state lives in one `Mutex<Schedule>`; a tick is decided and the schedule
//! advanced in one critical section, so two threads can never fire the same deadline.
//! Waiters in [`Timer::wait`] are woken by `cancel()` and `reset()` through `waiters`.

use super::clock::{JumpsSince, WaitEnd};
use super::jump::WallSample;
use super::slack::ensure_fine_slack;
use super::wait::thread_waker;
use super::{CancelToken, Clock, ClockKind, Duration, Time, TimeError, WaitError};
use parking_lot::Mutex;
use std::task::Waker;

/// What a timer does after it was evaluated more than a period late.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MissedPeriods {
    /// Fire once, then continue on the original grid (the default; see [`Timer`]).
    #[default]
    Skip,
    /// Fire once, then start a new grid at the late tick.
    Rephase,
}

/// One firing of a timer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tick {
    /// The deadline this tick was due at.
    pub scheduled: Time,
    /// When the timer was evaluated and fired (`actual >= scheduled`, always).
    pub actual: Time,
    /// Periods that passed without a tick before this one.
    pub missed: u64,
}

impl Tick {
    /// How late the tick fired (never negative).
    pub fn lateness(&self) -> Duration {
        self.actual.since(self.scheduled).unwrap_or(Duration::ZERO)
    }
}

#[derive(Debug, Clone, Copy)]
struct Observed {
    now: i64,
    kind: ClockKind,
    generation: Option<u64>,
    /// The wall sample `now` was read from, on the wall clock.
    sample: Option<WallSample>,
}

#[derive(Debug)]
struct Schedule {
    next: i64,
    period: i64,
    policy: MissedPeriods,
    fired: u64,
    missed: u64,
    cancelled: bool,
    /// Bumped by `cancel` and `reset`, so a waiter sees its wait was made stale.
    version: u64,
    jump_generation: Option<u64>,
    waiters: Vec<Waker>,
}

/// A periodic timer on any clock, never early and never drifting.
///
/// # Schedule
/// Deadlines are absolute: `next = previous + period`, computed from the schedule, never
/// from when the callback happened to run, so the timer keeps its phase for ever (no drift
/// over 10^5 periods and beyond). A tick fires only once the clock has reached `next`.
///
/// # Missed periods
/// When the timer is evaluated more than a period after a deadline, the periods in between
/// are *missed*: counted in [`Timer::missed_count`] and in the [`Tick`], never silently
/// dropped. What happens next is the [`MissedPeriods`] policy:
/// - [`MissedPeriods::Skip`] (the default): fire once now, then continue on the original
///   grid (`next` = the first `start + k * period` after now). The timer stays in phase with
///   everything else scheduled on that grid and never bursts to catch up, which is also
///   what rcl does.
/// - [`MissedPeriods::Rephase`]: fire once now, then `next = now + period`: the grid moves
///   to the late tick, giving at least a full period of rest after an overrun.
///
/// # Clock jumps
/// A steady timer cannot see a jump: its clock never steps. A system-clock timer reacts to
/// wall-clock steps detected by the wall monitor (and a simulated-clock timer to resets):
/// - backward step: the period restarts from now (`next = now + period`), as rcl does, so a
///   5 s step back delays the next tick by at most one period, never by 5 s;
/// - forward step that passes `next`: the timer fires once and restarts the period from
///   now; the periods the step jumped over are not counted as missed (no time was lost by
///   lateness).
///
/// Jump handlers registered on the clock hear the same jump (see
/// [`Clock::create_jump_handler`]).
///
/// # Examples
///
/// ```
/// use kairos::time::{CancelToken, Clock, Duration, SimClock, Timer};
///
/// // On simulated time a tick is due only once time has reached its deadline.
/// let sim = SimClock::new();
/// let timer = Timer::new(sim.clock(), Duration::from_millis(100))?;
/// sim.step(Duration::from_millis(99));
/// assert!(timer.try_fire().is_none(), "never early");
/// sim.step(Duration::from_millis(1));
/// let tick = timer.try_fire().expect("due after one period");
/// assert_eq!(tick.missed, 0);
///
/// // `wait` blocks until the next deadline; the token (or `cancel`) ends it sooner.
/// let timer = Timer::new(Clock::steady(), Duration::from_millis(10))?;
/// let tick = timer.wait(&CancelToken::new())?;
/// assert!(tick.actual.nanos() >= tick.scheduled.nanos());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Timer {
    /// The handle the trace knows this timer by.
    handle: u64,
    clock: Clock,
    state: Mutex<Schedule>,
}

impl Timer {
    /// A timer whose first deadline is one `period` from now.
    pub fn new(clock: Clock, period: impl Into<Duration>) -> Result<Timer, TimeError> {
        let period = period.into();
        Self::with_policy(clock, period, MissedPeriods::default())
    }

    /// A timer whose missed periods are handled as `policy` says.
    pub fn with_policy(
        clock: Clock,
        period: impl Into<Duration>,
        policy: MissedPeriods,
    ) -> Result<Timer, TimeError> {
        let period = period.into();
        if !period.is_positive() {
            return Err(TimeError::InvalidPeriod(period));
        }
        // Read together: a node clock switching between the two reads would otherwise
        // give a first deadline on one source and a generation of the other.
        let (jump_generation, now) = clock.observe();
        let now = now.nanos();
        let handle = crate::trace::next_handle();
        crate::trace::tp::rcl_timer_init(handle, period.as_nanos());
        Ok(Timer {
            handle,
            state: Mutex::new(Schedule {
                next: now.saturating_add(period.as_nanos()),
                period: period.as_nanos(),
                policy,
                fired: 0,
                missed: 0,
                cancelled: false,
                version: 0,
                jump_generation,
                waiters: Vec::new(),
            }),
            clock,
        })
    }

    /// The clock the timer runs on.
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// The handle this timer has in traces (`timer_handle` of `ros2:rcl_timer_init`).
    pub fn trace_handle(&self) -> u64 {
        self.handle
    }

    /// The timer's period.
    pub fn period(&self) -> Duration {
        Duration::from_nanos(self.state.lock().period)
    }

    /// What the timer does after a late tick.
    pub fn policy(&self) -> MissedPeriods {
        self.state.lock().policy
    }

    /// The deadline of the next tick.
    pub fn next_deadline(&self) -> Time {
        let observed = self.observe();
        let mut s = self.state.lock();
        self.react_to_jumps(&mut s, observed);
        Time::new(observed.kind, s.next)
    }

    /// Whether the next deadline has been reached (false when cancelled).
    pub fn is_ready(&self) -> bool {
        let observed = self.observe();
        let now = observed.now;
        let mut s = self.state.lock();
        self.react_to_jumps(&mut s, observed);
        !s.cancelled && now >= s.next
    }

    /// Whether the clock has reached the next deadline, from one read of the clock and
    /// without reacting to jumps (the next [`fire`](Self::fire) does): an executor's cheap
    /// look for "run again" after a callback, where a wrong yes only costs a run that
    /// fires nothing and a no is backed by the timer's pending sleep.
    pub(crate) fn is_due(&self) -> bool {
        let now = self.clock.now().nanos();
        let s = self.state.lock();
        !s.cancelled && now >= s.next
    }

    /// Time left until the next deadline; zero or negative when due. Cancelled timers
    /// report [`Duration::MAX`].
    pub fn time_until_trigger(&self) -> Duration {
        let observed = self.observe();
        let now = observed.now;
        let mut s = self.state.lock();
        self.react_to_jumps(&mut s, observed);
        if s.cancelled {
            Duration::MAX
        } else {
            Duration::from_nanos(s.next.saturating_sub(now))
        }
    }

    /// Fires if the next deadline has been reached, advancing the schedule by the policy.
    pub fn try_fire(&self) -> Option<Tick> {
        self.fire().0
    }

    /// [`try_fire`](Self::try_fire), also returning the next deadline after it and the
    /// wall sample the decision was made on (on the wall clock): a periodic waiter
    /// re-arms from that same look at the clock, without reading it again.
    pub(crate) fn fire(&self) -> (Option<Tick>, Time, Option<WallSample>) {
        let observed = self.observe();
        let mut s = self.state.lock();
        let tick = self.fire_locked(&mut s, observed);
        (tick, Time::new(observed.kind, s.next), observed.sample)
    }

    /// [`fire`](Self::fire), unless `hold`, asked once the clock is read, says the tick
    /// is not this caller's to fire (a simulated step wakes it in its turn): then `None`,
    /// and nothing changes.
    pub(crate) fn fire_unless(
        &self,
        hold: impl FnOnce() -> bool,
    ) -> Option<(Option<Tick>, Time, Option<WallSample>)> {
        let observed = self.observe();
        if hold() {
            return None;
        }
        let mut s = self.state.lock();
        let tick = self.fire_locked(&mut s, observed);
        Some((tick, Time::new(observed.kind, s.next), observed.sample))
    }

    fn fire_locked(&self, s: &mut Schedule, observed: Observed) -> Option<Tick> {
        let now = observed.now;
        self.react_to_jumps(s, observed);
        if s.cancelled || now < s.next {
            return None;
        }
        let scheduled = s.next;
        // In i128: a simulated clock may jump across most of the i64 range.
        let (now_w, scheduled_w, period_w) =
            (i128::from(now), i128::from(scheduled), i128::from(s.period));
        let late = (now_w - scheduled_w) / period_w;
        let late_periods = u64::try_from(late).unwrap_or(u64::MAX);
        let next = match s.policy {
            MissedPeriods::Skip => scheduled_w + (late + 1) * period_w,
            MissedPeriods::Rephase => now_w + period_w,
        };
        s.next = i64::try_from(next).unwrap_or(i64::MAX);
        s.fired += 1;
        s.missed = s.missed.saturating_add(late_periods);
        let kind = observed.kind;
        crate::trace::tp::timer_fire(self.handle, crate::trace::clock(kind), scheduled, now);
        Some(Tick {
            scheduled: Time::new(kind, scheduled),
            actual: Time::new(kind, now),
            missed: late_periods,
        })
    }

    /// Blocks until the next tick and returns it; `Err(Cancelled)` when `cancel` fires or
    /// the timer is cancelled.
    pub fn wait(&self, cancel: &CancelToken) -> Result<Tick, WaitError> {
        ensure_fine_slack();
        loop {
            let (generation, version) = {
                let mut s = self.state.lock();
                if s.cancelled {
                    return Err(WaitError::Cancelled);
                }
                let waker = thread_waker();
                if !s.waiters.iter().any(|w| w.will_wake(&waker)) {
                    s.waiters.push(waker);
                }
                (s.jump_generation, s.version)
            };
            if let Some(tick) = self.try_fire() {
                return Ok(tick);
            }
            let deadline = self.next_deadline();
            // cancel() and reset() wake this thread through `waiters`; this is how it learns.
            let stale = || {
                let s = self.state.lock();
                if s.cancelled {
                    Some(Err(WaitError::Cancelled))
                } else {
                    (s.version != version).then_some(Ok(WaitEnd::Jumped))
                }
            };
            match self.clock.block_until(deadline, cancel, generation, &stale) {
                Ok(WaitEnd::Reached | WaitEnd::Jumped) => {}
                // A node clock switched source: the next turn restarts the period on it.
                Err(WaitError::ClockChanged) => {}
                Err(err) => return Err(err),
            }
        }
    }

    /// Stops the timer: it no longer fires, and [`wait`](Self::wait) returns `Cancelled`.
    pub fn cancel(&self) {
        let waiters = {
            let mut s = self.state.lock();
            s.cancelled = true;
            s.version += 1;
            std::mem::take(&mut s.waiters)
        };
        waiters.into_iter().for_each(Waker::wake);
    }

    /// Whether [`cancel`](Self::cancel) stopped the timer (until a [`reset`](Self::reset)).
    pub fn is_cancelled(&self) -> bool {
        self.state.lock().cancelled
    }

    /// Restarts the period from now (`next = now + period`) and un-cancels the timer.
    pub fn reset(&self) {
        self.restart();
    }

    /// [`reset`](Self::reset), returning whether the timer was cancelled.
    pub(crate) fn restart(&self) -> bool {
        let observed = self.observe();
        let (waiters, was_cancelled) = {
            let mut s = self.state.lock();
            let was_cancelled = std::mem::replace(&mut s.cancelled, false);
            s.version += 1;
            s.next = observed.now.saturating_add(s.period);
            s.jump_generation = observed.generation;
            (std::mem::take(&mut s.waiters), was_cancelled)
        };
        waiters.into_iter().for_each(Waker::wake);
        was_cancelled
    }

    /// Ticks fired so far.
    pub fn fired_count(&self) -> u64 {
        self.state.lock().fired
    }

    /// Periods missed so far (see "Missed periods" above).
    pub fn missed_count(&self) -> u64 {
        self.state.lock().missed
    }

    /// Reads the jump generation, then the clock, outside the schedule lock: sampling the
    /// wall clock may run jump handlers, which may call back into this timer.
    fn observe(&self) -> Observed {
        let (generation, now, sample) = self.clock.observe_sampled();
        Observed {
            now: now.nanos(),
            kind: now.kind(),
            generation,
            sample,
        }
    }

    fn react_to_jumps(&self, s: &mut Schedule, observed: Observed) {
        let now = observed.now;
        let (Some(seen), Some(current)) = (s.jump_generation, observed.generation) else {
            return;
        };
        if current == seen {
            return;
        }
        let jumps = self.clock.jumped_since(seen);
        s.jump_generation = Some(current);
        let delta = match jumps {
            JumpsSince::Net(delta) => delta,
            // A new source (use_sim_time switched): restart the period on it, as rcl does.
            JumpsSince::SourceChanged => Duration::from_nanos(-1),
        };
        if delta.is_negative() {
            s.next = now.saturating_add(s.period);
        } else if now >= s.next {
            // Fire at once, then restart the period from now (see `Timer`'s docs).
            s.next = now;
        }
    }
}
