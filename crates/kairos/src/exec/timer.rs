//! Timers as executor entities, on any clock.
//!
//! The entity waits for the timer's next deadline with an async [`Sleep`] on the timer's
//! clock, woken through the entity's waker by its executor's timekeeper (a
//! single-threaded executor waits on its timers' deadlines itself, see `timekeeper`), by
//! the time driver (a multi-threaded one), or by simulated-time updates; when the deadline is reached it queues itself, fires the timer and re-arms before
//! running the callback. A callback longer than the period re-queues the timer behind the
//! work that arrived meanwhile, so it cannot starve it.
//!
//! A timer on simulated time arms as soon as it is attached to an executor (so a simulated
//! step made right after `add_node` sees its deadline). When its wait fails because a simulated clock with
//! [`StallPolicy::Fail`](crate::time::StallPolicy) stalled, the timer *gives up* for the
//! stall, counted in [`CallbackTimer::stall_count`], and re-arms at the clock's next sample:
//! after a resume it fires again on its grid.

use super::callback::Callback;
use super::entity::{Entity, EntityCore, Execution};
use super::executor::ExecShared;
use super::timekeeper::Timekeeper;
use crate::time::DeadlineHost;
use crate::time::SwitchWaiter;
use crate::time::jump::WallSample;
use crate::time::{CancelToken, Clock, ClockKind, Duration, Sleep, Tick, Time, Timer, WaitError};
use parking_lot::Mutex;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::{Context, Poll};

/// A timer's callback, given the tick that fired.
pub(crate) type TimerCallback = Callback<Tick>;

pub(crate) struct TimerInner {
    core: EntityCore,
    timer: Timer,
    cancel: CancelToken,
    armed: Mutex<Armed>,
    callback: TimerCallback,
    /// Times its wait failed on a stalled simulated clock (see the module docs).
    stalls: AtomicU64,
    /// Its sleep waits on a simulated clock (set by `arm`): only then can a step hold it
    /// back (see `held_by_step`), so other timers never look.
    on_sim: AtomicBool,
}

/// The sleep a timer waits in, and who wakes its deadline.
#[derive(Default)]
struct Armed {
    sleep: Option<Sleep>,
    /// The timekeeper of the single-threaded executor the timer is attached to; `None`:
    /// the time driver (a multi-threaded executor, or not attached yet).
    host: Option<Arc<Timekeeper>>,
    /// On a node clock: queues the timer on every switch of its source, armed or not yet
    /// (a timer that has not run since it was attached has no sleep to end), so that it
    /// re-arms on the new source before a simulated step moves past its deadline.
    switches: Option<SwitchWaiter>,
}

impl TimerInner {
    pub(crate) fn new(core: EntityCore, timer: Timer, callback: TimerCallback) -> Self {
        Self {
            core,
            timer,
            cancel: CancelToken::new(),
            armed: Mutex::new(Armed::default()),
            callback,
            stalls: AtomicU64::new(0),
            on_sim: AtomicBool::new(false),
        }
    }

    /// A step is waking the due timers one at a time in (deadline, rank) order and has not
    /// woken this one: woken for another reason (a stall recheck), it must not fire yet,
    /// or its callback would run outside the step's settling and the order would depend
    /// on timing.
    /// Whether a simulated step holds this run back from firing a due tick (see
    /// `SimClock::holds_for_step`); asked after the timer read its clock.
    fn held_by_step(&self) -> bool {
        let Some(sim) = self.timer.clock().as_sim() else {
            return false;
        };
        let key = self.armed.lock().sleep.as_ref().and_then(Sleep::sim_key);
        sim.holds_for_step(key, self.core.waker())
    }

    /// Makes sure a sleep until the next deadline is pending with this entity's waker.
    /// `next` is the deadline if the caller just read it (from the tick it fired), with
    /// the wall sample it was read on.
    ///
    /// The sleep is kept from one period to the next and [`Sleep::reset`] to the new
    /// deadline: its cancel, wall-monitor and node-clock registrations stay, and a re-arm
    /// costs one lock of the time driver.
    fn arm(&self, mut next: Option<(Time, Option<WallSample>)>) {
        let mut armed = self.armed.lock();
        let Armed {
            sleep: slot, host, ..
        } = &mut *armed;
        // A node clock that switched source ends the sleep once; the next turn re-arms
        // on the new source. Bounded, in case it keeps switching under us.
        let mut switches = 0;
        loop {
            if self.timer.is_cancelled() {
                *slot = None;
                return;
            }
            let (deadline, sample) = next
                .take()
                .unwrap_or_else(|| (self.timer.next_deadline(), None));
            let sleep = match slot.as_mut() {
                Some(sleep) => {
                    if sleep.deadline() != deadline {
                        sleep.reset(deadline);
                    }
                    sleep
                }
                None => slot.insert({
                    let mut sleep = Sleep::on_host(
                        self.timer.clock().clone(),
                        deadline,
                        self.cancel.clone(),
                        host.clone().map(|keeper| keeper as Arc<dyn DeadlineHost>),
                    );
                    sleep.set_rank(self.core.id());
                    sleep
                }),
            };
            let polled = sleep.poll_sampled(&mut Context::from_waker(self.core.waker()), sample);
            self.on_sim.store(sleep.is_on_sim(), Ordering::Release);
            match polled {
                Poll::Pending => return,
                Poll::Ready(Ok(())) => {
                    if self.timer.is_ready() {
                        self.core.notify();
                        return;
                    }
                    // Reached, yet the timer is not due (its schedule moved on a jump):
                    // a fresh sleep for the deadline it has now.
                    *slot = None;
                }
                Poll::Ready(Err(WaitError::Stalled { .. })) => {
                    *slot = None;
                    self.stalls.fetch_add(1, Ordering::Relaxed);
                    self.timer.clock().wake_on_next_sample(self.core.waker());
                    return;
                }
                Poll::Ready(Err(WaitError::ClockChanged)) if switches < 3 => {
                    *slot = None;
                    switches += 1;
                }
                // Cancelled (the handle was dropped) or the clock cannot serve the wait.
                Poll::Ready(Err(_)) => {
                    *slot = None;
                    return;
                }
            }
        }
    }
}

impl Entity for TimerInner {
    fn core(&self) -> &EntityCore {
        &self.core
    }

    fn execute(&self) -> Execution {
        let Some((tick, next, sample)) = self.timer.fire_unless(|| self.held_by_step()) else {
            return Execution::Idle;
        };
        self.arm(Some((next, sample)));
        let Some(tick) = tick else {
            return Execution::Idle;
        };
        self.callback.run(&self.core, tick)
    }

    fn has_work(&self) -> bool {
        self.timer.is_due() && !self.held_by_step()
    }

    fn attached(&self, exec: &Arc<ExecShared>) {
        {
            // A sleep armed for another executor's timekeeper is dropped with its
            // registration; the next arm makes one for this executor.
            let mut armed = self.armed.lock();
            let same = match (&armed.host, &exec.timekeeper) {
                (Some(old), Some(new)) => Arc::ptr_eq(old, new),
                (None, None) => true,
                _ => false,
            };
            if !same {
                armed.sleep = None;
                armed.host = exec.timekeeper.clone();
            }
            if armed.switches.is_none() {
                armed.switches = self
                    .timer
                    .clock()
                    .as_ros()
                    .map(|ros| ros.register_waiter(self.core.waker()));
            }
        }
        // On simulated time, arm here so a step made right after `add_node` sees the
        // deadline. Other clocks arm on the first run, as before: a wall-clock poll may run
        // jump handlers, which must not run under the node's locks held here.
        if self.timer.clock().kind() == ClockKind::Sim {
            self.arm(None);
        } else {
            self.core.notify();
        }
    }
}

/// A timer whose callback runs on its node's executor; dropping the handle removes it.
#[must_use = "the timer is removed when its handle is dropped"]
pub struct CallbackTimer {
    pub(crate) inner: Arc<TimerInner>,
    pub(crate) on_drop: Option<Box<dyn FnOnce() + Send + Sync>>,
}

impl CallbackTimer {
    /// The handle the trace knows this entity's callback by (`rclcpp_callback_register`'s
    /// `callback`), so that a language binding can name the callback it runs with
    /// `kairos::trace::tp::rclcpp_callback_register(handle, name)`.
    pub fn callback_handle(&self) -> u64 {
        self.inner.core().id()
    }

    /// Stops the timer; its callback does not run again until [`reset`](Self::reset).
    pub fn cancel(&self) {
        self.inner.timer.cancel();
        self.inner.core.notify();
    }

    /// Restarts the period from now and un-cancels the timer.
    pub fn reset(&self) {
        self.inner.timer.reset();
        self.inner.core.notify();
    }

    /// Whether [`cancel`](Self::cancel) stopped the timer (until a [`reset`](Self::reset)).
    pub fn is_cancelled(&self) -> bool {
        self.inner.timer.is_cancelled()
    }

    /// Restarts the period from now, cheaply enough to be done per message (a QoS deadline
    /// or lease): a running timer's pending sleep is left for its old deadline, where the
    /// timer finds it is not due yet and sleeps again until the new one (one wake-up per
    /// period, not per call); a cancelled one is queued to arm.
    pub(crate) fn push_back(&self) {
        if self.inner.timer.restart() {
            self.inner.core.notify();
        }
    }

    /// The timer's period.
    pub fn period(&self) -> Duration {
        self.inner.timer.period()
    }

    /// The clock the timer runs on.
    pub fn clock(&self) -> &Clock {
        self.inner.timer.clock()
    }

    /// Times the callback was started.
    pub fn fired_count(&self) -> u64 {
        self.inner.timer.fired_count()
    }

    /// Times the timer gave up waiting because its simulated clock stalled under
    /// [`StallPolicy::Fail`](crate::time::StallPolicy); it re-arms at the next sample.
    pub fn stall_count(&self) -> u64 {
        self.inner.stalls.load(Ordering::Relaxed)
    }

    /// Periods skipped because a tick came late.
    pub fn missed_count(&self) -> u64 {
        self.inner.timer.missed_count()
    }

    /// How long until the next deadline on the timer's clock; zero or negative when due.
    pub fn time_until_trigger(&self) -> Duration {
        self.inner.timer.time_until_trigger()
    }
}

impl Drop for CallbackTimer {
    fn drop(&mut self) {
        self.inner.cancel.cancel();
        self.inner.timer.cancel();
        self.inner.core.destroy();
        if let Some(on_drop) = self.on_drop.take() {
            on_drop();
        }
    }
}

impl fmt::Debug for CallbackTimer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallbackTimer")
            .field("name", &self.inner.core.name)
            .field("period", &self.inner.timer.period())
            .finish_non_exhaustive()
    }
}
