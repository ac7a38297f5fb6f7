//! [`SimClock`]: simulation time, set by a simulator, that cannot freeze shutdown.
//!
//! # Source
//! The simulator (or a `/clock` subscription) calls [`SimClock::publish`]; a test or a
//! lock-step simulator drives it with [`SimClock::step`] / [`SimClock::run_until`]. Every
//! sleep, timer and rate on the clock waits in a deadline queue and is woken by the
//! publish that reaches its deadline, in deadline order, never by polling.
//!
//! Before the first sample, `now()` is time zero (as ROS reports before the first `/clock`
//! message); waits with a positive deadline wait for samples, cancellably.
//!
//! # Stalls
//! A source silent for the stall timeout (measured on the steady clock) is *stalled*: the
//! first observer reports it to the jump handlers ([`ClockChange::SimStalled`]) and the
//! declared [`StallPolicy`] applies (see [`VirtualClock`] for the exact semantics: wait,
//! fall back to rate-1 steady time, or fail the wait). The next publish reports
//! [`ClockChange::SimResumed`]. Waiters look again at the moment a stall begins, so it is
//! noticed on time whenever anyone waits.
//!
//! # Resets
//! A publish below the previous source value is a simulation reset: reported as a backward
//! jump, every waiter re-evaluates, timers restart their period, nothing fires twice.
//!
//! # Deterministic stepping
//! [`SimClock::step`] moves time to each pending deadline in turn and wakes its waiters
//! one at a time, in (deadline, rank) order (timers rank by creation order, other waiters
//! after them by registration order, see `DeadlineQueue`); before moving on it waits until
//! the woken thread is waiting on this clock again or has exited, and until the callbacks
//! the wake made ready on an executor that runs them meanwhile (a node timer) have run,
//! with the callbacks they made ready in turn (a subscription it published to, a service
//! it called): whatever thread spins that executor, and without waiting for unrelated
//! work there. A timer re-arms before its callback runs, so its next deadline is in the
//! queue before the step looks at it again. A timer that runs for another reason while a
//! step wakes waiters (a stall recheck, a spurious wake) does not fire a tick the step made
//! due: it decides after reading the clock and leaves the tick to the run the step marked
//! (`holds_for_step`), or, on an executor the step does not wait for, to a run once the
//! step is over. So node timers and threads that wait on this
//! clock run in the same order every run, with no real waiting beyond the work they do.
//! (An async callback is waited for up to its first `.await`.) A `/clock` message is
//! applied the same way ([`publish_settled`](SimClock::publish_settled)): the publisher
//! returns once the callbacks it made due have run.
//!
//! Who runs the work decides whether a step waits for it (see `time::settle`, which states
//! the handshake): an executor spinning on another thread, or one that has never spun (a
//! `spin()` on a thread just started), is waited for; one that was spun before and is not
//! now, or that the stepping thread itself runs, is not: its caller spins it between steps
//! (`while exec.spin_some()? > 0 {}`, once before the first step too), and runs what the
//! step queued in the executor's queue order: an entity that a wake of its own (a stall
//! recheck, when the stall timeout is shorter than the real time between steps) queued
//! before the step keeps that earlier place, so callbacks due within one step can then
//! run in another order than the step's. Timers that re-arm
//! because their node clock switched to this clock (`set_use_sim_time(true)`) are waited
//! for at the start of the next step. Each wait is bounded by the settle timeout
//! ([`SETTLE_TIMEOUT`] unless [`set_settle_timeout`](SimClock::set_settle_timeout) says
//! otherwise): a callback that never returns delays the step, never hangs it; a wait that
//! ends on the bound is counted ([`settle_timeouts`](SimClock::settle_timeouts)) and
//! traced.
//!
//! # Ground rules
//! Everything mutable is in `state`, under its lock; `settled` is signalled under it.
//! Wakers and jump handlers are called after the lock is released.

use super::deadline_queue::DeadlineQueue;
use super::jump::{ClockChange, ClockJump, HandlerSet, JumpLog};
use super::settle;
use super::virtual_clock::{PublishEffect, StallPolicy, VirtualClock};
use super::wait::mono_now;
use super::{ClockKind, ClockMismatch, Duration, Time, WaitError};
use parking_lot::{Condvar, Mutex};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::task::Waker;

/// The stall timeout of [`SimClock::new`].
pub const DEFAULT_STALL_TIMEOUT: Duration = Duration::from_secs(1);
/// How long [`SimClock::step`] waits for a woken thread to come back before moving on,
/// unless [`SimClock::set_settle_timeout`] says otherwise.
pub const SETTLE_TIMEOUT: Duration = Duration::from_secs(2);

/// A simulated clock; cheap to clone (all clones are the same clock).
#[derive(Debug, Clone)]
pub struct SimClock {
    pub(crate) inner: Arc<SimInner>,
}

#[derive(Debug)]
pub(crate) struct SimInner {
    state: Mutex<SimState>,
    settled: Condvar,
    pub(crate) handlers: Arc<HandlerSet>,
}

#[derive(Debug)]
struct SimState {
    clock: VirtualClock,
    queue: DeadlineQueue,
    /// Which participant (waiting thread) owns each queue key.
    owners: HashMap<u64, u64>,
    /// Participants woken by `step` that have not come back to wait yet.
    running: HashSet<u64>,
    /// The resets, by generation; timers compare generations to restart their period.
    jumps: JumpLog,
    stalls: u64,
    /// Waiters that gave up on a stall and want to hear of the next sample.
    sample_wakers: Vec<Waker>,
    /// Of those, the ones a publish made due, woken with the next batch.
    sample_due: Vec<Waker>,
    /// Steps or settled publishes waking the due waiters one at a time: until one has
    /// woken a waiter, that waiter is not released by a poll of its own (see
    /// `poll_wait_ranked`).
    ordered_wake: u32,
    /// Runs held back by `holds_for_step` (they ran outside any step's scope while one
    /// woke waiters in order), woken once the last ordered wake ends.
    after_ordered: Vec<Waker>,
    /// Work made ready for this clock outside a step (timers re-arming on it after a node
    /// clock switched to it), waited for before time next moves.
    deferred: Vec<Arc<settle::Ticket>>,
    /// Settle waits that ended on their bound rather than on the work they waited for.
    settle_timeouts: u64,
    /// The bound of each settle wait ([`SETTLE_TIMEOUT`] unless set).
    settle_timeout: Duration,
}

/// What a waiter learns from one look at a clock (any clock: see `Clock::wait_step`).
#[derive(Debug)]
pub(crate) enum WaitStep {
    /// The clock reads at least the deadline.
    Reached,
    /// Not yet; look again at this steady time (`None`: only a wake-up can help, such as a
    /// simulated-clock publish).
    Pending(Option<i64>),
    /// The wait cannot go on.
    Failed(WaitError),
}

impl Default for SimClock {
    fn default() -> Self {
        Self::new()
    }
}

impl SimClock {
    /// A simulated clock with the [`StallPolicy::Wait`] policy and a 1 s stall timeout.
    pub fn new() -> Self {
        Self::with_stall_policy(StallPolicy::Wait, DEFAULT_STALL_TIMEOUT)
    }

    /// A simulated clock that counts as stalled after `stall_timeout` of steady time without a sample, then does what `policy` says.
    pub fn with_stall_policy(policy: StallPolicy, stall_timeout: impl Into<Duration>) -> Self {
        let stall_timeout = stall_timeout.into();
        SimClock {
            inner: Arc::new(SimInner {
                state: Mutex::new(SimState {
                    clock: VirtualClock::new(policy, stall_timeout, mono_now()),
                    queue: DeadlineQueue::default(),
                    owners: HashMap::new(),
                    running: HashSet::new(),
                    jumps: JumpLog::default(),
                    stalls: 0,
                    sample_wakers: Vec::new(),
                    sample_due: Vec::new(),
                    ordered_wake: 0,
                    after_ordered: Vec::new(),
                    deferred: Vec::new(),
                    settle_timeouts: 0,
                    settle_timeout: SETTLE_TIMEOUT,
                }),
                settled: Condvar::new(),
                handlers: Arc::new(HandlerSet::default()),
            }),
        }
    }

    /// A [`Clock`](super::Clock) handle reading this simulated time.
    pub fn clock(&self) -> super::Clock {
        super::Clock::from_sim(self.clone())
    }

    /// What the clock does when it stalls.
    pub fn policy(&self) -> StallPolicy {
        self.inner.state.lock().clock.policy()
    }

    /// The current simulated time (time zero before the first sample, unless falling back).
    pub fn now(&self) -> Time {
        self.observe_stall();
        Time::new(
            ClockKind::Sim,
            self.inner.state.lock().clock.read(mono_now()),
        )
    }

    /// Whether a first sample has been published.
    pub fn has_started(&self) -> bool {
        self.inner.state.lock().clock.has_sample()
    }

    /// Whether the source is currently detected as stalled.
    pub fn is_stalled(&self) -> bool {
        self.observe_stall();
        self.inner.state.lock().clock.is_stalled()
    }

    /// How many waits are registered on this clock now (sleeps, timers, rates).
    pub fn pending_waits(&self) -> usize {
        self.inner.state.lock().queue.len()
    }

    /// How many stalls have been detected.
    pub fn stall_count(&self) -> u64 {
        self.inner.state.lock().stalls
    }

    /// How long a lock-step wait (a [`step`](Self::step) or a
    /// [`publish_settled`](Self::publish_settled) waiting for the callbacks it made due) waits
    /// before it moves on: [`SETTLE_TIMEOUT`] unless set.
    pub fn settle_timeout(&self) -> Duration {
        self.inner.state.lock().settle_timeout
    }

    /// Sets how long a lock-step wait waits for the work it made due before it moves on
    /// (and counts a [`settle_timeouts`](Self::settle_timeouts)). A simulation whose
    /// callbacks run longer than [`SETTLE_TIMEOUT`] in real time, or that runs on a machine
    /// busy enough to keep a woken thread off a CPU that long, stays deterministic with a
    /// longer bound; a callback that never returns then delays each step by this much. A
    /// negative duration counts as zero.
    pub fn set_settle_timeout(&self, timeout: impl Into<Duration>) {
        self.inner.state.lock().settle_timeout = timeout.into().max(Duration::ZERO);
    }

    /// How many times a lock-step wait gave up after its [`settle_timeout`](Self::settle_timeout) instead of seeing
    /// the work it waited for run: a callback that ran longer, a thread woken by a step that
    /// did something other than wait on this clock again, or an executor that was never
    /// spun (see "Deterministic stepping" above). Each is also traced
    /// (`kairos:sim_settle_timeout`). Zero in a deterministic run.
    pub fn settle_timeouts(&self) -> u64 {
        self.inner.state.lock().settle_timeouts
    }

    /// Publishes the simulated time `t`: wakes, in deadline order, every wait it reaches.
    /// A `t` earlier than the previous sample is a reset, reported as a backward jump.
    pub fn publish(&self, t: Time) -> Result<(), ClockMismatch> {
        if t.kind() != ClockKind::Sim {
            return Err(ClockMismatch {
                expected: ClockKind::Sim,
                found: t.kind(),
            });
        }
        // A stall nobody observed still moved a falling-back clock: report it first.
        self.observe_stall();
        let mut woken = Vec::new();
        let effect = {
            let mut state = self.inner.state.lock();
            let effect = state.publish(t.nanos());
            state.pop_reached(effect, &mut woken);
            effect
        };
        self.report(effect, woken);
        Ok(())
    }

    /// Publishes `t` as [`publish`](Self::publish) does, but wakes the waiters it made due
    /// one at a time in (deadline, rank) order, each time waiting (bounded by
    /// the settle timeout) until the callbacks the wake made due have run, on whatever
    /// executor runs them, and the threads it woke wait on this clock again: the lock-step
    /// form a `/clock` message takes (see "Deterministic stepping" above). Time jumps to
    /// `t` at once: a timer whose periods the jump passed fires once, its missed periods
    /// counted.
    pub fn publish_settled(&self, t: Time) -> Result<(), ClockMismatch> {
        if t.kind() != ClockKind::Sim {
            return Err(ClockMismatch {
                expected: ClockKind::Sim,
                found: t.kind(),
            });
        }
        self.settle_deferred();
        self.observe_stall();
        let _ordered = OrderedWake::begin(&self.inner);
        let mut woken = Vec::new();
        let (effect, now) = {
            let mut state = self.inner.state.lock();
            let effect = state.publish(t.nanos());
            // After a reset every waiter re-evaluates at once; otherwise the due ones are
            // woken one at a time, in (deadline, rank) order, each settled before the
            // next, as a step does.
            let (now, max) = if effect.reset {
                (i64::MAX, usize::MAX)
            } else {
                (state.clock.read(mono_now()), 1)
            };
            state.pop_due(now, &mut woken, max, true);
            (effect, now)
        };
        let ticket = settle::collect(crate::exec::executors_of_this_thread, || {
            self.report(effect, woken)
        });
        self.settle(&ticket);
        loop {
            let mut woken = Vec::new();
            self.inner.state.lock().pop_due(now, &mut woken, 1, true);
            if woken.is_empty() {
                return Ok(());
            }
            let ticket = settle::collect(crate::exec::executors_of_this_thread, || {
                woken.into_iter().for_each(Waker::wake)
            });
            self.settle(&ticket);
        }
    }

    /// Advances simulated time by `dt`, waking every waiter due on the way one at a time in
    /// deadline order and letting it run (see "Deterministic stepping" above).
    ///
    /// # Examples
    /// 60 s of robot time with a 1 s node timer, its executor spinning on another thread:
    /// every run counts exactly 60 ticks.
    /// ```
    /// use kairos::exec::Executor;
    /// use kairos::graph::{Context, Node};
    /// use kairos::time::Duration;
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicU64, Ordering};
    ///
    /// let context = Context::new();
    /// let robot = Node::new_in(&context, "robot", "/").unwrap();
    /// robot.set_use_sim_time(true).unwrap();
    /// let ticks = Arc::new(AtomicU64::new(0));
    /// let count = ticks.clone();
    /// let _timer = robot
    ///     .create_timer(Duration::from_secs(1), move |_| {
    ///         count.fetch_add(1, Ordering::Relaxed);
    ///     })
    ///     .unwrap();
    /// let exec = Executor::multi_threaded(2).unwrap();
    /// exec.add_node(&robot).unwrap();
    /// // Returns once the spin has begun: every step from here on waits for its callbacks.
    /// let spin = exec.spin_thread().unwrap();
    /// let sim = context.sim_clock().unwrap();
    /// for _ in 0..60 {
    ///     sim.step(Duration::from_secs(1));
    /// }
    /// assert_eq!(ticks.load(Ordering::Relaxed), 60);
    /// spin.stop().unwrap();
    /// ```
    /// Without a spinning executor, spin it yourself after each step:
    /// `while exec.spin_some()? > 0 {}`.
    pub fn step(&self, dt: impl Into<Duration>) {
        let dt = dt.into();
        let target = self.now() + dt;
        self.run_until(target);
    }

    /// Advances simulated time to `t` as [`step`](Self::step) does. A `t` in the past is
    /// a reset, as with [`publish`](Self::publish).
    pub fn run_until(&self, t: Time) {
        let target = t.nanos();
        self.settle_deferred();
        self.resume_given_up();
        let _ordered = OrderedWake::begin(&self.inner);
        loop {
            self.observe_stall();
            let mut woken = Vec::new();
            let effect = {
                let mut state = self.inner.state.lock();
                let now = state.clock.read(mono_now());
                match state.queue.next_deadline() {
                    Some(next) if next <= target && now <= target => {
                        let effect = if next > now {
                            Some(state.publish(next))
                        } else {
                            None
                        };
                        state.pop_due(next.max(now), &mut woken, 1, true);
                        effect
                    }
                    _ => {
                        let effect = state.publish(target);
                        state.pop_reached(effect, &mut woken);
                        drop(state);
                        let ticket = settle::collect(crate::exec::executors_of_this_thread, || {
                            self.report(effect, woken)
                        });
                        self.settle(&ticket);
                        return;
                    }
                }
            };
            let ticket = settle::collect(crate::exec::executors_of_this_thread, || match effect {
                Some(effect) => self.report(effect, woken),
                None => woken.into_iter().for_each(Waker::wake),
            });
            self.settle(&ticket);
        }
    }

    /// Before stepping a clock on which waiters gave up (a `Fail` stall): resumes it at its
    /// current value so they re-arm on its grid first, instead of hearing of the resume
    /// only after the step's first move has passed their deadlines.
    fn resume_given_up(&self) {
        let mut woken = Vec::new();
        let effect = {
            let mut state = self.inner.state.lock();
            if state.sample_wakers.is_empty() {
                return;
            }
            let now = state.clock.read(mono_now());
            let effect = state.publish(now);
            state.pop_due(now, &mut woken, usize::MAX, true);
            effect
        };
        let ticket = settle::collect(crate::exec::executors_of_this_thread, || {
            self.report(effect, woken)
        });
        self.settle(&ticket);
    }

    /// Wakes `waker` at the next sample (a waiter that gave up on a stall re-arms then).
    pub(crate) fn wake_on_next_sample(&self, waker: &Waker) {
        let mut state = self.inner.state.lock();
        if !state.sample_wakers.iter().any(|w| w.will_wake(waker)) {
            state.sample_wakers.push(waker.clone());
        }
    }

    /// When a settle wait starting now gives up.
    fn settle_deadline(&self) -> std::time::Instant {
        let now = std::time::Instant::now();
        let bound = self.settle_timeout().to_std().unwrap_or_default();
        // A bound too far to add (a `Duration::MAX`) waits as good as forever: a year.
        now.checked_add(bound)
            .unwrap_or_else(|| now + std::time::Duration::from_secs(365 * 24 * 3600))
    }

    /// Waits (bounded by the settle timeout) until every thread woken by `step` is waiting
    /// on this clock again or has exited, and every callback `ticket` marked has run.
    fn settle(&self, ticket: &settle::Ticket) {
        let deadline = self.settle_deadline();
        let threads_back = {
            let mut state = self.inner.state.lock();
            loop {
                if state.running.is_empty() {
                    break true;
                }
                if self
                    .inner
                    .settled
                    .wait_until(&mut state, deadline)
                    .timed_out()
                {
                    // A participant doing something other than waiting on this clock: move
                    // on rather than hang; determinism is only promised for threads that
                    // come back.
                    state.running.clear();
                    break false;
                }
            }
        };
        let callbacks_done = ticket.wait(deadline);
        if !threads_back || !callbacks_done {
            self.settle_timed_out(ticket.pending());
        }
    }

    /// Hands this clock work made ready for it outside a step (see `RosClock`'s switch):
    /// the next step or settled publish waits for it before time moves.
    pub(crate) fn defer(&self, ticket: Arc<settle::Ticket>) {
        if ticket.pending() > 0 {
            self.inner.state.lock().deferred.push(ticket);
        }
    }

    /// Waits (bounded by the settle timeout) for the work handed over by [`defer`](Self::defer).
    fn settle_deferred(&self) {
        let deferred = std::mem::take(&mut self.inner.state.lock().deferred);
        if deferred.is_empty() {
            return;
        }
        let deadline = self.settle_deadline();
        let pending: usize = deferred
            .iter()
            .filter(|ticket| !ticket.wait(deadline))
            .map(|ticket| ticket.pending())
            .sum();
        if pending > 0 {
            self.settle_timed_out(pending);
        }
    }

    fn settle_timed_out(&self, pending: usize) {
        let now = {
            let mut state = self.inner.state.lock();
            state.settle_timeouts += 1;
            state.clock.read(mono_now())
        };
        crate::trace::tp::sim_settle_timeout(now, pending as u64);
    }

    fn report(&self, effect: PublishEffect, woken: Vec<Waker>) {
        use crate::trace::tp;
        let sim = kairos_trace::schema::ClockKind::Sim;
        tp::sim_clock_update(effect.now);
        if effect.reset {
            tp::clock_jump(sim, effect.now.saturating_sub(effect.delta), effect.now);
        }
        if effect.resumed {
            tp::resume(sim, effect.now, effect.stalled_ns);
        }
        let wake = || woken.into_iter().for_each(Waker::wake);
        if effect.delta != 0 {
            let jump = ClockJump {
                delta: Duration::from_nanos(effect.delta),
                change: ClockChange::None,
            };
            self.inner.handlers.dispatch(&jump, wake);
        } else {
            wake();
        }
        if effect.resumed {
            let jump = ClockJump {
                delta: Duration::ZERO,
                change: ClockChange::SimResumed,
            };
            self.inner.handlers.dispatch(&jump, || {});
        }
    }

    /// Reports a stall to the handlers the first time it is seen.
    fn observe_stall(&self) {
        let newly = {
            let mut state = self.inner.state.lock();
            let steady = mono_now();
            let newly = state.clock.observe_stall(steady);
            if newly {
                state.stalls += 1;
                crate::trace::tp::stall(
                    kairos_trace::schema::ClockKind::Sim,
                    state.clock.read(steady),
                );
            }
            newly
        };
        if newly {
            let jump = ClockJump {
                delta: Duration::ZERO,
                change: ClockChange::SimStalled,
            };
            self.inner.handlers.dispatch(&jump, || {});
        }
    }

    pub(crate) fn generation(&self) -> u64 {
        self.inner.state.lock().jumps.generation()
    }

    pub(crate) fn net_since(&self, since: u64) -> Duration {
        self.inner.state.lock().jumps.net_since(since)
    }

    /// One look at the clock for a waiter of `deadline`: registers (or refreshes) `waker`
    /// in the deadline queue unless the deadline is reached or the wait failed. A blocking
    /// waiter passes its participant id so `step` can tell when it is back.
    pub(crate) fn poll_wait(
        &self,
        deadline: i64,
        key: &mut Option<u64>,
        waker: &Waker,
        participant: Option<u64>,
    ) -> WaitStep {
        self.poll_wait_ranked(deadline, key, waker, participant, None)
    }

    /// [`poll_wait`](Self::poll_wait) for a waiter with a rank of its own among the waiters
    /// of one deadline (a timer: its creation order, see `DeadlineQueue`).
    pub(crate) fn poll_wait_ranked(
        &self,
        deadline: i64,
        key: &mut Option<u64>,
        waker: &Waker,
        participant: Option<u64>,
        rank: Option<u64>,
    ) -> WaitStep {
        self.observe_stall();
        let steady = mono_now();
        let mut state = self.inner.state.lock();
        let now = state.clock.read(steady);
        if now >= deadline {
            // Polled for another reason (a stall recheck, a spurious wake) while a step
            // wakes the due waiters one at a time in (deadline, rank) order and has not
            // woken this one yet: it waits for its turn, so the waiters of one instant run
            // in the same order, each settled before the next, whatever else polls them.
            if let Some(k) = *key
                && state.ordered_wake > 0
                && state.queue.waits_its_turn(k, now)
            {
                state.queue.update(k, waker);
                return WaitStep::Pending(None);
            }
            state.forget(key.take());
            return WaitStep::Reached;
        }
        if state.clock.policy() == StallPolicy::Fail && state.clock.is_silent(steady) {
            state.forget(key.take());
            let last = Time::new(ClockKind::Sim, state.clock.read(steady));
            let silent_for = Duration::from_nanos(
                steady.saturating_sub(
                    state
                        .clock
                        .stall_at()
                        .saturating_sub(state.clock.stall_timeout().as_nanos()),
                ),
            );
            return WaitStep::Failed(WaitError::Stalled { last, silent_for });
        }
        match *key {
            Some(k) if state.queue.update(k, waker) => {}
            _ => {
                let k = state.queue.insert_ranked(deadline, rank, waker.clone());
                *key = Some(k);
                if let Some(p) = participant {
                    state.owners.insert(k, p);
                    if state.running.remove(&p) && state.running.is_empty() {
                        self.inner.settled.notify_all();
                    }
                }
            }
        }
        WaitStep::Pending(state.clock.recheck_at(deadline, steady))
    }

    /// Whether a timer on this clock, due at the time it just read, must leave its tick to
    /// the step that is waking due waiters in order (`key`: its registration, if any).
    /// Asked after the timer read the clock, so a step that moved time since is seen:
    /// - its registration is due and not woken yet: the step wakes it in its turn;
    /// - it runs outside any step's scope (a stall recheck, a spurious wake): the step
    ///   waits only for runs it marked, so a tick fired here would race the step's next
    ///   waiter. The run that the step's wake marked fires it instead; `waker` is woken
    ///   when the ordered wakes end, in case no such run comes (an executor the step does
    ///   not wait for).
    pub(crate) fn holds_for_step(&self, key: Option<u64>, waker: &Waker) -> bool {
        let mut state = self.inner.state.lock();
        if state.ordered_wake == 0 {
            return false;
        }
        let now = state.clock.read(mono_now());
        if key.is_some_and(|k| state.queue.waits_its_turn(k, now)) {
            return true;
        }
        if settle::in_scope() {
            return false;
        }
        if !state.after_ordered.iter().any(|w| w.will_wake(waker)) {
            state.after_ordered.push(waker.clone());
        }
        true
    }

    pub(crate) fn unregister(&self, key: Option<u64>) {
        if key.is_some() {
            self.inner.state.lock().forget(key);
        }
    }

    /// Marks the current thread as a participant of this clock (see deterministic stepping)
    /// and returns its id.
    pub(crate) fn participant(&self) -> u64 {
        Participant::current(&self.inner)
    }

    fn leave(&self, participant: u64) {
        let mut state = self.inner.state.lock();
        if state.running.remove(&participant) && state.running.is_empty() {
            self.inner.settled.notify_all();
        }
    }
}

impl SimState {
    fn publish(&mut self, value: i64) -> PublishEffect {
        let effect = self.clock.publish(value, mono_now());
        let given_up = std::mem::take(&mut self.sample_wakers);
        self.sample_due.extend(given_up);
        if effect.reset {
            self.jumps.record(effect.delta);
        }
        effect
    }

    /// Pops every waiter the clock has reached, or every waiter after a reset so that all
    /// re-evaluate against the new time.
    fn pop_reached(&mut self, effect: PublishEffect, out: &mut Vec<Waker>) {
        let now = if effect.reset {
            i64::MAX
        } else {
            self.clock.read(mono_now())
        };
        self.pop_due(now, out, usize::MAX, false);
    }

    /// Pops up to `max` waiters due at `now`. With `track`, their threads count as
    /// running until they are back (only `run_until` waits for them, never a publish).
    fn pop_due(&mut self, now: i64, out: &mut Vec<Waker>, max: usize, track: bool) {
        out.append(&mut self.sample_due);
        for k in self.queue.pop_due_keys(now, out, max) {
            if let Some(p) = self.owners.remove(&k) {
                if track {
                    self.running.insert(p);
                }
            }
        }
    }

    fn forget(&mut self, key: Option<u64>) {
        if let Some(k) = key {
            self.queue.remove(k);
            self.owners.remove(&k);
        }
    }
}

/// Marks a step or settled publish as waking due waiters in order, until dropped.
struct OrderedWake<'a>(&'a SimInner);

impl<'a> OrderedWake<'a> {
    fn begin(inner: &'a SimInner) -> Self {
        inner.state.lock().ordered_wake += 1;
        Self(inner)
    }
}

impl Drop for OrderedWake<'_> {
    fn drop(&mut self) {
        let held = {
            let mut state = self.0.state.lock();
            state.ordered_wake -= 1;
            if state.ordered_wake == 0 {
                std::mem::take(&mut state.after_ordered)
            } else {
                Vec::new()
            }
        };
        // Not the step's work: nothing it wakes is marked for a step.
        settle::scope(None, || held.into_iter().for_each(Waker::wake));
    }
}

static NEXT_PARTICIPANT: AtomicU64 = AtomicU64::new(1);

/// A thread that waits on simulated clocks; leaves them when the thread exits.
struct Participant {
    id: u64,
    clocks: Vec<Weak<SimInner>>,
}

thread_local! {
    static PARTICIPANT: RefCell<Option<Participant>> = const { RefCell::new(None) };
}

impl Participant {
    fn current(clock: &Arc<SimInner>) -> u64 {
        PARTICIPANT.with(|cell| {
            let mut cell = cell.borrow_mut();
            let p = cell.get_or_insert_with(|| Participant {
                id: NEXT_PARTICIPANT.fetch_add(1, Ordering::Relaxed),
                clocks: Vec::new(),
            });
            if !p.clocks.iter().any(|w| w.as_ptr() == Arc::as_ptr(clock)) {
                p.clocks.retain(|w| w.strong_count() > 0);
                p.clocks.push(Arc::downgrade(clock));
            }
            p.id
        })
    }
}

impl Drop for Participant {
    fn drop(&mut self) {
        for inner in self.clocks.iter().filter_map(Weak::upgrade) {
            SimClock { inner }.leave(self.id);
        }
    }
}
