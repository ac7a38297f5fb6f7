//! The Zenoh transport: carries a kairos context's topics and services to other processes
//! in rmw_zenoh's wire format.
//!
//! What it promises:
//! - one zenoh publisher, subscriber, queryable or querier per kairos entity, each with its
//!   liveliness token (and one token per node), as rmw_zenoh declares them, so ROS 2 tools
//!   see kairos entities and kairos sees theirs;
//! - a message from this process never comes back through zenoh (publishers send only to
//!   remote subscribers, subscribers hear only remote publishers): in-process delivery
//!   stays the graph's own `Arc`;
//! - every sample and reply carries the attachment; a sample that does not decode (no
//!   attachment, bad CDR) is counted in [`ZenohTransport::malformed_samples`] and reported
//!   once per publisher with its topic, and the subscription goes on;
//! - each entity carries its type's codec (a [`Wire`]); a declaration zenoh refuses is an
//!   error the graph hands to the caller, never an entity silently kept in the process;
//! - blocked waits are shared with other kairos processes on a key space of kairos's own
//!   (see [`crate::shared_waits`]), so a call cycle through processes is `WouldDeadlock`;
//! - remote `/clock` reaches the context through one bridge per context (see
//!   [`ZenohTransport::install`]), on the same sample path as every topic: attachment
//!   checked, malformed samples counted, gaps counted.
//!
//! Ground rules: `nodes` maps a node's name to its token under its own lock, taken only
//! while declaring an entity; every zenoh callback runs on zenoh's threads and only touches
//! atomics, the graph cache, or kairos's thread-safe entry points (`Inbox`, `Reply`).

use crate::access::AccessRules;
use crate::attachment::{Attachment, Gid, now_ns};
use crate::graph_cache::GraphCache;
use crate::graph_key::{
    Durability, EndpointKey, EntityKind, History, NodeKey, Reliability, Token, WireQos, data_key,
};
use crate::sender_state::{Arrival, MalformedReport, SequenceTracker};
use crate::shared_memory::{SharedMemory, SharedMemoryStats};
use crate::shared_waits::{ServedGuard, ZenohWaits};
use crate::type_description::TypeRegistry;
use kairos::graph::transport::{
    AnyMessage, AnyValue, Carried, Declaration, Endpoint, Inbox, LentBuffer, RemoteClient,
    RemotePublisher, Reply, ServiceEndpoint, ServiceWire, Transport, TransportFailure, Wire,
    Written,
};
use kairos::graph::{
    CLOCK_TOPIC, CallError, ClockMsg, Context, GraphError, Message, Node, NodeOptions,
};
use parking_lot::Mutex;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Instant;
use zenoh::liveliness::LivelinessToken;
use zenoh::query::{ConsolidationMode, QueryTarget};
use zenoh::sample::{Locality, SampleKind};
use zenoh::{Session, Wait};

/// The zenoh timeout of a service query: none that a caller could meet. The caller's own
/// timeout decides how long it waits; the query stays open after it gave up, so a reply
/// that comes later is counted in `late_responses`, and it ends when the server answers
/// or leaves the graph (zenoh finalizes a query whose queryable is gone).
const NO_QUERY_TIMEOUT: std::time::Duration =
    std::time::Duration::from_secs(100 * 365 * 24 * 60 * 60);

/// Nodes the transport makes for itself (to serve remote calls) are named with this prefix
/// and never announced.
const INTERNAL_NODE: &str = "_kairos_zenoh_";

/// Why the transport could not start, carry an entity, or close.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// The configuration from the environment is invalid.
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// Zenoh refused an operation.
    #[error("zenoh could not {action}: {source}")]
    Zenoh {
        /// What was being done, e.g. "declare the publisher of /chatter".
        action: String,
        /// Zenoh's error.
        #[source]
        source: zenoh::Error,
    },
    /// A type name that has no key-expression form.
    #[error(transparent)]
    TypeName(#[from] kairos_msgs::message::TypeNameError),
    /// The transport's own nodes could not be made.
    #[error(transparent)]
    Graph(#[from] GraphError),
    /// An entity asked for directly on a node the transport keeps to itself.
    #[error("node {0} is the transport's own and announces nothing; use a node of your own")]
    Unannounced(String),
    /// The security configuration forbids the entity.
    #[error(transparent)]
    Denied(#[from] Box<crate::access::Denied>),
    /// [`ZenohTransport::install`] on a context that has a transport already.
    #[error("this context already has a transport; install one transport per context")]
    AlreadyInstalled,
    /// The session did not close in time.
    #[error(
        "the zenoh session did not close within {}; it goes on closing in the background",
        kairos::time::Duration::from(*.0)
    )]
    CloseTimeout(std::time::Duration),
}

/// A zenoh error while doing `action`.
fn zenoh_err(action: impl Into<String>) -> impl FnOnce(zenoh::Error) -> TransportError {
    let action = action.into();
    move |source| TransportError::Zenoh { action, source }
}

/// A transport error as the graph keeps it (the source of `GraphError::Transport`).
fn failure(error: TransportError) -> TransportFailure {
    Arc::new(error)
}

/// Where a subscriber hands each message: decoded with the `Wire`, with the publisher's
/// trace handle, the sequence number and the lifespan left (if the publisher has one), or
/// undecoded.
pub(crate) enum Sink {
    /// In a shared box of its own.
    Shared(Wire, Box<SharedSink>),
    /// Lent as `Option<M>` (see `Wire::decode_to`), for the taker to box as it likes.
    Lent(Wire, Box<LentSink>),
    /// The payload as it arrived, with its attachment (see [`crate::raw`]).
    Raw(Box<crate::raw::RawSink>),
}

/// [`Sink::Shared`]'s handler.
type SharedSink = dyn Fn(AnyMessage, u64, u64, Option<kairos::time::Duration>) + Send + Sync;
/// [`Sink::Lent`]'s handler.
type LentSink =
    dyn Fn(&mut dyn std::any::Any, u64, u64, Option<kairos::time::Duration>) + Send + Sync;

pub(crate) struct NodeEntry {
    key: NodeKey,
    _token: LivelinessToken,
}

/// A zenoh session carrying kairos entities; see the module docs.
pub struct ZenohTransport {
    session: Session,
    domain: u32,
    zid: String,
    next_id: AtomicU64,
    nodes: Mutex<HashMap<String, Weak<NodeEntry>>>,
    graph: Arc<GraphCache>,
    malformed: Arc<AtomicU64>,
    gaps: Arc<AtomicU64>,
    local: Arc<LocalPublishers>,
    /// Declarations that live as long as the transport (the `/clock` bridge).
    bridges: Mutex<Vec<Declaration>>,
    /// This process's blocked waits, shared with other kairos processes.
    waits: Arc<ZenohWaits>,
    /// Large payloads through shared memory, when the configuration turns it on.
    shm: Arc<SharedMemory>,
    /// Every type carried, for the type description service.
    types: Arc<TypeRegistry>,
    /// The queryable of each service key, while a server of this process serves it.
    queryables: Mutex<HashMap<String, Weak<ServiceQueryable>>>,
    /// The security configuration's rules for this process's own declarations.
    access: AccessRules,
    _graph_subscriber: zenoh::pubsub::Subscriber<()>,
    _lapsed_subscriber: zenoh::pubsub::Subscriber<()>,
}

impl std::fmt::Debug for ZenohTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZenohTransport")
            .field("zid", &self.zid)
            .field("domain", &self.domain)
            .finish_non_exhaustive()
    }
}

impl ZenohTransport {
    /// Opens a session with the configuration from the environment (see [`crate::config`]).
    pub fn open() -> Result<Arc<Self>, TransportError> {
        let config = crate::config::session_config()?;
        let domain = crate::config::domain_id()?;
        Self::open_with(config, domain)
    }

    /// Opens a session with `config`, in ROS domain `domain`.
    pub fn open_with(config: zenoh::Config, domain: u32) -> Result<Arc<Self>, TransportError> {
        let shm_threshold = SharedMemory::threshold(&config);
        let access = AccessRules::of(&config);
        let session = zenoh::open(config)
            .wait()
            .map_err(zenoh_err("open a session"))?;
        let zid = session.zid().to_string();
        let graph = Arc::new(GraphCache::default());
        let cache = graph.clone();
        let graph_subscriber = session
            .liveliness()
            .declare_subscriber(format!("{}/{domain}/**", crate::graph_key::ADMIN_SPACE))
            .history(true)
            .callback(move |sample| {
                cache.update(sample.key_expr().as_str(), sample.kind() == SampleKind::Put)
            })
            .wait()
            .map_err(zenoh_err("subscribe to the graph's liveliness tokens"))?;
        let lapsed_subscriber = crate::liveliness::watch(&session, domain, graph.clone())
            .map_err(zenoh_err("watch kairos publishers' lapsed liveliness"))?;
        let malformed = Arc::new(AtomicU64::new(0));
        let waits = ZenohWaits::open(&session, domain, malformed.clone()).map_err(zenoh_err(
            "join the wait-for graph shared by kairos processes",
        ))?;
        Ok(Arc::new(Self {
            domain,
            zid,
            next_id: AtomicU64::new(0),
            nodes: Mutex::new(HashMap::new()),
            graph,
            malformed,
            gaps: Arc::new(AtomicU64::new(0)),
            local: Arc::new(LocalPublishers::default()),
            bridges: Mutex::new(Vec::new()),
            waits,
            shm: SharedMemory::new(&session, shm_threshold),
            types: Arc::default(),
            queryables: Mutex::default(),
            access,
            session,
            _graph_subscriber: graph_subscriber,
            _lapsed_subscriber: lapsed_subscriber,
        }))
    }

    /// Carries `context` from now on, and lets `rosgraph_msgs/msg/Clock` messages on
    /// `/clock` from other processes (a ROS 2 simulator) drive the context's simulated
    /// clock, as local `ClockMsg` messages do.
    pub fn install(self: &Arc<Self>, context: &Context) -> Result<(), TransportError> {
        context
            .set_transport(self.clone())
            .map_err(|_| TransportError::AlreadyInstalled)?;
        let bridge = self.clock_bridge(context)?;
        self.bridges.lock().push(bridge);
        Ok(())
    }

    /// Remote `/clock` -> the context's `/clock` topic (`ClockMsg`, simulation time),
    /// through a publisher of an internal node, which stays in the process; so the
    /// context's simulated clocks, which listen to the topic itself, follow it. Local
    /// subscriptions of `/clock` hear it there too (the transport does not subscribe them
    /// again, see [`Self::bridged`]).
    fn clock_bridge(&self, context: &Context) -> Result<Declaration, TransportError> {
        let node = Node::with_options(
            context,
            &format!("{INTERNAL_NODE}clock"),
            NodeOptions::new().use_global_arguments(false),
        )?;
        let publisher =
            node.create_publisher::<ClockMsg>(CLOCK_TOPIC, kairos::graph::Qos::keep_last(1))?;
        let wire = kairos::graph::transport::Wire::of::<ClockMsg>();
        let deliver = Sink::Lent(
            wire,
            Box::new(
                move |value: &mut dyn std::any::Any, _publisher, _seq, _left| {
                    if let Some(clock) = value
                        .downcast_mut::<Option<ClockMsg>>()
                        .and_then(Option::take)
                    {
                        publisher.publish(clock);
                    }
                },
            ),
        );
        let subscriber = self.subscriber(
            CLOCK_TOPIC,
            &wire.dds_type()?,
            &wire.type_hash().to_string(),
            kairos::graph::Qos::keep_last(1),
            deliver,
            |_, _, _| {},
        )?;
        Ok(Box::new((subscriber, node)))
    }

    /// Whether remote samples of `endpoint` reach the context through a bridge already.
    fn bridged(endpoint: &Endpoint<'_>) -> bool {
        endpoint.name == CLOCK_TOPIC && endpoint.wire.type_name() == ClockMsg::TYPE_NAME
    }

    /// What this process sees of the graph.
    pub fn graph(&self) -> &GraphCache {
        &self.graph
    }

    /// The zenoh session the transport runs on (for tools and tests that declare raw
    /// zenoh entities beside it).
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The ROS domain id its keys are in (`ROS_DOMAIN_ID`).
    pub fn domain(&self) -> u32 {
        self.domain
    }

    /// Samples that did not decode, over all subscriptions (and the kairos-private
    /// shared-wait snapshots, see [`crate::shared_waits`]).
    pub fn malformed_samples(&self) -> u64 {
        self.malformed.load(Ordering::Relaxed)
    }

    /// The access rules this process's declarations are checked against (see
    /// [`crate::access`]): whether there are any, and how many of the runtime's own
    /// entities they denied.
    pub fn access_rules(&self) -> &AccessRules {
        &self.access
    }

    /// Messages lost on the way, over all subscriptions: the gaps in each remote
    /// publisher's sequence numbers (a publisher that restarts from 1 starts a new run).
    pub fn sequence_gaps(&self) -> u64 {
        self.gaps.load(Ordering::Relaxed)
    }

    /// The types this transport carries (declared so far), which a node's type
    /// description service answers from (see [`crate::type_description::serve`]).
    pub fn types(&self) -> Arc<TypeRegistry> {
        self.types.clone()
    }

    /// Payloads sent and received through shared memory, and those sent as ordinary bytes
    /// for want of room (see [`crate::shared_memory`]).
    pub fn shared_memory(&self) -> SharedMemoryStats {
        self.shm.stats()
    }

    /// Whether this transport's configuration turns shared memory on.
    pub fn shared_memory_enabled(&self) -> bool {
        self.shm.enabled()
    }

    /// Waits, at most `timeout`, until the shared-memory pool is up: zenoh starts it in
    /// the background when the session opens, and until then large payloads go as
    /// ordinary bytes (counted in [`SharedMemoryStats::fallbacks`]) rather than make a
    /// publish wait. False if shared memory is off, the pool failed to start, or it is
    /// still starting after `timeout`.
    pub fn wait_shared_memory(&self, timeout: std::time::Duration) -> bool {
        self.shm.wait_ready(std::time::Instant::now() + timeout)
    }

    /// Closes the session, returning by `timeout` whatever the network does (zenoh's own
    /// close may take up to its 10 s timeout; it finishes on a thread of its own then).
    pub fn close(&self, timeout: std::time::Duration) -> Result<(), TransportError> {
        let (done, closed) = std::sync::mpsc::sync_channel(1);
        let session = self.session.clone();
        std::thread::Builder::new()
            .name("kairos-zenoh-close".into())
            .spawn(move || {
                let _ = done.send(
                    session
                        .close()
                        .wait()
                        .map_err(zenoh_err("close the session")),
                );
            })
            .map_err(|e| zenoh_err("start the closing thread")(Box::new(e)))?;
        match closed.recv_timeout(timeout) {
            Ok(result) => result,
            Err(_) => Err(TransportError::CloseTimeout(timeout)),
        }
    }

    fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// The node's key, declaring its token if the node has none here yet (at its creation,
    /// or at its first entity for a node made before the transport came); `None`
    /// for the transport's own nodes, which are never announced nor carried.
    pub(crate) fn node_entry(&self, node: &Node) -> Result<Option<Arc<NodeEntry>>, TransportError> {
        if node.name().starts_with(INTERNAL_NODE) {
            return Ok(None);
        }
        let mut nodes = self.nodes.lock();
        let fq = node.fully_qualified_name().to_owned();
        if let Some(entry) = nodes.get(&fq).and_then(Weak::upgrade) {
            return Ok(Some(entry));
        }
        let nid = self.next_id();
        let key = NodeKey {
            domain: self.domain,
            zid: self.zid.clone(),
            nid,
            // The enclave whose identity the session presents (see crate::config).
            enclave: node
                .ros_args()
                .enclave()
                .map(str::to_owned)
                .or_else(|| std::env::var("ROS_SECURITY_ENCLAVE_OVERRIDE").ok())
                .unwrap_or_default(),
            namespace: node.namespace().to_owned(),
            name: node.name().to_owned(),
        };
        let token = Token::of_node(key.clone());
        let token = self
            .session
            .liveliness()
            .declare_token(token.key_expr())
            .wait()
            .map_err(zenoh_err(format!(
                "declare the liveliness token of node {fq}"
            )))?;
        let entry = Arc::new(NodeEntry { key, _token: token });
        nodes.insert(fq, Arc::downgrade(&entry));
        Ok(Some(entry))
    }

    /// Declares the token of an entity; returns it with the entity's gid.
    pub(crate) fn announce(
        &self,
        node: &NodeEntry,
        kind: EntityKind,
        name: &str,
        dds_type: &str,
        hash: &str,
        qos: WireQos,
    ) -> Result<(LivelinessToken, Gid), TransportError> {
        self.access
            .check(kind, name, &self.key(name, dds_type, hash))?;
        let token = Token {
            node: node.key.clone(),
            id: self.next_id(),
            kind,
            endpoint: Some(EndpointKey {
                name: name.to_owned(),
                dds_type: dds_type.to_owned(),
                hash: hash.to_owned(),
                qos,
            }),
        };
        let key = token.key_expr();
        let declared = self
            .session
            .liveliness()
            .declare_token(&key)
            .wait()
            .map_err(zenoh_err(format!("declare the liveliness token of {name}")))?;
        self.graph.declared(name, dds_type, hash);
        Ok((declared, token.gid()))
    }

    pub(crate) fn key(&self, name: &str, dds_type: &str, hash: &str) -> String {
        data_key(self.domain, name, dds_type, hash)
    }
}

/// A service type's description, as its hash is computed from (request, response,
/// event).
fn service_type(wire: &ServiceWire) -> kairos_msgs::TypeDescription {
    kairos_msgs::message::service_description(
        wire.type_name(),
        wire.request.description(),
        wire.response.description(),
    )
}

pub(crate) fn wire_qos(qos: kairos::graph::Qos) -> WireQos {
    WireQos {
        reliability: match qos.reliability {
            kairos::graph::Reliability::Reliable => Reliability::Reliable,
            kairos::graph::Reliability::BestEffort => Reliability::BestEffort,
        },
        durability: match qos.durability {
            kairos::graph::Durability::Volatile => Durability::Volatile,
            kairos::graph::Durability::TransientLocal => Durability::TransientLocal,
        },
        history: match qos.history {
            kairos::graph::History::KeepLast(depth) => History::KeepLast(depth as u64),
            kairos::graph::History::KeepAll { bound } => History::KeepAll(bound as u64),
        },
        deadline: qos.deadline,
        lifespan: qos.lifespan,
        liveliness: qos.liveliness,
        liveliness_lease: qos.liveliness_lease,
    }
}

/// The handle traces know a remote publisher by: the first 8 bytes of its gid.
pub fn gid_handle(gid: &Gid) -> u64 {
    u64::from_le_bytes(gid[..8].try_into().unwrap())
}

struct ZenohPublisher {
    wire: Wire,
    publisher: Sender,
    shm: Arc<SharedMemory>,
    gid: Gid,
    local: Arc<LocalPublishers>,
    /// Tells other processes when a manual-liveliness lease lapses (taken by the core).
    liveliness: Mutex<Option<kairos::graph::transport::LivelinessSink>>,
    _token: LivelinessToken,
    _node: Arc<NodeEntry>,
}

impl Drop for ZenohPublisher {
    fn drop(&mut self) {
        self.local.0.write().remove(&self.gid);
    }
}

impl RemotePublisher for ZenohPublisher {
    fn trace_handle(&self) -> Option<u64> {
        Some(gid_handle(&self.gid))
    }

    fn liveliness_sink(&self) -> Option<kairos::graph::transport::LivelinessSink> {
        self.liveliness.lock().take()
    }

    fn publish(&self, message: &(dyn std::any::Any + Send + Sync), seq: u64) {
        let Some(payload) = self.shm.payload(&self.wire, message) else {
            return;
        };
        let attachment = Attachment {
            sequence_number: seq as i64,
            source_timestamp: now_ns(),
            gid: self.gid,
        };
        self.publisher.put(payload, attachment);
    }

    fn lend(&self, capacity: usize) -> Option<Box<dyn LentBuffer>> {
        self.shm.lend(capacity)
    }

    fn publish_lent(&self, payload: Written, seq: u64) -> Result<bytes::Bytes, Written> {
        let payload = self.shm.lent_payload(payload)?;
        let attachment = Attachment {
            sequence_number: seq as i64,
            source_timestamp: now_ns(),
            gid: self.gid,
        };
        self.publisher.put(payload.clone(), attachment);
        Ok(crate::received::shared(payload))
    }
}

/// The zenoh publisher under a kairos one. A volatile publisher is zenoh's plain one: for
/// it, zenoh-ext's advanced publisher adds nothing to the samples (no cache, no sequence
/// numbers, no token of its own; the session stamps every put with its clock either way,
/// timestamping being on) but wraps every put in builders of its own.
pub(crate) enum Sender {
    Plain(zenoh::pubsub::Publisher<'static>),
    Advanced(zenoh_ext::AdvancedPublisher<'static>),
}

impl Sender {
    /// Whether zenoh routes this publisher's samples to at least one subscriber now.
    pub(crate) fn matched(&self) -> bool {
        let status = match self {
            Sender::Plain(publisher) => publisher.matching_status().wait(),
            Sender::Advanced(publisher) => publisher.matching_status().wait(),
        };
        status.is_ok_and(|s| s.matching())
    }

    pub(crate) fn put(&self, payload: zenoh::bytes::ZBytes, attachment: Attachment) {
        // A put only fails once the session is closed; the message then has nowhere to go.
        let _ = match self {
            Sender::Plain(publisher) => publisher
                .put(payload)
                .attachment(attachment.to_bytes())
                .wait(),
            Sender::Advanced(publisher) => publisher
                .put(payload)
                .attachment(attachment.to_bytes())
                .wait(),
        };
    }
}

/// The gids of this process's publishers. A transient-local subscription hears the caches
/// of its own process too (zenoh-ext's history queries reach every cache); what those
/// hold was delivered in the process already, so it skips them.
#[derive(Default)]
struct LocalPublishers(parking_lot::RwLock<HashSet<Gid>>);

/// Counts every malformed sample of one subscription and reports them (see
/// [`MalformedReport`]).
struct MalformedLog {
    count: Arc<AtomicU64>,
    report: Mutex<MalformedReport>,
}

impl MalformedLog {
    fn record(&self, publisher: Option<Gid>, why: &str) {
        self.count.fetch_add(1, Ordering::Relaxed);
        let who = publisher.map_or("a sender without attachment".to_owned(), |g| {
            g.iter().map(|b| format!("{b:02x}")).collect()
        });
        if let Some(line) = self.report.lock().record(&who, why, Instant::now()) {
            crate::report::warn(line);
        }
    }
}

struct ZenohService {
    _queryable: Arc<ServiceQueryable>,
    _served: Option<ServedGuard>,
    _token: LivelinessToken,
    _node: Arc<NodeEntry>,
}

/// The queryable of one service name, shared by its servers in this process: requests go
/// through a client of the context, so the server that answers is the one the graph picks
/// (the oldest alive), and a request is answered once however many servers there are.
struct ServiceQueryable {
    _queryable: zenoh::query::Queryable<()>,
    _server_node: Node,
}

struct ZenohClient {
    wire: ServiceWire,
    hash: String,
    session: Session,
    graph: Arc<GraphCache>,
    name: String,
    key: String,
    gid: Gid,
    _token: LivelinessToken,
    _node: Arc<NodeEntry>,
}

/// Calls `reply` once: with the first response, or on drop with why there was none.
struct ReplyOnce {
    reply: Mutex<Option<Reply>>,
    service: String,
    seq: u64,
}

impl ReplyOnce {
    fn send(&self, result: Result<AnyValue, CallError>) {
        if let Some(reply) = self.reply.lock().take() {
            reply(result);
        }
    }
}

impl Drop for ReplyOnce {
    fn drop(&mut self) {
        let (service, seq) = (self.service.clone(), self.seq);
        self.send(Err(CallError::Transport {
            service,
            seq,
            reason: "the server left the graph without answering".into(),
        }));
    }
}

impl RemoteClient for ZenohClient {
    fn is_ready(&self) -> bool {
        self.graph.server_alive(&self.name, &self.hash)
    }

    fn wait_ready(&self, deadline: Option<Instant>) -> bool {
        self.graph.wait_server(&self.name, &self.hash, deadline)
    }

    fn call(&self, request: AnyValue, seq: u64, reply: Reply) {
        let once = Arc::new(ReplyOnce {
            reply: Mutex::new(Some(reply)),
            service: self.name.clone(),
            seq,
        });
        let Some(payload) = self.wire.request.encode(&*request) else {
            once.send(Err(CallError::Transport {
                service: self.name.clone(),
                seq,
                reason: "the request is not of the service's request type".into(),
            }));
            return;
        };
        let attachment = Attachment {
            sequence_number: seq as i64,
            source_timestamp: now_ns(),
            gid: self.gid,
        };
        let response_wire = self.wire.response;
        let (service, answer) = (self.name.clone(), once.clone());
        let sent = self
            .session
            .get(&self.key)
            .payload(payload)
            .attachment(attachment.to_bytes())
            .target(QueryTarget::AllComplete)
            .timeout(NO_QUERY_TIMEOUT)
            .consolidation(ConsolidationMode::None)
            .allowed_destination(Locality::Remote)
            .callback(move |response| {
                let result = match response.result() {
                    Ok(sample) => response_wire
                        .decode_value(&sample.payload().to_bytes())
                        .map_err(|e| CallError::Transport {
                            service: service.clone(),
                            seq,
                            reason: format!("the response does not decode: {e}"),
                        }),
                    Err(e) => Err(CallError::Transport {
                        service: service.clone(),
                        seq,
                        reason: format!(
                            "the server answered with an error: {}",
                            String::from_utf8_lossy(&e.payload().to_bytes())
                        ),
                    }),
                };
                answer.send(result);
            })
            .wait();
        if let Err(e) = sent {
            once.send(Err(CallError::Transport {
                service: self.name.clone(),
                seq,
                reason: e.to_string(),
            }));
        }
    }
}

impl ZenohTransport {
    /// Declares a zenoh subscriber of `name` (of the type `dds_type` with `hash`) hearing
    /// remote publishers only: each sample's attachment is checked, its sequence number
    /// accounted (`lost` gets each gap), its payload decoded with the sink's wire (or
    /// handed over as it is, [`Sink::Raw`]), and `deliver` gets the message with its publisher's
    /// trace handle and sequence number; a sample that fails any step is counted in
    /// [`Self::malformed_samples`] and reported. Every subscription and the `/clock`
    /// bridge take this one path. `deliver`'s last argument is what remains of the
    /// message's life when its publisher announces a lifespan: the lifespan less the age
    /// the source timestamp gives (as DDS counts it, so clocks of two hosts should agree).
    pub(crate) fn subscriber(
        &self,
        name: &str,
        dds_type: &str,
        hash: &str,
        qos: kairos::graph::Qos,
        deliver: Sink,
        lost: impl Fn(u64, u64, u64) + Send + Sync + 'static,
    ) -> Result<Declaration, TransportError> {
        use zenoh_ext::AdvancedSubscriberBuilderExt;
        let key = self.key(name, dds_type, hash);
        let log = MalformedLog {
            count: self.malformed.clone(),
            report: Mutex::new(MalformedReport::new(name)),
        };
        let (sequences, gaps) = (Mutex::new(SequenceTracker::default()), self.gaps.clone());
        let plan = crate::qos::subscriber_plan(&qos);
        let local = plan.history.is_some().then(|| self.local.clone());
        let shm = self.shm.clone();
        let graph = self.graph.clone();
        let on_sample = move |sample: zenoh::sample::Sample| {
            shm.note_arrival(sample.payload());
            let attachment = match sample.attachment() {
                None => Err(crate::attachment::AttachmentError::Missing),
                Some(bytes) => Attachment::from_bytes(&bytes.to_bytes()),
            };
            let attachment = match attachment {
                Ok(a) => a,
                Err(e) => return log.record(None, &e.to_string()),
            };
            if local
                .as_ref()
                .is_some_and(|local| local.0.read().contains(&attachment.gid))
            {
                return;
            }
            let handle = gid_handle(&attachment.gid);
            let seq = attachment.sequence_number;
            // A sample that then does not decode still took its number: it is counted as
            // malformed, not again as lost.
            match sequences.lock().record(attachment.gid, seq) {
                Arrival::Malformed(why) => return log.record(Some(attachment.gid), why),
                Arrival::Gap { first, count } => {
                    gaps.fetch_add(count, Ordering::Relaxed);
                    lost(handle, first, count);
                }
                Arrival::Fine => {}
            }
            let left = graph
                .lifespan_of(&attachment.gid)
                .map(|lifespan| lifespan - age(attachment.source_timestamp));
            // Not negative: a negative number is malformed.
            let seq = seq as u64;
            let decoded = match &deliver {
                Sink::Shared(wire, deliver) => crate::received::decode(wire, sample.payload())
                    .map(|message| deliver(message, handle, seq, left)),
                Sink::Lent(wire, deliver) => {
                    crate::received::decode_to(wire, sample.payload(), &mut |value| {
                        deliver(value, handle, seq, left)
                    })
                }
                Sink::Raw(deliver) => {
                    deliver(crate::raw::RawSample {
                        payload: sample.payload().to_bytes().into_owned(),
                        attachment,
                    });
                    Ok(())
                }
            };
            if let Err(e) = decoded {
                log.record(Some(attachment.gid), &e.to_string());
            }
        };
        let action = || format!("declare the subscriber of {name}");
        let subscriber: Declaration = match plan.history {
            None => Box::new(
                self.session
                    .declare_subscriber(key)
                    .allowed_origin(Locality::Remote)
                    .callback(on_sample)
                    .wait()
                    .map_err(zenoh_err(action()))?,
            ),
            Some(depth) => {
                let mut builder = self
                    .session
                    .declare_subscriber(key.clone())
                    .history(
                        zenoh_ext::HistoryConfig::default()
                            .detect_late_publishers()
                            .max_samples(depth),
                    )
                    .query_timeout(crate::qos::HISTORY_QUERY_TIMEOUT)
                    .allowed_origin(Locality::Remote);
                if plan.recovery {
                    builder = builder.recovery(zenoh_ext::RecoveryConfig::default().heartbeat());
                }
                if plan.detectable {
                    builder = builder.subscriber_detection();
                }
                // The advanced subscriber's samples pass a gate that asks the caches too,
                // then orders and de-duplicates (see `late_join`).
                let gate = crate::late_join::LateJoin::new(on_sample);
                let offer = {
                    let gate = gate.clone();
                    move |sample| gate.offer(sample)
                };
                let advanced = builder
                    .callback(offer)
                    .wait()
                    .map_err(zenoh_err(action()))?;
                let tokens = gate
                    .start(&self.session, &key, depth)
                    .map_err(zenoh_err(action()))?;
                Box::new((advanced, tokens))
            }
        };
        Ok(subscriber)
    }

    fn carry_publisher(
        &self,
        endpoint: &Endpoint<'_>,
    ) -> Result<Option<Box<dyn RemotePublisher>>, TransportError> {
        let Some(node) = self.node_entry(endpoint.node)? else {
            return Ok(None);
        };
        let (dds_type, hash) = (
            endpoint.wire.dds_type()?,
            endpoint.wire.type_hash().to_string(),
        );
        self.types.remember(endpoint.wire.description());
        let key = self.key(endpoint.name, &dds_type, &hash);
        let (token, gid) = self.announce(
            &node,
            EntityKind::Publisher,
            endpoint.name,
            &dds_type,
            &hash,
            wire_qos(endpoint.qos),
        )?;
        let publisher = self.declare_sender(endpoint.name, key, &endpoint.qos)?;
        self.local.0.write().insert(gid);
        let manual = endpoint.qos.liveliness == kairos::graph::Liveliness::ManualByTopic
            && endpoint.qos.liveliness_lease.is_some();
        Ok(Some(Box::new(ZenohPublisher {
            wire: endpoint.wire,
            publisher,
            shm: self.shm.clone(),
            gid,
            local: self.local.clone(),
            liveliness: Mutex::new(
                manual.then(|| crate::liveliness::sink(&self.session, self.domain, &gid)),
            ),
            _token: token,
            _node: node,
        })))
    }

    /// The zenoh publisher of topic `name` on `key`, declared with the plan of `qos` as
    /// rmw_zenoh declares it (see [`crate::qos::publisher_plan`]): plain for a volatile
    /// QoS, zenoh-ext's advanced publisher (cache, heartbeat, detection) otherwise. It
    /// sends only to other sessions.
    pub(crate) fn declare_sender(
        &self,
        name: &str,
        key: String,
        qos: &kairos::graph::Qos,
    ) -> Result<Sender, TransportError> {
        use zenoh_ext::AdvancedPublisherBuilderExt;
        let plan = crate::qos::publisher_plan(qos);
        let plain = self
            .session
            .declare_publisher(key)
            .allowed_destination(Locality::Remote)
            .reliability(plan.reliability)
            .congestion_control(plan.congestion_control);
        let failed = zenoh_err(format!("declare the publisher of {name}"));
        Ok(
            if plan.cache.is_none() && plan.heartbeat.is_none() && !plan.detectable {
                Sender::Plain(plain.wait().map_err(failed)?)
            } else {
                let mut builder = plain.advanced();
                if let Some(depth) = plan.cache {
                    builder = builder.cache(zenoh_ext::CacheConfig::default().max_samples(depth));
                }
                if let Some(period) = plan.heartbeat {
                    builder = builder.sample_miss_detection(
                        zenoh_ext::MissDetectionConfig::default().sporadic_heartbeat(period),
                    );
                }
                if plan.detectable {
                    builder = builder.publisher_detection();
                }
                Sender::Advanced(builder.wait().map_err(failed)?)
            },
        )
    }

    fn carry_subscription(
        &self,
        endpoint: &Endpoint<'_>,
        inbox: Inbox,
    ) -> Result<Option<Declaration>, TransportError> {
        if Self::bridged(endpoint) {
            return self.announce_only(endpoint);
        }
        let inbox = Arc::new(inbox);
        let lost = inbox.clone();
        self.subscribe_announced(
            endpoint,
            Sink::Lent(
                endpoint.wire,
                Box::new(move |value, publisher, seq, left| {
                    match left {
                        Some(left) => inbox.deliver_lent_expiring(value, publisher, seq, left),
                        None => inbox.deliver_lent(value, publisher, seq),
                    };
                }),
            ),
            move |publisher, first, count| lost.lost(publisher, first, count),
        )
    }

    /// The token of a subscription whose remote samples reach the context another way
    /// (through a bridge, see [`Self::bridged`]): other processes see it, as they see
    /// any subscription, and samples reach it once.
    fn announce_only(
        &self,
        endpoint: &Endpoint<'_>,
    ) -> Result<Option<Declaration>, TransportError> {
        let Some(node) = self.node_entry(endpoint.node)? else {
            return Ok(None);
        };
        let token = self.announce_subscription(&node, endpoint)?;
        Ok(Some(Box::new((token, node))))
    }

    fn announce_subscription(
        &self,
        node: &NodeEntry,
        endpoint: &Endpoint<'_>,
    ) -> Result<LivelinessToken, TransportError> {
        self.types.remember(endpoint.wire.description());
        let (token, _) = self.announce(
            node,
            EntityKind::Subscription,
            endpoint.name,
            &endpoint.wire.dds_type()?,
            &endpoint.wire.type_hash().to_string(),
            wire_qos(endpoint.qos),
        )?;
        Ok(token)
    }

    /// A subscriber of `endpoint` (see [`Self::subscriber`]), announced under its node.
    fn subscribe_announced(
        &self,
        endpoint: &Endpoint<'_>,
        deliver: Sink,
        lost: impl Fn(u64, u64, u64) + Send + Sync + 'static,
    ) -> Result<Option<Declaration>, TransportError> {
        let Some(node) = self.node_entry(endpoint.node)? else {
            return Ok(None);
        };
        let subscriber = self.subscriber(
            endpoint.name,
            &endpoint.wire.dds_type()?,
            &endpoint.wire.type_hash().to_string(),
            endpoint.qos,
            deliver,
            lost,
        )?;
        // Announced once it can receive, so whoever sees the token reaches it.
        let token = self.announce_subscription(&node, endpoint)?;
        Ok(Some(Box::new((subscriber, token, node))))
    }

    fn carry_service(
        &self,
        endpoint: &ServiceEndpoint<'_>,
    ) -> Result<Option<Declaration>, TransportError> {
        let Some(node) = self.node_entry(endpoint.node)? else {
            return Ok(None);
        };
        self.types.remember(service_type(&endpoint.wire));
        let (dds_type, hash) = (
            endpoint.wire.dds_type()?,
            endpoint.wire.type_hash().to_string(),
        );
        let key = self.key(endpoint.name, &dds_type, &hash);
        let queryable = {
            let mut queryables = self.queryables.lock();
            queryables.retain(|_, q| q.strong_count() > 0);
            match queryables.get(&key).and_then(Weak::upgrade) {
                Some(shared) => shared,
                None => {
                    let shared = Arc::new(self.service_queryable(endpoint, &key)?);
                    queryables.insert(key, Arc::downgrade(&shared));
                    shared
                }
            }
        };
        let (token, _) = self.announce(
            &node,
            EntityKind::Service,
            endpoint.name,
            &dds_type,
            &hash,
            WireQos::default(),
        )?;
        let served = endpoint.server_group().map(|(group, callback)| {
            self.waits.serve(kairos::exec::shared_waits::ServedBy {
                service: endpoint.name.to_owned(),
                group,
                callback,
            })
        });
        Ok(Some(Box::new(ZenohService {
            _queryable: queryable,
            _served: served,
            _token: token,
            _node: node,
        })))
    }

    /// Declares the queryable of service `endpoint` on `key`, answering through a client
    /// of a node of the transport's own.
    fn service_queryable(
        &self,
        endpoint: &ServiceEndpoint<'_>,
        key: &str,
    ) -> Result<ServiceQueryable, TransportError> {
        let server_node = Node::with_options(
            endpoint.node.context(),
            &format!("{INTERNAL_NODE}{}", self.next_id()),
            NodeOptions::new().use_global_arguments(false),
        )?;
        let server = endpoint.local_server(&server_node)?;
        let queryable = self
            .session
            .declare_queryable(key.to_owned())
            .complete(true)
            .allowed_origin(Locality::Remote)
            .callback(move |query| {
                let attachment = query
                    .attachment()
                    .map(|a| Attachment::from_bytes(&a.to_bytes()));
                let Some(Ok(attachment)) = attachment else {
                    let _ = query
                        .reply_err("kairos: the request has no valid rmw_zenoh attachment")
                        .wait();
                    return;
                };
                // A clone is a reference count: the server decodes the request from zenoh's
                // buffer (joined only if it came in pieces), not from a copy of it.
                let payload = query.payload().cloned().unwrap_or_default();
                let reply_key = query.key_expr().clone().into_owned();
                server(
                    &payload.to_bytes(),
                    Box::new(move |result| {
                        let echo = Attachment {
                            source_timestamp: now_ns(),
                            ..attachment
                        };
                        // A reply fails only if the querier is gone; nothing waits for it then.
                        let _ = match result {
                            Ok(bytes) => query
                                .reply(reply_key, bytes)
                                .attachment(echo.to_bytes())
                                .wait(),
                            Err(why) => query.reply_err(why).wait(),
                        };
                    }),
                );
            })
            .wait()
            .map_err(zenoh_err(format!(
                "declare the queryable of service {}",
                endpoint.name
            )))?;
        Ok(ServiceQueryable {
            _queryable: queryable,
            _server_node: server_node,
        })
    }

    fn carry_client(
        &self,
        endpoint: &ServiceEndpoint<'_>,
    ) -> Result<Option<Arc<dyn RemoteClient>>, TransportError> {
        self.client_of(endpoint.node, endpoint.name, &endpoint.wire)
    }

    fn client_of(
        &self,
        node: &Node,
        name: &str,
        wire: &ServiceWire,
    ) -> Result<Option<Arc<dyn RemoteClient>>, TransportError> {
        let Some(node) = self.node_entry(node)? else {
            return Ok(None);
        };
        self.types.remember(service_type(wire));
        let (dds_type, hash) = (wire.dds_type()?, wire.type_hash().to_string());
        let (token, gid) = self.announce(
            &node,
            EntityKind::Client,
            name,
            &dds_type,
            &hash,
            WireQos::default(),
        )?;
        Ok(Some(Arc::new(ZenohClient {
            key: self.key(name, &dds_type, &hash),
            name: name.to_owned(),
            wire: wire.clone(),
            hash,
            session: self.session.clone(),
            graph: self.graph.clone(),
            gid,
            _token: token,
            _node: node,
        })))
    }
}

/// Entities for tools that know their type only at run time (`kairos topic echo|pub`,
/// `kairos service call` by type name, see [`crate::interfaces`]): declared on the network
/// directly and announced under their node as every entity is, with no in-process topic or
/// client behind them. A tool's process has no other node to share a topic with, and a
/// tool then compiles only its types' codecs, not the runtime's pipeline once per type.
impl ZenohTransport {
    /// A publisher of `topic` whose messages (of `wire`'s type) go only to the network.
    pub fn direct_publisher(
        &self,
        node: &Node,
        topic: &str,
        wire: Wire,
        qos: kairos::graph::Qos,
    ) -> Result<Box<dyn RemotePublisher>, TransportError> {
        let endpoint = Endpoint {
            node,
            name: topic,
            wire,
            qos,
        };
        self.carry_publisher(&endpoint)?
            .ok_or_else(|| TransportError::Unannounced(node.name().to_owned()))
    }

    /// A subscription of `topic` handing each message from the network (of `wire`'s type)
    /// to `deliver`, on zenoh's thread, until the declaration drops. Samples that do not
    /// decode and gaps are counted as for every subscription.
    pub fn direct_subscription(
        &self,
        node: &Node,
        topic: &str,
        wire: Wire,
        qos: kairos::graph::Qos,
        deliver: impl Fn(AnyMessage) + Send + Sync + 'static,
    ) -> Result<Declaration, TransportError> {
        let endpoint = Endpoint {
            node,
            name: topic,
            wire,
            qos,
        };
        self.subscribe_announced(
            &endpoint,
            Sink::Shared(wire, Box::new(move |message, _, _, _| deliver(message))),
            |_, _, _| {},
        )?
        .ok_or_else(|| TransportError::Unannounced(node.name().to_owned()))
    }

    /// A client of service `name` (of `wire`'s type) calling servers in other processes.
    pub fn direct_client(
        &self,
        node: &Node,
        name: &str,
        wire: &ServiceWire,
    ) -> Result<Arc<dyn RemoteClient>, TransportError> {
        self.client_of(node, name, wire)?
            .ok_or_else(|| TransportError::Unannounced(node.name().to_owned()))
    }
}

impl Transport for ZenohTransport {
    fn publisher(&self, endpoint: &Endpoint<'_>) -> Carried<Box<dyn RemotePublisher>> {
        self.carry_publisher(endpoint).map_err(failure)
    }

    fn node(&self, node: &Node) -> Carried<Declaration> {
        self.node_entry(node)
            .map(|entry| entry.map(|entry| Box::new(entry) as Declaration))
            .map_err(failure)
    }

    fn subscription(&self, endpoint: &Endpoint<'_>, inbox: Inbox) -> Carried<Declaration> {
        self.carry_subscription(endpoint, inbox).map_err(failure)
    }

    fn service(&self, endpoint: &ServiceEndpoint<'_>) -> Carried<Declaration> {
        self.carry_service(endpoint).map_err(failure)
    }

    fn announced_subscription(&self, endpoint: &Endpoint<'_>) -> Carried<Declaration> {
        self.announce_only(endpoint).map_err(failure)
    }

    fn client(&self, endpoint: &ServiceEndpoint<'_>) -> Carried<Arc<dyn RemoteClient>> {
        self.carry_client(endpoint).map_err(failure)
    }

    fn graph(&self) -> Vec<kairos::graph::GraphEntity> {
        self.graph.entities_except(&self.zid)
    }

    fn watch_graph(&self, changed: Box<dyn Fn() + Send + Sync>) {
        self.graph.watch(changed);
    }

    fn wait_sharing(&self) -> Option<Arc<dyn kairos::exec::shared_waits::WaitSharing>> {
        Some(self.waits.clone())
    }
}

/// How long ago a sample with `source_timestamp` (wall-clock ns) was published, by this
/// host's wall clock; zero when the sample has no timestamp.
fn age(source_timestamp: i64) -> kairos::time::Duration {
    if source_timestamp <= 0 {
        return kairos::time::Duration::ZERO;
    }
    kairos::time::Duration::from_nanos(crate::attachment::now_ns().saturating_sub(source_timestamp))
}
