//! The bridge: a listening socket, an async runtime of its own for the clients, and the
//! graph follower thread.
//!
//! What [`Bridge`] promises:
//! - **Loopback unless asked.** It listens where [`BridgeOptions::address`] says,
//!   `127.0.0.1:8765` by default.
//! - **Publishers and executors are never held up.** The transport's receive thread only
//!   hands each message to the outboxes of the clients subscribed to its topic, which
//!   queue or drop without blocking; writing to sockets happens on the bridge's own
//!   runtime (two threads), Zenoh declarations on the follower thread.
//! - **Memory bounded** by `max_clients × queue_bytes` of queued messages (plus each
//!   client's control messages, at most [`CONTROL_LIMIT`](crate::outbox::CONTROL_LIMIT)).
//! - **Stops whole.** [`Bridge::stop`] (or dropping it) closes every client, ends the
//!   follower (undeclaring the subscriptions) and shuts the runtime down within
//!   [`STOP_TIMEOUT`].

use crate::error::BridgeError;
use crate::follow::{FollowCounts, Follower};
use crate::hub::Hub;
use crate::options::BridgeOptions;
use kairos::graph::Node;
use kairos::time::ClockKind;
use kairos_zenoh::ZenohTransport;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;
use std::time::Duration;

/// How long [`Bridge::stop`] waits for the client tasks to end.
pub const STOP_TIMEOUT: Duration = Duration::from_secs(2);

/// What every client task reaches.
pub(crate) struct Shared {
    pub hub: Arc<Hub>,
    pub transport: Arc<ZenohTransport>,
    pub node: Node,
    pub sim_time: bool,
    pub session_id: String,
}

/// Counts of a running bridge.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BridgeStats {
    /// Clients connected now.
    pub clients: usize,
    /// Topics advertised now.
    pub channels: usize,
    /// Topics the bridge subscribes to now (those some client wants).
    pub subscribed: usize,
    /// Messages received from the transport, all topics, since the start (of topics still
    /// advertised).
    pub received: u64,
    /// Messages dropped for clients that read too slowly, since the start.
    pub dropped: u64,
    /// Messages publishers sent that never reached the bridge (sequence gaps).
    pub lost_in_transport: u64,
    /// Bytes of messages waiting for clients now.
    pub queued_bytes: usize,
}

/// A running Foxglove WebSocket bridge (see the crate docs).
pub struct Bridge {
    shared: Arc<Shared>,
    counts: Arc<FollowCounts>,
    runtime: Option<tokio::runtime::Runtime>,
    follower: Option<JoinHandle<()>>,
    local_addr: SocketAddr,
    /// The `/parameter_events` subscription behind parameter updates (none if it could
    /// not be made: said in the log, the rest of the bridge works).
    _parameter_events: Option<kairos_zenoh::interfaces::Held>,
}

impl std::fmt::Debug for Bridge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bridge")
            .field("local_addr", &self.local_addr)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl Bridge {
    /// Starts serving the graph `transport` sees, subscribing and publishing as `node`
    /// (whose clock stamps receive times: with `use_sim_time` the bridge serves simulation
    /// time). Fails when the address cannot be bound or an option is out of range.
    pub fn start(
        transport: Arc<ZenohTransport>,
        node: Node,
        options: BridgeOptions,
    ) -> Result<Self, BridgeError> {
        options.check()?;
        let address = options.address;
        let listener = std::net::TcpListener::bind(address)
            .and_then(|l| l.set_nonblocking(true).map(|()| l))
            .map_err(|source| BridgeError::Bind { address, source })?;
        let local_addr = listener
            .local_addr()
            .map_err(|source| BridgeError::Bind { address, source })?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("kairos-foxglove")
            .enable_io()
            .enable_time()
            .build()
            .map_err(BridgeError::Threads)?;
        let clock = node.clock();
        let sim_time = clock.kind() == ClockKind::Sim;
        let hub = Arc::new(Hub::new(options, clock));
        let session_id = format!(
            "kairos-{}-{}",
            std::process::id(),
            kairos::time::Clock::system().now().nanos()
        );
        let shared = Arc::new(Shared {
            hub: hub.clone(),
            transport: transport.clone(),
            node: node.clone(),
            sim_time,
            session_id,
        });
        {
            let hub = Arc::downgrade(&hub);
            transport.graph().watch(Box::new(move || {
                if let Some(hub) = hub.upgrade() {
                    hub.wake_follower();
                }
            }));
        }
        let parameter_events = crate::parameters::follow_updates(&shared)
            .map_err(|e| {
                log::warn!("kairos bridge foxglove: no parameter updates for clients: {e}");
            })
            .ok();
        let counts = Arc::new(FollowCounts::default());
        let follower = {
            let follower = Follower::new(hub.clone(), transport, node, counts.clone());
            std::thread::Builder::new()
                .name("kairos-foxglove-graph".into())
                .spawn(move || follower.run())
                .map_err(BridgeError::Threads)?
        };
        let listener = {
            let _entered = runtime.enter();
            tokio::net::TcpListener::from_std(listener)
                .map_err(|source| BridgeError::Bind { address, source })?
        };
        runtime.spawn(accept(shared.clone(), listener));
        runtime.spawn(crate::report::drops(hub.clone()));
        if sim_time {
            runtime.spawn(crate::report::sim_time(hub));
        }
        Ok(Self {
            shared,
            counts,
            runtime: Some(runtime),
            follower: Some(follower),
            local_addr,
            _parameter_events: parameter_events,
        })
    }

    /// The address it listens on (with the port chosen when asked for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Counts now.
    pub fn stats(&self) -> BridgeStats {
        let hub = &self.shared.hub;
        let (clients, channels, received, queued_bytes) = {
            let tables = hub.tables();
            (
                tables.clients.len(),
                tables.channels.len(),
                tables.channels.values().map(|c| c.received()).sum(),
                tables
                    .clients
                    .values()
                    .map(|c| c.outbox.queued_bytes())
                    .sum(),
            )
        };
        BridgeStats {
            clients,
            channels,
            subscribed: self.counts.subscribed.load(Ordering::Relaxed),
            received,
            dropped: hub.dropped(),
            lost_in_transport: self.counts.lost.load(Ordering::Relaxed),
            queued_bytes,
        }
    }

    /// Stops serving (see the module docs) and returns the final counts.
    pub fn stop(mut self) -> BridgeStats {
        self.finish()
    }

    fn finish(&mut self) -> BridgeStats {
        self.shared.hub.stop();
        if let Some(follower) = self.follower.take() {
            let _ = follower.join();
        }
        let stats = self.stats();
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_timeout(STOP_TIMEOUT);
        }
        stats
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        if self.runtime.is_some() {
            let _ = self.finish();
        }
    }
}

/// Accepts connections until the bridge stops; each is served by its own task.
async fn accept(shared: Arc<Shared>, listener: tokio::net::TcpListener) {
    while !shared.hub.is_stopping() {
        match listener.accept().await {
            Ok((stream, addr)) => {
                let _ = stream.set_nodelay(true);
                tokio::spawn(crate::session::serve(shared.clone(), stream, addr));
            }
            Err(e) => {
                // Out of file descriptors and the like: say so, and breathe before the next.
                log::warn!("kairos bridge foxglove: cannot accept a connection: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}
