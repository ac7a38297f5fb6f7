//! The playback's timeline: which monotonic time each bag time is due at, and the bag's
//! time at each monotonic time (what `/clock` carries).
//!
//! It is one anchor, a bag time and the monotonic time it was (or is) played at, and a
//! rate. Every change (pause, resume, a new rate, a seek, a message played on request)
//! moves the anchor to "now", so the bag's time never jumps except where a seek or a
//! played-on-request message asks it to, and a message's due time is always computed from
//! the latest anchor. While paused the bag's time stands at the anchor.

use kairos::time::{CancelToken, Duration as KDuration, Time};

#[derive(Debug)]
pub(super) struct Timeline {
    /// Bag time per monotonic time (> 0).
    pub(super) rate: f64,
    /// A bag time (ns since the epoch)...
    pub(super) anchor_ns: u64,
    /// ...and the monotonic time it was played at; `None` before playing started.
    pub(super) anchor_at: Option<Time>,
    pub(super) paused: bool,
    /// Cancelled (and replaced) at every change, so that a waiting sleep looks again.
    pub(super) wake: CancelToken,
}

impl Timeline {
    pub(super) fn new(rate: f64, origin_ns: u64, paused: bool, wake: CancelToken) -> Self {
        Self {
            rate,
            anchor_ns: origin_ns,
            anchor_at: None,
            paused,
            wake,
        }
    }

    /// The monotonic time the message of bag time `log_ns` is due at (at once if the
    /// bag's time has passed it); `None` before playing started.
    pub(super) fn due(&self, log_ns: u64) -> Option<Time> {
        let at = self.anchor_at?;
        let ahead = log_ns.saturating_sub(self.anchor_ns);
        // Rounded up: the bag's time at the due time has reached the message's.
        Some(at + KDuration::from_nanos((ahead as f64 / self.rate).ceil() as i64))
    }

    /// The bag's time at monotonic time `now`.
    pub(super) fn bag_time_ns(&self, now: Time) -> u64 {
        match self.anchor_at {
            Some(at) if !self.paused => {
                let played = now.since(at).unwrap_or(KDuration::ZERO).as_nanos().max(0);
                self.anchor_ns
                    .saturating_add((played as f64 * self.rate) as u64)
            }
            _ => self.anchor_ns,
        }
    }

    /// Plays bag time `ns` at `now` (the start of playing, a seek, a message played on
    /// request).
    pub(super) fn jump(&mut self, ns: u64, now: Time) {
        self.anchor_ns = ns;
        self.anchor_at = Some(now);
    }

    /// Pauses or resumes at `now`; the bag's time goes on from where it stood.
    pub(super) fn set_paused(&mut self, paused: bool, now: Time) {
        if self.paused != paused {
            self.jump(self.bag_time_ns(now), now);
            self.paused = paused;
        }
    }

    /// Plays at `rate` from `now` on.
    pub(super) fn set_rate(&mut self, rate: f64, now: Time) {
        self.jump(self.bag_time_ns(now), now);
        self.rate = rate;
    }

    /// Wakes whoever sleeps on the old token, and hands out a new one (a child of `stop`).
    pub(super) fn changed(&mut self, stop: &CancelToken) {
        let old = std::mem::replace(&mut self.wake, stop.child());
        old.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ns: i64) -> Time {
        Time::new(kairos::time::ClockKind::Steady, ns)
    }

    #[test]
    fn the_bag_time_stands_still_while_paused() {
        let mut t = Timeline::new(2.0, 1_000, false, CancelToken::new());
        assert_eq!(t.due(1_400), None, "not started");
        t.jump(1_000, at(0));
        assert_eq!(t.due(1_400), Some(at(200)));
        assert_eq!(t.bag_time_ns(at(100)), 1_200);
        t.set_paused(true, at(100));
        assert_eq!(t.bag_time_ns(at(500)), 1_200);
        t.set_paused(false, at(500));
        assert_eq!(t.bag_time_ns(at(600)), 1_400);
        assert_eq!(t.due(1_400), Some(at(600)));
        assert_eq!(t.due(900), Some(at(500)), "a past message is due at once");
    }

    #[test]
    fn a_new_rate_applies_from_now_on() {
        let mut t = Timeline::new(1.0, 0, false, CancelToken::new());
        t.jump(0, at(0));
        t.set_rate(4.0, at(100));
        assert_eq!(t.bag_time_ns(at(100)), 100, "no jump at the change");
        assert_eq!(t.bag_time_ns(at(200)), 500);
        assert_eq!(t.due(900), Some(at(300)));
    }

    proptest::proptest! {
        /// Whatever the pauses, rates and jumps: the bag's time never moves at a change
        /// other than a jump, never goes back while playing, stands still while paused,
        /// and a message is never due before the bag's time reaches its own.
        #[test]
        fn the_bag_time_is_continuous_and_never_early(
            ops in proptest::collection::vec((0u8..4, 1i64..5_000_000, 1u32..400), 1..60),
        ) {
            let mut t = Timeline::new(1.0, 1_000_000_000, false, CancelToken::new());
            let mut now = 0i64;
            t.jump(1_000_000_000, at(now));
            for (op, step, value) in ops {
                let before = t.bag_time_ns(at(now));
                now += step;
                let later = t.bag_time_ns(at(now));
                if t.paused {
                    proptest::prop_assert_eq!(later, before);
                } else {
                    proptest::prop_assert!(later >= before);
                    let log = later + u64::from(value) * 1_000;
                    let due = t.due(log).unwrap();
                    proptest::prop_assert!(t.bag_time_ns(due) + 1 >= log);
                }
                match op {
                    0 => t.set_paused(!t.paused, at(now)),
                    1 => t.set_rate(f64::from(value) / 100.0, at(now)),
                    2 => {
                        t.jump(later + u64::from(value), at(now));
                        continue;
                    }
                    _ => {}
                }
                proptest::prop_assert_eq!(t.bag_time_ns(at(now)), later, "no jump at a change");
            }
        }
    }

    #[test]
    fn a_jump_moves_the_bag_time_but_not_the_pause() {
        let mut t = Timeline::new(1.0, 0, true, CancelToken::new());
        t.jump(0, at(0));
        t.jump(5_000, at(10));
        assert!(t.paused);
        assert_eq!(t.bag_time_ns(at(1_000)), 5_000);
        t.set_paused(false, at(1_000));
        assert_eq!(t.due(5_100), Some(at(1_100)));
    }
}
