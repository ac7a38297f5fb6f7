//! Clock jumps: detection of wall-clock steps and the handlers told about them.
//!
//! The wall clock (`CLOCK_REALTIME`) can be stepped at any time (NTP, `date -s`, a VM
//! resume). kairos never asks the kernel to wait on it; instead it watches the offset
//! `realtime - monotonic`. While nothing steps the clock the offset only drifts slowly
//! (NTP slews at most 500 ppm); a change of at least [`DETECTION_THRESHOLD`] between two
//! samples is a step, reported as a [`ClockJump`] with its signed delta.
//!
//! Samples are taken (a) by every system-clock wait and timer each time it wakes, and (b)
//! by a monitor thread every [`POLL_INTERVAL`] while anyone sleeps on the system clock or
//! a handler is registered (so a forward step wakes sleepers within that interval). The
//! monitor parks indefinitely, not polling, when no one is interested.
//!
//! [`JumpHandler`]s follow rclcpp's `JumpHandler`: a `before` callback, an `after` callback
//! that receives the jump, and a [`JumpThreshold`] that selects which jumps they hear.
//!
//! # Ground rules
//! `baseline` (the offset last sampled) and `generation` are atomics so that the common
//! poll, which finds no step, is lock-free: it compares a fresh sample with `baseline`
//! and, if the change is below the threshold, moves `baseline` to its sample only if no
//! one changed it meanwhile (a compare-exchange from the value it compared with: a stale
//! sample never overwrites a newer one). A sample at or past the threshold takes `state`'s
//! lock and samples again under it; only then is a step recorded: `generation` and the
//! net deltas (`state`) change under that lock, and `generation` is stored after the
//! delta it counts. Handlers and sleepers are snapshot under their lock and called after
//! releasing it, so a handler may register or drop handlers without deadlocking.

use super::Duration;
use super::wait::{mono_now, park_until_mono, thread_waker, wall_now};
use super::wakers::Wakers;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::Waker;
use std::thread::Thread;

/// The smallest change of `realtime - monotonic` between two samples that counts as a step.
pub const DETECTION_THRESHOLD: Duration = Duration::from_millis(1);
/// How often the monitor samples the offset while someone is interested.
pub const POLL_INTERVAL: Duration = Duration::from_millis(10);

/// What changed about a clock besides (or instead of) its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockChange {
    /// The clock's value stepped; its source did not change.
    None,
    /// A node clock switched from system time to simulation time (`ROS_TIME_ACTIVATED`).
    SimActivated,
    /// A node clock switched from simulation time to system time (`ROS_TIME_DEACTIVATED`).
    SimDeactivated,
    /// The simulated clock's source stopped publishing for longer than the stall timeout.
    SimStalled,
    /// The simulated clock's source published again after a stall.
    SimResumed,
}

/// A discontinuity of a clock, as the handlers hear it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockJump {
    /// Signed size of the step: positive forward, negative backward.
    pub delta: Duration,
    /// A change of source that came with the jump, if any.
    pub change: ClockChange,
}

/// Which jumps a handler hears, as rclcpp's `rcl_jump_threshold_t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JumpThreshold {
    /// Forward steps of at least this size; `None` ignores forward steps.
    pub min_forward: Option<Duration>,
    /// Backward steps of at least this size (given as a positive span); `None` ignores them.
    pub min_backward: Option<Duration>,
    /// Source changes (sim activated/deactivated, stalled/resumed).
    pub on_clock_change: bool,
}

impl JumpThreshold {
    /// Every step in either direction and every source change.
    pub const ALL: JumpThreshold = JumpThreshold {
        min_forward: Some(Duration::ZERO),
        min_backward: Some(Duration::ZERO),
        on_clock_change: true,
    };

    /// Whether a handler with this threshold hears `jump`.
    pub fn matches(&self, jump: &ClockJump) -> bool {
        if jump.change != ClockChange::None {
            return self.on_clock_change;
        }
        if jump.delta.is_negative() {
            self.min_backward.is_some_and(|min| jump.delta.abs() >= min)
        } else {
            self.min_forward.is_some_and(|min| jump.delta >= min)
        }
    }
}

type BeforeFn = dyn Fn() + Send + Sync;
type AfterFn = dyn Fn(&ClockJump) + Send + Sync;

struct HandlerEntry {
    threshold: JumpThreshold,
    before: Box<BeforeFn>,
    after: Box<AfterFn>,
}

/// The handlers registered on one clock source.
#[derive(Default)]
pub(crate) struct HandlerSet {
    entries: Mutex<Vec<(u64, Arc<HandlerEntry>)>>,
    next_key: AtomicU64,
}

impl std::fmt::Debug for HandlerSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HandlerSet")
            .field("handlers", &self.entries.lock().len())
            .finish()
    }
}

impl HandlerSet {
    pub(crate) fn add(
        self: &Arc<Self>,
        threshold: JumpThreshold,
        before: Box<BeforeFn>,
        after: Box<AfterFn>,
    ) -> JumpHandler {
        let key = self.next_key.fetch_add(1, Ordering::Relaxed);
        let entry = Arc::new(HandlerEntry {
            threshold,
            before,
            after,
        });
        self.entries.lock().push((key, entry));
        JumpHandler {
            registrations: vec![(Arc::clone(self), key)],
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries.lock().is_empty()
    }

    fn matching(&self, jump: &ClockJump) -> Vec<Arc<HandlerEntry>> {
        let entries = self.entries.lock();
        entries
            .iter()
            .filter(|(_, e)| e.threshold.matches(jump))
            .map(|(_, e)| Arc::clone(e))
            .collect()
    }

    /// Calls `before` of every matching handler, then `apply`, then `after`.
    pub(crate) fn dispatch(&self, jump: &ClockJump, apply: impl FnOnce()) {
        let handlers = self.matching(jump);
        for h in &handlers {
            (h.before)();
        }
        apply();
        for h in &handlers {
            (h.after)(jump);
        }
    }
}

/// A registered jump handler; dropping it unregisters the callbacks.
#[must_use = "dropping a JumpHandler unregisters it"]
pub struct JumpHandler {
    registrations: Vec<(Arc<HandlerSet>, u64)>,
}

impl JumpHandler {
    /// A handler that is never called (a steady clock never jumps).
    pub(crate) fn inert() -> JumpHandler {
        JumpHandler {
            registrations: Vec::new(),
        }
    }

    /// One handler made of several registrations (a node clock listens to each source).
    pub(crate) fn combine(mut parts: Vec<JumpHandler>) -> JumpHandler {
        let registrations = parts
            .iter_mut()
            .flat_map(|p| std::mem::take(&mut p.registrations))
            .collect();
        JumpHandler { registrations }
    }
}

impl std::fmt::Debug for JumpHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JumpHandler")
            .field("registrations", &self.registrations.len())
            .finish()
    }
}

impl Drop for JumpHandler {
    fn drop(&mut self) {
        for (set, key) in self.registrations.drain(..) {
            set.entries.lock().retain(|(k, _)| *k != key);
        }
    }
}

/// The discontinuities of one clock (wall steps, simulation resets), by generation: the
/// one log behind [`Clock`](super::Clock)'s jump checks for the wall monitor and for
/// simulated clocks. Generation `g` is the state after the `g`-th jump.
#[derive(Debug)]
pub(crate) struct JumpLog {
    /// Net delta of every jump since generation 0, so `net_since(g)` is a subtraction.
    cumulative: Vec<i64>,
}

impl Default for JumpLog {
    fn default() -> Self {
        Self {
            cumulative: vec![0],
        }
    }
}

impl JumpLog {
    /// Jumps recorded so far.
    pub(crate) fn generation(&self) -> u64 {
        self.cumulative.len() as u64 - 1
    }

    /// Records a jump of `delta` nanoseconds; returns the new generation.
    pub(crate) fn record(&mut self, delta: i64) -> u64 {
        let total = self
            .cumulative
            .last()
            .copied()
            .unwrap_or(0)
            .saturating_add(delta);
        self.cumulative.push(total);
        self.generation()
    }

    /// Net signed size of the jumps after generation `since` (none for a generation not
    /// reached yet).
    pub(crate) fn net_since(&self, since: u64) -> Duration {
        let last = self.cumulative.last().copied().unwrap_or(0);
        let base = usize::try_from(since)
            .ok()
            .and_then(|i| self.cumulative.get(i).copied())
            .unwrap_or(last);
        Duration::from_nanos(last.saturating_sub(base))
    }
}

/// The process-wide watcher of the wall clock.
#[derive(Debug)]
pub(crate) struct WallMonitor {
    /// The realtime-minus-monotonic offset of the last sample (see the ground rules).
    baseline: AtomicI64,
    /// Steps detected so far.
    generation: AtomicU64,
    /// The steps detected, written under its lock.
    state: Mutex<JumpLog>,
    pub(crate) handlers: Arc<HandlerSet>,
    sleepers: Mutex<Wakers>,
    thread: OnceLock<Thread>,
}

/// One reading of the wall clock with the monotonic clock around it: what every wall-clock
/// decision needs (the time, and the monotonic instant to wait until) from one sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WallSample {
    /// `CLOCK_REALTIME`, nanoseconds since the Unix epoch.
    pub(crate) wall: i64,
    /// `CLOCK_MONOTONIC` read just after `wall` (never before it), so a monotonic deadline
    /// derived from `wall` errs late, by at most the pair's spread.
    pub(crate) mono: i64,
    /// `wall` minus the monotonic instant halfway through the pair.
    offset: i64,
}

/// The realtime-minus-monotonic offset, read so that a preemption between the two reads
/// cannot fake a jump: the monotonic clock is read on both sides, a slow pair is retried,
/// and `None` when every try was too slow to trust.
fn offset_sample() -> Option<WallSample> {
    let mut best: Option<(i64, WallSample)> = None;
    for _ in 0..4 {
        let m0 = mono_now();
        let wall = wall_now();
        let m1 = mono_now();
        let spread = m1 - m0;
        if best.is_none_or(|(s, _)| spread < s) {
            let offset = wall.saturating_sub(m0 + spread / 2);
            best = Some((
                spread,
                WallSample {
                    wall,
                    mono: m1,
                    offset,
                },
            ));
        }
        if spread < 20_000 {
            break;
        }
    }
    // A pair read across a long preemption cannot tell a step from the delay: no sample.
    best.filter(|(spread, _)| *spread < DETECTION_THRESHOLD.as_nanos() / 2)
        .map(|(_, sample)| sample)
}

pub(crate) fn monitor() -> &'static WallMonitor {
    static MONITOR: OnceLock<WallMonitor> = OnceLock::new();
    MONITOR.get_or_init(|| WallMonitor {
        baseline: AtomicI64::new(
            offset_sample()
                .map(|sample| sample.offset)
                .unwrap_or_else(|| wall_now().saturating_sub(mono_now())),
        ),
        generation: AtomicU64::new(0),
        state: Mutex::new(JumpLog::default()),
        handlers: Arc::new(HandlerSet::default()),
        sleepers: Mutex::new(Wakers::default()),
        thread: OnceLock::new(),
    })
}

impl WallMonitor {
    /// Samples the offset; reports a jump if it stepped. Returns the current generation.
    pub(crate) fn poll(&self) -> u64 {
        self.poll_sample().0
    }

    /// [`poll`](Self::poll), also returning the sample it took (none when every pair read
    /// was preempted): the wall time of that sample is as fresh as a separate read, so a
    /// caller that needs the time and the check for a step reads the clocks once.
    pub(crate) fn poll_sample(&self) -> (u64, Option<WallSample>) {
        // Read first: a step this poll does not see is reported to a later one.
        let generation = self.generation.load(Ordering::Acquire);
        let baseline = self.baseline.load(Ordering::Acquire);
        let Some(sample) = offset_sample() else {
            return (generation, None);
        };
        let drift = sample.offset.saturating_sub(baseline);
        if drift.saturating_abs() < DETECTION_THRESHOLD.as_nanos() {
            // No step: follow the slow drift (NTP slew), unless a newer sample already did.
            if drift != 0 {
                let _ = self.baseline.compare_exchange(
                    baseline,
                    sample.offset,
                    Ordering::AcqRel,
                    Ordering::Relaxed,
                );
            }
            return (generation, Some(sample));
        }
        self.poll_locked()
    }

    /// The jump generation and a wall sample read consistently: the sample was taken
    /// between two reads of the generation that agree (retried otherwise), so its time
    /// belongs to that generation. One sample (three clock reads) where a generation,
    /// a time and a generation again took seven.
    pub(crate) fn observe(&self) -> (u64, WallSample) {
        loop {
            let before = self.generation.load(Ordering::Acquire);
            let (generation, sample) = self.poll_sample();
            let Some(sample) = sample else {
                // Every pair was preempted: a plain read, checked like the old way.
                let wall = wall_now();
                let mono = mono_now();
                if self.poll() == generation && generation == before {
                    let offset = wall.saturating_sub(mono);
                    return (generation, WallSample { wall, mono, offset });
                }
                continue;
            };
            if generation == before && self.generation.load(Ordering::Acquire) == before {
                return (generation, sample);
            }
        }
    }

    /// A sample saw a step: sample again under the lock (a sample taken before a step
    /// and compared after a newer one would turn a forward step into a step back and
    /// forth) and record it.
    fn poll_locked(&self) -> (u64, Option<WallSample>) {
        let mut state = self.state.lock();
        let Some(sample) = offset_sample() else {
            return (self.generation.load(Ordering::Acquire), None);
        };
        let delta = sample
            .offset
            .saturating_sub(self.baseline.swap(sample.offset, Ordering::AcqRel));
        if delta.saturating_abs() < DETECTION_THRESHOLD.as_nanos() {
            return (self.generation.load(Ordering::Acquire), Some(sample));
        }
        let generation = state.record(delta);
        self.generation.store(generation, Ordering::Release);
        drop(state);
        let after = wall_now();
        crate::trace::tp::clock_jump(
            kairos_trace::schema::ClockKind::System,
            after.saturating_sub(delta),
            after,
        );
        let jump = ClockJump {
            delta: Duration::from_nanos(delta),
            change: ClockChange::None,
        };
        self.handlers.dispatch(&jump, || self.wake_sleepers());
        // The sample was taken before the handlers ran, under the generation it records.
        (generation, Some(sample))
    }

    /// Net signed size of the jumps after generation `since`.
    pub(crate) fn net_since(&self, since: u64) -> Duration {
        self.state.lock().net_since(since)
    }

    fn wake_sleepers(&self) {
        let wakers = self.sleepers.lock().snapshot();
        wakers.into_iter().for_each(Waker::wake);
    }

    /// Wakes `waker` on every detected jump until the guard is dropped, and makes sure the
    /// monitor thread is watching.
    ///
    /// Only the first sleeper unparks the thread: with sleepers registered it polls every
    /// `POLL_INTERVAL` anyway, and it only parks for good after seeing none (under the
    /// sleepers' lock), so a registration into an empty set that follows is the one that
    /// must wake it (an unpark before the park makes that park return at once). Unparking
    /// on every registration woke the thread once per timer re-arm: a futex wake-up and a
    /// context switch per fire with 1,000 timers at 1 kHz.
    pub(crate) fn register_sleeper(&'static self, waker: &Waker) -> SleeperGuard {
        let (key, first) = {
            let mut sleepers = self.sleepers.lock();
            let first = sleepers.is_empty();
            (sleepers.add(waker), first)
        };
        if first || self.thread.get().is_none() {
            self.ensure_watching();
        }
        SleeperGuard { key }
    }

    pub(crate) fn update_sleeper(&self, guard: &SleeperGuard, waker: &Waker) {
        self.sleepers.lock().update(guard.key, waker);
    }

    pub(crate) fn ensure_watching(&'static self) {
        let thread = self.thread.get_or_init(|| {
            let spawned = std::thread::Builder::new()
                .name("kairos-jump-monitor".into())
                .spawn(move || self.run());
            match spawned {
                Ok(handle) => handle.thread().clone(),
                // Without the thread, jumps are still seen by every system-clock wait when
                // it wakes; only the wake-up on a forward step is lost.
                Err(_) => std::thread::current(),
            }
        });
        thread.unpark();
    }

    fn interested(&self) -> bool {
        !self.sleepers.lock().is_empty() || !self.handlers.is_empty()
    }

    fn run(&self) {
        loop {
            if self.interested() {
                self.poll();
                park_until_mono(Some(mono_now() + POLL_INTERVAL.as_nanos()));
            } else {
                park_until_mono(None);
            }
        }
    }
}

/// Keeps a sleeper registered with the wall monitor.
#[derive(Debug)]
pub(crate) struct SleeperGuard {
    key: u64,
}

impl Drop for SleeperGuard {
    fn drop(&mut self) {
        monitor().sleepers.lock().remove(self.key);
    }
}

/// Registers a handler on the wall clock (used by `Clock::create_jump_handler`).
pub(crate) fn add_wall_handler(
    threshold: JumpThreshold,
    before: Box<BeforeFn>,
    after: Box<AfterFn>,
) -> JumpHandler {
    let m = monitor();
    let handler = m.handlers.add(threshold, before, after);
    m.ensure_watching();
    handler
}

/// Registers the current thread as a system-clock sleeper (see [`WallMonitor::register_sleeper`]).
pub(crate) fn register_current_thread() -> SleeperGuard {
    monitor().register_sleeper(&thread_waker())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threshold_selects_direction_and_size() {
        let t = JumpThreshold {
            min_forward: Some(Duration::from_secs(1)),
            min_backward: None,
            on_clock_change: false,
        };
        let fwd = |s| ClockJump {
            delta: Duration::from_secs(s),
            change: ClockChange::None,
        };
        assert!(t.matches(&fwd(2)));
        assert!(!t.matches(&fwd(0)));
        assert!(!t.matches(&fwd(-5)));
        let change = ClockJump {
            delta: Duration::ZERO,
            change: ClockChange::SimActivated,
        };
        assert!(!t.matches(&change));
        assert!(JumpThreshold::ALL.matches(&change));
    }

    #[test]
    fn handlers_run_before_apply_after_in_order() {
        let set = Arc::new(HandlerSet::default());
        let log = Arc::new(Mutex::new(Vec::new()));
        let (l1, l2) = (Arc::clone(&log), Arc::clone(&log));
        let handler = set.add(
            JumpThreshold::ALL,
            Box::new(move || l1.lock().push("before".to_string())),
            Box::new(move |j| l2.lock().push(format!("after {}", j.delta.as_nanos()))),
        );
        let jump = ClockJump {
            delta: Duration::from_nanos(-7),
            change: ClockChange::None,
        };
        set.dispatch(&jump, || log.lock().push("apply".into()));
        assert_eq!(*log.lock(), ["before", "apply", "after -7"]);
        drop(handler);
        assert!(set.is_empty());
    }
}
