//! `flow`: one message followed through publisher, transport, subscriber queue and
//! callback, then on to the messages that callback published, to the end of the graph.
//! A message with several subscribers, or a callback that publishes several messages,
//! makes the flow a tree.

use std::collections::{BTreeSet, HashMap};
use std::fmt;

use serde::Serialize;

use crate::chains::hop_stages;
use crate::message_graph::{MessageGraph, ModelGraph};
use crate::model::{DeliveryRef, Message, MessageId, Model};
use crate::stats::human_ns;

/// Which message of a topic to follow.
#[derive(Debug, Clone, Copy)]
pub enum Pick {
    /// The n-th message published on the topic (0-based, in publication order).
    Index(usize),
    /// The first message published at or after this time (ns since the epoch).
    At(i64),
}

/// Why `flow` found no message to follow.
#[derive(Debug, thiserror::Error)]
pub enum FlowError {
    /// No message on the topic.
    #[error("no message on topic `{topic}` in this trace (topics with messages: {known})")]
    NoTopic {
        /// The topic asked for.
        topic: String,
        /// The topics that have messages.
        known: String,
    },
    /// The topic has messages, but none the pick names.
    #[error("topic `{topic}` has {count} messages; {pick} does not name one")]
    NoMessage {
        /// The topic asked for.
        topic: String,
        /// Its messages.
        count: usize,
        /// What was asked for.
        pick: String,
    },
}

/// One stage of a message's trip to a subscriber.
#[derive(Debug, Clone, Serialize)]
pub struct Stage {
    /// What the stage is.
    pub name: String,
    /// When it began.
    pub start_ns: i64,
    /// How long it took.
    pub duration_ns: i64,
}

/// A message's trip to one subscriber, and what its callback published.
#[derive(Debug, Clone, Serialize)]
pub struct FlowDelivery {
    /// The subscribing node.
    pub subscriber: String,
    /// The callback that processed it, when one did.
    pub callback: Option<String>,
    /// How the delivery was linked to the publication (None: it was not).
    pub link: Option<crate::model::Link>,
    /// When the subscriber's queue dropped it.
    pub dropped_ns: Option<i64>,
    /// The stages, in order.
    pub stages: Vec<Stage>,
    /// The messages the callback published, followed in turn.
    pub children: Vec<FlowMessage>,
}

/// One message followed through the graph.
#[derive(Debug, Clone, Serialize)]
pub struct FlowMessage {
    /// Its id.
    pub message: MessageId,
    /// For the message followed: its place among its topic's messages (what
    /// `--index` names).
    pub index: Option<usize>,
    /// Its topic.
    pub topic: String,
    /// The publishing node.
    pub publisher: String,
    /// When it was published.
    pub published_ns: Option<i64>,
    /// When the publisher's queue dropped it, before any delivery.
    pub dropped_by_publisher_ns: Option<i64>,
    /// The bag message it was played from, when a bag player sent it.
    pub bag: Option<crate::model::BagOrigin>,
    /// Its trips to each subscriber.
    pub deliveries: Vec<FlowDelivery>,
}

/// Follows one message of a whole model.
pub fn flow(m: &Model, topic: &str, pick: Pick) -> Result<FlowMessage, FlowError> {
    let mut acc = FlowAcc::new(topic, pick);
    let g = ModelGraph::new(m);
    for id in g.ids() {
        acc.published(id, &m.messages[id]);
    }
    let all: Vec<MessageId> = g.ids().collect();
    acc.tree(&g, &all);
    acc.report(m)
}

/// Picks the message `flow` follows as messages are published, and keeps its tree once
/// it is finished: nothing else.
#[derive(Debug)]
pub struct FlowAcc {
    topic: String,
    pick: Pick,
    /// Messages published on the topic so far.
    on_topic: usize,
    /// Topics with published messages (for the error that names them).
    known: BTreeSet<String>,
    target: Option<MessageId>,
    /// The followed message's place among its topic's messages.
    target_index: usize,
    kept: Option<Kept>,
}

/// The followed message and every message its deliveries caused, recursively.
#[derive(Debug, Default)]
struct Kept {
    messages: HashMap<MessageId, Message>,
    children: HashMap<DeliveryRef, Vec<MessageId>>,
}

impl MessageGraph for Kept {
    fn message(&self, id: MessageId) -> Option<&Message> {
        self.messages.get(&id)
    }

    fn children(&self, d: DeliveryRef) -> Vec<MessageId> {
        self.children.get(&d).cloned().unwrap_or_default()
    }
}

impl FlowAcc {
    /// Looks for the message `pick` names on `topic`.
    pub fn new(topic: &str, pick: Pick) -> Self {
        Self {
            topic: topic.to_string(),
            pick,
            on_topic: 0,
            known: BTreeSet::new(),
            target: None,
            target_index: 0,
            kept: None,
        }
    }

    /// A message was published (in id order).
    pub fn published(&mut self, id: MessageId, msg: &Message) {
        let Some(at) = msg.published else { return };
        if !self.known.contains(&*msg.topic) {
            self.known.insert(msg.topic.to_string());
        }
        if *msg.topic != *self.topic {
            return;
        }
        let n = self.on_topic;
        self.on_topic += 1;
        if self.target.is_none() {
            let hit = match self.pick {
                Pick::Index(i) => i == n,
                Pick::At(t) => at >= t,
            };
            if hit {
                self.target = Some(id);
                self.target_index = n;
            }
        }
    }

    /// A finished set of messages (`ids`, a tree or more): keeps the followed message's.
    pub fn tree(&mut self, g: &impl MessageGraph, ids: &[MessageId]) {
        let Some(target) = self.target else { return };
        if self.kept.is_some() || !ids.contains(&target) {
            return;
        }
        let mut kept = Kept::default();
        let mut todo = vec![target];
        while let Some(id) = todo.pop() {
            let Some(msg) = g.message(id) else { continue };
            for di in 0..msg.deliveries.len() {
                let d = DeliveryRef {
                    message: id,
                    delivery: di,
                };
                let kids = g.children(d);
                todo.extend(&kids);
                if !kids.is_empty() {
                    kept.children.insert(d, kids);
                }
            }
            kept.messages.insert(id, msg.clone());
        }
        self.kept = Some(kept);
    }

    /// The followed message, or why there is none.
    pub fn report(&self, m: &Model) -> Result<FlowMessage, FlowError> {
        if self.on_topic == 0 {
            return Err(FlowError::NoTopic {
                topic: self.topic.clone(),
                known: self.known.iter().cloned().collect::<Vec<_>>().join(", "),
            });
        }
        match (&self.kept, self.target) {
            (Some(kept), Some(root)) => {
                let mut found = follow(m, kept, root);
                found.index = Some(self.target_index);
                Ok(found)
            }
            _ => {
                let pick = match self.pick {
                    Pick::Index(n) => format!("index {n}"),
                    Pick::At(t) => format!("time {}", kairos_trace::read::text::seconds(t)),
                };
                Err(FlowError::NoMessage {
                    topic: self.topic.clone(),
                    count: self.on_topic,
                    pick,
                })
            }
        }
    }
}

fn follow(m: &Model, g: &impl MessageGraph, mi: MessageId) -> FlowMessage {
    let msg = g.message(mi).expect("a kept message");
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
            let kids = g.children(DeliveryRef {
                message: mi,
                delivery: di,
            });
            FlowDelivery {
                subscriber,
                callback: d.callback.map(|c| m.callback_label(c)),
                link: d.link,
                dropped_ns: d.dropped,
                stages,
                children: kids
                    .iter()
                    .filter(|&&k| g.message(k).is_some())
                    .map(|&k| follow(m, g, k))
                    .collect(),
            }
        })
        .collect();
    FlowMessage {
        message: mi,
        index: None,
        topic: msg.topic.to_string(),
        publisher,
        published_ns: msg.published,
        dropped_by_publisher_ns: msg.dropped_by_publisher,
        bag: msg.bag,
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
    let which = match msg.index {
        Some(i) => format!("message {i} (id {})", msg.message),
        None => format!("message id {}", msg.message),
    };
    writeln!(
        f,
        "{pad}{} {which} published by {} at {at}",
        msg.topic, msg.publisher
    )?;
    if let Some(bag) = msg.bag {
        let late = match (bag.late, msg.published_ns) {
            (Some(late), Some(published)) => format!(
                ", due at {}, published {} later",
                kairos_trace::read::text::seconds(published - late),
                human_ns(late as f64)
            ),
            _ => ", played at once (asked for, or in lock step)".to_string(),
        };
        writeln!(
            f,
            "{pad}  from a bag: recorded at bag time {}{late}",
            kairos_trace::read::text::seconds(bag.log_time)
        )?;
    }
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
        let inferred = match d.link {
            Some(l) if !l.is_exact() => format!("  [{}]", l.describe()),
            _ => String::new(),
        };
        writeln!(
            f,
            "{pad}  -> {}{inferred}",
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
