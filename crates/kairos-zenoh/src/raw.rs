//! Subscriptions that keep each message as it arrived: for tools that store or forward
//! bytes without knowing the type (`kairos bag record` records any type the graph
//! announces, shipped with kairos or not).
//!
//! What this module promises: a [`RawSample`] is what the publisher sent, byte for byte,
//! with its rmw_zenoh attachment (sequence number, source timestamp, publisher gid). The
//! subscription takes the path every kairos subscription takes: the same key expression,
//! the same checks (a sample without a valid attachment is counted as malformed, never
//! handed over), the same sequence accounting (each gap is counted in
//! [`ZenohTransport::sequence_gaps`] and handed to `lost`), the same late-joiner history
//! for a transient-local QoS, and the same liveliness token, so the graph and other
//! processes see a subscription of the announced type.

use crate::TransportError;
use crate::attachment::Attachment;
use crate::graph_key::EntityKind;
use crate::transport::{Sink, ZenohTransport};
use kairos::graph::transport::Declaration;
use kairos::graph::{Node, Qos};

/// One message as it arrived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawSample {
    /// The serialized message (CDR for ROS 2 types), as the publisher sent it.
    pub payload: Vec<u8>,
    /// The publisher's attachment: its sequence number, source timestamp and gid.
    pub attachment: Attachment,
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
        let subscriber = self.subscriber(
            topic.name,
            &dds_type,
            topic.type_hash,
            qos,
            Sink::Raw(Box::new(deliver)),
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
