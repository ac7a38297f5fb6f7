//! `flow`: one message followed through publisher, transport, subscriber queue and
//! callback, then on to the messages that callback published, to the end of the graph.
//! A message with several subscribers, or a callback that publishes several messages,
//! makes the flow a tree.

use std::collections::HashMap;
use std::fmt;

use serde::Serialize;

use crate::chains::hop_stages;
use crate::model::Model;
use crate::stats::human_ns;

/// Which message of a topic to follow.
#[derive(Debug, Clone, Copy)]
pub enum Pick {
    /// The n-th message published on the topic (0-based, in publication order).
    Index(usize),
    /// The first message published at or after this time (ns since the epoch).
    At(i64),
}

#[derive(Debug, thiserror::Error)]
pub enum FlowError {
    #[error("no message on topic `{topic}` in this trace (topics with messages: {known})")]
    NoTopic { topic: String, known: String },
    #[error("topic `{topic}` has {count} messages; {pick} does not name one")]
    NoMessage {
        topic: String,
        count: usize,
        pick: String,
    },
}

#[derive(Debug, Clone, Serialize)]
pub struct Stage {
    pub name: String,
    pub start_ns: i64,
    pub duration_ns: i64,
}

#[derive(Debug, Clone, Serialize)]
pub struct FlowDelivery {
    pub subscriber: String,
    pub callback: Option<String>,
    pub dropped_ns: Option<i64>,
    pub stages: Vec<Stage>,
    pub children: Vec<FlowMessage>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FlowMessage {
    pub message: usize,
    pub topic: String,
    pub publisher: String,
    pub published_ns: Option<i64>,
    /// When the publisher's queue dropped it, before any delivery.
    pub dropped_by_publisher_ns: Option<i64>,
    pub deliveries: Vec<FlowDelivery>,
}

pub fn flow(m: &Model, topic: &str, pick: Pick) -> Result<FlowMessage, FlowError> {
    let on_topic: Vec<usize> = m
        .messages
        .iter()
        .enumerate()
        .filter(|(_, msg)| &*msg.topic == topic && msg.published.is_some())
        .map(|(i, _)| i)
        .collect();
    if on_topic.is_empty() {
        let mut known: Vec<&str> = m
            .messages
            .iter()
            .filter(|x| x.published.is_some())
            .map(|x| &*x.topic)
            .collect();
        known.sort_unstable();
        known.dedup();
        return Err(FlowError::NoTopic {
            topic: topic.to_string(),
            known: known.join(", "),
        });
    }
    let chosen = match pick {
        Pick::Index(n) => on_topic.get(n).copied(),
        Pick::At(t) => on_topic
            .iter()
            .copied()
            .find(|&i| m.messages[i].published >= Some(t)),
    };
    let Some(root) = chosen else {
        let pick = match pick {
            Pick::Index(n) => format!("index {n}"),
            Pick::At(t) => format!("time {}", kairos_trace::read::text::seconds(t)),
        };
        return Err(FlowError::NoMessage {
            topic: topic.to_string(),
            count: on_topic.len(),
            pick,
        });
    };
    let mut children: HashMap<(usize, usize), Vec<usize>> = HashMap::new();
    for (i, msg) in m.messages.iter().enumerate() {
        if let Some(c) = msg.cause {
            children.entry(c).or_default().push(i);
        }
    }
    Ok(follow(m, root, &children))
}

fn follow(m: &Model, mi: usize, children: &HashMap<(usize, usize), Vec<usize>>) -> FlowMessage {
    let msg = &m.messages[mi];
    let publisher = msg
        .publisher
        .and_then(|p| m.publishers[p].node)
        .map_or_else(|| "?".to_string(), |n| m.nodes[n].name.clone());
    let deliveries = msg
        .deliveries
        .iter()
        .enumerate()
        .map(|(di, d)| {
            let subscriber = d
                .subscription
                .and_then(|s| m.subscriptions[s].node)
                .map_or_else(|| "?".to_string(), |n| m.nodes[n].name.clone());
            let mut stages: Vec<Stage> = hop_stages(m, msg, d)
                .into_iter()
                .map(|(name, a, b)| Stage {
                    name,
                    start_ns: a,
                    duration_ns: b - a,
                })
                .collect();
            if let (Some(s), Some(e)) = (d.callback_start, d.callback_end) {
                stages.push(Stage {
                    name: format!("{subscriber} callback"),
                    start_ns: s,
                    duration_ns: e - s,
                });
            }
            let kids = children
                .get(&(mi, di))
                .map(Vec::as_slice)
                .unwrap_or_default();
            FlowDelivery {
                subscriber,
                callback: d.callback.map(|c| m.callback_label(c)),
                dropped_ns: d.dropped,
                stages,
                children: kids.iter().map(|&k| follow(m, k, children)).collect(),
            }
        })
        .collect();
    FlowMessage {
        message: mi,
        topic: msg.topic.to_string(),
        publisher,
        published_ns: msg.published,
        dropped_by_publisher_ns: msg.dropped_by_publisher,
        deliveries,
    }
}

impl fmt::Display for FlowMessage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_msg(f, self, 0)
    }
}

fn write_msg(f: &mut fmt::Formatter<'_>, msg: &FlowMessage, depth: usize) -> fmt::Result {
    let pad = "  ".repeat(depth);
    let at = msg
        .published_ns
        .map_or_else(|| "?".to_string(), kairos_trace::read::text::seconds);
    writeln!(
        f,
        "{pad}{} message #{} published by {} at {at}",
        msg.topic, msg.message, msg.publisher
    )?;
    if let Some(t) = msg.dropped_by_publisher_ns {
        writeln!(
            f,
            "{pad}  DROPPED by the publisher's queue at {}",
            kairos_trace::read::text::seconds(t)
        )?;
    } else if msg.deliveries.is_empty() {
        writeln!(f, "{pad}  (no subscriber took it)")?;
    }
    for d in &msg.deliveries {
        writeln!(
            f,
            "{pad}  -> {}",
            d.callback.as_deref().unwrap_or(&d.subscriber)
        )?;
        if let Some(t) = d.dropped_ns {
            writeln!(
                f,
                "{pad}     DROPPED at {}",
                kairos_trace::read::text::seconds(t)
            )?;
        }
        for s in &d.stages {
            writeln!(
                f,
                "{pad}     {:<44} {:>10}",
                s.name,
                human_ns(s.duration_ns as f64)
            )?;
        }
        for c in &d.children {
            write_msg(f, c, depth + 3)?;
        }
    }
    Ok(())
}
