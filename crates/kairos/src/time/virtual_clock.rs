//! [`VirtualClock`]: the value a simulated clock reports, as a pure function of what its
//! source published and of the steady clock.
//!
//! Kept free of locks and threads so its promises can be checked exhaustively:
//! - **Never backwards** except at a simulation reset (a source value below the previous
//!   source value), which [`VirtualClock::publish`] reports.
//! - **Stall**: the source is silent once `stall_timeout` of steady time has passed since
//!   its last sample (or since the clock was created, before the first sample).
//! - **Fallback at rate 1**: under [`StallPolicy::FallbackToSteady`], a silent clock
//!   advances exactly as fast as the steady clock, from the value it had when the stall
//!   began, so it stays continuous.
//! - **Hold on resume**: when the source resumes below the value the fallback reached, the
//!   clock holds that value until the source catches up (no backward step, no slewing:
//!   holding is exact and easy to reason about; a slewed clock would run at a rate that is
//!   neither simulated nor real).

use super::Duration;

/// What a simulated clock does when its source stops publishing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StallPolicy {
    /// Keep waiting (every wait stays cancellable); the stall is reported to jump handlers.
    #[default]
    Wait,
    /// Keep time moving at rate 1 from the last simulated value, on the steady clock.
    FallbackToSteady,
    /// Waits on the clock fail with [`WaitError::Stalled`](super::WaitError::Stalled).
    Fail,
}

impl StallPolicy {
    /// `wait`, `fallback_to_steady` or `fail`, as traces and reports name the policy.
    pub fn name(self) -> &'static str {
        match self {
            StallPolicy::Wait => "wait",
            StallPolicy::FallbackToSteady => "fallback_to_steady",
            StallPolicy::Fail => "fail",
        }
    }
}

/// What a publish did to the reported value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PublishEffect {
    /// New reported value minus the old one (negative only for a reset).
    pub delta: i64,
    /// The source went below its previous value: a simulation reset.
    pub reset: bool,
    /// The source had been detected as stalled and is now publishing again.
    pub resumed: bool,
    /// The reported value after the publish.
    pub now: i64,
    /// How long the source had been stalled (steady ns), when it resumed.
    pub stalled_ns: i64,
}

/// The value of a simulated clock as a pure function of its source's samples and the steady clock (see the module docs); not part of the API.
#[derive(Debug, Clone)]
pub struct VirtualClock {
    policy: StallPolicy,
    stall_timeout: i64,
    source: Option<i64>,
    /// Steady time of the last sample, or of creation before the first.
    last_update: i64,
    /// Value held after a resume below the fallback value, until the source catches up.
    floor: Option<i64>,
    stalled: bool,
}

impl VirtualClock {
    /// A clock with no sample yet, created at steady time `steady_now`.
    pub fn new(policy: StallPolicy, stall_timeout: Duration, steady_now: i64) -> Self {
        VirtualClock {
            policy,
            stall_timeout: stall_timeout.as_nanos().max(0),
            source: None,
            last_update: steady_now,
            floor: None,
            stalled: false,
        }
    }

    /// The stall policy.
    pub fn policy(&self) -> StallPolicy {
        self.policy
    }

    /// Steady time without a sample after which the source counts as silent.
    pub fn stall_timeout(&self) -> Duration {
        Duration::from_nanos(self.stall_timeout)
    }

    /// Whether the source has published at least once.
    pub fn has_sample(&self) -> bool {
        self.source.is_some()
    }

    /// Steady time at which the source counts as silent.
    pub fn stall_at(&self) -> i64 {
        self.last_update.saturating_add(self.stall_timeout)
    }

    /// Whether the source counts as silent at steady time `steady_now`.
    pub fn is_silent(&self, steady_now: i64) -> bool {
        steady_now >= self.stall_at()
    }

    fn held(&self) -> i64 {
        let source = self.source.unwrap_or(0);
        self.floor.map_or(source, |f| f.max(source))
    }

    /// The value the clock reports at `steady_now`.
    pub fn read(&self, steady_now: i64) -> i64 {
        let held = self.held();
        if self.policy == StallPolicy::FallbackToSteady && self.is_silent(steady_now) {
            held.saturating_add(steady_now.saturating_sub(self.stall_at()))
        } else {
            held
        }
    }

    /// The source published `value` at `steady_now`.
    pub(crate) fn publish(&mut self, value: i64, steady_now: i64) -> PublishEffect {
        let before = self.read(steady_now);
        let stalled_ns = steady_now.saturating_sub(self.stall_at()).max(0);
        // Before the first sample the clock reads a placeholder zero (unless a fallback
        // has moved it): the first sample is taken as published, and one below zero is
        // reported as a reset so that nothing scheduled on the placeholder fires early.
        let placeholder = self.source.is_none() && before == 0;
        let reset = self.source.is_some_and(|s| value < s) || (placeholder && value < 0);
        // After that the clock holds rather than step back, except at a reset.
        self.floor = if placeholder || reset || value >= before {
            None
        } else {
            Some(before)
        };
        self.source = Some(value);
        self.last_update = steady_now;
        let resumed = std::mem::take(&mut self.stalled);
        let now = self.read(steady_now);
        PublishEffect {
            delta: now.saturating_sub(before),
            reset,
            resumed,
            now,
            stalled_ns,
        }
    }

    /// Marks the stall as seen; true the first time a silent clock is observed.
    pub(crate) fn observe_stall(&mut self, steady_now: i64) -> bool {
        if self.is_silent(steady_now) && !self.stalled {
            self.stalled = true;
            return true;
        }
        false
    }

    /// Whether a stall was detected and the source has not resumed since.
    pub fn is_stalled(&self) -> bool {
        self.stalled
    }

    /// When (steady time) a waiter for `deadline` should look again if nothing is
    /// published: at the stall, or, while falling back, when the fallback reaches the
    /// deadline. `None`: only a publish (or cancellation) can help.
    pub(crate) fn recheck_at(&self, deadline: i64, steady_now: i64) -> Option<i64> {
        if !self.is_silent(steady_now) {
            return Some(self.stall_at());
        }
        match self.policy {
            StallPolicy::FallbackToSteady => Some(
                steady_now.saturating_add(deadline.saturating_sub(self.read(steady_now)).max(0)),
            ),
            StallPolicy::Wait | StallPolicy::Fail => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const TIMEOUT: i64 = 100;

    #[derive(Debug, Clone)]
    enum Step {
        /// Let steady time pass.
        Wait(i64),
        /// The source publishes its previous value plus this (negative: a reset).
        Publish(i64),
    }

    fn steps() -> impl Strategy<Value = Vec<Step>> {
        prop::collection::vec(
            prop_oneof![
                4 => (0i64..300).prop_map(Step::Wait),
                4 => (0i64..200).prop_map(Step::Publish),
                1 => (-500i64..0).prop_map(Step::Publish),
            ],
            1..60,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4_000, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn never_decreases_except_at_a_reported_reset(policy in prop_oneof![Just(StallPolicy::Wait), Just(StallPolicy::FallbackToSteady), Just(StallPolicy::Fail)], steps in steps()) {
            let mut steady = 1_000;
            let mut clock = VirtualClock::new(policy, Duration::from_nanos(TIMEOUT), steady);
            let mut source = 0i64;
            let mut last = clock.read(steady);
            for step in steps {
                match step {
                    Step::Wait(dt) => {
                        let before = clock.read(steady);
                        let silent_before = clock.is_silent(steady);
                        steady += dt;
                        let after = clock.read(steady);
                        prop_assert!(after >= before, "went back while only steady time passed");
                        if policy == StallPolicy::FallbackToSteady && silent_before {
                            prop_assert_eq!(after - before, dt, "fallback must advance at rate 1");
                        } else if policy != StallPolicy::FallbackToSteady {
                            prop_assert_eq!(after, before, "without fallback a silent clock holds");
                        }
                    }
                    Step::Publish(d) => {
                        source += d;
                        let effect = clock.publish(source, steady);
                        let now = clock.read(steady);
                        if now < last {
                            prop_assert!(effect.reset, "went back by {} without a reported reset", last - now);
                        }
                        prop_assert_eq!(effect.delta, now - last);
                        prop_assert!(now >= source, "below the source");
                        prop_assert!(!clock.is_stalled());
                    }
                }
                last = clock.read(steady);
            }
        }
    }

    #[test]
    fn fallback_holds_on_resume_until_the_source_catches_up() {
        let mut c = VirtualClock::new(
            StallPolicy::FallbackToSteady,
            Duration::from_nanos(TIMEOUT),
            0,
        );
        c.publish(1_000, 0);
        assert_eq!(c.read(TIMEOUT), 1_000, "continuous at the stall");
        assert_eq!(c.read(TIMEOUT + 50), 1_050, "rate 1 while silent");
        let e = c.publish(1_010, TIMEOUT + 50);
        assert_eq!((e.delta, e.reset), (0, false));
        assert_eq!(c.read(TIMEOUT + 60), 1_050, "held");
        c.publish(1_070, TIMEOUT + 70);
        assert_eq!(c.read(TIMEOUT + 70), 1_070, "follows the source again");
    }

    #[test]
    fn recheck_times_per_policy() {
        let mut wait = VirtualClock::new(StallPolicy::Wait, Duration::from_nanos(TIMEOUT), 0);
        wait.publish(0, 0);
        assert_eq!(
            wait.recheck_at(500, 10),
            Some(TIMEOUT),
            "look again when the stall begins"
        );
        assert_eq!(wait.recheck_at(500, TIMEOUT), None);
        let mut fb = VirtualClock::new(
            StallPolicy::FallbackToSteady,
            Duration::from_nanos(TIMEOUT),
            0,
        );
        fb.publish(0, 0);
        assert_eq!(fb.recheck_at(500, TIMEOUT + 100), Some(TIMEOUT + 500));
    }
}
