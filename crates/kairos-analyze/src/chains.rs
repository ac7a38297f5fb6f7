//! `chains`: every path a message takes from a source (a message no callback caused,
//! such as a timer's) through topics and callbacks to a sink callback, with the latency
//! of each stage and end to end, and the stage that dominates.
//!
//! A message a bag player sent (`kairos:bag_play`) starts its chain at the bag: the
//! path begins with `PLAYER (bag)`, and when the message had a due time the first stage
//! is the player's lateness (due to published) and end to end counts from the due time.
//! A recorder's subscription (`kairos:bag_write`) is a sink, `RECORDER (bag)`, whose
//! last stage is the write into the bag.
//!
//! Infrastructure topics (`/rosout`, `/parameter_events`) are left out: a callback that
//! only logs is a sink.

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;

use crate::message_graph::{MessageGraph, ModelGraph};
use crate::model::{Delivery, DeliveryRef, Message, MessageId, Model};
use crate::stats::{Distribution, Recorder};

pub(crate) fn is_infrastructure(topic: &str) -> bool {
    matches!(topic, "/rosout" | "/rosout_agg" | "/parameter_events")
}

/// One stage's latency over every message of a chain.
#[derive(Debug, Clone, Serialize)]
pub struct StageStats {
    /// What the stage is, e.g. `/topic_a transport` or `sink dispatch`.
    pub name: String,
    /// Its latency.
    pub latency: Distribution,
}

/// One path from a source to a sink callback, over every message that took it.
#[derive(Debug, Clone, Serialize)]
pub struct Chain {
    /// Node, topic, node, topic, ..., node.
    pub path: Vec<String>,
    /// Messages that went the whole way.
    pub count: usize,
    /// The stages in order.
    pub stages: Vec<StageStats>,
    /// End to end: from the source's publication to the end of the sink's callback.
    pub total: Distribution,
    /// The stage with the largest mean latency.
    pub dominant: Option<String>,
    /// Every end-to-end latency (for plots; not serialized).
    #[serde(skip)]
    pub samples: Recorder,
    /// Why the chain ends at its sink when the sink's node publishes on: the topics it
    /// publishes and why the trace cannot say which message of this chain they carry on.
    pub breaks: Vec<String>,
}

impl Chain {
    /// The path as `node -> topic -> node`.
    pub fn name(&self) -> String {
        self.path.join(" -> ")
    }
}

/// Every chain, the most taken first.
#[derive(Debug, Clone, Serialize)]
pub struct Chains(pub Vec<Chain>);

/// A point in a message's trip to one subscription, in the order they happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Point {
    Publish,
    Sent,
    Enqueued,
    Taken,
    CallbackStart,
    Written,
}

/// One hop's stages, as (name, start, end) with the times that exist.
pub(crate) fn hop_stages(m: &Model, msg: &Message, d: &Delivery) -> Vec<(String, i64, i64)> {
    let topic = &msg.topic;
    let sub_node = d
        .subscription
        .and_then(|s| m.subscriptions[s].node)
        .map_or_else(|| "?".to_string(), |n| m.nodes[n].name.clone());
    let points: Vec<(Point, i64)> = [
        (Point::Publish, msg.published),
        (Point::Sent, msg.sent),
        (Point::Enqueued, d.enqueued),
        (Point::Taken, d.taken),
        (Point::CallbackStart, d.callback_start),
        (Point::Written, d.written),
    ]
    .into_iter()
    .filter_map(|(p, t)| Some((p, t?)))
    .collect();
    let mut out = Vec::new();
    for w in points.windows(2) {
        let ((a, ta), (b, tb)) = (w[0], w[1]);
        use Point::*;
        let name = match (a, b) {
            (Publish, Sent) => format!("{topic} publish"),
            (Sent | Publish, Enqueued) => format!("{topic} transport"),
            (Sent | Publish, Taken) => format!("{topic} transport+queue"),
            (Enqueued, Taken | CallbackStart) => format!("{topic} queue in {sub_node}"),
            (_, CallbackStart) => format!("{sub_node} dispatch"),
            (_, Written) => format!("{topic} write into the bag of {sub_node}"),
            _ => format!("{topic} {} -> {}", a.label(), b.label()),
        };
        out.push((name, ta, tb));
    }
    out
}

impl Point {
    fn label(self) -> &'static str {
        match self {
            Point::Publish => "publish",
            Point::Sent => "sent",
            Point::Enqueued => "enqueued",
            Point::Taken => "taken",
            Point::CallbackStart => "callback start",
            Point::Written => "written",
        }
    }
}

/// Every chain of a whole model.
pub fn chains(m: &Model) -> Chains {
    let g = ModelGraph::new(m);
    let mut acc = ChainAcc::default();
    for id in g.ids() {
        acc.root(m, &g, id);
    }
    acc.report(m)
}

/// Why a chain ending at `node` (a sink) goes no further although the node publishes on
/// non-infrastructure topics: for each such topic, who publishes it and which link event
/// would have continued the chain.
fn breaks(m: &Model, node: &str, from_topic: &str) -> Vec<String> {
    let mut out = Vec::new();
    for p in &m.publishers {
        if p.published == 0
            || is_infrastructure(&p.topic)
            || p.node.is_none_or(|n| m.nodes[n].name != node)
        {
            continue;
        }
        let by: Vec<String> = p
            .publishing_callbacks
            .iter()
            .map(|&cb| m.callback_label(cb))
            .collect();
        let timer = p
            .publishing_callbacks
            .iter()
            .any(|&cb| matches!(m.callbacks[cb].owner, crate::model::Owner::Timer(_)));
        let same_callback = p.publishing_callbacks.iter().any(|&cb| {
            matches!(m.callbacks[cb].owner,
                crate::model::Owner::Subscription(s) if *m.subscriptions[s].topic == *from_topic)
        });
        let why = if same_callback {
            format!(
                "its {from_topic} callback publishes {}, but published nothing while these messages were processed (or the trace ended first)",
                p.topic
            )
        } else if by.is_empty() {
            format!("{node} publishes {} outside any traced callback", p.topic)
        } else if timer {
            format!(
                "{} is published by a timer ({}): which {from_topic} message it used is not in the trace (ros2_tracing records it with message_link_periodic_async)",
                p.topic,
                by.join(", ")
            )
        } else {
            format!(
                "{} is published by {}: which {from_topic} message it used is not in the trace (ros2_tracing records it with message_link_partial_sync)",
                p.topic,
                by.join(", ")
            )
        };
        out.push(format!("ends at {node}: {why}"));
    }
    out
}

/// A chain's identity: its path and its stages' names.
type ChainKey = (Vec<String>, Vec<String>);

/// Per chain: each stage's latencies, and the end-to-end ones.
#[derive(Debug, Default, Clone)]
pub struct ChainAcc {
    acc: BTreeMap<ChainKey, (Vec<Recorder>, Recorder)>,
}

impl ChainAcc {
    /// Follows every path from message `id`, if it starts chains (a published message
    /// no callback caused, on a topic that is not infrastructure), to its sinks.
    pub fn root(&mut self, m: &Model, g: &impl MessageGraph, id: MessageId) {
        let Some(msg) = g.message(id) else { return };
        if msg.cause.is_some() || is_infrastructure(&msg.topic) {
            return;
        }
        let Some(published) = msg.published else {
            return;
        };
        // Only messages that reached a callback or a bag continue a chain; the others (a
        // log message nobody subscribes to) leave their publisher a sink.
        let continues = |k: &MessageId| {
            g.message(*k).is_some_and(|c| {
                !is_infrastructure(&c.topic)
                    && c.deliveries
                        .iter()
                        .any(|d| d.callback_start.is_some() || d.written.is_some())
            })
        };
        let root = msg
            .publisher
            .and_then(|p| m.publishers[p].node)
            .map_or_else(|| "?".to_string(), |n| m.nodes[n].name.clone());
        // A bag message's chain starts where it was due, with the player's lateness.
        let (root, first, start) = match msg.bag {
            None => (root, Vec::new(), published),
            Some(bag) => {
                let late = bag.late.unwrap_or(0);
                let stage = bag
                    .late
                    .map(|late| (format!("{root} lateness (due to published)"), late));
                (
                    format!("{root} (bag)"),
                    Vec::from_iter(stage),
                    published - late,
                )
            }
        };
        let mut stack = vec![(id, vec![root], first, start)];
        while let Some((mi, path, stages, start)) = stack.pop() {
            let Some(msg) = g.message(mi) else { continue };
            for (di, d) in msg.deliveries.iter().enumerate() {
                if d.callback_start.is_none() && d.written.is_none() {
                    continue;
                }
                let node = d
                    .subscription
                    .and_then(|s| m.subscriptions[s].node)
                    .map_or_else(|| "?".to_string(), |n| m.nodes[n].name.clone());
                let mut path = path.clone();
                path.push(msg.topic.to_string());
                let mut st = stages.clone();
                st.extend(
                    hop_stages(m, msg, d)
                        .into_iter()
                        .map(|(n, a, b)| (n, b - a)),
                );
                let Some(cb_start) = d.callback_start else {
                    // A recorder ends the chain in its bag.
                    if let Some(written) = d.written {
                        path.push(format!("{node} (bag)"));
                        self.record(path, &st, written - start);
                    }
                    continue;
                };
                path.push(node.clone());
                let all_kids: Vec<MessageId> = g
                    .children(DeliveryRef {
                        message: mi,
                        delivery: di,
                    })
                    .into_iter()
                    .filter(continues)
                    .collect();
                // A topic met again closes a cycle (a ring of nodes): the chain ends
                // where it would repeat itself.
                let (kids, repeats): (Vec<MessageId>, Vec<MessageId>) =
                    all_kids.into_iter().partition(|k| {
                        g.message(*k)
                            .is_some_and(|c| !path.iter().any(|p| **p == *c.topic))
                    });
                // Each lap of the ring is a chain of its own, starting where this one stops.
                for &k in &repeats {
                    if let Some(p) = g.message(k).and_then(|c| c.published) {
                        stack.push((k, vec![node.clone()], Vec::new(), p));
                    }
                }
                if let Some(c) = repeats.first().and_then(|k| g.message(*k)) {
                    path.push(format!("(then {} again: a cycle)", c.topic));
                }
                let lap_end = repeats
                    .first()
                    .and_then(|k| g.message(*k))
                    .and_then(|c| c.published);
                if kids.is_empty() {
                    // A lap of a ring ends where the next lap is published.
                    let (end, last) = match lap_end {
                        Some(p) => (p, format!("{node} callback to publish")),
                        None => match d.callback_end {
                            Some(end) => (end, format!("{node} callback")),
                            None => continue,
                        },
                    };
                    st.push((last, end - cb_start));
                    self.record(path, &st, end - start);
                } else {
                    for k in kids {
                        let mut st = st.clone();
                        if let Some(c) = g.message(k)
                            && let Some(p) = c.published
                        {
                            let name = match c.cause_link {
                                Some(l) => format!("{node} held until published ({})", l.event()),
                                None => format!("{node} callback to publish"),
                            };
                            st.push((name, p - cb_start));
                        }
                        stack.push((k, path.clone(), st, start));
                    }
                }
            }
        }
    }

    /// One message's way along `path`: each stage's latency and the end-to-end one.
    fn record(&mut self, path: Vec<String>, stages: &[(String, i64)], total: i64) {
        let names: Vec<String> = stages.iter().map(|(n, _)| n.clone()).collect();
        let entry = self
            .acc
            .entry((path, names))
            .or_insert_with(|| (vec![Recorder::default(); stages.len()], Recorder::default()));
        for (k, (_, v)) in stages.iter().enumerate() {
            entry.0[k].record(*v);
        }
        entry.1.record(total);
    }

    /// The chains so far, the most taken first; `m` names why chains end where they do.
    pub fn report(&self, m: &Model) -> Chains {
        let mut out: Vec<Chain> = self
            .acc
            .iter()
            .map(|((path, names), (lat, totals))| {
                let stages: Vec<StageStats> = names
                    .iter()
                    .zip(lat)
                    .map(|(name, v)| StageStats {
                        name: name.clone(),
                        latency: v.distribution(),
                    })
                    .collect();
                let dominant = stages
                    .iter()
                    .max_by(|a, b| a.latency.mean_ns.total_cmp(&b.latency.mean_ns))
                    .map(|s| s.name.clone());
                let breaks = match path.as_slice() {
                    [.., topic, node] if !node.starts_with('(') => breaks(m, node, topic),
                    _ => Vec::new(),
                };
                Chain {
                    path: path.clone(),
                    count: totals.count() as usize,
                    stages,
                    total: totals.distribution(),
                    dominant,
                    samples: totals.clone(),
                    breaks,
                }
            })
            .collect();
        out.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.path.cmp(&b.path)));
        Chains(out)
    }
}

impl fmt::Display for Chains {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return writeln!(
                f,
                "no message chain from a source to a sink callback in this trace"
            );
        }
        for c in &self.0 {
            writeln!(f, "{}  ({} messages)", c.name(), c.count)?;
            writeln!(
                f,
                "  {:<48} {:>10} {:>10} {:>10} {:>10}",
                "stage", "mean", "p50", "p99", "max"
            )?;
            for s in c.stages.iter() {
                let mark = if c.dominant.as_deref() == Some(&s.name) {
                    " <- dominant"
                } else {
                    ""
                };
                write!(f, "  {:<48} ", s.name)?;
                crate::stats::write_cells(f, &s.latency)?;
                writeln!(f, "{mark}")?;
            }
            write!(f, "  {:<48} ", "end to end")?;
            crate::stats::write_cells(f, &c.total)?;
            writeln!(f)?;
            for b in &c.breaks {
                writeln!(f, "  {b}")?;
            }
            writeln!(f)?;
        }
        if self
            .0
            .iter()
            .any(|c| c.total.approximate || c.stages.iter().any(|s| s.latency.approximate))
        {
            writeln!(f, "{}", crate::stats::approximate_note())?;
        }
        Ok(())
    }
}
