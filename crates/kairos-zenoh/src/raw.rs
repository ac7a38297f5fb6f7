//! Subscriptions that keep each message as it arrived, and publishers that send bytes as
//! they are given: for tools that store or forward messages without knowing the type
//! (`kairos bag record` records any type the graph announces, `kairos bag play` plays
//! back any type a bag holds, shipped with kairos or not).
//!
//! What this module promises: a [`RawSample`] is what the publisher sent, byte for byte,
//! with its rmw_zenoh attachment (sequence number, source timestamp, publisher gid). The
//! subscription takes the path every kairos subscription takes: the same key expression,
//! the same checks (a sample without a valid attachment is counted as malformed, never
//! handed over), the same sequence accounting (each gap is counted in
//! [`ZenohTransport::sequence_gaps`] and handed to `lost`), the same late-joiner history
//! for a transient-local QoS, and the same liveliness token, so the graph and other
//! processes see a subscription of the announced type.
//!
//! A [`RawPublisher`] is a kairos publisher without the codec: announced under its node
//! with the given type, hash and QoS (so `kairos topic info` and ROS 2 peers see a
//! publisher of that type), declared with the same plan as every publisher (reliability,
//! congestion control, the transient-local cache that late joiners query), and each
//! [`RawPublisher::publish`] sends the bytes unchanged with an rmw_zenoh attachment of
//! its own: its gid, a sequence number that starts at 1 and increases by one per message,
//! and the wall-clock time of the send as source timestamp. Like every kairos publisher it
//! sends only to other sessions.
//!
//! Both are traced as every kairos endpoint is: created (`rcl_publisher_init`,
//! `rcl_subscription_init`), each message published (`rcl_publish`, `rmw_publish`) and
//! each one received (`rmw_take`), under the handles other processes' traces know them
//! by, so a trace follows a message from a player to its subscribers and from a
//! publisher into a recorder.

use crate::TransportError;
use crate::attachment::Attachment;
use crate::attachment::{Gid, now_ns};
use crate::graph_key::EntityKind;
use crate::transport::{NodeEntry, Sender, Sink, ZenohTransport, gid_handle};
use kairos::graph::transport::Declaration;
use kairos::graph::{Node, Qos};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use zenoh::liveliness::LivelinessToken;

/// One message as it arrived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawSample {
    /// The serialized message (CDR for ROS 2 types), as the publisher sent it.
    pub payload: Vec<u8>,
    /// The publisher's attachment: its sequence number, source timestamp and gid.
    pub attachment: Attachment,
    /// The handle traces know the receiving subscription by (`rmw_subscription_handle`
    /// of its `rcl_subscription_init`).
    pub subscription_handle: u64,
}

impl RawSample {
    /// The handle traces know the sample's publisher by (`publisher_handle`).
    pub fn publisher_handle(&self) -> u64 {
        crate::transport::gid_handle(&self.attachment.gid)
    }
}

/// A topic and the type its publishers announce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawTopic<'a> {
    /// The topic, absolute (`/chatter`).
    pub name: &'a str,
    /// The ROS type, `pkg/msg/Type`.
    pub ros_type: &'a str,
    /// The RIHS01 type hash, as announced.
    pub type_hash: &'a str,
}

/// Where a raw subscription hands its samples.
pub(crate) type RawSink = dyn Fn(RawSample) + Send + Sync;

impl ZenohTransport {
    /// A subscription of `topic` with the type its publishers announce, handing each message from other
    /// processes to `deliver` undecoded, on zenoh's thread, until the declaration drops.
    /// `lost` gets the count of each gap in a publisher's sequence numbers.
    ///
    /// The subscription is announced under `node` with `qos`; a transient-local `qos`
    /// asks the publishers' caches for their history first.
    pub fn raw_subscription(
        &self,
        node: &Node,
        topic: RawTopic<'_>,
        qos: Qos,
        deliver: impl Fn(RawSample) + Send + Sync + 'static,
        lost: impl Fn(u64) + Send + Sync + 'static,
    ) -> Result<Declaration, TransportError> {
        let dds_type = crate::message::dds_type_name(topic.ros_type)?;
        let entry = self
            .node_entry(node)?
            .ok_or_else(|| TransportError::Unannounced(node.name().to_owned()))?;
        let handle = kairos::trace::next_handle();
        let depth = qos.capacity().unwrap_or(0) as u64;
        kairos::trace::tp::rcl_subscription_init(
            handle,
            node.trace_handle(),
            handle,
            topic.name,
            depth,
        );
        let subscriber = self.subscriber(
            topic.name,
            &dds_type,
            topic.type_hash,
            qos,
            Sink::Raw(handle, Box::new(deliver)),
            move |_publisher, _first, count| lost(count),
        )?;
        // Announced once it can receive, so whoever sees the token reaches it.
        let (token, _) = self.announce(
            &entry,
            EntityKind::Subscription,
            topic.name,
            &dds_type,
            topic.type_hash,
            crate::transport::wire_qos(qos),
        )?;
        Ok(Box::new((subscriber, token, entry)))
    }
}

/// A publisher of bytes that are already serialized (see the module docs); it leaves the
/// graph when dropped.
pub struct RawPublisher {
    sender: Sender,
    gid: Gid,
    /// Its handle in traces: [`gid_handle`] of its gid, as remote subscriptions know it.
    handle: u64,
    /// The sequence number of the last message sent (0: none yet).
    sequence: AtomicI64,
    topic: String,
    _token: LivelinessToken,
    _node: Arc<NodeEntry>,
}

impl std::fmt::Debug for RawPublisher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawPublisher")
            .field("topic", &self.topic)
            .field("sent", &self.sent())
            .finish_non_exhaustive()
    }
}

impl RawPublisher {
    /// Sends `payload` (a serialized message, CDR with its encapsulation header for ROS 2
    /// types) unchanged, with the next sequence number and the source timestamp now;
    /// returns that sequence number (the message's `seq` in traces).
    pub fn publish(&self, payload: &[u8]) -> u64 {
        use kairos::trace::tp;
        let sequence_number = self.sequence.fetch_add(1, Ordering::AcqRel) + 1;
        let seq = sequence_number as u64;
        if tp::enabled() {
            let address = payload.as_ptr() as u64;
            tp::rcl_publish(self.handle, address, seq);
            tp::rmw_publish(address, self.handle, seq);
        }
        let attachment = Attachment {
            sequence_number,
            source_timestamp: now_ns(),
            gid: self.gid,
        };
        self.sender.put(payload.to_vec().into(), attachment);
        seq
    }

    /// Its handle in traces (`publisher_handle`).
    pub fn trace_handle(&self) -> u64 {
        self.handle
    }

    /// Whether zenoh routes its messages to at least one subscriber now (a subscription's
    /// liveliness token can be seen before zenoh has matched it; a message sent then
    /// reaches nobody).
    pub fn matched(&self) -> bool {
        self.sender.matched()
    }

    /// The publisher's gid, as its attachments and its liveliness token carry it.
    pub fn gid(&self) -> Gid {
        self.gid
    }

    /// How many messages were sent.
    pub fn sent(&self) -> u64 {
        u64::try_from(self.sequence.load(Ordering::Acquire)).unwrap_or(0)
    }

    /// The topic it publishes on.
    pub fn topic(&self) -> &str {
        &self.topic
    }
}

impl ZenohTransport {
    /// A publisher of `topic` with the given type and hash, announced under `node` with
    /// `qos` and declared as every kairos publisher of `qos` is (see the module docs).
    pub fn raw_publisher(
        &self,
        node: &Node,
        topic: RawTopic<'_>,
        qos: Qos,
    ) -> Result<RawPublisher, TransportError> {
        let dds_type = crate::message::dds_type_name(topic.ros_type)?;
        let entry = self
            .node_entry(node)?
            .ok_or_else(|| TransportError::Unannounced(node.name().to_owned()))?;
        let key = self.key(topic.name, &dds_type, topic.type_hash);
        let (token, gid) = self.announce(
            &entry,
            EntityKind::Publisher,
            topic.name,
            &dds_type,
            topic.type_hash,
            crate::transport::wire_qos(qos),
        )?;
        let sender = self.declare_sender(topic.name, &dds_type, key, &qos)?;
        let handle = gid_handle(&gid);
        let depth = qos.capacity().unwrap_or(0) as u64;
        kairos::trace::tp::rcl_publisher_init(
            handle,
            node.trace_handle(),
            handle,
            topic.name,
            depth,
        );
        Ok(RawPublisher {
            sender,
            gid,
            handle,
            sequence: AtomicI64::new(0),
            topic: topic.name.to_owned(),
            _token: token,
            _node: entry,
        })
    }
}
