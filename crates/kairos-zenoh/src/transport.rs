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
//! - entity types the registry does not know stay in the process (the hook's `None`).
//!
//! Ground rules: `nodes` maps a node's name to its token under its own lock, taken only
//! while declaring an entity; every zenoh callback runs on zenoh's threads and only touches
//! atomics, the graph cache, or kairos's thread-safe entry points (`Inbox`, `Reply`).

use crate::attachment::{Attachment, Gid, now_ns};
use crate::graph_cache::GraphCache;
use crate::graph_key::{
    Durability, EndpointKey, EntityKind, History, NodeKey, Reliability, Token, WireQos, data_key,
};
use crate::registry::{self, MessageCodec, ServiceCodec};
use kairos::graph::transport::{
    AnyValue, Declaration, Endpoint, Inbox, RemoteClient, RemotePublisher, Reply, Transport,
};
use kairos::graph::{CallError, Context, Node};
use parking_lot::Mutex;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Instant;
use zenoh::liveliness::LivelinessToken;
use zenoh::query::{ConsolidationMode, QueryTarget};
use zenoh::sample::{Locality, SampleKind};
use zenoh::{Session, Wait};

/// Nodes the transport makes for itself (to serve remote calls) are named with this prefix
/// and never announced.
const INTERNAL_NODE: &str = "_kairos_zenoh_";

/// Why the transport could not start.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    #[error("zenoh: {0}")]
    Zenoh(String),
    #[error("the zenoh session did not close within {0:?}; it goes on closing in the background")]
    CloseTimeout(std::time::Duration),
}

fn zenoh_err(e: impl std::fmt::Display) -> TransportError {
    TransportError::Zenoh(e.to_string())
}

struct NodeEntry {
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
    _graph_subscriber: zenoh::pubsub::Subscriber<()>,
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
        let session = zenoh::open(config).wait().map_err(zenoh_err)?;
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
            .map_err(zenoh_err)?;
        Ok(Arc::new(Self {
            session,
            domain,
            zid,
            next_id: AtomicU64::new(0),
            nodes: Mutex::new(HashMap::new()),
            graph,
            malformed: Arc::new(AtomicU64::new(0)),
            gaps: Arc::new(AtomicU64::new(0)),
            local: Arc::new(LocalPublishers::default()),
            bridges: Mutex::new(Vec::new()),
            _graph_subscriber: graph_subscriber,
        }))
    }

    /// Carries `context` from now on, and lets `rosgraph_msgs/msg/Clock` messages on
    /// `/clock` from other processes (a ROS 2 simulator) drive the context's simulated
    /// clock, as local `ClockMsg` messages do.
    pub fn install(self: &Arc<Self>, context: &Context) -> Result<(), TransportError> {
        context
            .set_transport(self.clone())
            .map_err(|_| TransportError::Zenoh("this context already has a transport".into()))?;
        let bridge = self.clock_bridge(context)?;
        self.bridges.lock().push(bridge);
        Ok(())
    }

    /// Remote `/clock` -> the context's `/clock` topic (`ClockMsg`, simulation time),
    /// through a publisher of an internal node, which stays in the process.
    fn clock_bridge(&self, context: &Context) -> Result<Declaration, TransportError> {
        use crate::message::Message;
        let node =
            Node::new_in(context, &format!("{INTERNAL_NODE}clock"), "/").map_err(zenoh_err)?;
        let publisher = node
            .create_publisher::<kairos::graph::ClockMsg>(
                kairos::graph::CLOCK_TOPIC,
                kairos::graph::Qos::keep_last(1),
            )
            .map_err(zenoh_err)?;
        let key = self.key(
            kairos::graph::CLOCK_TOPIC,
            &crate::message::dds_type_name(crate::msg::Clock::TYPE_NAME).map_err(zenoh_err)?,
            &crate::msg::Clock::type_hash().to_string(),
        );
        let subscriber = self
            .session
            .declare_subscriber(key)
            .allowed_origin(Locality::Remote)
            .callback(move |sample| {
                // A /clock sample that does not decode leaves simulated time where it is.
                if let Ok(clock) =
                    crate::message::decode::<crate::msg::Clock>(&sample.payload().to_bytes())
                {
                    let nanos =
                        i64::from(clock.clock.sec) * 1_000_000_000 + i64::from(clock.clock.nanosec);
                    publisher.publish(kairos::graph::ClockMsg {
                        clock: kairos::time::Time::new(kairos::time::ClockKind::Sim, nanos),
                    });
                }
            })
            .wait()
            .map_err(zenoh_err)?;
        Ok(Box::new((subscriber, node)))
    }

    /// What this process sees of the graph.
    pub fn graph(&self) -> &GraphCache {
        &self.graph
    }

    pub fn session(&self) -> &Session {
        &self.session
    }

    pub fn domain(&self) -> u32 {
        self.domain
    }

    /// Samples that did not decode, over all subscriptions.
    pub fn malformed_samples(&self) -> u64 {
        self.malformed.load(Ordering::Relaxed)
    }

    /// Messages lost on the way, over all subscriptions: the gaps in each remote
    /// publisher's sequence numbers (a publisher that restarts from 1 starts a new run).
    pub fn sequence_gaps(&self) -> u64 {
        self.gaps.load(Ordering::Relaxed)
    }

    /// Closes the session, returning by `timeout` whatever the network does (zenoh's own
    /// close may take up to its 10 s timeout; it finishes on a thread of its own then).
    pub fn close(&self, timeout: std::time::Duration) -> Result<(), TransportError> {
        let (done, closed) = std::sync::mpsc::sync_channel(1);
        let session = self.session.clone();
        std::thread::Builder::new()
            .name("kairos-zenoh-close".into())
            .spawn(move || {
                let _ = done.send(session.close().wait().map_err(zenoh_err));
            })
            .map_err(zenoh_err)?;
        match closed.recv_timeout(timeout) {
            Ok(result) => result,
            Err(_) => Err(TransportError::CloseTimeout(timeout)),
        }
    }

    fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// The node's key, declaring its token if it is the node's first entity here.
    fn node(&self, node: &Node) -> Option<Arc<NodeEntry>> {
        if node.name().starts_with(INTERNAL_NODE) {
            return None;
        }
        let mut nodes = self.nodes.lock();
        let fq = node.fully_qualified_name().to_owned();
        if let Some(entry) = nodes.get(&fq).and_then(Weak::upgrade) {
            return Some(entry);
        }
        let nid = self.next_id();
        let key = NodeKey {
            domain: self.domain,
            zid: self.zid.clone(),
            nid,
            enclave: String::new(),
            namespace: node.namespace().to_owned(),
            name: node.name().to_owned(),
        };
        let token = Token {
            node: key.clone(),
            id: nid,
            kind: EntityKind::Node,
            endpoint: None,
        };
        let token = self
            .session
            .liveliness()
            .declare_token(token.key_expr())
            .wait()
            .ok()?;
        let entry = Arc::new(NodeEntry { key, _token: token });
        nodes.insert(fq, Arc::downgrade(&entry));
        Some(entry)
    }

    /// Declares the token of an entity; returns it with the entity's gid.
    fn announce(
        &self,
        node: &NodeEntry,
        kind: EntityKind,
        name: &str,
        dds_type: &str,
        hash: &str,
        qos: WireQos,
    ) -> Option<(LivelinessToken, Gid)> {
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
        let declared = self.session.liveliness().declare_token(&key).wait().ok()?;
        self.graph.declared(name, dds_type, hash);
        Some((declared, token.gid()))
    }

    fn key(&self, name: &str, dds_type: &str, hash: &str) -> String {
        data_key(self.domain, name, dds_type, hash)
    }
}

fn wire_qos(qos: kairos::graph::Qos) -> WireQos {
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
        ..WireQos::default()
    }
}

/// The handle traces know a remote publisher by: the first 8 bytes of its gid.
pub fn gid_handle(gid: &Gid) -> u64 {
    u64::from_le_bytes(gid[..8].try_into().unwrap())
}

struct ZenohPublisher {
    codec: Arc<MessageCodec>,
    publisher: zenoh_ext::AdvancedPublisher<'static>,
    gid: Gid,
    local: Arc<LocalPublishers>,
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

    fn publish(&self, message: &(dyn std::any::Any + Send + Sync), seq: u64) {
        let Some(payload) = (self.codec.encode)(message) else {
            return;
        };
        let attachment = Attachment {
            sequence_number: seq as i64,
            source_timestamp: now_ns(),
            gid: self.gid,
        };
        // A put only fails once the session is closed; the message then has nowhere to go.
        let _ = self
            .publisher
            .put(payload)
            .attachment(attachment.to_bytes().to_vec())
            .wait();
    }
}

/// The gids of this process's publishers. A transient-local subscription hears the caches
/// of its own process too (zenoh-ext's history queries reach every cache); what those
/// hold was delivered in the process already, so it skips them.
#[derive(Default)]
struct LocalPublishers(parking_lot::RwLock<HashSet<Gid>>);

/// Reports a malformed sample once per publisher and counts every one.
struct MalformedLog {
    topic: String,
    count: Arc<AtomicU64>,
    reported: Mutex<HashSet<Option<Gid>>>,
}

impl MalformedLog {
    fn record(&self, publisher: Option<Gid>, why: &str) {
        self.count.fetch_add(1, Ordering::Relaxed);
        if self.reported.lock().insert(publisher) {
            let who = publisher.map_or("a sender without attachment".to_owned(), |g| {
                g.iter().map(|b| format!("{b:02x}")).collect()
            });
            eprintln!(
                "kairos-zenoh: dropping samples on {} from publisher {who} that do not decode: {why} (reported once per publisher; counted in malformed_samples)",
                self.topic
            );
        }
    }
}

/// Counts and traces the sequence numbers skipped by each publisher a subscription hears.
struct GapCounter {
    last: Mutex<HashMap<Gid, i64>>,
    total: Arc<AtomicU64>,
}

impl GapCounter {
    /// Records the arrival of `seq` from `publisher`; returns the gap it closes, as
    /// (first missing sequence number, count), if any. A publisher that starts again from
    /// 1 starts a new run; a number at or below the last (a replayed history) is no gap.
    fn record(&self, publisher: Gid, seq: i64) -> Option<(u64, u64)> {
        let mut last = self.last.lock();
        let previous = last.get(&publisher).copied();
        match previous {
            Some(previous) if seq > previous + 1 => {
                last.insert(publisher, seq);
                let count = (seq - previous - 1) as u64;
                self.total.fetch_add(count, Ordering::Relaxed);
                Some(((previous + 1) as u64, count))
            }
            Some(previous) if seq <= previous && seq != 1 => None,
            _ => {
                last.insert(publisher, seq);
                None
            }
        }
    }
}

struct ZenohService {
    _queryable: zenoh::query::Queryable<()>,
    _token: LivelinessToken,
    _node: Arc<NodeEntry>,
    _server_node: Node,
}

struct ZenohClient {
    codec: Arc<ServiceCodec>,
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
            reason: "the query ended without a reply (server gone or zenoh query timeout)".into(),
        }));
    }
}

impl RemoteClient for ZenohClient {
    fn is_ready(&self) -> bool {
        self.graph.server_alive(&self.name, &self.codec.hash)
    }

    fn wait_ready(&self, deadline: Option<Instant>) -> bool {
        self.graph
            .wait_server(&self.name, &self.codec.hash, deadline)
    }

    fn call(&self, request: AnyValue, seq: u64, reply: Reply) {
        let once = Arc::new(ReplyOnce {
            reply: Mutex::new(Some(reply)),
            service: self.name.clone(),
            seq,
        });
        let Some(payload) = (self.codec.encode_request)(request) else {
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
        let decode = self.codec.decode_response;
        let (service, answer) = (self.name.clone(), once.clone());
        let sent = self
            .session
            .get(&self.key)
            .payload(payload)
            .attachment(attachment.to_bytes().to_vec())
            .target(QueryTarget::AllComplete)
            .consolidation(ConsolidationMode::None)
            .allowed_destination(Locality::Remote)
            .callback(move |response| {
                let result = match response.result() {
                    Ok(sample) => {
                        decode(&sample.payload().to_bytes()).map_err(|e| CallError::Transport {
                            service: service.clone(),
                            seq,
                            reason: format!("the response does not decode: {e}"),
                        })
                    }
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

impl Transport for ZenohTransport {
    fn publisher(&self, endpoint: &Endpoint<'_>) -> Option<Box<dyn RemotePublisher>> {
        use zenoh_ext::AdvancedPublisherBuilderExt;
        let codec = registry::message(endpoint.message)?;
        let node = self.node(endpoint.node)?;
        let key = self.key(endpoint.name, &codec.dds_type, &codec.hash);
        let (token, gid) = self.announce(
            &node,
            EntityKind::Publisher,
            endpoint.name,
            &codec.dds_type,
            &codec.hash,
            wire_qos(endpoint.qos),
        )?;
        let plan = crate::qos::publisher_plan(&endpoint.qos);
        let mut builder = self
            .session
            .declare_publisher(key)
            .allowed_destination(Locality::Remote)
            .reliability(plan.reliability)
            .congestion_control(plan.congestion_control)
            .advanced();
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
        let publisher = match builder.wait() {
            Ok(publisher) => publisher,
            Err(e) => {
                eprintln!(
                    "kairos-zenoh: the publisher of {} stays in this process: {e}",
                    endpoint.name
                );
                return None;
            }
        };
        self.local.0.write().insert(gid);
        Some(Box::new(ZenohPublisher {
            codec,
            publisher,
            gid,
            local: self.local.clone(),
            _token: token,
            _node: node,
        }))
    }

    fn subscription(&self, endpoint: &Endpoint<'_>, inbox: Inbox) -> Option<Declaration> {
        use zenoh_ext::AdvancedSubscriberBuilderExt;
        // Remote /clock reaches the context through the clock bridge (see `install`).
        if endpoint.message == std::any::TypeId::of::<kairos::graph::ClockMsg>() {
            return None;
        }
        let codec = registry::message(endpoint.message)?;
        let node = self.node(endpoint.node)?;
        let key = self.key(endpoint.name, &codec.dds_type, &codec.hash);
        let log = MalformedLog {
            topic: endpoint.name.to_owned(),
            count: self.malformed.clone(),
            reported: Mutex::new(HashSet::new()),
        };
        let decode = codec.decode;
        let gaps = GapCounter {
            last: Mutex::new(HashMap::new()),
            total: self.gaps.clone(),
        };
        let plan = crate::qos::subscriber_plan(&endpoint.qos);
        let local = plan.history.is_some().then(|| self.local.clone());
        let on_sample = move |sample: zenoh::sample::Sample| {
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
            if let Some((first, count)) = gaps.record(attachment.gid, attachment.sequence_number) {
                inbox.lost(handle, first, count);
            }
            match decode(&sample.payload().to_bytes()) {
                Ok(message) => {
                    let seq = attachment.sequence_number.max(0) as u64;
                    inbox.deliver(message, handle, seq);
                }
                Err(e) => log.record(Some(attachment.gid), &e.to_string()),
            }
        };
        let subscriber: Declaration = match plan.history {
            None => Box::new(
                self.session
                    .declare_subscriber(key)
                    .allowed_origin(Locality::Remote)
                    .callback(on_sample)
                    .wait()
                    .ok()?,
            ),
            Some(depth) => {
                let mut builder = self
                    .session
                    .declare_subscriber(key)
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
                Box::new(builder.callback(on_sample).wait().ok()?)
            }
        };
        // Announced once it can receive, so whoever sees the token reaches it.
        let (token, _) = self.announce(
            &node,
            EntityKind::Subscription,
            endpoint.name,
            &codec.dds_type,
            &codec.hash,
            wire_qos(endpoint.qos),
        )?;
        Some(Box::new((subscriber, token, node)))
    }

    fn service(&self, endpoint: &Endpoint<'_>) -> Option<Declaration> {
        let codec = registry::service(endpoint.message, endpoint.response?)?;
        let node = self.node(endpoint.node)?;
        let server_node = Node::new_in(
            endpoint.node.context(),
            &format!("{INTERNAL_NODE}{}", self.next_id()),
            "/",
        )
        .ok()?;
        let server = (codec.serve)(&server_node, endpoint.name).ok()?;
        let key = self.key(endpoint.name, &codec.dds_type, &codec.hash);
        let queryable = self
            .session
            .declare_queryable(key)
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
                let payload = query
                    .payload()
                    .map(|p| p.to_bytes().to_vec())
                    .unwrap_or_default();
                let reply_key = query.key_expr().clone().into_owned();
                server(
                    &payload,
                    Box::new(move |result| {
                        let echo = Attachment {
                            source_timestamp: now_ns(),
                            ..attachment
                        };
                        // A reply fails only if the querier is gone; nothing waits for it then.
                        let _ = match result {
                            Ok(bytes) => query
                                .reply(reply_key, bytes)
                                .attachment(echo.to_bytes().to_vec())
                                .wait(),
                            Err(why) => query.reply_err(why).wait(),
                        };
                    }),
                );
            })
            .wait()
            .ok()?;
        let (token, _) = self.announce(
            &node,
            EntityKind::Service,
            endpoint.name,
            &codec.dds_type,
            &codec.hash,
            WireQos::default(),
        )?;
        Some(Box::new(ZenohService {
            _queryable: queryable,
            _token: token,
            _node: node,
            _server_node: server_node,
        }))
    }

    fn client(&self, endpoint: &Endpoint<'_>) -> Option<Arc<dyn RemoteClient>> {
        let codec = registry::service(endpoint.message, endpoint.response?)?;
        let node = self.node(endpoint.node)?;
        let (token, gid) = self.announce(
            &node,
            EntityKind::Client,
            endpoint.name,
            &codec.dds_type,
            &codec.hash,
            WireQos::default(),
        )?;
        Some(Arc::new(ZenohClient {
            key: self.key(endpoint.name, &codec.dds_type, &codec.hash),
            name: endpoint.name.to_owned(),
            codec,
            session: self.session.clone(),
            graph: self.graph.clone(),
            gid,
            _token: token,
            _node: node,
        }))
    }
}
