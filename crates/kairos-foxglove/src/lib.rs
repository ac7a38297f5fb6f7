//! A Foxglove WebSocket server over the kairos graph: open Foxglove (or Lichtblick) on
//! `ws://127.0.0.1:8765` and see every topic of a running kairos or ROS 2 (rmw_zenoh)
//! system, live.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use kairos::graph::{Context, Node};
//! let transport = kairos_zenoh::ZenohTransport::open()?;
//! transport.install(&Context::global())?;
//! let node = Node::new("foxglove_bridge")?;
//! let bridge = kairos_foxglove::Bridge::start(transport, node, Default::default())?;
//! println!("serving ws://{}", bridge.local_addr());
//! # Ok(()) }
//! ```
//!
//! What the bridge promises, and why:
//! - **The protocol Foxglove speaks.** `foxglove.websocket.v1`, with the protocol's
//!   messages encoded and parsed by the `foxglove` crate (the SDK Foxglove maintains) and
//!   the WebSocket handshake and framing by tokio-tungstenite; kairos writes only the
//!   mapping onto its graph. Clients are checked against `@foxglove/ws-protocol`'s own
//!   client in kairos's tests.
//! - **Every topic, with a schema a client decodes by.** Each topic with a publisher in
//!   any process the Zenoh transport reaches is advertised with its ROS type, its
//!   `ros2msg` definition (the text `kairos bag record` writes into MCAP files) and the
//!   `cdr` encoding, and unadvertised when its last publisher leaves ([`follow`]).
//! - **Bytes as sent.** Messages go to clients as the publisher serialized them, and
//!   messages a client publishes (`clientPublish`) go to kairos subscribers as the client
//!   serialized them: nothing is decoded and encoded again ([`publish`]).
//! - **Subscribed only while watched.** The bridge subscribes to a topic while at least
//!   one client subscribes to it, so a bridge nobody looks at costs the system nothing.
//! - **A slow client never slows the robot.** The transport's thread only queues into
//!   per-client outboxes bounded in messages per topic and in bytes per client, dropping
//!   the oldest when full; every drop is counted, reported to that client as a status
//!   message and written to the kairos log ([`outbox`], [`report`]). Memory is bounded by
//!   `max_clients × queue_bytes`.
//! - **Loopback by default.** The protocol has no authentication; another address is
//!   bound only when [`BridgeOptions::address`] says so.
//! - **Simulation time as server time.** When the node's clock runs on `/clock`, clients
//!   get it as the server time (the protocol's `time` capability).
//!
//! - **Services called, never waited on by the bridge.** The graph's services are
//!   advertised with request and response schemas; a client's call runs on a blocking
//!   thread and is always answered, with the response or a failure that says why
//!   ([`service`]).
//!
//! - **Parameters through the nodes' own services.** `getParameters` and `setParameters`
//!   reach the nodes' ROS 2 parameter services, named `<node>.<parameter>`; subscribed
//!   parameters are updated from `/parameter_events` ([`parameters`]).
//!
//! - **The connection graph** ([`graph`]): which nodes publish, subscribe and serve what,
//!   updated as the graph changes.
//!
//! Not yet served: assets. The bridge does not advertise that capability, so clients do
//! not ask.

#![deny(unsafe_code)]

mod channel;
pub mod error;
pub mod follow;
pub mod graph;
mod hub;
pub mod options;
pub mod outbox;
pub mod parameters;
pub mod publish;
pub mod report;
pub mod server;
pub mod service;
pub mod session;

pub use error::{BridgeError, PublishError};
pub use options::BridgeOptions;
pub use server::{Bridge, BridgeStats};
pub use session::SUBPROTOCOL;
