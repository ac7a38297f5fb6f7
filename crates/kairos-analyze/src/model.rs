//! The one model every trace source maps onto: processes, nodes, publishers,
//! subscriptions, timers, callbacks, messages with their deliveries, and queues.
//! Objects refer to each other by index into the [`Model`]'s vectors.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;

/// Where the trace came from, as recognized from its event names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    Kairos,
    Ros2,
    Ros1,
}

#[derive(Debug, Clone, Serialize)]
pub struct Process {
    pub pid: i64,
    pub name: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Node {
    pub pid: i64,
    pub name: String,
}

/// A message: its place in the order messages were first seen in the trace (the index
/// into [`Model::messages`] when the model keeps them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct MessageId(pub u64);

impl std::fmt::Display for MessageId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::ops::Index<MessageId> for Vec<Message> {
    type Output = Message;

    fn index(&self, id: MessageId) -> &Message {
        &self[id.0 as usize]
    }
}

/// One delivery of a message: the message, and which of its deliveries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct DeliveryRef {
    /// The message delivered.
    pub message: MessageId,
    /// Its index in the message's [`Message::deliveries`].
    pub delivery: usize,
}

/// A topic name, shared by its endpoints and every message on it.
pub type Topic = Arc<str>;

/// A publisher or a subscription.
#[derive(Debug, Clone, Serialize)]
pub struct Endpoint {
    pub pid: i64,
    pub node: Option<usize>,
    pub topic: Topic,
    pub queue_depth: Option<u64>,
    /// For a subscription: its callback.
    pub callback: Option<usize>,
    /// For a publisher: how many messages it published.
    pub published: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Timer {
    pub pid: i64,
    pub handle: u64,
    pub node: Option<usize>,
    pub period_ns: Option<i64>,
    pub callback: Option<usize>,
    /// When the timer's callback started, in order.
    pub fired: Vec<i64>,
    /// `kairos:timer_fire`'s scheduled and actual times, when the trace has them.
    pub scheduled: Vec<(i64, i64)>,
}

/// What a callback serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "index")]
pub enum Owner {
    Subscription(usize),
    Timer(usize),
    Service,
    Unknown,
}

#[derive(Debug, Clone, Serialize)]
pub struct Callback {
    pub pid: i64,
    pub handle: u64,
    /// The symbol or function name the trace gives.
    pub symbol: Option<String>,
    pub owner: Owner,
    /// (start, duration) of every completed run, ns.
    pub runs: Vec<(i64, i64)>,
    /// The thread of the last run.
    pub tid: i64,
}

/// One message on one topic, and where it went.
#[derive(Debug, Clone, Serialize)]
pub struct Message {
    pub topic: Topic,
    pub publisher: Option<usize>,
    /// When user code published it (None when the publisher was not traced).
    pub published: Option<i64>,
    /// When it left the publisher for transport.
    pub sent: Option<i64>,
    /// The thread that published it.
    pub publish_tid: Option<i64>,
    /// When the publisher's own queue dropped it (ROS 1), before any delivery.
    pub dropped_by_publisher: Option<i64>,
    /// The message whose callback published this one, and which delivery of it.
    pub cause: Option<DeliveryRef>,
    pub deliveries: Vec<Delivery>,
}

/// A message's trip to one subscription.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Delivery {
    pub subscription: Option<usize>,
    pub enqueued: Option<i64>,
    pub dropped: Option<i64>,
    pub taken: Option<i64>,
    pub callback: Option<usize>,
    /// The thread the callback ran on.
    pub tid: Option<i64>,
    pub callback_start: Option<i64>,
    pub callback_end: Option<i64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum QueueKind {
    /// A publisher's outgoing queue (ROS 1 keeps one per publisher).
    Publisher,
    /// A subscription's incoming queue.
    Subscription,
}

#[derive(Debug, Clone, Serialize)]
pub struct QueueDrop {
    pub at: i64,
    pub message: Option<MessageId>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Queue {
    pub kind: QueueKind,
    /// Index into `publishers` or `subscriptions` by `kind`.
    pub endpoint: usize,
    /// Depth after each change: (time, depth).
    pub depth: Vec<(i64, u64)>,
    pub enqueued: u64,
    pub dequeued: u64,
    pub drops: Vec<QueueDrop>,
    /// True when the trace has no enqueue events and the depth is inferred from when
    /// messages were sent and taken (ros2_tracing traces).
    pub inferred: bool,
    /// The depth now (after the last change read).
    #[serde(skip)]
    pub current: u64,
}

impl Queue {
    pub fn max_depth(&self) -> u64 {
        self.depth.iter().map(|&(_, d)| d).max().unwrap_or(0)
    }
}

/// What happened to a clock: a jump, a stall, or the end of a stall.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockMarkKind {
    /// The clock's value stepped by `delta_ns` (signed).
    Jump { delta_ns: i64 },
    /// The clock stopped advancing (a silent simulator).
    Stall,
    /// The clock advanced again after `stalled_ns`.
    Resume { stalled_ns: i64 },
}

/// A clock event, at a trace timestamp, on the clock named by its kind label
/// (`steady`, `system`, `sim`).
#[derive(Debug, Clone, Serialize)]
pub struct ClockMark {
    pub at: i64,
    pub pid: i64,
    pub clock: &'static str,
    pub kind: ClockMarkKind,
}

/// Everything known about a trace after one pass.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Model {
    pub sources: Vec<Source>,
    pub processes: Vec<Process>,
    pub nodes: Vec<Node>,
    pub publishers: Vec<Endpoint>,
    pub subscriptions: Vec<Endpoint>,
    pub timers: Vec<Timer>,
    pub callbacks: Vec<Callback>,
    pub messages: Vec<Message>,
    pub queues: Vec<Queue>,
    /// Clock jumps, stalls and resumes (kairos traces), in trace order.
    pub clock_marks: Vec<ClockMark>,
    pub event_counts: BTreeMap<String, u64>,
    pub events: u64,
    pub first_ns: Option<i64>,
    pub last_ns: Option<i64>,
    pub discarded_events: u64,
    pub backwards_timestamps: u64,
    /// `rmw_take` calls that found the queue empty (`taken = 0`): no message.
    pub empty_takes: u64,
    /// Takes of messages whose publication is not in the trace.
    pub unmatched_takes: u64,
    /// Damaged streams and other read errors, as text.
    pub read_errors: Vec<String>,
}

impl Model {
    pub fn node_name(&self, node: Option<usize>) -> String {
        node.and_then(|n| self.nodes.get(n))
            .map_or_else(|| "?".to_string(), |n| n.name.clone())
    }

    pub fn process_name(&self, pid: i64) -> String {
        self.processes
            .iter()
            .find(|p| p.pid == pid)
            .map_or_else(|| format!("pid {pid}"), |p| p.name.clone())
    }

    /// The node a callback belongs to, through its subscription or timer.
    pub fn callback_node(&self, cb: usize) -> Option<usize> {
        match self.callbacks.get(cb)?.owner {
            Owner::Subscription(s) => self.subscriptions.get(s)?.node,
            Owner::Timer(t) => self.timers.get(t)?.node,
            _ => None,
        }
        .or_else(|| {
            let pid = self.callbacks[cb].pid;
            let mut in_process = self.nodes.iter().enumerate().filter(|(_, n)| n.pid == pid);
            match (in_process.next(), in_process.next()) {
                (Some((i, _)), None) => Some(i),
                _ => None,
            }
        })
    }

    /// A short human name for a callback: node, what it serves, and the symbol.
    pub fn callback_label(&self, cb: usize) -> String {
        let c = &self.callbacks[cb];
        let node = self
            .callback_node(cb)
            .map_or_else(|| self.process_name(c.pid), |n| self.nodes[n].name.clone());
        let what = match c.owner {
            Owner::Subscription(s) => format!("subscription {}", self.subscriptions[s].topic),
            Owner::Timer(t) => match self.timers[t].period_ns {
                Some(p) => format!("timer {}", crate::stats::human_ns(p as f64)),
                None => "timer".to_string(),
            },
            Owner::Service => "service".to_string(),
            Owner::Unknown => format!("callback 0x{:X}", c.handle),
        };
        format!("{node} {what}")
    }
}
