//! The graph follower: one thread that keeps the advertised channels equal to the topics
//! the graph offers, and holds a kairos subscription for exactly the channels some client
//! subscribes to.
//!
//! What it promises:
//! - **Topics as the graph announces them.** Every topic with a publisher (in any process
//!   the Zenoh transport reaches, this one included) that the selection wants becomes a
//!   channel, with the type and hash of its earliest announced publisher and the QoS
//!   `kairos bag record` would choose; a topic whose last publisher left is unadvertised
//!   [`UNADVERTISE_GRACE`] later, after the messages it sent before leaving.
//!   The graph is looked at on every change it reports and at least every
//!   `discovery_period`.
//! - **Subscribed only while wanted.** A channel gets a raw subscription (bytes as sent,
//!   never decoded) when its first client subscribes, and loses it when its last client
//!   unsubscribes or leaves; the transport then stops sending this process the topic.
//! - **All declarations on this thread.** Zenoh declarations can take a while; the async
//!   runtime that serves clients never waits for one.

use crate::channel::Channel;
use crate::hub::Hub;
use crate::outbox::Sample;
use kairos::graph::Node;
use kairos::graph::transport::Declaration;
use kairos_bag::record::subscription_qos;
use kairos_zenoh::ZenohTransport;
use kairos_zenoh::graph_key::{EntityKind, Token};
use kairos_zenoh::published::published_topics;
use kairos_zenoh::raw::{RawSample, RawTopic};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long a topic stays advertised, and subscribed, after its last publisher left.
/// Zenoh may deliver a publisher's leaving (a liveliness token, sent at control priority)
/// before its last messages (data priority): they still reach the clients, then the
/// topic is unadvertised.
pub const UNADVERTISE_GRACE: Duration = Duration::from_millis(500);

/// The follower's own state (see the module docs).
pub(crate) struct Follower {
    pub hub: Arc<Hub>,
    pub transport: Arc<ZenohTransport>,
    pub node: Node,
    /// Advertised topics: name -> channel id.
    topics: BTreeMap<String, u64>,
    /// Advertised topics whose last publisher left, and since when (see
    /// [`UNADVERTISE_GRACE`]).
    leaving: HashMap<String, Instant>,
    /// Topics not advertised because their type is not a ROS 2 message type (said once).
    refused: BTreeSet<String>,
    /// Advertised services: name -> service id.
    services: BTreeMap<String, u32>,
    /// Services not advertised because kairos does not ship their type (said once).
    refused_services: BTreeSet<String>,
    /// The kairos subscription of each wanted channel.
    subscriptions: HashMap<u64, Declaration>,
    counts: Arc<FollowCounts>,
}

/// What the follower counts, for [`BridgeStats`](crate::BridgeStats).
#[derive(Debug, Default)]
pub(crate) struct FollowCounts {
    /// Messages the publishers sent that never arrived (sequence gaps), all topics.
    pub lost: AtomicU64,
    /// Channels holding a kairos subscription now.
    pub subscribed: AtomicUsize,
}

impl Follower {
    pub(crate) fn new(
        hub: Arc<Hub>,
        transport: Arc<ZenohTransport>,
        node: Node,
        counts: Arc<FollowCounts>,
    ) -> Self {
        Self {
            hub,
            transport,
            node,
            topics: BTreeMap::new(),
            leaving: HashMap::new(),
            refused: BTreeSet::new(),
            services: BTreeMap::new(),
            refused_services: BTreeSet::new(),
            subscriptions: HashMap::new(),
            counts,
        }
    }

    /// Follows the graph until the bridge stops, then drops every subscription.
    pub(crate) fn run(mut self) {
        loop {
            self.discover();
            self.reconcile();
            self.counts
                .subscribed
                .store(self.subscriptions.len(), Ordering::Relaxed);
            if !self.hub.wait_follower(self.hub.options.discovery_period) {
                break;
            }
        }
        self.subscriptions.clear();
        self.counts.subscribed.store(0, Ordering::Relaxed);
    }

    /// Advertises new topics and services and unadvertises vanished ones.
    fn discover(&mut self) {
        let tokens = self.transport.graph().tokens();
        self.hub.set_graph(crate::graph::Graph::of(&tokens));
        self.discover_services(&tokens);
        let publishers = published_topics(&tokens, None);
        let now = Instant::now();
        self.leaving
            .retain(|topic, _| !publishers.contains_key(topic.as_str()));
        let vanished: Vec<(String, u64)> = self
            .topics
            .iter()
            .filter(|(topic, _)| !publishers.contains_key(topic.as_str()))
            .filter(|(topic, _)| {
                let since = *self.leaving.entry((*topic).clone()).or_insert(now);
                now.duration_since(since) >= UNADVERTISE_GRACE
            })
            .map(|(t, id)| (t.clone(), *id))
            .collect();
        for (topic, id) in vanished {
            self.leaving.remove(&topic);
            self.topics.remove(&topic);
            self.subscriptions.remove(&id);
            self.hub.remove_channel(id);
            log::info!("kairos bridge foxglove: {topic} has no publisher left; unadvertised");
        }
        for (topic, published) in publishers {
            if self.topics.contains_key(topic) || self.refused.contains(topic) {
                continue;
            }
            let ros_type = published.ros_type();
            if !self.hub.options.selection.wants(topic, ros_type.as_deref()) {
                continue;
            }
            let endpoint = published.endpoint;
            let Some(ros_type) = ros_type else {
                log::warn!(
                    "kairos bridge foxglove: {topic} announces the type {}, which is not a ROS 2 message type; not advertised",
                    endpoint.dds_type
                );
                self.refused.insert(topic.to_owned());
                continue;
            };
            let channel = Arc::new(Channel::new(
                self.hub.next_id(),
                topic,
                &ros_type,
                &endpoint.hash,
                schema_text(topic, &ros_type),
                subscription_qos(&published.offered),
            ));
            log::info!("kairos bridge foxglove: advertising {topic} ({ros_type})");
            self.topics.insert(topic.to_owned(), channel.id);
            self.hub.add_channel(channel);
        }
    }

    /// Advertises the services of the graph (see [`crate::service`]); unadvertises those
    /// whose last server left.
    fn discover_services(&mut self, tokens: &[Token]) {
        let mut servers: BTreeMap<&str, &Token> = BTreeMap::new();
        for token in tokens {
            if let (EntityKind::Service, Some(endpoint)) = (token.kind, &token.endpoint) {
                servers.entry(&endpoint.name).or_insert(token);
            }
        }
        let vanished: Vec<(String, u32)> = self
            .services
            .iter()
            .filter(|(name, _)| !servers.contains_key(name.as_str()))
            .map(|(n, id)| (n.clone(), *id))
            .collect();
        for (name, id) in vanished {
            self.services.remove(&name);
            self.hub.remove_service(id);
            log::info!("kairos bridge foxglove: service {name} has no server left; unadvertised");
        }
        for (name, token) in servers {
            if self.services.contains_key(name) || self.refused_services.contains(name) {
                continue;
            }
            let Some(endpoint) = &token.endpoint else {
                continue;
            };
            let tool = kairos_zenoh::message::ros_type_name(&endpoint.dds_type)
                .and_then(|ros_type| kairos_zenoh::interfaces::service_by_name(&ros_type));
            let Some(tool) = tool else {
                log::warn!(
                    "kairos bridge foxglove: service {name} has the type {}, which kairos does not ship; not advertised",
                    endpoint.dds_type
                );
                self.refused_services.insert(name.to_owned());
                continue;
            };
            let id = u32::try_from(self.hub.next_id()).unwrap_or(u32::MAX);
            let Some(service) = crate::service::Service::new(id, name, tool) else {
                self.refused_services.insert(name.to_owned());
                continue;
            };
            log::info!("kairos bridge foxglove: advertising service {name}");
            self.services.insert(name.to_owned(), id);
            self.hub.add_service(Arc::new(service));
        }
    }

    /// Subscribes the channels some client wants; drops the subscriptions of the others.
    fn reconcile(&mut self) {
        let channels: Vec<Arc<Channel>> = self.hub.tables().channels.values().cloned().collect();
        for channel in channels {
            let wanted = channel.wanted();
            let have = self.subscriptions.contains_key(&channel.id);
            if wanted && !have {
                match self.subscribe(&channel) {
                    Ok(declaration) => {
                        log::info!("kairos bridge foxglove: subscribed to {}", channel.topic);
                        self.subscriptions.insert(channel.id, declaration);
                    }
                    Err(e) => {
                        log::warn!(
                            "kairos bridge foxglove: cannot subscribe to {}: {e}",
                            channel.topic
                        );
                    }
                }
            } else if !wanted && have {
                self.subscriptions.remove(&channel.id);
                log::info!(
                    "kairos bridge foxglove: no client wants {} now; unsubscribed",
                    channel.topic
                );
            }
        }
    }

    fn subscribe(
        &self,
        channel: &Arc<Channel>,
    ) -> Result<Declaration, kairos_zenoh::TransportError> {
        let deliver = {
            let channel = channel.clone();
            let clock = self.hub.clock.clone();
            move |sample: RawSample| {
                channel.deliver(Sample {
                    log_time: u64::try_from(clock.now().nanos()).unwrap_or(0),
                    payload: sample.payload,
                });
            }
        };
        let lost = {
            let counts = self.counts.clone();
            move |count| {
                counts.lost.fetch_add(count, Ordering::Relaxed);
            }
        };
        self.transport.raw_subscription(
            &self.node,
            RawTopic {
                name: &channel.topic,
                ros_type: &channel.ros_type,
                type_hash: &channel.type_hash,
            },
            channel.qos,
            deliver,
            lost,
        )
    }
}

/// The `ros2msg` text of `ros_type`, as `kairos bag record` writes it; empty (with a
/// warning) when kairos does not ship the type or one it refers to.
pub(crate) fn schema_text(topic: &str, ros_type: &str) -> String {
    kairos_bag::ros2msg_definition(ros_type, shipped_definition)
    .unwrap_or_else(|e| {
        log::warn!(
            "kairos bridge foxglove: {topic} is advertised without its definition ({e}); clients cannot decode it"
        );
        String::new()
    })
}

/// The `.msg` text of the message type `name` (`pkg/msg/Type`) if kairos ships it.
pub(crate) fn shipped_definition(name: &str) -> Option<String> {
    kairos_zenoh::interfaces::message_by_name(name)
        .map(|tool| tool.definition())
        .filter(|text| !text.is_empty())
        .map(str::to_owned)
}
