//! `queues`: per publisher and subscription queue, its depth over time, the largest
//! depth, and every drop with its time.

use std::fmt;

use serde::Serialize;

use crate::model::{Model, QueueKind};

/// At most this many depth points per queue in a report; the maximum is kept exact.
const MAX_POINTS: usize = 500;

#[derive(Debug, Clone, Serialize)]
pub struct DropReport {
    pub at_ns: i64,
    /// Index of the dropped message in the model, when known.
    pub message: Option<usize>,
}

#[derive(Debug, Clone, Serialize)]
pub struct QueueReport {
    pub kind: QueueKind,
    pub node: String,
    pub topic: String,
    pub capacity: Option<u64>,
    pub enqueued: u64,
    pub dequeued: u64,
    pub max_depth: u64,
    pub inferred: bool,
    pub drops: Vec<DropReport>,
    /// (time, depth), thinned to at most 500 points.
    pub depth: Vec<(i64, u64)>,
}

impl QueueReport {
    pub fn name(&self) -> String {
        let kind = match self.kind {
            QueueKind::Publisher => "publisher",
            QueueKind::Subscription => "subscription",
        };
        format!("{} {kind} {}", self.node, self.topic)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Queues(pub Vec<QueueReport>);

pub fn queues(m: &Model) -> Queues {
    let out = m
        .queues
        .iter()
        .map(|q| {
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
                max_depth: q.max_depth(),
                inferred: q.inferred,
                drops: q
                    .drops
                    .iter()
                    .map(|d| DropReport {
                        at_ns: d.at,
                        message: d.message,
                    })
                    .collect(),
                depth: thin(&q.depth),
            }
        })
        .collect();
    Queues(out)
}

fn thin(points: &[(i64, u64)]) -> Vec<(i64, u64)> {
    if points.len() <= MAX_POINTS {
        return points.to_vec();
    }
    let step = points.len().div_ceil(MAX_POINTS);
    // Keep each bucket's largest depth so peaks survive.
    points
        .chunks(step)
        .filter_map(|c| c.iter().max_by_key(|&&(_, d)| d).copied())
        .collect()
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
                q.drops.len()
            )?;
            for d in &q.drops {
                writeln!(
                    f,
                    "  drop at {}",
                    kairos_trace::read::text::seconds(d.at_ns)
                )?;
            }
        }
        Ok(())
    }
}
