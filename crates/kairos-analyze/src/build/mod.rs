//! Building the [`Model`] in one pass over a trace's events. Each source has its own
//! mapping (`ros2` also reads kairos traces, which use ros2_tracing's names plus exact
//! `publisher_handle`/`seq` message ids; `ros1` reads roscpp tracetools traces); both
//! write into the same builder state, so every analysis works on every source.
//!
//! The builder keeps per-thread state (the callback running, the message just taken)
//! and per-object maps; message records are kept for the flow and chain analyses, and
//! can be turned off ([`Options::messages`]) for a summary whose memory does not grow
//! with the trace's length.
//!
//! The [`Builder`] is this file: its state, the event loop ([`Builder::event`]) and
//! streaming retirement. Its methods by concern, each file continuing `impl Builder`
//! over the same state: `entities` (the registry of processes, threads, nodes,
//! endpoints, timers and callbacks by handle), `messages` (a message linked from its
//! publish to every delivery), `callbacks` (what runs on each thread), `queues` (depths
//! and drops); `ros2` and `ros1` map each source's events onto them, and `live` holds the
//! messages being followed.

mod callbacks;
mod entities;
pub(crate) mod live;
mod messages;
mod queues;
mod ros1;
mod ros2;

use std::collections::VecDeque;
use std::hash::{BuildHasherDefault, Hasher};

// The model's tables are keyed by handles, pids and names read from the trace: foldhash
// with a random seed per process hashes them in a few instructions (SipHash was 5 % of
// reading a ROS 2 trace) and still keeps a crafted trace from choosing collisions.
type HashMap<K, V, S = foldhash::fast::RandomState> = std::collections::HashMap<K, V, S>;
type HashSet<K> = foldhash::HashSet<K>;
use std::path::Path;

use std::sync::Arc;

use kairos_trace::read::metadata::EventClass;
use kairos_trace::read::{Event, EventRef, Selection, TraceSet};

use crate::digest::Digest;
use crate::model::{
    ActionEndpoint, ActionRole, Callback, CallbackId, Delivery, DeliveryRef, Endpoint, Goal,
    GoalStep, Link, Message, MessageId, Model, Node, NodeId, Owner, Process, PublisherId, Queue,
    QueueDrop, QueueKind, Source, SubscriptionId, Timer, TimerId, Topic,
};

use live::{Live, Tree};

/// How long (trace time) a message tree is followed after its last change before a
/// streaming builder hands it over: a message still waiting for its callback then is
/// counted as never reaching one.
pub const HORIZON_NS: i64 = 10_000_000_000;
/// At most this many messages are followed at once; past it the oldest trees are
/// handed over early (and counted).
pub const MAX_LIVE: usize = 1 << 18;
/// Events between two looks for finished trees.
const RETIRE_EVERY: u32 = 4096;

/// What the builder keeps beyond counts and objects.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Keep messages, callback runs, timer firings and queue depths (needed by every
    /// analysis but `summary`).
    pub messages: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self { messages: true }
    }
}

/// Why a trace could not be analyzed.
#[derive(Debug, thiserror::Error)]
pub enum AnalyzeError {
    /// The trace could not be opened or read.
    #[error(transparent)]
    Read(#[from] kairos_trace::read::ReadError),
}

/// Reads a whole trace (or folder of traces) into a model. Damaged streams do not stop
/// it: their errors are kept in [`Model::read_errors`].
pub fn analyze(path: impl AsRef<Path>, options: Options) -> Result<Model, AnalyzeError> {
    let mut set = TraceSet::open(path)?;
    let offsets = synchronize(&mut set)?;
    let mut events = set.events_with(Builder::selection())?;
    let mut b = Builder::new(options);
    b.clock_offsets(offsets);
    while let Some(item) = events.next_ref() {
        match item {
            Ok(ev) => b.event_ref(ev),
            Err(e) => b.read_error(e.to_string()),
        }
    }
    b.discarded_packets(events.discarded_packets());
    Ok(b.finish(events.discarded(), events.backwards()))
}

/// With traces from more than one host: reads them once to estimate each host's clock
/// offset against the first trace's host (see [`crate::sync`]), and moves every trace's
/// timestamps onto that host's clock. Returns the offsets (none with a single host).
pub fn synchronize(set: &mut TraceSet) -> Result<Vec<crate::sync::HostOffset>, AnalyzeError> {
    let mut hosts: Vec<String> = Vec::new();
    for t in &set.traces {
        if let Some(h) = &t.hostname
            && !hosts.contains(h)
        {
            hosts.push(h.clone());
        }
    }
    if hosts.len() < 2 {
        return Ok(Vec::new());
    }
    let mut b = Builder::streaming(Digest::default()).estimating_clocks();
    {
        let mut events = set.events_with(Builder::selection())?;
        while let Some(item) = events.next_ref() {
            if let Ok(ev) = item {
                b.event_ref(ev);
            }
        }
    }
    let offsets = b
        .clock_pairs()
        .map(|p| p.offsets(&hosts[0], &hosts))
        .unwrap_or_default();
    drop(b);
    set.shift_clocks(|t| {
        t.hostname
            .as_ref()
            .and_then(|h| offsets.iter().find(|o| &o.host == h))
            .map_or(0, |o| o.offset_ns.saturating_neg())
    });
    Ok(offsets)
}

/// An object of one process, as the trace names it: the process and the object's
/// handle (an address in that process).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Handle {
    pid: i64,
    handle: u64,
}

impl Handle {
    pub(crate) fn new(pid: i64, handle: u64) -> Self {
        Self { pid, handle }
    }
}

/// A lookup entry that names a live message, removed when the message retires.
#[derive(Debug, Clone)]
pub(crate) enum Key {
    Msg(MsgKey),
    /// ROS 1: a received message's address in a subscriber process.
    Ros1Received(Handle),
}

/// Takes whose publication was not read yet, by key: (process, take time).
type PendingTakes = HashMap<MsgKey, (i64, i64)>;

/// How a message is recognized again at a later stage.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum MsgKey {
    /// kairos: the publisher's handle and the message's sequence number.
    PubSeq(u64, u64),
    /// ROS 2 over DDS: the topic and the DDS source timestamp.
    SourceTs(Topic, i64),
    /// ROS 1, publisher side: the process and the serialized buffer's address.
    Ros1Buf(i64, u64),
    /// ROS 2 intra-process: the process and the message's address.
    Addr(i64, u64),
    /// ROS 2 intra-process (ros2_tracing 6+): the process, a ring buffer and a slot.
    Ring(i64, u64, u64),
}

#[derive(Debug, Clone, Copy)]
struct Frame {
    callback: CallbackId,
    start: i64,
    consumed: Option<DeliveryRef>,
}

#[derive(Debug, Default)]
struct Thread {
    /// A message published on this thread and not yet handed to transport.
    publishing: Option<MessageId>,
    /// A message taken on this thread whose callback has not started yet.
    taken: Option<DeliveryRef>,
    /// The last intra-process publish on this thread, by (publisher handle, message):
    /// the `rcl_publish` that may follow for the same publication is the same message.
    intra: Option<(u64, MessageId)>,
    /// A source timestamp taken on this thread (CARET's `take_type_erased`) for the
    /// dispatch that follows.
    taken_stamp: Option<i64>,
    stack: Vec<Frame>,
}

/// One-pass model builder. Feed it events in timestamp order.
#[derive(Debug)]
pub struct Builder {
    opts: Options,
    /// Follow messages (for the model's records or for the digest).
    follow: bool,
    m: Model,
    /// The messages being followed.
    live: Live,
    /// The streaming analyses, fed as the trace is read (see [`Builder::streaming`]).
    digest: Option<Box<Digest>>,
    /// The latest timestamp read.
    now: i64,
    /// Events since the last look for trees to retire.
    since_retire: u32,
    /// How long a quiet tree is followed (trace time).
    horizon_ns: i64,
    /// The most messages followed at once.
    peak_live: usize,
    processes: HashMap<i64, usize>,
    /// Threads already in `m.threads`, by (pid, tid): indexes into it.
    named_threads: HashMap<(i64, i64), usize>,
    /// The thread of the last event, already in `named_threads`: most events come in
    /// runs from one thread, so its lookup is skipped.
    last_thread: Option<(i64, i64)>,
    nodes: HashMap<Handle, NodeId>,
    publishers: HashMap<Handle, PublisherId>,
    subscriptions: HashMap<Handle, SubscriptionId>,
    timers: HashMap<Handle, TimerId>,
    callbacks: HashMap<Handle, CallbackId>,
    /// Action servers and clients by handle: indexes into `m.action_endpoints`.
    action_endpoints: HashMap<Handle, usize>,
    /// Goals by UUID: indexes into `m.goals`.
    goals: HashMap<String, usize>,
    messages: HashMap<MsgKey, MessageId>,
    threads: HashMap<(i64, i64), Thread>,
    queues: HashMap<(QueueKind, usize), usize>,
    /// ROS 1 subscriber side: a received message's address -> (message, delivery).
    ros1_received: HashMap<Handle, DeliveryRef>,
    /// ROS 1: messages written to a topic's connections and not yet received.
    ros1_in_flight: HashMap<Topic, VecDeque<MessageId>>,
    ros1_publishers: HashMap<(i64, String), PublisherId>,
    /// rclcpp subscriptions whose callbacks were added before their
    /// `rclcpp_subscription_init` said which subscription they belong to.
    pending_callbacks: HashMap<Handle, Vec<CallbackId>>,
    /// Publishers and subscriptions declared before their node: by node handle,
    /// (is a publisher, index).
    pending_nodes: HashMap<Handle, Vec<(bool, usize)>>,
    /// Per topic, messages published without a source timestamp, oldest first: the
    /// candidates for [`Link::NearestPublish`].
    unstamped: HashMap<Topic, VecDeque<MessageId>>,
    /// The running offset of DDS source timestamps from trace time (ns), learned from
    /// every message whose publish time and stamp are both known.
    stamp_offset: Option<i64>,
    /// Handles named by events but declared by no init event.
    undeclared: HashSet<Handle>,
    /// The host of each process, from its trace's `hostname`.
    hosts: HashMap<i64, Arc<str>>,
    /// When estimating clock offsets between hosts: the send/receive pairs, and takes
    /// whose publication was not read yet (a receiver's clock behind the sender's puts
    /// the take first), by key: (process, take time).
    clock_pairs: Option<(crate::sync::ClockPairs, PendingTakes)>,
    /// Declared message links, by the publisher whose messages they link.
    message_links: HashMap<PublisherId, (crate::model::MessageLink, Vec<SubscriptionId>)>,
    /// Per subscription, the delivery its callback processed last.
    latest_taken: HashMap<SubscriptionId, DeliveryRef>,
    /// Subscriptions rmw declared (`rmw_subscription_init`), rcl's or its own.
    rmw_subscriptions: HashSet<Handle>,
    /// `/rosout` publishers by the handle `rcl_publish` uses (rcl's logging copies the
    /// publisher its init event declared, at a stack address every node shares).
    rosout: HashMap<Handle, Option<PublisherId>>,
    /// Per event class (by address): the class, its count, and whether its provider is
    /// one the builder maps (known once per class, not parsed per event).
    class_counts: HashMap<usize, (Arc<EventClass>, u64, bool), BuildHasherDefault<AddressHasher>>,
    /// The classes met most recently, by address: a direct-mapped cache in front of
    /// `class_counts` (a trace has a few dozen classes), holding each one's count and
    /// whether it is mapped until the class is evicted or the trace ends.
    recent: Box<[Recent; RECENT]>,
}

/// Whether the builder maps events of this name: providers `ros2`, `dds`, `kairos`,
/// `roscpp`, and CARET's `ros2_caret` and (older) `ros2_hook` (see [`Builder::event`]).
fn maps(event_name: &str) -> bool {
    let provider = event_name.split_once(':').map_or("", |(p, _)| p);
    matches!(
        provider,
        "ros2" | "dds" | "kairos" | "roscpp" | "ros2_caret" | "ros2_hook"
    )
}

/// Hashes an address (a class's `Arc` pointer) by one multiplication: the event
/// counts are looked up once per event, where SipHash would cost more than the rest.
#[derive(Debug, Default)]
struct AddressHasher(u64);

impl Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// Slots of [`Builder`]'s class cache.
const RECENT: usize = 64;

/// A class in the cache: its address, events counted here not yet added to
/// `class_counts`, and whether it is mapped.
#[derive(Debug, Default, Clone, Copy)]
struct Recent {
    key: usize,
    count: u64,
    mapped: bool,
}

/// The fields every mapping needs from an event.
#[derive(Debug, Clone, Copy)]
pub(crate) struct At {
    pub ts: i64,
    pub pid: i64,
    pub tid: i64,
}

impl Builder {
    /// A builder that keeps what `opts` asks for in its model.
    pub fn new(opts: Options) -> Self {
        Self {
            opts,
            follow: opts.messages,
            m: Model::default(),
            live: Live::default(),
            digest: None,
            now: i64::MIN,
            since_retire: 0,
            horizon_ns: HORIZON_NS,
            peak_live: 0,
            processes: HashMap::default(),
            named_threads: HashMap::default(),
            last_thread: None,
            nodes: HashMap::default(),
            publishers: HashMap::default(),
            subscriptions: HashMap::default(),
            timers: HashMap::default(),
            callbacks: HashMap::default(),
            action_endpoints: HashMap::default(),
            goals: HashMap::default(),
            messages: HashMap::default(),
            threads: HashMap::default(),
            queues: HashMap::default(),
            ros1_received: HashMap::default(),
            ros1_in_flight: HashMap::default(),
            ros1_publishers: HashMap::default(),
            pending_callbacks: HashMap::default(),
            pending_nodes: HashMap::default(),
            unstamped: HashMap::default(),
            stamp_offset: None,
            undeclared: HashSet::default(),
            rosout: HashMap::default(),
            rmw_subscriptions: HashSet::default(),
            message_links: HashMap::default(),
            hosts: HashMap::default(),
            clock_pairs: None,
            latest_taken: HashMap::default(),
            class_counts: HashMap::default(),
            recent: Box::new([Recent::default(); RECENT]),
        }
    }

    /// A builder for the streaming analyses: the model keeps only the trace's objects
    /// and counts, and every record (callback runs, timer runs, queue changes, finished
    /// message trees) goes to a [`Digest`] as it is read. A message tree is finished
    /// when nothing happened to it for [`HORIZON_NS`] of trace time, or when more than
    /// [`MAX_LIVE`] messages are being followed; so memory stays flat in trace length.
    pub fn streaming(digest: Digest) -> Self {
        let mut b = Self::new(Options { messages: false });
        b.follow = true;
        b.digest = Some(Box::new(digest));
        b
    }

    /// Follows a quiet message tree for `ns` of trace time instead of [`HORIZON_NS`].
    pub fn with_horizon(mut self, ns: i64) -> Self {
        self.horizon_ns = ns;
        self
    }

    /// Collects, as messages are linked, what [`synchronize`] needs to estimate the
    /// clock offsets between hosts.
    pub fn estimating_clocks(mut self) -> Self {
        self.clock_pairs = Some(Default::default());
        self
    }

    /// The send/receive pairs collected (see [`Builder::estimating_clocks`]).
    pub fn clock_pairs(&self) -> Option<&crate::sync::ClockPairs> {
        self.clock_pairs.as_ref().map(|(p, _)| p)
    }

    /// Records the clock offsets taken out of the traces' timestamps.
    pub fn clock_offsets(&mut self, offsets: Vec<crate::sync::HostOffset>) {
        self.m.clock_offsets = offsets;
    }

    /// The most messages followed at once so far.
    pub fn peak_live(&self) -> usize {
        self.peak_live
    }

    /// The fields the builder reads: every context, and the payloads of the providers
    /// it maps (`ros2`, `dds`, `kairos`, `roscpp`); other payloads (kernel events, other
    /// user-space providers) are skipped without being decoded.
    pub fn selection() -> Selection {
        Selection::payloads(|class| maps(&class.name))
    }

    /// Records the packets the reader found discarded (call before `finish`).
    pub fn discarded_packets(&mut self, n: u64) {
        self.m.discarded_packets = n;
    }

    /// Keeps a read error (a damaged stream) in the model.
    pub fn read_error(&mut self, e: String) {
        self.m.read_errors.push(e);
    }

    /// Maps one event (in timestamp order) onto the model.
    pub fn event(&mut self, ev: &Event) {
        self.event_ref(ev.view());
    }

    /// Maps one borrowed event (in timestamp order) onto the model.
    pub fn event_ref(&mut self, ev: EventRef<'_>) {
        let name = ev.name();
        self.m.events += 1;
        self.now = self.now.max(ev.timestamp);
        if self.digest.is_some() {
            self.since_retire += 1;
            self.peak_live = self.peak_live.max(self.live.len());
            if self.since_retire >= RETIRE_EVERY || self.live.len() > MAX_LIVE {
                self.since_retire = 0;
                self.retire(false);
            }
        }
        // Counted per event class (by address), named once at the end.
        let key = Arc::as_ptr(ev.class) as usize;
        let slot = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58) % RECENT;
        let mapped = if self.recent[slot].key == key {
            self.recent[slot].count += 1;
            self.recent[slot].mapped
        } else {
            self.evict(slot);
            let mapped = match self.class_counts.get(&key) {
                Some(c) => c.2,
                None => {
                    let mapped = maps(name);
                    self.class_counts.insert(key, (ev.class.clone(), 0, mapped));
                    mapped
                }
            };
            self.recent[slot] = Recent {
                key,
                count: 1,
                mapped,
            };
            mapped
        };
        self.m.first_ns = Some(
            self.m
                .first_ns
                .map_or(ev.timestamp, |f| f.min(ev.timestamp)),
        );
        self.m.last_ns = Some(self.m.last_ns.map_or(ev.timestamp, |l| l.max(ev.timestamp)));
        let has_context = ev.context.is_some() || ev.stream_context.is_some();
        let ctx = |f: &str| {
            has_context
                .then(|| ev.context_field(f).and_then(|v| v.as_i64()))
                .flatten()
        };
        let at = At {
            ts: ev.timestamp,
            pid: ctx("vpid").or_else(|| ctx("pid")).unwrap_or(0),
            tid: ctx("vtid").or_else(|| ctx("tid")).unwrap_or(0),
        };
        if has_context && self.last_thread != Some((at.pid, at.tid)) {
            if let Some(procname) = ev.context_field("procname").and_then(|v| v.as_str()) {
                if !self.processes.contains_key(&at.pid) {
                    self.process(at.pid, procname, ev.trace.hostname.as_deref());
                }
                self.thread_name(at, procname);
            }
            self.last_thread = Some((at.pid, at.tid));
        }
        if !mapped {
            return;
        }
        let (provider, short) = name.split_once(':').unwrap_or(("", name));
        match provider {
            "ros2" | "dds" | "ros2_caret" | "ros2_hook" => {
                self.source(Source::Ros2);
                ros2::event(self, at, short, &ev);
            }
            "kairos" => {
                self.source(Source::Kairos);
                ros2::kairos_event(self, at, short, &ev);
            }
            "roscpp" => {
                self.source(Source::Ros1);
                ros1::event(self, at, short, &ev);
            }
            _ => {}
        }
    }

    /// The model, and the digest of a streaming builder.
    pub fn finish_streaming(mut self, discarded: u64, backwards: u64) -> (Model, Option<Digest>) {
        self.retire(true);
        let mut digest = self.digest.take();
        if let Some(d) = &mut digest {
            d.finish(&mut self.m);
        }
        (self.finish(discarded, backwards), digest.map(|d| *d))
    }

    /// Hands finished trees to the digest: those quiet for [`HORIZON_NS`], and the
    /// oldest ones while more than [`MAX_LIVE`] messages are followed; every tree when
    /// `all` (the trace ended).
    fn retire(&mut self, all: bool) {
        let Some(digest) = self.digest.as_deref_mut() else {
            return;
        };
        // A callback still running counts as no change: one that never ends (the trace
        // stopped during it) must not hold its tree, and every tree after it, forever.
        let quiet_since = self.now.saturating_sub(self.horizon_ns);
        loop {
            let crowded = self.live.len() > MAX_LIVE;
            let (Some(root), early) = (match self.live.ready_root(quiet_since, false) {
                Some(root) => (Some(root), false),
                None => (self.live.ready_root(quiet_since, all || crowded), !all),
            }) else {
                break;
            };
            let ids = self.live.tree(root);
            let tree = Tree::new(&self.live, root);
            digest.tree(&self.m, &tree, root, &tree.ids(), early);
            for id in ids {
                let Some(slot) = self.live.remove(id) else {
                    continue;
                };
                for key in slot.keys {
                    match key {
                        Key::Msg(k) => {
                            if self.messages.get(&k) == Some(&id) {
                                self.messages.remove(&k);
                            }
                        }
                        Key::Ros1Received(h) => {
                            if self.ros1_received.get(&h).map(|d| d.message) == Some(id) {
                                self.ros1_received.remove(&h);
                            }
                        }
                    }
                }
                if let Some(q) = self.ros1_in_flight.get_mut(&slot.msg.topic) {
                    while q.front().is_some_and(|&m| self.live.get(m).is_none()) {
                        q.pop_front();
                    }
                }
            }
        }
        digest.watermark(
            &self.m,
            self.live
                .oldest_created()
                .unwrap_or(if all { i64::MAX } else { self.now }),
        );
    }

    /// Adds the count of the class cached in `slot` to `class_counts` and empties it.
    fn evict(&mut self, slot: usize) {
        let r = std::mem::take(&mut self.recent[slot]);
        if r.count > 0
            && let Some(c) = self.class_counts.get_mut(&r.key)
        {
            c.1 += r.count;
        }
    }

    /// The model, once every event was read; `discarded` and `backwards` are the reader's counts.
    pub fn finish(mut self, discarded: u64, backwards: u64) -> Model {
        for slot in 0..RECENT {
            self.evict(slot);
        }
        for (class, n, _) in self.class_counts.values() {
            *self
                .m
                .event_counts
                .entry(class.name.to_string())
                .or_default() += n;
        }
        self.m.discarded_events = discarded;
        self.m.backwards_timestamps = backwards;
        if self.opts.messages {
            self.m.messages = self.live.drain_all().collect();
            self.infer_ros2_queues();
        }
        self.m.sources.sort();
        self.m
    }
}
