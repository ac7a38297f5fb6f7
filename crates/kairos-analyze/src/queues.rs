//! `queues`: per publisher and subscription queue, its depth over time, the largest
//! depth, and every drop with its time.

use std::fmt;

use serde::Serialize;

use crate::model::{MessageId, Model, QueueDrop, QueueKind};

/// At most this many depth points per queue in a report; the maximum is kept exact.
pub const MAX_POINTS: usize = 500;
/// Drops listed per queue at most; past this they are only counted.
pub const KEPT_DROPS: usize = 10_000;

/// One dropped message.
#[derive(Debug, Clone, Serialize)]
pub struct DropReport {
    /// When.
    pub at_ns: i64,
    /// The dropped message, when known.
    pub message: Option<MessageId>,
}

/// One queue over the whole trace.
#[derive(Debug, Clone, Serialize)]
pub struct QueueReport {
    /// A publisher's or a subscription's queue.
    pub kind: QueueKind,
    /// The node (or process) that owns it.
    pub node: String,
    /// Its topic.
    pub topic: String,
    /// Its declared depth.
    pub capacity: Option<u64>,
    /// Messages put in.
    pub enqueued: u64,
    /// Messages taken out.
    pub dequeued: u64,
    /// The largest depth.
    pub max_depth: u64,
    /// True when the depth is inferred from send and take times.
    pub inferred: bool,
    /// Every drop with its time (the first [`KEPT_DROPS`]).
    pub drops: Vec<DropReport>,
    /// How many messages it dropped (also those past [`KEPT_DROPS`]); left out of
    /// JSON when every drop is listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dropped: Option<u64>,
    /// (time, depth), thinned to at most 500 points (see [`DepthSeries`]).
    pub depth: Vec<(i64, u64)>,
}

impl QueueReport {
    /// `node kind topic`.
    pub fn name(&self) -> String {
        let kind = match self.kind {
            QueueKind::Publisher => "publisher",
            QueueKind::Subscription => "subscription",
        };
        format!("{} {kind} {}", self.node, self.topic)
    }

    /// How many messages it dropped.
    pub fn drop_count(&self) -> u64 {
        self.dropped.unwrap_or(self.drops.len() as u64)
    }
}

/// Every queue, in the order the trace first used them.
#[derive(Debug, Clone, Serialize)]
pub struct Queues(pub Vec<QueueReport>);

/// Every queue of a whole model.
pub fn queues(m: &Model) -> Queues {
    QueueDepths::from_model(m).report(m)
}

/// A queue's depth over time, thinned as it comes: while there are at most
/// [`MAX_POINTS`] points, every point; past that, runs of `step` consecutive points
/// (`step` a power of two, doubled each time the runs would exceed [`MAX_POINTS`]),
/// each kept as its largest depth (the latest of equal ones), so peaks survive and the
/// result does not depend on knowing the trace's length beforehand.
#[derive(Debug, Clone)]
pub struct DepthSeries {
    points: Vec<(i64, u64)>,
    /// Points per kept point.
    step: usize,
    /// Points gathered into the last kept point.
    in_last: usize,
    max: u64,
}

impl Default for DepthSeries {
    fn default() -> Self {
        Self {
            points: Vec::new(),
            step: 1,
            in_last: 0,
            max: 0,
        }
    }
}

impl DepthSeries {
    /// The depth is `depth` from `at` on.
    pub fn push(&mut self, at: i64, depth: u64) {
        self.max = self.max.max(depth);
        match self.points.last_mut() {
            Some(last) if self.in_last < self.step => {
                if depth >= last.1 {
                    *last = (at, depth);
                }
                self.in_last += 1;
            }
            _ => {
                if self.points.len() == MAX_POINTS {
                    // Every run is full (the last one too): pair them up.
                    self.points = self
                        .points
                        .chunks(2)
                        .filter_map(|c| c.iter().max_by_key(|&&(_, d)| d).copied())
                        .collect();
                    self.step *= 2;
                }
                self.points.push((at, depth));
                self.in_last = 1;
            }
        }
    }

    /// The largest depth.
    pub fn max(&self) -> u64 {
        self.max
    }

    /// At most [`MAX_POINTS`] points, each the largest of its run.
    pub fn thinned(&self) -> Vec<(i64, u64)> {
        self.points.clone()
    }
}

/// One queue's depth and drops.
#[derive(Debug, Default, Clone)]
struct QueueAcc {
    series: DepthSeries,
    drops: Vec<QueueDrop>,
    dropped: u64,
}

/// Per queue, its depth and drops.
#[derive(Debug, Default, Clone)]
pub struct QueueDepths {
    per: Vec<QueueAcc>,
}

impl QueueDepths {
    /// Every depth change and drop of a whole model.
    pub fn from_model(m: &Model) -> Self {
        let mut r = Self::default();
        for (i, q) in m.queues.iter().enumerate() {
            r.queue(i);
            for &(at, d) in &q.depth {
                r.depth(i, at, d);
            }
            for d in &q.drops {
                r.drop(i, d.clone());
            }
        }
        r
    }

    fn queue(&mut self, q: usize) -> &mut QueueAcc {
        if self.per.len() <= q {
            self.per.resize_with(q + 1, QueueAcc::default);
        }
        &mut self.per[q]
    }

    /// Queue `q` holds `depth` messages from `at` on.
    pub fn depth(&mut self, q: usize, at: i64, depth: u64) {
        self.queue(q).series.push(at, depth);
    }

    /// Queue `q` dropped a message.
    pub fn drop(&mut self, q: usize, drop: QueueDrop) {
        let acc = self.queue(q);
        acc.dropped += 1;
        if acc.drops.len() < KEPT_DROPS {
            acc.drops.push(drop);
        }
    }

    pub(crate) fn set(&mut self, q: usize, series: DepthSeries) {
        self.queue(q).series = series;
    }

    /// The report, one row per queue of the model.
    pub fn report(&self, m: &Model) -> Queues {
        let empty = QueueAcc::default();
        let out = m
            .queues
            .iter()
            .enumerate()
            .map(|(i, q)| {
                let acc = self.per.get(i).unwrap_or(&empty);
                let ep = match q.kind {
                    QueueKind::Publisher => &m.publishers[q.endpoint],
                    QueueKind::Subscription => &m.subscriptions[q.endpoint],
                };
                QueueReport {
                    kind: q.kind,
                    node: ep
                        .node
                        .map_or_else(|| m.process_name(ep.pid), |n| m.nodes[n].name.clone()),
                    topic: ep.topic.to_string(),
                    capacity: ep.queue_depth,
                    enqueued: q.enqueued,
                    dequeued: q.dequeued,
                    max_depth: acc.series.max(),
                    inferred: q.inferred,
                    drops: acc
                        .drops
                        .iter()
                        .map(|d| DropReport {
                            at_ns: d.at,
                            message: d.message,
                        })
                        .collect(),
                    dropped: (acc.dropped > acc.drops.len() as u64).then_some(acc.dropped),
                    depth: acc.series.thinned(),
                }
            })
            .collect();
        Queues(out)
    }
}

impl fmt::Display for Queues {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return writeln!(f, "no queue events in this trace");
        }
        for q in &self.0 {
            let cap = q
                .capacity
                .map_or_else(|| "?".to_string(), |c| c.to_string());
            writeln!(
                f,
                "{}: capacity {cap}, max depth {}{}, {} in, {} out, {} dropped",
                q.name(),
                q.max_depth,
                if q.inferred {
                    " (inferred from send and take times)"
                } else {
                    ""
                },
                q.enqueued,
                q.dequeued,
                q.drop_count()
            )?;
            for d in &q.drops {
                writeln!(
                    f,
                    "  drop at {}",
                    kairos_trace::read::text::seconds(d.at_ns)
                )?;
            }
            if q.drop_count() > q.drops.len() as u64 {
                writeln!(
                    f,
                    "  ... and {} more drops",
                    q.drop_count() - q.drops.len() as u64
                )?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_depth_series_stays_bounded_and_keeps_its_peak() {
        let mut s = DepthSeries::default();
        for i in 0..400 {
            s.push(i, (i % 5) as u64);
        }
        assert_eq!(s.thinned().len(), 400, "every point while there are few");
        for i in 400..1_000_000 {
            s.push(i, if i == 777_777 { 99 } else { (i % 5) as u64 });
        }
        let t = s.thinned();
        assert!(
            t.len() <= MAX_POINTS && t.len() > MAX_POINTS / 4,
            "{}",
            t.len()
        );
        assert!(t.contains(&(777_777, 99)), "the peak survives");
        assert!(t.windows(2).all(|w| w[0].0 < w[1].0), "in time order");
        assert_eq!(s.max(), 99);
    }
}
