//! Entities for tools that know their type only at run time.

use super::{Sink, TransportError, ZenohTransport};
use kairos::graph::Node;
use kairos::graph::transport::{
    AnyMessage, Declaration, Endpoint, RemoteClient, RemotePublisher, ServiceWire, Wire,
};
use std::sync::Arc;

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
