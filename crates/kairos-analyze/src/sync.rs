//! Traces from several hosts: each host's clock is brought onto one time line before
//! the analyses run, so no message seems to arrive before it was sent.
//!
//! A message published on host A at `send` (A's clock) and taken on host B at `recv`
//! (B's clock) bounds the offset between the clocks: if `o_B - o_A` is what B's clock
//! reads ahead of A's, then `recv - send >= o_B - o_A`, since the message cannot arrive
//! before it left. The smallest `recv - send` over every message from A to B is an upper
//! bound, and the smallest over every message from B to A a lower bound (Trace
//! Compass's trace synchronization works from the same send/receive pairs). The
//! estimate is the middle of the interval and its half-width the bound; with messages
//! in one direction only, a clock is moved only as far as that direction needs for no
//! transport stage to come out negative. Only exactly linked messages count.

use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;

/// One host's clock against the reference host's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HostOffset {
    /// The host (its trace's `hostname`).
    pub host: String,
    /// The host whose clock the others are brought onto (the first trace's).
    pub reference: String,
    /// How far this host's clock reads ahead of the reference's, in ns; its timestamps
    /// were moved back by this much.
    pub offset_ns: i64,
    /// The offset lies in `[low_ns, high_ns]`; a side is None when no message went in
    /// that direction.
    pub low_ns: Option<i64>,
    /// See `low_ns`.
    pub high_ns: Option<i64>,
    /// Messages between the two hosts the estimate rests on.
    pub messages: u64,
}

impl HostOffset {
    /// Half the width of the interval the offset lies in, when both sides are known.
    pub fn bound_ns(&self) -> Option<i64> {
        Some((self.high_ns? - self.low_ns?) / 2)
    }
}

/// The smallest `recv - send` per (sending host, receiving host), and the count.
#[derive(Debug, Default, Clone)]
pub struct ClockPairs {
    min: HashMap<(Arc<str>, Arc<str>), (i64, u64)>,
}

impl ClockPairs {
    /// A message sent on `from` at `send` and taken on `to` at `recv` (each host's
    /// own clock).
    pub fn sample(&mut self, from: &Arc<str>, to: &Arc<str>, send: i64, recv: i64) {
        if from == to {
            return;
        }
        let d = recv.saturating_sub(send);
        let e = self.min.entry((from.clone(), to.clone())).or_insert((d, 0));
        e.0 = e.0.min(d);
        e.1 += 1;
    }

    /// Each host's offset against `reference`, for every host of `hosts` but the
    /// reference.
    pub fn offsets(&self, reference: &str, hosts: &[String]) -> Vec<HostOffset> {
        hosts
            .iter()
            .filter(|h| h.as_str() != reference)
            .map(|host| {
                let get = |a: &str, b: &str| {
                    self.min
                        .iter()
                        .find(|((x, y), _)| &**x == a && &**y == b)
                        .map(|(_, v)| *v)
                };
                let to_host = get(reference, host);
                let from_host = get(host, reference);
                let high = to_host.map(|v| v.0);
                let low = from_host.map(|v| v.0.saturating_neg());
                let offset = match (low, high) {
                    (Some(l), Some(h)) => l + (h - l) / 2,
                    (None, Some(h)) => h.min(0),
                    (Some(l), None) => l.max(0),
                    (None, None) => 0,
                };
                HostOffset {
                    host: host.clone(),
                    reference: reference.to_string(),
                    offset_ns: offset,
                    low_ns: low,
                    high_ns: high,
                    messages: to_host.map_or(0, |v| v.1) + from_host.map_or(0, |v| v.1),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(samples: &[(&str, &str, i64, i64)]) -> ClockPairs {
        let mut p = ClockPairs::default();
        for &(from, to, send, recv) in samples {
            p.sample(&Arc::from(from), &Arc::from(to), send, recv);
        }
        p
    }

    #[test]
    fn messages_both_ways_bound_the_offset_from_both_sides() {
        // b's clock reads 1000 ahead; transport takes 10 to 40.
        let p = pairs(&[
            ("a", "b", 0, 1_010),
            ("a", "b", 100, 1_140),
            ("b", "a", 2_000, 1_020),
            ("b", "a", 3_000, 2_030),
        ]);
        let o = &p.offsets("a", &["a".into(), "b".into()])[0];
        assert_eq!((o.low_ns, o.high_ns), (Some(980), Some(1_010)));
        assert_eq!(o.offset_ns, 995);
        assert_eq!(o.bound_ns(), Some(15));
        assert_eq!(o.messages, 4);
    }

    #[test]
    fn one_way_messages_move_a_clock_only_as_far_as_they_need() {
        // Only a -> b, and b's clock behind: the take seems 50 before the send.
        let behind = pairs(&[("a", "b", 1_000, 950), ("a", "b", 2_000, 1_990)]);
        let o = &behind.offsets("a", &["a".into(), "b".into()])[0];
        assert_eq!((o.offset_ns, o.low_ns, o.high_ns), (-50, None, Some(-50)));
        // Only a -> b, nothing negative: no correction.
        let fine = pairs(&[("a", "b", 1_000, 1_300)]);
        assert_eq!(fine.offsets("a", &["a".into(), "b".into()])[0].offset_ns, 0);
        // No message between them: not estimated.
        let none = pairs(&[("a", "a", 0, 5)]);
        let o = &none.offsets("a", &["a".into(), "c".into()])[0];
        assert_eq!((o.offset_ns, o.messages), (0, 0));
    }
}
