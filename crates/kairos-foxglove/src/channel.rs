//! A channel: one topic of the graph as the bridge advertises it, and the clients
//! subscribed to it.
//!
//! What it promises: a channel's advertisement carries the topic's ROS type as schema
//! name, its `ros2msg` definition (the text `kairos bag record` writes as MCAP schema) and
//! the `cdr` encoding, so a client decodes messages with the schema alone. A message
//! handed to [`Channel::deliver`] goes to each subscribed client's outbox, which never
//! blocks (see [`crate::outbox`]); the bytes are the publisher's, undecoded.

use crate::outbox::{Outbox, Sample};
use foxglove::ws_protocol::schema::Schema;
use foxglove::ws_protocol::server::Channel as Advertised;
use kairos::graph::Qos;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

/// One subscription of one client.
#[derive(Debug, Clone)]
pub(crate) struct Subscriber {
    pub client: u64,
    pub subscription: u32,
    pub outbox: Arc<Outbox>,
}

/// A topic as advertised (see the module docs).
#[derive(Debug)]
pub(crate) struct Channel {
    pub id: u64,
    pub topic: Arc<str>,
    pub ros_type: String,
    pub type_hash: String,
    /// The `ros2msg` text; empty when kairos does not know the type.
    pub schema: String,
    /// The QoS to subscribe with (rosbag2's choice from what the publishers offer).
    pub qos: Qos,
    subscribers: RwLock<Vec<Subscriber>>,
    received: AtomicU64,
}

impl Channel {
    pub(crate) fn new(
        id: u64,
        topic: &str,
        ros_type: &str,
        type_hash: &str,
        schema: String,
        qos: Qos,
    ) -> Self {
        Self {
            id,
            topic: Arc::from(topic),
            ros_type: ros_type.to_owned(),
            type_hash: type_hash.to_owned(),
            schema,
            qos,
            subscribers: RwLock::new(Vec::new()),
            received: AtomicU64::new(0),
        }
    }

    /// The channel as the protocol advertises it.
    pub(crate) fn advertisement(&self) -> Advertised<'_> {
        // With no definition (a type kairos does not ship) the schema is empty: a client
        // sees the topic and its type, and cannot decode it.
        Advertised::builder(self.id, &*self.topic, "cdr")
            .with_schema(Schema::new(
                self.ros_type.as_str(),
                "ros2msg",
                self.schema.as_bytes(),
            ))
            .build()
            .expect("a ros2msg schema is UTF-8 text, which always encodes")
    }

    /// Hands `sample` to every subscribed client (never blocks).
    pub(crate) fn deliver(&self, sample: Sample) {
        self.received.fetch_add(1, Ordering::Relaxed);
        let sample = Arc::new(sample);
        let subscribers = self.subscribers.read().unwrap_or_else(|e| e.into_inner());
        for s in subscribers.iter() {
            s.outbox.push_message(s.subscription, &sample);
        }
    }

    pub(crate) fn add(&self, subscriber: Subscriber) {
        self.subscribers
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .push(subscriber);
    }

    /// Removes the subscriptions of `client` that `which` selects.
    pub(crate) fn remove(&self, client: u64, which: impl Fn(u32) -> bool) {
        self.subscribers
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|s| s.client != client || !which(s.subscription));
    }

    /// Whether some client wants this topic now.
    pub(crate) fn wanted(&self) -> bool {
        !self
            .subscribers
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .is_empty()
    }

    /// Messages received from the transport so far.
    pub(crate) fn received(&self) -> u64 {
        self.received.load(Ordering::Relaxed)
    }
}
