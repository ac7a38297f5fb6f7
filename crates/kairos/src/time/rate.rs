//! [`Rate`]: "run this loop N times a second", on absolute deadlines.
//!
//! A rate is a [`Timer`] seen from a loop: each [`Rate::sleep`] waits for the next deadline
//! on the grid `start + k * period`, so the loop does not drift however long its body
//! takes. When the body overran (the deadline had already passed when `sleep` was called)
//! `sleep` returns at once, the overrun is counted and reported in the [`RateTick`], and
//! the periods skipped are counted as missed; nothing is lost silently.

use super::{CancelToken, Clock, Duration, MissedPeriods, Tick, TimeError, Timer, WaitError};

/// One turn of a [`Rate`] loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateTick {
    /// The tick the turn waited for.
    pub tick: Tick,
    /// The loop body ran past this deadline; `sleep` did not wait.
    pub overrun: bool,
}

/// A fixed-frequency loop on any clock.
#[derive(Debug)]
pub struct Rate {
    timer: Timer,
    overruns: u64,
}

impl Rate {
    /// A rate on `clock` whose first deadline is one `period` from now.
    pub fn new(clock: Clock, period: impl Into<Duration>) -> Result<Rate, TimeError> {
        let period = period.into();
        Self::with_policy(clock, period, MissedPeriods::Skip)
    }

    /// A rate whose missed periods are handled as `policy` says.
    pub fn with_policy(
        clock: Clock,
        period: impl Into<Duration>,
        policy: MissedPeriods,
    ) -> Result<Rate, TimeError> {
        let period = period.into();
        Ok(Rate {
            timer: Timer::with_policy(clock, period, policy)?,
            overruns: 0,
        })
    }

    /// A rate on the steady clock, untouched by wall-clock steps.
    pub fn steady(period: impl Into<Duration>) -> Result<Rate, TimeError> {
        let period = period.into();
        Self::new(Clock::steady(), period)
    }

    /// A rate on the system clock: follows wall-clock steps as a system [`Timer`] does.
    pub fn system(period: impl Into<Duration>) -> Result<Rate, TimeError> {
        let period = period.into();
        Self::new(Clock::system(), period)
    }

    /// A rate of `hz` turns per second on the steady clock.
    pub fn hz(hz: f64) -> Result<Rate, TimeError> {
        Self::steady(Duration::from_secs_f64(1.0 / hz))
    }

    /// Waits for the next deadline; returns at once, reporting an overrun, if it has passed.
    pub fn sleep(&mut self, cancel: &CancelToken) -> Result<RateTick, WaitError> {
        if let Some(tick) = self.timer.try_fire() {
            self.overruns += 1;
            return Ok(RateTick {
                tick,
                overrun: true,
            });
        }
        let tick = self.timer.wait(cancel)?;
        Ok(RateTick {
            tick,
            overrun: false,
        })
    }

    /// Restarts the grid from now.
    pub fn reset(&mut self) {
        self.timer.reset();
    }

    /// The rate's period.
    pub fn period(&self) -> Duration {
        self.timer.period()
    }

    /// Calls to `sleep` that found their deadline already past.
    pub fn overruns(&self) -> u64 {
        self.overruns
    }

    /// Periods skipped because the loop body ran for longer than a period.
    pub fn missed_periods(&self) -> u64 {
        self.timer.missed_count()
    }

    /// The clock the rate runs on.
    pub fn clock(&self) -> &Clock {
        self.timer.clock()
    }
}
