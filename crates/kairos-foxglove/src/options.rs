//! What a bridge can be asked: where to listen, which topics, and how much it may buffer
//! for each client.

use kairos_bag::record::Selection;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

/// How a [`Bridge`](crate::Bridge) serves.
#[derive(Debug, Clone)]
pub struct BridgeOptions {
    /// Where to listen. Loopback by default (`127.0.0.1:8765`, Foxglove's default port):
    /// the protocol has no authentication, so binding another address is a choice the
    /// caller makes. Port 0 picks a free port ([`Bridge::local_addr`](crate::Bridge::local_addr)).
    pub address: SocketAddr,
    /// The topics advertised (default: every topic, hidden ones left out, as
    /// `ros2 bag record -a` chooses).
    pub selection: Selection,
    /// Per client and subscribed topic, the most messages waiting to be sent; the oldest
    /// is dropped (and counted) to make room.
    pub queue_messages: usize,
    /// Per client, the most bytes of messages waiting to be sent, over all its topics;
    /// the oldest message of the arriving message's topic is dropped (and counted) to make
    /// room, or the arriving message when its topic has none waiting.
    pub queue_bytes: usize,
    /// The most clients connected at once; one more is told why and disconnected. With
    /// `queue_bytes` this bounds the memory the bridge holds for clients.
    pub max_clients: usize,
    /// How often the graph is looked at for new and vanished topics, at the least (a change
    /// in the graph is looked at at once).
    pub discovery_period: Duration,
    /// How often each client is told, in a status message, how many messages it lost.
    pub status_period: Duration,
    /// The name the bridge gives in its `serverInfo`.
    pub name: String,
}

impl Default for BridgeOptions {
    fn default() -> Self {
        Self {
            address: SocketAddr::from((Ipv4Addr::LOCALHOST, 8765)),
            selection: Selection {
                all: true,
                ..Selection::default()
            },
            queue_messages: 100,
            queue_bytes: 32 * 1024 * 1024,
            max_clients: 16,
            discovery_period: Duration::from_millis(200),
            status_period: Duration::from_secs(1),
            name: "kairos".to_owned(),
        }
    }
}

impl BridgeOptions {
    pub(crate) fn check(&self) -> Result<(), crate::BridgeError> {
        let bad = |what: &str| Err(crate::BridgeError::InvalidOption(what.to_owned()));
        if self.queue_messages == 0 {
            return bad("the per-topic client queue must hold at least one message");
        }
        if self.queue_bytes == 0 {
            return bad("the client queue must hold at least one byte");
        }
        if self.max_clients == 0 {
            return bad("at least one client must be allowed");
        }
        if self.discovery_period.is_zero() || self.status_period.is_zero() {
            return bad("the discovery and status periods must be longer than zero");
        }
        Ok(())
    }
}
