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
    /// A kairos trace.
    Kairos,
    /// A ROS 2 trace (ros2_tracing).
    Ros2,
    /// A ROS 1 trace (tracetools).
    Ros1,
}

/// A traced process.
#[derive(Debug, Clone, Serialize)]
pub struct Process {
    /// Its process id.
    pub pid: i64,
    /// Its executable's name.
    pub name: String,
    /// The host it ran on (its trace's `hostname`), when the trace says.
    pub host: Option<String>,
}

/// A traced thread.
#[derive(Debug, Clone, Serialize)]
pub struct Thread {
    /// The process it belongs to.
    pub pid: i64,
    /// Its thread id.
    pub tid: i64,
    /// Its name when it first traced (`procname`: at most 15 bytes, as the kernel keeps it).
    pub name: String,
}

/// A node.
#[derive(Debug, Clone, Serialize)]
pub struct Node {
    /// The process it lives in.
    pub pid: i64,
    /// Its fully qualified name (`/robot/talker`; ROS 1 nodes as their master knew them).
    pub name: String,
}

/// An index into one of the [`Model`]'s vectors, typed by what it names.
macro_rules! id {
    ($(#[$doc:meta])* $name:ident => $target:ty) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
        #[serde(transparent)]
        pub struct $name(pub usize);

        impl std::ops::Index<$name> for Vec<$target> {
            type Output = $target;

            fn index(&self, id: $name) -> &$target {
                &self[id.0]
            }
        }

        impl std::ops::IndexMut<$name> for Vec<$target> {
            fn index_mut(&mut self, id: $name) -> &mut $target {
                &mut self[id.0]
            }
        }
    };
}

id!(
    /// A node: its index in [`Model::nodes`].
    NodeId => Node
);
id!(
    /// A publisher: its index in [`Model::publishers`].
    PublisherId => Endpoint
);
id!(
    /// A subscription: its index in [`Model::subscriptions`].
    SubscriptionId => Endpoint
);
id!(
    /// A timer: its index in [`Model::timers`].
    TimerId => Timer
);
id!(
    /// A callback: its index in [`Model::callbacks`].
    CallbackId => Callback
);

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
    /// The process it lives in.
    pub pid: i64,
    /// Its node, when the trace says.
    pub node: Option<NodeId>,
    /// Its topic.
    pub topic: Topic,
    /// Its queue's declared depth.
    pub queue_depth: Option<u64>,
    /// For a subscription: its callback.
    pub callback: Option<CallbackId>,
    /// For a publisher: how many messages it published.
    pub published: u64,
    /// For a subscription: what its takes found, and how each message was linked.
    pub takes: TakeCounts,
    /// For a publisher: the callbacks it published from (none: outside callbacks).
    pub publishing_callbacks: Vec<CallbackId>,
}

impl Endpoint {
    /// A publisher or subscription as first seen: nothing published, taken or linked yet.
    pub(crate) fn new(
        pid: i64,
        node: Option<NodeId>,
        topic: Topic,
        queue_depth: Option<u64>,
    ) -> Self {
        Endpoint {
            pid,
            node,
            topic,
            queue_depth,
            callback: None,
            published: 0,
            takes: TakeCounts::default(),
            publishing_callbacks: Vec::new(),
        }
    }
}

/// How a delivery was matched to the publication it carries: the evidence the trace
/// gave. Exact links rest on an identifier recorded on both sides; inferred ones on a
/// rule, named here, that can be wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Link {
    /// kairos: the publisher's handle and the message's sequence number.
    Sequence,
    /// The DDS source timestamp, recorded when published (`dds:write`, `rmw_publish`'s
    /// `timestamp`, CARET's `dds_bind_addr_to_stamp`) and when taken (`rmw_take`'s
    /// `source_timestamp`, CARET's `dispatch_subscription_callback`).
    SourceTimestamp,
    /// Intra-process: the message's address (or ring-buffer slot) from the intra-process
    /// publish to the dispatch that hands it to the callback.
    MessageAddress,
    /// Inferred (ROS 1): TCPROS delivers one connection's messages in order, so a
    /// topic's queued message is the oldest one written and not yet received.
    TransportOrder,
    /// Inferred: the publish on the topic whose time is nearest the take's source
    /// timestamp, within [`NEAREST_PUBLISH_BOUND_NS`] of it (after the running offset
    /// between the wall clock and the trace clock). Used only when the publisher side
    /// recorded no timestamp (`rmw_publish` before ros2_tracing 6, no `dds:write`).
    NearestPublish,
}

/// A causal link a node declared between what it takes and what it publishes
/// (ros2_tracing's `message_link_periodic_async` and `message_link_partial_sync`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageLink {
    /// A message published outside the subscriptions' callbacks (by a timer) carries
    /// on from the latest message those subscriptions took.
    PeriodicAsync,
    /// A message published once all subscriptions have a message carries on from the
    /// latest of them.
    PartialSync,
}

impl MessageLink {
    /// The trace event that declares it.
    pub fn event(self) -> &'static str {
        match self {
            MessageLink::PeriodicAsync => "message_link_periodic_async",
            MessageLink::PartialSync => "message_link_partial_sync",
        }
    }
}

/// How far a take's source timestamp may be from the publish time it is matched with
/// by [`Link::NearestPublish`].
pub const NEAREST_PUBLISH_BOUND_NS: i64 = 1_000_000;

impl Link {
    /// True when the link rests on an identifier recorded on both sides.
    pub fn is_exact(self) -> bool {
        matches!(
            self,
            Link::Sequence | Link::SourceTimestamp | Link::MessageAddress
        )
    }

    /// The rule, in words, for output.
    pub fn describe(self) -> &'static str {
        match self {
            Link::Sequence => "exact: publisher handle and sequence number",
            Link::SourceTimestamp => "exact: DDS source timestamp on both sides",
            Link::MessageAddress => "exact: intra-process message address",
            Link::TransportOrder => "inferred: TCPROS delivers in order",
            Link::NearestPublish => {
                "inferred: nearest publish on the topic within 1 ms of the source timestamp"
            }
        }
    }
}

/// What a subscription's takes found.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct TakeCounts {
    /// Messages taken (or dispatched to its callback).
    pub taken: u64,
    /// Takes that found the queue empty (`rmw_take` with `taken = 0`).
    pub empty: u64,
    /// Deliveries linked to their publication exactly.
    pub exact: u64,
    /// Deliveries linked by inference ([`Link::TransportOrder`], [`Link::NearestPublish`]).
    pub inferred: u64,
    /// Deliveries whose publication the trace does not show (or could not be linked).
    pub unlinked: u64,
}

/// A timer.
#[derive(Debug, Clone, Serialize)]
pub struct Timer {
    /// The process it lives in.
    pub pid: i64,
    /// Its handle in the trace.
    pub handle: u64,
    /// Its node, when the trace says.
    pub node: Option<NodeId>,
    /// Its period.
    pub period_ns: Option<i64>,
    /// Its callback, when the trace says.
    pub callback: Option<CallbackId>,
    /// When the timer's callback started, in order.
    pub fired: Vec<i64>,
    /// `kairos:timer_fire`'s scheduled and actual times, when the trace has them.
    pub scheduled: Vec<(i64, i64)>,
}

/// What a callback serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "index")]
pub enum Owner {
    /// A subscription's callback.
    Subscription(SubscriptionId),
    /// A timer's callback.
    Timer(TimerId),
    /// A service's callback.
    Service,
    /// A callback the trace does not say the owner of.
    Unknown,
}

/// A callback.
#[derive(Debug, Clone, Serialize)]
pub struct Callback {
    /// The process it lives in.
    pub pid: i64,
    /// Its handle in the trace.
    pub handle: u64,
    /// The symbol or function name the trace gives.
    pub symbol: Option<String>,
    /// What it serves.
    pub owner: Owner,
    /// (start, duration) of every completed run, ns.
    pub runs: Vec<(i64, i64)>,
    /// The thread of the last run.
    pub tid: i64,
}

/// One message on one topic, and where it went.
#[derive(Debug, Clone, Serialize)]
pub struct Message {
    /// Its topic.
    pub topic: Topic,
    /// Its publisher, when traced.
    pub publisher: Option<PublisherId>,
    /// When user code published it (None when the publisher was not traced).
    pub published: Option<i64>,
    /// When it left the publisher for transport.
    pub sent: Option<i64>,
    /// Its DDS source timestamp (wall clock), when the publisher side recorded it.
    pub source_timestamp: Option<i64>,
    /// The thread that published it.
    pub publish_tid: Option<i64>,
    /// When the publisher's own queue dropped it (ROS 1), before any delivery.
    pub dropped_by_publisher: Option<i64>,
    /// The message whose callback published this one, and which delivery of it.
    pub cause: Option<DeliveryRef>,
    /// Set when `cause` comes from a declared message link (ros2_tracing's
    /// `message_link_*` events), not from the callback the message was published in.
    pub cause_link: Option<MessageLink>,
    /// Its trips to each subscription.
    pub deliveries: Vec<Delivery>,
    /// The bag message it was played from (`kairos:bag_play`), if a player sent it.
    pub bag: Option<BagOrigin>,
}

/// The recorded message a bag player published (`kairos:bag_play`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct BagOrigin {
    /// Its log time in the bag (bag time, ns).
    pub log_time: i64,
    /// How long after its due time it was published, ns; None when it went out at once
    /// (asked for, or in lock step).
    pub late: Option<i64>,
}

/// A message's trip to one subscription.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Delivery {
    /// The subscription, when known.
    pub subscription: Option<SubscriptionId>,
    /// How it was linked to its publication (None: the publication is not in the trace).
    pub link: Option<Link>,
    /// When it entered the subscription's queue.
    pub enqueued: Option<i64>,
    /// When the subscription's queue dropped it.
    pub dropped: Option<i64>,
    /// When the subscription took it out of the queue.
    pub taken: Option<i64>,
    /// The callback that processed it.
    pub callback: Option<CallbackId>,
    /// The thread the callback ran on.
    pub tid: Option<i64>,
    /// When that callback started.
    pub callback_start: Option<i64>,
    /// When that callback ended.
    pub callback_end: Option<i64>,
    /// When a recorder wrote it into a bag (`kairos:bag_write`).
    pub written: Option<i64>,
}

/// Which side of a topic a queue is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum QueueKind {
    /// A publisher's outgoing queue (ROS 1 keeps one per publisher).
    Publisher,
    /// A subscription's incoming queue.
    Subscription,
}

/// A message dropped by a queue.
#[derive(Debug, Clone, Serialize)]
pub struct QueueDrop {
    /// When.
    pub at: i64,
    /// The message, when known.
    pub message: Option<MessageId>,
}

/// A publisher's or a subscription's queue.
#[derive(Debug, Clone, Serialize)]
pub struct Queue {
    /// Which side of the topic.
    pub kind: QueueKind,
    /// Index into `publishers` or `subscriptions` by `kind`.
    pub endpoint: usize,
    /// Depth after each change: (time, depth).
    pub depth: Vec<(i64, u64)>,
    /// Messages put in.
    pub enqueued: u64,
    /// Messages taken out.
    pub dequeued: u64,
    /// Every drop (kept when the model keeps its records).
    pub drops: Vec<QueueDrop>,
    /// True when the trace has no enqueue events and the depth is inferred from when
    /// messages were sent and taken (ros2_tracing traces).
    pub inferred: bool,
    /// The depth now (after the last change read).
    #[serde(skip)]
    pub current: u64,
}

impl Queue {
    /// The largest depth recorded.
    pub fn max_depth(&self) -> u64 {
        self.depth.iter().map(|&(_, d)| d).max().unwrap_or(0)
    }
}

/// What happened to a clock: a jump, a stall, or the end of a stall.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockMarkKind {
    /// The clock's value stepped by `delta_ns` (signed).
    /// The clock's value stepped.
    Jump {
        /// By how much (signed).
        delta_ns: i64,
    },
    /// The clock stopped advancing (a silent simulator).
    Stall,
    /// The clock advanced again after `stalled_ns`.
    /// The clock advanced again.
    Resume {
        /// How long it had stalled.
        stalled_ns: i64,
    },
}

/// A clock event, at a trace timestamp, on the clock named by its kind label
/// (`steady`, `system`, `sim`).
#[derive(Debug, Clone, Serialize)]
pub struct ClockMark {
    /// When (trace time).
    pub at: i64,
    /// The process whose clock it is.
    pub pid: i64,
    /// Which clock: `steady`, `system` or `sim`.
    pub clock: &'static str,
    /// What happened.
    pub kind: ClockMarkKind,
}

/// An entity the access rules of its process's enclave refused (`kairos:access_denied`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AccessDenial {
    /// When (trace time).
    pub at: i64,
    /// The process whose rules refused it.
    pub pid: i64,
    /// `publisher`, `subscription`, `service` or `client`.
    pub kind: String,
    /// The topic or service.
    pub name: String,
    /// The process's enclave (empty when it has none).
    pub enclave: String,
    /// The deny rule that covers it; empty when no allow rule does (default deny).
    pub rule: String,
    /// Whether the program got an error (false: one of the runtime's own entities,
    /// declared anyway, its traffic dropped by the network).
    pub refused: bool,
}

/// A line a node logged (`kairos:log`): on the timeline next to the callback that wrote it.
#[derive(Debug, Clone, Serialize)]
pub struct LogLine {
    /// When (trace time).
    pub at: i64,
    /// The process that logged it.
    pub pid: i64,
    /// The thread that logged it.
    pub tid: i64,
    /// The callback running on that thread when it was logged, if any.
    pub callback: Option<CallbackId>,
    /// The logger's name (`robot.talker`, `robot.talker.arm`).
    pub logger: String,
    /// rcutils' severity: 10 debug, 20 info, 30 warn, 40 error, 50 fatal.
    pub severity: i32,
    /// The text.
    pub message: String,
}

impl LogLine {
    /// The severity as rcutils prints it (`INFO`), or its number.
    pub fn level(&self) -> String {
        match self.severity {
            10 => "DEBUG".into(),
            20 => "INFO".into(),
            30 => "WARN".into(),
            40 => "ERROR".into(),
            50 => "FATAL".into(),
            other => other.to_string(),
        }
    }
}

/// A transform lookup that could wait (`kairos:tf_lookup`), as it ended.
#[derive(Debug, Clone, Serialize)]
pub struct TfLookup {
    /// When it ended (trace time).
    pub at: i64,
    /// The process it ran in.
    pub pid: i64,
    /// The callback it waited in, if any.
    pub callback: Option<CallbackId>,
    /// The call (`lookup_transform`, `can_transform`, ...).
    pub operation: String,
    /// The frame the transform is into.
    pub target: String,
    /// The frame the transform is from.
    pub source: String,
    /// The stamp asked for, ns (0: the latest).
    pub time: i64,
    /// How long it waited, ns of the buffer's clock.
    pub waited: i64,
    /// `found`, `timeout`, `cancelled`, `shut_down`, `would_deadlock` or `error`.
    pub outcome: String,
}

/// Which end of an action an [`ActionEndpoint`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionRole {
    /// It serves goals.
    Server,
    /// It sends goals.
    Client,
}

/// An action server or client (`kairos:action_server_init`, `kairos:action_client_init`).
#[derive(Debug, Clone, Serialize)]
pub struct ActionEndpoint {
    /// The process it lives in.
    pub pid: i64,
    /// Its node, when the trace says.
    pub node: Option<NodeId>,
    /// The action's name (`/fibonacci`), or `?` when the trace began after its creation.
    pub action: Arc<str>,
    /// Server or client.
    pub role: ActionRole,
}

/// One step of a goal's life at one of its ends (`kairos:goal`).
#[derive(Debug, Clone, Serialize)]
pub struct GoalStep {
    /// When (trace time).
    pub at: i64,
    /// The server or client it happened at: an index into [`Model::action_endpoints`].
    pub endpoint: usize,
    /// What happened (`sent`, `accepted`, `feedback`, `succeeded`, `result`, ...).
    pub event: String,
    /// The goal's status code after the step (`action_msgs/GoalStatus`).
    pub status: i32,
}

/// A goal, as its server and its client traced it, joined by its UUID.
#[derive(Debug, Clone, Serialize)]
pub struct Goal {
    /// Its UUID, as text.
    pub id: String,
    /// Its steps at every end, in trace order.
    pub steps: Vec<GoalStep>,
}

/// Everything known about a trace after one pass.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Model {
    /// The tracers the trace came from.
    pub sources: Vec<Source>,
    /// Every process.
    pub processes: Vec<Process>,
    /// Every thread that traced, with its name (when the trace records `procname`).
    pub threads: Vec<Thread>,
    /// Every node.
    pub nodes: Vec<Node>,
    /// Every publisher.
    pub publishers: Vec<Endpoint>,
    /// Every subscription.
    pub subscriptions: Vec<Endpoint>,
    /// Every timer.
    pub timers: Vec<Timer>,
    /// Every callback.
    pub callbacks: Vec<Callback>,
    /// Every message (kept when [`Options::messages`](crate::Options) asks).
    pub messages: Vec<Message>,
    /// Every queue.
    pub queues: Vec<Queue>,
    /// Clock jumps, stalls and resumes (kairos traces), in trace order.
    pub clock_marks: Vec<ClockMark>,
    /// Log lines (kairos traces), in trace order.
    pub log_lines: Vec<LogLine>,
    /// Action servers and clients (kairos traces).
    pub action_endpoints: Vec<ActionEndpoint>,
    /// Goals, in the order their first step was traced (kairos traces).
    pub goals: Vec<Goal>,
    /// Transform lookups that could wait, in the order they ended (kairos traces).
    pub tf_lookups: Vec<TfLookup>,
    /// Events per event name.
    pub event_counts: BTreeMap<String, u64>,
    /// Events read.
    pub events: u64,
    /// The first event's timestamp.
    pub first_ns: Option<i64>,
    /// The last event's timestamp.
    pub last_ns: Option<i64>,
    /// Events the tracer discarded.
    pub discarded_events: u64,
    /// Whole packets the tracer discarded (gaps in `packet_seq_num`): their events are
    /// lost and not counted in `discarded_events`.
    pub discarded_packets: u64,
    /// Events whose timestamp went backwards.
    pub backwards_timestamps: u64,
    /// `rmw_take` calls that found the queue empty (`taken = 0`): no message.
    pub empty_takes: u64,
    /// Takes of messages whose publication is not in the trace.
    pub unmatched_takes: u64,
    /// Deliveries per way they were linked to their publication.
    pub links: BTreeMap<Link, u64>,
    /// Takes by the middleware's own subscriptions (declared by `rmw_subscription_init`
    /// with no `rcl_subscription_init`: rmw's graph discovery): no ROS message.
    pub middleware_takes: u64,
    /// Events naming a publisher or subscription handle no init event declared, per
    /// event name: (events, distinct handles).
    pub undeclared: BTreeMap<String, (u64, u64)>,
    /// Messages of publishers in other processes that never reached a subscription
    /// (the gaps in their sequence numbers, `kairos:message_loss`).
    pub remote_losses: u64,
    /// Entities the access rules refused, in trace order.
    pub access_denials: Vec<AccessDenial>,
    /// Damaged streams and other read errors, as text.
    pub read_errors: Vec<String>,
    /// With traces from several hosts: each host's clock offset against the first
    /// host's, already taken out of every timestamp (see [`crate::sync`]).
    pub clock_offsets: Vec<crate::sync::HostOffset>,
}

impl Model {
    /// A node's name, or `?`.
    pub fn node_name(&self, node: Option<NodeId>) -> String {
        node.and_then(|n| self.nodes.get(n.0))
            .map_or_else(|| "?".to_string(), |n| n.name.clone())
    }

    /// A process's name, or `pid N`.
    pub fn process_name(&self, pid: i64) -> String {
        self.processes
            .iter()
            .find(|p| p.pid == pid)
            .map_or_else(|| format!("pid {pid}"), |p| p.name.clone())
    }

    /// The node a callback belongs to, through its subscription or timer.
    pub fn callback_node(&self, cb: CallbackId) -> Option<NodeId> {
        match self.callbacks.get(cb.0)?.owner {
            Owner::Subscription(s) => self.subscriptions.get(s.0)?.node,
            Owner::Timer(t) => self.timers.get(t.0)?.node,
            _ => None,
        }
        .or_else(|| self.only_node(self.callbacks[cb].pid))
    }

    /// The node of process `pid`, when it has exactly one.
    pub fn only_node(&self, pid: i64) -> Option<NodeId> {
        let mut in_process = self.nodes.iter().enumerate().filter(|(_, n)| n.pid == pid);
        match (in_process.next(), in_process.next()) {
            (Some((i, _)), None) => Some(NodeId(i)),
            _ => None,
        }
    }

    /// A short human name for a callback: node, what it serves, and the symbol.
    pub fn callback_label(&self, cb: CallbackId) -> String {
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
