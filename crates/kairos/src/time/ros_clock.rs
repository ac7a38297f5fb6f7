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
//! returns false; timers restart their period on the new source, as rcl does.
//!
//! # Ground rules
//! The mode and the switch generation change together under `mode`; waiters to wake on a
//! switch are registered under `waiters` and woken after both locks are released.

use super::jump::{ClockChange, ClockJump, HandlerSet};
use super::sim::SimClock;
use super::{Clock, Duration};
use parking_lot::Mutex;
use std::sync::Arc;
use std::task::Waker;

/// A node's clock: system time, or `sim` while `use_sim_time` is on.
#[derive(Debug, Clone)]
pub struct RosClock {
    pub(crate) inner: Arc<RosInner>,
}

#[derive(Debug)]
pub(crate) struct RosInner {
    sim: SimClock,
    mode: Mutex<Mode>,
    pub(crate) handlers: Arc<HandlerSet>,
    waiters: Mutex<Vec<(u64, Waker)>>,
    next_waiter: std::sync::atomic::AtomicU64,
}

#[derive(Debug, Clone, Copy)]
struct Mode {
    use_sim_time: bool,
    generation: u64,
}

impl RosClock {
    /// A node clock following `sim` while `use_sim_time` is on; starts on system time.
    pub fn new(sim: SimClock) -> Self {
        RosClock {
            inner: Arc::new(RosInner {
                sim,
                mode: Mutex::new(Mode {
                    use_sim_time: false,
                    generation: 0,
                }),
                handlers: Arc::new(HandlerSet::default()),
                waiters: Mutex::new(Vec::new()),
                next_waiter: std::sync::atomic::AtomicU64::new(0),
            }),
        }
    }

    /// A [`Clock`] handle on this node clock.
    pub fn clock(&self) -> Clock {
        Clock::from_ros(self.clone())
    }

    /// Whether the clock follows simulation time now.
    pub fn use_sim_time(&self) -> bool {
        self.inner.mode.lock().use_sim_time
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
            let mut mode = self.inner.mode.lock();
            if mode.use_sim_time == on {
                return;
            }
            mode.use_sim_time = on;
            mode.generation += 1;
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
        let waiters: Vec<Waker> = self
            .inner
            .waiters
            .lock()
            .iter()
            .map(|(_, w)| w.clone())
            .collect();
        self.inner
            .handlers
            .dispatch(&jump, || waiters.into_iter().for_each(Waker::wake));
    }

    /// The switch generation and the source in force, read together.
    pub(crate) fn snapshot(&self) -> (u64, Clock) {
        let mode = *self.inner.mode.lock();
        let active = if mode.use_sim_time {
            self.inner.sim.clock()
        } else {
            Clock::system()
        };
        (mode.generation, active)
    }

    pub(crate) fn switch_generation(&self) -> u64 {
        self.inner.mode.lock().generation
    }

    /// Wakes `waker` on every switch until the guard drops.
    pub(crate) fn register_waiter(&self, waker: &Waker) -> SwitchWaiter {
        let key = self
            .inner
            .next_waiter
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.inner.waiters.lock().push((key, waker.clone()));
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
        if let Some(e) = self
            .inner
            .waiters
            .lock()
            .iter_mut()
            .find(|(k, _)| *k == self.key)
        {
            if !e.1.will_wake(waker) {
                e.1 = waker.clone();
            }
        }
    }
}

impl Drop for SwitchWaiter {
    fn drop(&mut self) {
        self.inner.waiters.lock().retain(|(k, _)| *k != self.key);
    }
}
