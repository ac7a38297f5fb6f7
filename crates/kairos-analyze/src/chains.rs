//! `chains`: every path a message takes from a source (a message no callback caused,
//! such as a timer's) through topics and callbacks to a sink callback, with the latency
//! of each stage and end to end, and the stage that dominates.
//!
//! Infrastructure topics (`/rosout`, `/parameter_events`) are left out: a callback that
//! only logs is a sink.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use serde::Serialize;

use crate::model::{Delivery, Message, Model};
use crate::stats::{Distribution, human_ns};

pub(crate) fn is_infrastructure(topic: &str) -> bool {
    matches!(topic, "/rosout" | "/rosout_agg" | "/parameter_events")
}

#[derive(Debug, Clone, Serialize)]
pub struct StageStats {
    pub name: String,
    pub latency: Distribution,
}

#[derive(Debug, Clone, Serialize)]
pub struct Chain {
    /// Node, topic, node, topic, ..., node.
    pub path: Vec<String>,
    pub count: usize,
    pub stages: Vec<StageStats>,
    pub total: Distribution,
    /// The stage with the largest mean latency.
    pub dominant: Option<String>,
    /// Every end-to-end latency, sorted (for plots; not serialized).
    #[serde(skip)]
    pub samples: Vec<i64>,
}

impl Chain {
    pub fn name(&self) -> String {
        self.path.join(" -> ")
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Chains(pub Vec<Chain>);

/// One hop's stages, as (name, start, end) with the times that exist.
pub(crate) fn hop_stages(m: &Model, msg: &Message, d: &Delivery) -> Vec<(String, i64, i64)> {
    let topic = &msg.topic;
    let sub_node = d
        .subscription
        .and_then(|s| m.subscriptions[s].node)
        .map_or_else(|| "?".to_string(), |n| m.nodes[n].name.clone());
    let mut points: Vec<(String, Option<i64>)> = vec![
        ("publish".into(), msg.published),
        ("sent".into(), msg.sent),
        ("enqueued".into(), d.enqueued),
        ("taken".into(), d.taken),
        ("callback start".into(), d.callback_start),
    ];
    points.retain(|(_, t)| t.is_some());
    let mut out = Vec::new();
    for w in points.windows(2) {
        let (a, ta) = (&w[0].0, w[0].1.unwrap_or(0));
        let (b, tb) = (&w[1].0, w[1].1.unwrap_or(0));
        let name = match (a.as_str(), b.as_str()) {
            ("publish", "sent") => format!("{topic} publish"),
            ("sent" | "publish", "enqueued") => format!("{topic} transport"),
            ("sent" | "publish", "taken") => format!("{topic} transport+queue"),
            ("enqueued", "taken") => format!("{topic} queue in {sub_node}"),
            ("enqueued", "callback start") => format!("{topic} queue in {sub_node}"),
            (_, "callback start") => format!("{sub_node} dispatch"),
            _ => format!("{topic} {a} -> {b}"),
        };
        out.push((name, ta, tb));
    }
    out
}

pub fn chains(m: &Model) -> Chains {
    // Children of each (message, delivery): the messages its callback published.
    let mut children: HashMap<(usize, usize), Vec<usize>> = HashMap::new();
    for (i, msg) in m.messages.iter().enumerate() {
        // Only messages that reached a callback continue a chain; the others (a log
        // message nobody subscribes to) leave their publisher a sink.
        let reached = msg.deliveries.iter().any(|d| d.callback_start.is_some());
        if let Some(c) = msg.cause
            && reached
            && !is_infrastructure(&msg.topic)
        {
            children.entry(c).or_default().push(i);
        }
    }
    // (path, stage names) -> (per-stage latencies, totals)
    type Acc = (Vec<Vec<i64>>, Vec<i64>);
    let mut acc: BTreeMap<(Vec<String>, Vec<String>), Acc> = BTreeMap::new();
    for (i, msg) in m.messages.iter().enumerate() {
        if msg.cause.is_some() || is_infrastructure(&msg.topic) || msg.published.is_none() {
            continue;
        }
        let Some(start) = msg.published else { continue };
        let root = msg
            .publisher
            .and_then(|p| m.publishers[p].node)
            .map_or_else(|| "?".to_string(), |n| m.nodes[n].name.clone());
        let mut stack = vec![(i, vec![root], Vec::<(String, i64)>::new())];
        while let Some((mi, path, stages)) = stack.pop() {
            let msg = &m.messages[mi];
            for (di, d) in msg.deliveries.iter().enumerate() {
                let Some(cb_start) = d.callback_start else {
                    continue;
                };
                let node = d
                    .subscription
                    .and_then(|s| m.subscriptions[s].node)
                    .map_or_else(|| "?".to_string(), |n| m.nodes[n].name.clone());
                let mut path = path.clone();
                path.push(msg.topic.to_string());
                path.push(node.clone());
                let mut st = stages.clone();
                st.extend(
                    hop_stages(m, msg, d)
                        .into_iter()
                        .map(|(n, a, b)| (n, b - a)),
                );
                match children.get(&(mi, di)) {
                    Some(kids) => {
                        for &k in kids {
                            let mut st = st.clone();
                            if let Some(p) = m.messages[k].published {
                                st.push((format!("{node} callback to publish"), p - cb_start));
                            }
                            stack.push((k, path.clone(), st));
                        }
                    }
                    None => {
                        let Some(end) = d.callback_end else { continue };
                        st.push((format!("{node} callback"), end - cb_start));
                        let names: Vec<String> = st.iter().map(|(n, _)| n.clone()).collect();
                        let entry = acc
                            .entry((path, names))
                            .or_insert_with(|| (vec![Vec::new(); st.len()], Vec::new()));
                        for (k, (_, v)) in st.iter().enumerate() {
                            entry.0[k].push(*v);
                        }
                        entry.1.push(end - start);
                    }
                }
            }
        }
    }
    let mut out: Vec<Chain> = acc
        .into_iter()
        .map(|((path, names), (mut lat, mut totals))| {
            let stages: Vec<StageStats> = names
                .into_iter()
                .zip(lat.iter_mut())
                .map(|(name, v)| StageStats {
                    name,
                    latency: Distribution::of(v),
                })
                .collect();
            let dominant = stages
                .iter()
                .max_by(|a, b| a.latency.mean_ns.total_cmp(&b.latency.mean_ns))
                .map(|s| s.name.clone());
            let total = Distribution::of(&mut totals);
            Chain {
                path,
                count: totals.len(),
                stages,
                total,
                dominant,
                samples: totals,
            }
        })
        .collect();
    out.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.path.cmp(&b.path)));
    Chains(out)
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
                let d = &s.latency;
                let mark = if c.dominant.as_deref() == Some(&s.name) {
                    " <- dominant"
                } else {
                    ""
                };
                writeln!(
                    f,
                    "  {:<48} {:>10} {:>10} {:>10} {:>10}{mark}",
                    s.name,
                    human_ns(d.mean_ns),
                    human_ns(d.p50_ns as f64),
                    human_ns(d.p99_ns as f64),
                    human_ns(d.max_ns as f64)
                )?;
            }
            let t = &c.total;
            writeln!(
                f,
                "  {:<48} {:>10} {:>10} {:>10} {:>10}\n",
                "end to end",
                human_ns(t.mean_ns),
                human_ns(t.p50_ns as f64),
                human_ns(t.p99_ns as f64),
                human_ns(t.max_ns as f64)
            )?;
        }
        Ok(())
    }
}
