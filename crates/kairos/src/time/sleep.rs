//! [`Sleep`]: the async form of `sleep_until`, on any clock.
//!
//! Same promise as the blocking wait: it completes only once its clock has reached the
//! deadline (re-read on every poll), or with [`WaitError::Cancelled`]. Steady and system
//! deadlines are armed on the time driver as monotonic deadlines (a system sleep is also
//! woken by the wall monitor on a step, and re-armed); simulated deadlines wait in the
//! simulated clock's queue.

use super::cancel::CancelRegistration;
use super::deadline_host::DeadlineHost;
use super::driver::GlobalDriver;
use super::jump::{self, SleeperGuard, WallSample};
use super::ros_clock::SwitchWaiter;
use super::sim::{SimClock, WaitStep};
use super::{CancelToken, Clock, ClockKind, ClockMismatch, Time, WaitError};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

/// Completes when its clock reaches the deadline; see [`Clock::sleep_until_async`].
#[must_use = "a Sleep does nothing unless awaited"]
#[derive(Debug)]
pub struct Sleep {
    clock: Clock,
    deadline: Time,
    cancel: CancelToken,
    cancel_registration: Option<CancelRegistration>,
    wall_sleeper: Option<SleeperGuard>,
    /// Registration on `host`: the deadline (steady, system) or a simulated sleep's
    /// look-again time (stall, fallback).
    driver_key: Option<u64>,
    /// Who wakes `driver_key`: the time driver unless the sleep was made for an executor
    /// that keeps its own timers' deadlines.
    host: Option<Arc<dyn DeadlineHost>>,
    /// Registration in a simulated clock's deadline queue.
    sim_key: Option<(SimClock, u64)>,
    /// For a node clock: the switch generation at creation, and the switch waiter.
    switch: Option<(u64, Option<SwitchWaiter>)>,
    /// The waker the cancel, wall and switch registrations hold: a poll with a waker that
    /// would wake the same task leaves them alone (no lock, no clone).
    registered: Option<Waker>,
    /// Its place among the simulated waiters of one deadline (a timer's creation order).
    rank: Option<u64>,
}

impl Sleep {
    pub(crate) fn new(clock: Clock, deadline: Time, cancel: CancelToken) -> Sleep {
        Sleep {
            deadline,
            cancel,
            cancel_registration: None,
            wall_sleeper: None,
            driver_key: None,
            host: None,
            sim_key: None,
            switch: clock.as_ros().map(|ros| (ros.switch_generation(), None)),
            registered: None,
            rank: None,
            clock,
        }
    }

    /// A sleep whose monotonic deadline `host` wakes instead of the time driver.
    pub(crate) fn on_host(
        clock: Clock,
        deadline: Time,
        cancel: CancelToken,
        host: Option<Arc<dyn DeadlineHost>>,
    ) -> Sleep {
        let mut sleep = Sleep::new(clock, deadline, cancel);
        sleep.host = host;
        sleep
    }

    /// Ranks this sleep among the simulated waiters of its deadline (lowest first, before
    /// every unranked one): a timer passes its creation order, so timers due at one instant
    /// are woken in the same order every run, whatever order they re-armed in.
    pub(crate) fn set_rank(&mut self, rank: u64) {
        self.rank = Some(rank);
    }

    /// Whether its last poll left it waiting on a simulated clock.
    pub(crate) fn is_on_sim(&self) -> bool {
        self.sim_key.is_some()
    }

    /// Its key in its simulated clock's deadline queue, while it is registered there.
    pub(crate) fn sim_key(&self) -> Option<u64> {
        self.sim_key.as_ref().map(|(_, key)| *key)
    }

    /// The time the sleep completes at.
    pub fn deadline(&self) -> Time {
        self.deadline
    }

    /// Waits for `deadline` instead, keeping the registrations that do not depend on it
    /// (cancel token, wall monitor, node-clock switches) and the switch generation of
    /// the first wait: a periodic waiter (a callback timer) re-arms with one lock of
    /// the time driver, not a new `Sleep`. A switch of the node clock since then still
    /// ends the wait with [`WaitError::ClockChanged`].
    pub(crate) fn reset(&mut self, deadline: Time) {
        if let Some((sim, key)) = self.sim_key.take() {
            sim.unregister(Some(key));
        }
        // The driver registration stays: the next poll replaces it under one lock.
        self.deadline = deadline;
    }

    /// The deadline was reached: drop what only this deadline needed (its driver and
    /// simulated-clock registrations); the rest stays for a [`reset`](Self::reset) and
    /// goes when the sleep is dropped.
    fn reached(&mut self) {
        if let Some((sim, key)) = self.sim_key.take() {
            sim.unregister(Some(key));
        }
        host_of(&self.host).unregister(self.driver_key.take());
    }

    fn release(&mut self) {
        if let Some((sim, key)) = self.sim_key.take() {
            sim.unregister(Some(key));
        }
        host_of(&self.host).unregister(self.driver_key.take());
        if let Some((_, waiter)) = &mut self.switch {
            waiter.take();
        }
        self.cancel_registration = None;
        self.wall_sleeper = None;
        self.registered = None;
    }
}

impl Sleep {
    fn sim_poll(&mut self, sim: SimClock, deadline: i64, cx: &Context<'_>) -> WaitStep {
        let mut key = self.sim_key.take().map(|(_, k)| k);
        let result = sim.poll_wait_ranked(deadline, &mut key, cx.waker(), None, self.rank);
        self.sim_key = key.map(|k| (sim, k));
        result
    }
}

impl Future for Sleep {
    type Output = Result<(), WaitError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.get_mut().poll_sampled(cx, None)
    }
}

impl Sleep {
    /// A poll that may use `sample`, a wall sample the caller just took through the wall
    /// monitor (so a step before it was detected), instead of taking one: a timer re-arms
    /// from the sample it fired on. Used only while the sleep's source is the wall clock.
    pub(crate) fn poll_sampled(
        &mut self,
        cx: &mut Context<'_>,
        sample: Option<WallSample>,
    ) -> Poll<Result<(), WaitError>> {
        let this = self;
        // The registrations below already hold this task's waker: leave them alone.
        let fresh = this
            .registered
            .as_ref()
            .is_none_or(|w| !w.will_wake(cx.waker()));
        if fresh {
            // Set again once every registration holds the new waker (a pending poll).
            this.registered = None;
        }
        // A node clock is resolved to its source once per poll, with its switch generation,
        // and every decision below is made on that one source.
        let source = match (&mut this.switch, this.clock.as_ros()) {
            (Some((generation, waiter)), Some(ros)) => {
                match waiter {
                    Some(w) if fresh => w.update(cx.waker()),
                    Some(_) => {}
                    None => *waiter = Some(ros.register_waiter(cx.waker())),
                }
                let (now_generation, active) = ros.snapshot();
                if *generation != now_generation {
                    this.release();
                    return Poll::Ready(Err(WaitError::ClockChanged));
                }
                active
            }
            _ => this.clock.clone(),
        };
        if this.deadline.kind() != source.kind() {
            let err = ClockMismatch {
                expected: source.kind(),
                found: this.deadline.kind(),
            };
            this.release();
            return Poll::Ready(Err(err.into()));
        }
        match &this.cancel_registration {
            Some(reg) if fresh => reg.update(cx.waker()),
            Some(_) => {}
            None => this.cancel_registration = Some(this.cancel.register(cx.waker())),
        }
        if this.cancel.is_cancelled() {
            this.release();
            return Poll::Ready(Err(WaitError::Cancelled));
        }
        let deadline = this.deadline.nanos();
        let on_wall_clock = source.as_sim().is_none() && source.kind() != ClockKind::Steady;
        // On the wall clock, one sample both checks for a step and reads the time.
        let sample = if on_wall_clock {
            sample.or_else(|| jump::monitor().poll_sample().1)
        } else {
            None
        };
        let step = match sample {
            Some(sample) if sample.wall >= deadline => WaitStep::Reached,
            // The monotonic instant the wall clock should reach the deadline, if it does
            // not step: `mono` was read after `wall`, so this errs late, never early.
            Some(sample) => WaitStep::Pending(Some(
                sample
                    .mono
                    .saturating_add(deadline.saturating_sub(sample.wall)),
            )),
            None => source.wait_step(deadline, |sim| this.sim_poll(sim.clone(), deadline, cx)),
        };
        match step {
            WaitStep::Reached => {
                this.reached();
                Poll::Ready(Ok(()))
            }
            WaitStep::Failed(err) => {
                this.release();
                Poll::Ready(Err(err))
            }
            WaitStep::Pending(recheck_at) => {
                if on_wall_clock {
                    // A step of the wall clock wakes the sleep to look again.
                    match &this.wall_sleeper {
                        Some(guard) if fresh => jump::monitor().update_sleeper(guard, cx.waker()),
                        Some(_) => {}
                        None => {
                            this.wall_sleeper = Some(jump::monitor().register_sleeper(cx.waker()))
                        }
                    }
                }
                if let Some(at) = recheck_at {
                    host_of(&this.host).register(at, &mut this.driver_key, cx.waker());
                }
                if fresh {
                    this.registered = Some(cx.waker().clone());
                }
                Poll::Pending
            }
        }
    }
}

/// Who wakes a sleep's monotonic deadline: its host, or the time driver.
fn host_of(host: &Option<Arc<dyn DeadlineHost>>) -> &dyn DeadlineHost {
    match host {
        Some(host) => &**host,
        None => &GlobalDriver,
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        self.release();
    }
}

impl Clock {
    /// A future that completes after at least `duration` of this clock.
    pub fn sleep_for_async(&self, duration: super::Duration, cancel: &CancelToken) -> Sleep {
        self.sleep_until_async(self.now() + duration, cancel)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{Duration, RosClock};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::Wake;

    struct Count(AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn counter() -> (Arc<Count>, Waker) {
        let count = Arc::new(Count(AtomicUsize::new(0)));
        (Arc::clone(&count), Waker::from(count))
    }

    fn poll_with(sleep: &mut Sleep, waker: &Waker) -> Poll<Result<(), WaitError>> {
        sleep.poll_sampled(&mut Context::from_waker(waker), None)
    }

    #[test]
    fn a_poll_with_another_waker_moves_every_registration_to_it() {
        // Node clock on system time: cancel, wall-monitor and switch registrations.
        let ros = RosClock::new(crate::time::SimClock::new());
        let token = CancelToken::new();
        let mut sleep = ros
            .clock()
            .sleep_for_async(Duration::from_secs(3600), &token);
        let ((a_count, a), (b_count, b)) = (counter(), counter());
        assert!(poll_with(&mut sleep, &a).is_pending());
        assert!(poll_with(&mut sleep, &a).is_pending(), "same waker again");
        assert!(poll_with(&mut sleep, &b).is_pending());
        ros.set_use_sim_time(true);
        assert_eq!(
            a_count.0.load(Ordering::SeqCst),
            0,
            "the switch woke the old waker"
        );
        assert!(
            b_count.0.load(Ordering::SeqCst) >= 1,
            "the switch did not wake the waker of the last poll"
        );
        let mut sleep = Clock::system().sleep_for_async(Duration::from_secs(3600), &token);
        let ((a_count, a), (b_count, b)) = (counter(), counter());
        assert!(poll_with(&mut sleep, &a).is_pending());
        assert!(poll_with(&mut sleep, &b).is_pending());
        token.cancel();
        assert_eq!(
            a_count.0.load(Ordering::SeqCst),
            0,
            "cancel woke the old waker"
        );
        assert!(
            b_count.0.load(Ordering::SeqCst) >= 1,
            "cancel missed the new waker"
        );
        assert!(matches!(
            poll_with(&mut sleep, &b),
            Poll::Ready(Err(WaitError::Cancelled))
        ));
    }

    #[test]
    fn a_reset_sleep_completes_at_its_new_deadline_never_before() {
        let token = CancelToken::new();
        let clock = Clock::system();
        let mut sleep = clock.sleep_for_async(Duration::from_secs(3600), &token);
        let waker = crate::time::wait::thread_waker();
        assert!(poll_with(&mut sleep, &waker).is_pending());
        for _ in 0..3 {
            let deadline = clock.now() + Duration::from_millis(2);
            sleep.reset(deadline);
            let give_up = std::time::Instant::now() + std::time::Duration::from_secs(10);
            loop {
                match poll_with(&mut sleep, &waker) {
                    Poll::Ready(result) => {
                        result.unwrap();
                        break;
                    }
                    Poll::Pending => {
                        assert!(
                            std::time::Instant::now() < give_up,
                            "the reset sleep still waits for its old deadline"
                        );
                        std::thread::park_timeout(std::time::Duration::from_secs(1));
                    }
                }
            }
            assert!(clock.now().nanos() >= deadline.nanos(), "completed early");
            assert!(
                token.registered_waits() == 1,
                "the cancel registration was remade"
            );
        }
    }
}
