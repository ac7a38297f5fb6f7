//! What a subscription remembers about the publishers it hears: each one's last sequence
//! number (to count what was lost), and how often samples failed to decode (to report it).
//!
//! What this module promises:
//! - Sequence accounting cannot lie: a gap counts only a forward jump a real publisher
//!   can make (at most [`MAX_GAP`]); a negative number or a jump past the bound is a
//!   malformed sample, not a loss; a publisher that starts again from 1 (rmw_zenoh_cpp's
//!   first number) or 0 (other implementations' first) starts a new run;
//!   a number at or below the last one (a replayed history) is no gap. Totals only grow,
//!   by real gaps.
//! - Memory is bounded whatever the network sends: at most [`MAX_SENDERS`] publishers are
//!   remembered (the least recently heard are forgotten first; one forgotten and heard
//!   again starts a new run), and malformed samples are reported once per topic and then
//!   as one summary line per [`REPORT_INTERVAL`], never one line per sender.

use crate::attachment::Gid;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// The largest forward jump counted as lost messages (a publisher at 1 kHz cut off for
/// 12 days); a larger one is no real publisher's.
pub const MAX_GAP: i64 = 1 << 30;
/// Publishers remembered per subscription.
pub const MAX_SENDERS: usize = 4096;
/// How often malformed samples on one topic are summarised after the first report.
pub const REPORT_INTERVAL: Duration = Duration::from_secs(10);

/// What one sample's sequence number says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// The first from its publisher, the next one, a new run from 1, or a replay.
    Fine,
    /// `count` messages from `first` on never arrived.
    Gap {
        /// The first missing sequence number.
        first: u64,
        /// How many are missing.
        count: u64,
    },
    /// No real publisher sends this number after the last one; the sample is malformed.
    Malformed(&'static str),
}

/// The senders by gid. The gids come from the network: the hash is seeded per process.
type SenderMap = HashMap<Gid, Sender, foldhash::fast::RandomState>;

#[derive(Debug, Clone, Copy)]
struct Sender {
    last: i64,
    heard: u64,
}

/// The last sequence number of each publisher a subscription hears.
#[derive(Debug, Default)]
pub struct SequenceTracker {
    senders: SenderMap,
    /// Counts arrivals; each sender keeps the count of its last one, for forgetting.
    arrivals: u64,
}

impl SequenceTracker {
    /// Records that `publisher` sent `seq`.
    pub fn record(&mut self, publisher: Gid, seq: i64) -> Arrival {
        if seq < 0 {
            return Arrival::Malformed("a negative sequence number");
        }
        self.arrivals += 1;
        let heard = self.arrivals;
        let Some(sender) = self.senders.get_mut(&publisher) else {
            self.remember(publisher, Sender { last: seq, heard });
            return Arrival::Fine;
        };
        let jump = seq - sender.last;
        if jump > MAX_GAP {
            return Arrival::Malformed("a sequence number too far past the publisher's last");
        }
        sender.heard = heard;
        if jump > 1 {
            let first = sender.last + 1;
            sender.last = seq;
            return Arrival::Gap {
                first: first as u64,
                count: (jump - 1) as u64,
            };
        }
        if jump == 1 || seq <= 1 {
            sender.last = seq;
        }
        Arrival::Fine
    }

    /// The last sequence number of each publisher remembered now.
    pub fn heard(&self) -> impl Iterator<Item = (Gid, i64)> + '_ {
        self.senders.iter().map(|(gid, sender)| (*gid, sender.last))
    }

    /// Publishers remembered now.
    pub fn senders(&self) -> usize {
        self.senders.len()
    }

    fn remember(&mut self, publisher: Gid, sender: Sender) {
        if self.senders.len() >= MAX_SENDERS {
            // Forget the half heard least recently: O(n log n) once per n/2 new senders.
            let mut heard: Vec<u64> = self.senders.values().map(|s| s.heard).collect();
            let (_, median, _) = heard.select_nth_unstable(MAX_SENDERS / 2);
            let median = *median;
            self.senders.retain(|_, s| s.heard > median);
        }
        self.senders.insert(publisher, sender);
    }
}

/// Malformed samples on one topic: reported once, then summarised at most once per
/// [`REPORT_INTERVAL`].
#[derive(Debug)]
pub struct MalformedReport {
    topic: String,
    last_report: Option<Instant>,
    unreported: u64,
}

impl MalformedReport {
    /// Reports for `topic`.
    pub fn new(topic: &str) -> Self {
        MalformedReport {
            topic: topic.to_owned(),
            last_report: None,
            unreported: 0,
        }
    }

    /// Records one malformed sample from `who` at `now`; returns the line to report, if it
    /// is time for one.
    pub fn record(&mut self, who: &str, why: &str, now: Instant) -> Option<String> {
        let topic = &self.topic;
        let Some(last) = self.last_report else {
            self.last_report = Some(now);
            return Some(format!(
                "dropping samples on {topic} that do not decode (first from {who}: {why}); counted in malformed_samples, summarised every {}s",
                REPORT_INTERVAL.as_secs()
            ));
        };
        self.unreported += 1;
        if now.duration_since(last) < REPORT_INTERVAL {
            return None;
        }
        let line = format!(
            "{} more samples on {topic} did not decode in the last {:.0}s (latest from {who}: {why})",
            self.unreported,
            now.duration_since(last).as_secs_f64()
        );
        self.last_report = Some(now);
        self.unreported = 0;
        Some(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gid(n: u64) -> Gid {
        let mut gid = [0; 16];
        gid[..8].copy_from_slice(&n.to_le_bytes());
        gid
    }

    #[test]
    fn gaps_count_only_real_forward_jumps() {
        let mut t = SequenceTracker::default();
        let p = gid(1);
        assert_eq!(t.record(p, 1), Arrival::Fine);
        assert_eq!(t.record(p, 2), Arrival::Fine);
        assert!(matches!(t.record(p, i64::MAX), Arrival::Malformed(_)));
        assert_eq!(
            t.record(p, 3),
            Arrival::Fine,
            "the bogus jump moved nothing"
        );
        assert!(matches!(t.record(p, -5), Arrival::Malformed(_)));
        assert_eq!(t.record(p, 6), Arrival::Gap { first: 4, count: 2 });
        assert_eq!(t.record(p, 5), Arrival::Fine, "a replay is no gap");
        assert_eq!(t.record(p, 7), Arrival::Fine);
        assert_eq!(t.record(p, 1), Arrival::Fine, "a restart is a new run");
        assert_eq!(t.record(p, 3), Arrival::Gap { first: 2, count: 1 });
        // Implementations that count from 0 (zenoh-ros2-sdk) start their runs there.
        let q = gid(2);
        assert_eq!(t.record(q, 0), Arrival::Fine);
        assert_eq!(t.record(q, 1), Arrival::Fine);
        assert_eq!(
            t.record(q, 0),
            Arrival::Fine,
            "a restart from 0 is a new run"
        );
        assert_eq!(t.record(q, 2), Arrival::Gap { first: 1, count: 1 });
    }

    #[test]
    fn a_million_senders_are_bounded() {
        let mut t = SequenceTracker::default();
        for n in 0..1_000_000 {
            t.record(gid(n), 1);
            assert!(t.senders() <= MAX_SENDERS);
        }
        // One heard all along stays remembered.
        let mut t = SequenceTracker::default();
        let steady = gid(u64::MAX);
        for n in 0..(4 * MAX_SENDERS as u64) {
            assert_eq!(t.record(steady, n as i64 + 1), Arrival::Fine);
            t.record(gid(n), 1);
        }
        assert_eq!(
            t.record(steady, 4 * MAX_SENDERS as i64 + 2),
            Arrival::Gap {
                first: 4 * MAX_SENDERS as u64 + 1,
                count: 1
            }
        );
    }

    #[test]
    fn malformed_samples_are_summarised_not_listed() {
        let mut report = MalformedReport::new("/chatter");
        let start = Instant::now();
        assert!(report.record("a", "bad", start).is_some());
        let lines = (1..=100_000u64)
            .filter_map(|n| report.record("b", "bad", start + Duration::from_micros(n)))
            .count();
        assert_eq!(lines, 0, "within one interval nothing more is printed");
        let summary = report
            .record("c", "bad", start + REPORT_INTERVAL + Duration::from_secs(1))
            .expect("a summary once the interval passed");
        assert!(summary.contains("100001 more samples"), "{summary}");
    }
}
