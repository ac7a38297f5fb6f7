//! [`RosClock`]: a node's clock, as ROS defines it: system time, or simulation time while
//! `use_sim_time` is on, switchable at run time.
//!
//! # Switching
//! [`RosClock::set_use_sim_time`] changes the source at once and tells the jump handlers
//! with [`ClockChange::SimActivated`] / [`ClockChange::SimDeactivated`] (ROS's
//! `ROS_TIME_ACTIVATED` / `ROS_TIME_DEACTIVATED`); `delta` is the new reading minus the old
//! one, for information. Times carry their [`ClockKind`], so a simulated time can never be
//! compared with a system time: across a switch the clock cannot be *seen* to go
//! backwards, and on each source it never goes backwards except by that source's own
//! jumps (a wall-clock step back, a simulation reset), which are reported as such.
//!
//! A wait in progress on a `RosClock` when the source switches ends with
//! [`WaitError::ClockChanged`](super::WaitError::ClockChanged), as rclcpp's `sleep_until`
//! returns false; timers restart their period on the new source, as rcl does. Switched to
//! simulation time, the next step of the simulated clock first waits (bounded) until the
//! timers of this clock on running executors have re-armed on it (see `time::settle`).
//!
//! # Ground rules
//! The mode and the switch generation are one atomic word (`mode`: the generation shifted
//! left by one, the mode in bit 0), so every read of the clock (a timer's evaluation, a
//! wait's check for a switch) is one load, never a lock; switches are serialized by
//! `switching`, which writes the word once per switch. Waiters to wake on a switch are
//! registered under `waiters` and woken after both locks are released.

use super::jump::{ClockChange, ClockJump, HandlerSet};
use super::sim::SimClock;
use super::wakers::Wakers;
use super::{Clock, Duration};
use parking_lot::Mutex;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::Waker;

/// A node's clock: system time, or `sim` while `use_sim_time` is on.
#[derive(Debug, Clone)]
pub struct RosClock {
    pub(crate) inner: Arc<RosInner>,
}

#[derive(Debug)]
pub(crate) struct RosInner {
    sim: SimClock,
    /// `generation << 1 | use_sim_time` (see the ground rules).
    mode: AtomicU64,
    /// Held while a switch writes `mode`.
    switching: Mutex<()>,
    pub(crate) handlers: Arc<HandlerSet>,
    waiters: Mutex<Wakers>,
}

/// The switch generation and the source of one `mode` word.
fn decode(word: u64) -> (u64, bool) {
    (word >> 1, word & 1 == 1)
}

impl RosClock {
    /// A node clock following `sim` while `use_sim_time` is on; starts on system time.
    pub fn new(sim: SimClock) -> Self {
        RosClock {
            inner: Arc::new(RosInner {
                sim,
                mode: AtomicU64::new(0),
                switching: Mutex::new(()),
                handlers: Arc::new(HandlerSet::default()),
                waiters: Mutex::new(Wakers::default()),
            }),
        }
    }

    /// A [`Clock`] handle on this node clock.
    pub fn clock(&self) -> Clock {
        Clock::from_ros(self.clone())
    }

    /// Whether the clock follows simulation time now.
    pub fn use_sim_time(&self) -> bool {
        decode(self.inner.mode.load(Ordering::Acquire)).1
    }

    /// The simulated clock this node follows while `use_sim_time` is on.
    pub fn sim(&self) -> &SimClock {
        &self.inner.sim
    }

    /// The source currently in force.
    pub fn active(&self) -> Clock {
        if self.use_sim_time() {
            self.inner.sim.clock()
        } else {
            Clock::system()
        }
    }

    /// Switches between simulation and system time (`use_sim_time`): jump handlers hear
    /// [`ClockChange::SimActivated`] or [`ClockChange::SimDeactivated`], a wait in progress
    /// ends with [`WaitError::ClockChanged`](super::WaitError::ClockChanged), and timers
    /// restart their period on the new source, as in rclcpp.
    pub fn set_use_sim_time(&self, on: bool) {
        let before = self.active().now();
        {
            let _switching = self.inner.switching.lock();
            let (generation, use_sim_time) = decode(self.inner.mode.load(Ordering::Acquire));
            if use_sim_time == on {
                return;
            }
            let word = ((generation + 1) << 1) | u64::from(on);
            self.inner.mode.store(word, Ordering::Release);
        }
        let after = self.active().now();
        let change = if on {
            ClockChange::SimActivated
        } else {
            ClockChange::SimDeactivated
        };
        let jump = ClockJump {
            delta: Duration::from_nanos(after.nanos() - before.nanos()),
            change,
        };
        let waiters = self.inner.waiters.lock().snapshot();
        // The timers of this clock re-arm on the new source when their executor runs
        // them: switched to simulation time, the next step waits for that first (see
        // `time::settle`), so none of their deadlines is stepped over before it exists.
        let mut rearms = None;
        self.inner.handlers.dispatch(&jump, || {
            rearms = Some(super::settle::collect(
                crate::exec::executors_of_this_thread,
                || waiters.into_iter().for_each(Waker::wake),
            ));
        });
        if let Some(rearms) = rearms.filter(|_| on) {
            self.inner.sim.defer(rearms);
        }
    }

    /// The switch generation and the source in force, read together.
    pub(crate) fn snapshot(&self) -> (u64, Clock) {
        let (generation, use_sim_time) = decode(self.inner.mode.load(Ordering::Acquire));
        let active = if use_sim_time {
            self.inner.sim.clock()
        } else {
            Clock::system()
        };
        (generation, active)
    }

    pub(crate) fn switch_generation(&self) -> u64 {
        decode(self.inner.mode.load(Ordering::Acquire)).0
    }

    /// Wakes `waker` on every switch until the guard drops.
    pub(crate) fn register_waiter(&self, waker: &Waker) -> SwitchWaiter {
        let key = self.inner.waiters.lock().add(waker);
        SwitchWaiter {
            inner: Arc::clone(&self.inner),
            key,
        }
    }
}

/// Keeps a waiter registered on a [`RosClock`]'s switches.
#[derive(Debug)]
pub(crate) struct SwitchWaiter {
    inner: Arc<RosInner>,
    key: u64,
}

impl SwitchWaiter {
    pub(crate) fn update(&self, waker: &Waker) {
        self.inner.waiters.lock().update(self.key, waker);
    }
}

impl Drop for SwitchWaiter {
    fn drop(&mut self) {
        self.inner.waiters.lock().remove(self.key);
    }
}
