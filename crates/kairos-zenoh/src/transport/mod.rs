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
//! - each entity carries its type's codec (a [`Wire`](kairos::graph::transport::Wire)); a declaration zenoh refuses is an
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
//!
//! One file per entity, as rmw_zenoh keeps one per `rmw_*_data`: `node` (node and
//! entity tokens, access checks), `publisher`, `subscription` (with the receive path
//! every remote sample takes, documented at its top), `service`, `client`, `clock` (the
//! `/clock` bridge), `direct` (entities for tools), `error`.

mod client;
mod clock;
mod direct;
mod error;
mod node;
mod publisher;
mod service;
mod subscription;

use crate::access::AccessRules;
use crate::access_report::AccessReport;
use crate::attachment::Gid;
use crate::graph_cache::GraphCache;
use crate::shared_memory::{SharedMemory, SharedMemoryStats};
use crate::shared_waits::ZenohWaits;
use crate::type_description::TypeRegistry;
pub use error::TransportError;
pub(crate) use error::{failure, zenoh_err};
use kairos::graph::transport::{
    Carried, Declaration, Endpoint, Inbox, RemoteClient, RemotePublisher, ServiceEndpoint,
    Transport,
};
use kairos::graph::{Context, Node};
pub(crate) use node::{NodeEntry, wire_qos};
use parking_lot::Mutex;
use publisher::LocalPublishers;
pub(crate) use publisher::Sender;
use service::ServiceQueryable;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};

pub(crate) use subscription::Sink;
use zenoh::Session;
use zenoh::Wait;
use zenoh::sample::SampleKind;

/// How long the graph must stay unchanged for [`ZenohTransport::graph_now`] to take it
/// as complete: a router's tokens arrive as one burst, microseconds apart; a pause this
/// long inside one would be a process off the CPU for that long.
const GRAPH_QUIET: std::time::Duration = std::time::Duration::from_millis(300);

/// Nodes the transport makes for itself (to serve remote calls) are named with this prefix
/// and never announced.
const INTERNAL_NODE: &str = "_kairos_zenoh_";

/// A zenoh session carrying kairos entities; see the module docs.
pub struct ZenohTransport {
    session: Session,
    domain: u32,
    zid: String,
    next_id: AtomicU64,
    nodes: Arc<Mutex<HashMap<String, Weak<NodeEntry>>>>,
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
    /// What this transport sent, heard and waits for, for lock-step replays.
    settle: Arc<crate::settle::Board>,
    _settle_queryable: zenoh::query::Queryable<()>,
    /// Answers `kairos node info`'s question about this process's access denials.
    _access_queryable: zenoh::query::Queryable<()>,
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
        let mut config = config;
        crate::access_report::read_own_counters(&mut config);
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
        let settle = Arc::new(crate::settle::Board::default());
        let nodes: Arc<Mutex<HashMap<String, Weak<NodeEntry>>>> = Arc::default();
        let named = nodes.clone();
        let settle_queryable = settle
            .declare(&session, domain, &zid, move || {
                let nodes = named.lock();
                let live = nodes.iter().filter(|(_, entry)| entry.strong_count() > 0);
                let mut names: Vec<String> = live.map(|(name, _)| name.clone()).collect();
                names.sort();
                names
            })
            .map_err(zenoh_err("answer lock-step replays' settle questions"))?;
        // The report is made by the transport, which the queryable must not keep alive.
        let this: Arc<OnceLock<Weak<Self>>> = Arc::default();
        let asked = this.clone();
        let access_queryable = crate::access_report::serve(&session, domain, move || {
            asked
                .get()
                .and_then(Weak::upgrade)
                .map(|transport| transport.access_report())
        })
        .map_err(zenoh_err("answer questions about its access denials"))?;
        let transport = Arc::new(Self {
            domain,
            zid,
            next_id: AtomicU64::new(0),
            nodes,
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
            settle,
            _settle_queryable: settle_queryable,
            _access_queryable: access_queryable,
            session,
            _graph_subscriber: graph_subscriber,
            _lapsed_subscriber: lapsed_subscriber,
        });
        let _ = this.set(Arc::downgrade(&transport));
        Ok(transport)
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

    /// What this process sees of the graph.
    pub fn graph(&self) -> &GraphCache {
        &self.graph
    }

    /// Every liveliness token of the graph now, as completely as this process can learn
    /// it within `timeout`. The cache fills as tokens stream in (a node's first token may
    /// come before its other entities'), so this asks too: a liveliness query of the
    /// domain, which a client's router answers with every token it knows and then ends
    /// (a peer's own session answers it from what it has received so far); then it waits
    /// until no token has come or gone for 300 ms (`GRAPH_QUIET`), which lets a peer's stream
    /// from its router finish. A tool that shows one node or topic asks this, not
    /// [`GraphCache::tokens`]. The answers are not put into the cache, where a token
    /// undeclared while its answer travelled would come back to life.
    pub fn graph_now(&self, timeout: std::time::Duration) -> Vec<crate::graph_key::Token> {
        let deadline = std::time::Instant::now() + timeout;
        let mut answered = Vec::new();
        let key = format!("{}/{}/**", crate::graph_key::ADMIN_SPACE, self.domain);
        if let Ok(replies) = self.session.liveliness().get(key).timeout(timeout).wait() {
            while let Ok(Some(reply)) =
                replies.recv_timeout(deadline.saturating_duration_since(std::time::Instant::now()))
            {
                if let Ok(sample) = reply.result()
                    && let Ok(token) = crate::graph_key::Token::parse(sample.key_expr().as_str())
                {
                    answered.push(token);
                }
            }
        }
        self.graph.wait_quiet(GRAPH_QUIET, deadline);
        let mut tokens: std::collections::HashSet<_> = self.graph.tokens().into_iter().collect();
        tokens.extend(answered);
        tokens.into_iter().collect()
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

    /// What access control did to this process: its denied declarations and the messages
    /// zenoh dropped (see [`crate::access_report`]).
    pub fn access_report(&self) -> AccessReport {
        AccessReport::of(&self.access, &self.session)
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
}

/// The handle traces know a remote publisher by: the first 8 bytes of its gid.
pub fn gid_handle(gid: &Gid) -> u64 {
    u64::from_le_bytes(gid[..8].try_into().unwrap())
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
