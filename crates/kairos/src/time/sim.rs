//! [`SimClock`]: simulation time, set by a simulator.
//!
//! The simulator (or a `/clock` subscription) publishes the current simulated time; every
//! sleep, timer and rate on the clock waits in a [`DeadlineQueue`] and is woken by the
//! publish that reaches its deadline, never by polling.
//!
//! Before the first sample, `now()` is time zero on the `Sim` clock (as ROS reports before
//! the first `/clock` message) and waits with a positive deadline wait for samples,
//! cancellably.
//!
//! A publish that goes backwards is a simulation reset: it is reported to jump handlers as
//! a backward [`ClockJump`], every waiter re-evaluates, and timers restart their period.
//!
//! # Ground rules
//! `state` (current time, waiters, reset generation) is only touched under its lock.
//! Wakers are woken after the lock is released, in deadline order.

use super::deadline_queue::DeadlineQueue;
use super::jump::{ClockChange, ClockJump, HandlerSet};
use super::{ClockKind, ClockMismatch, Duration, Time};
use parking_lot::Mutex;
use std::sync::Arc;
use std::task::Waker;

/// A simulated clock; cheap to clone (all clones are the same clock).
#[derive(Debug, Clone, Default)]
pub struct SimClock {
    pub(crate) inner: Arc<SimInner>,
}

#[derive(Debug, Default)]
pub(crate) struct SimInner {
    pub(crate) state: Mutex<SimState>,
    pub(crate) handlers: Arc<HandlerSet>,
}

#[derive(Debug, Default)]
pub(crate) struct SimState {
    /// `None` until the first sample.
    pub(crate) now: Option<i64>,
    pub(crate) queue: DeadlineQueue,
    /// Bumped on every backward step (reset); timers compare it to restart their period.
    pub(crate) generation: u64,
    /// Net delta of backward steps since generation 0, per generation.
    pub(crate) cumulative: Vec<i64>,
}

impl SimClock {
    pub fn new() -> Self {
        Self::default()
    }

    /// A [`Clock`](super::Clock) handle reading this simulated time.
    pub fn clock(&self) -> super::Clock {
        super::Clock::from_sim(self.clone())
    }

    /// The current simulated time; time zero before the first sample.
    pub fn now(&self) -> Time {
        Time::new(ClockKind::Sim, self.inner.state.lock().now.unwrap_or(0))
    }

    /// Whether a first sample has been published.
    pub fn has_started(&self) -> bool {
        self.inner.state.lock().now.is_some()
    }

    /// Publishes the simulated time `t`: wakes, in deadline order, every wait it reaches.
    /// A `t` earlier than the current time is a reset, reported as a backward jump.
    pub fn publish(&self, t: Time) -> Result<(), ClockMismatch> {
        if t.kind() != ClockKind::Sim {
            return Err(ClockMismatch {
                expected: ClockKind::Sim,
                found: t.kind(),
            });
        }
        self.publish_nanos(t.nanos());
        Ok(())
    }

    /// Advances the simulated time by `dt` (from zero before the first sample).
    pub fn advance(&self, dt: Duration) {
        let now = self.inner.state.lock().now.unwrap_or(0);
        self.publish_nanos(now.saturating_add(dt.as_nanos()));
    }

    fn publish_nanos(&self, t: i64) {
        let mut woken = Vec::new();
        let previous = {
            let mut state = self.inner.state.lock();
            let previous = state.now.replace(t);
            if previous.is_some_and(|p| t < p) {
                if state.cumulative.is_empty() {
                    state.cumulative.push(0);
                }
                state.generation += 1;
                let total =
                    state.cumulative.last().copied().unwrap_or(0) + (t - previous.unwrap_or(0));
                state.cumulative.push(total);
                state.queue.drain_all(&mut woken);
            } else {
                state.queue.pop_due(t, &mut woken);
            }
            previous
        };
        let delta = t - previous.unwrap_or(t);
        let wake = || woken.into_iter().for_each(Waker::wake);
        if delta == 0 {
            wake();
        } else {
            let jump = ClockJump {
                delta: Duration::from_nanos(delta),
                change: ClockChange::None,
            };
            self.inner.handlers.dispatch(&jump, wake);
        }
    }

    pub(crate) fn generation(&self) -> u64 {
        self.inner.state.lock().generation
    }

    pub(crate) fn net_since(&self, since: u64) -> Duration {
        let state = self.inner.state.lock();
        let last = state.cumulative.last().copied().unwrap_or(0);
        let base = usize::try_from(since)
            .ok()
            .and_then(|i| state.cumulative.get(i).copied())
            .unwrap_or(if since == 0 { 0 } else { last });
        Duration::from_nanos(last - base)
    }

    /// Registers (or refreshes) `waker` for `deadline`. Returns `true` when the deadline has
    /// already been reached (nothing registered).
    pub(crate) fn register(&self, deadline: i64, key: &mut Option<u64>, waker: &Waker) -> bool {
        let mut state = self.inner.state.lock();
        if state.now.is_some_and(|now| now >= deadline) {
            if let Some(k) = key.take() {
                state.queue.remove(k);
            }
            return true;
        }
        match *key {
            Some(k) if state.queue.update(k, waker) => {}
            _ => *key = Some(state.queue.insert(deadline, waker.clone())),
        }
        false
    }

    pub(crate) fn unregister(&self, key: Option<u64>) {
        if let Some(k) = key {
            self.inner.state.lock().queue.remove(k);
        }
    }
}
