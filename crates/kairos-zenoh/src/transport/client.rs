//! A kairos client on the network: a zenoh query per call, with no zenoh timeout (the
//! caller's decides), answered once: by the first response, or on drop with why none came.

use super::NodeEntry;
use super::service::service_type;
use super::{TransportError, ZenohTransport};
use crate::attachment::{Attachment, Gid, now_ns};
use crate::graph_cache::GraphCache;
use crate::graph_key::{EntityKind, WireQos};
use kairos::graph::transport::{AnyValue, RemoteClient, Reply, ServiceEndpoint, ServiceWire};
use kairos::graph::{CallError, Node};
use parking_lot::Mutex;
use std::sync::Arc;
use std::time::Instant;
use zenoh::Session;
use zenoh::Wait;
use zenoh::liveliness::LivelinessToken;
use zenoh::query::{ConsolidationMode, QueryTarget};
use zenoh::sample::Locality;

/// The zenoh timeout of a service query: none that a caller could meet. The caller's own
/// timeout decides how long it waits; the query stays open after it gave up, so a reply
/// that comes later is counted in `late_responses`, and it ends when the server answers
/// or leaves the graph (zenoh finalizes a query whose queryable is gone).
const NO_QUERY_TIMEOUT: std::time::Duration =
    std::time::Duration::from_secs(100 * 365 * 24 * 60 * 60);

struct ZenohClient {
    wire: ServiceWire,
    hash: String,
    session: Session,
    graph: Arc<GraphCache>,
    board: Arc<crate::settle::Board>,
    name: String,
    key: String,
    gid: Gid,
    /// A querier on the service's key that sends nothing: its matching says whether zenoh
    /// routes this client's queries to a server yet.
    probe: zenoh::query::Querier<'static>,
    _token: LivelinessToken,
    _node: Arc<NodeEntry>,
}

/// Calls `reply` once: with the first response, or on drop with why there was none.
struct ReplyOnce {
    reply: Mutex<Option<(Reply, crate::settle::Outstanding)>>,
    board: Arc<crate::settle::Board>,
    service: String,
    seq: u64,
}

impl ReplyOnce {
    /// Hands the result over, once, as a delivery of the settle protocol; the call stops
    /// being outstanding after that (see `crate::settle`).
    fn send(&self, result: Result<AnyValue, CallError>) {
        if let Some((reply, outstanding)) = self.reply.lock().take() {
            self.board.inflow().deliver(|| reply(result));
            drop(outstanding);
        }
    }
}

impl Drop for ReplyOnce {
    fn drop(&mut self) {
        let (service, seq) = (self.service.clone(), self.seq);
        self.send(Err(CallError::Transport {
            service,
            seq,
            reason: "the server left the graph without answering".into(),
        }));
    }
}

/// How long a client that sees a server's token waits for zenoh to route its queries
/// there before it calls anyway (the call then says the server did not answer).
const ROUTING_BOUND: std::time::Duration = std::time::Duration::from_secs(5);

impl ZenohClient {
    /// Whether zenoh routes this client's queries to a complete queryable now.
    fn routed(&self) -> bool {
        self.probe
            .matching_status()
            .wait()
            .is_ok_and(|status| status.matching())
    }

    /// Waits until [`Self::routed`], at most until `deadline`.
    fn wait_routed(&self, deadline: Instant) -> bool {
        let (tx, rx) = std::sync::mpsc::channel();
        let listener = self
            .probe
            .matching_listener()
            .callback(move |status| {
                if status.matching() {
                    let _ = tx.send(());
                }
            })
            .wait();
        if listener.is_err() || self.routed() {
            return true;
        }
        rx.recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .is_ok()
    }
}

impl RemoteClient for ZenohClient {
    fn is_ready(&self) -> bool {
        self.graph.server_alive(&self.name, &self.hash) && self.routed()
    }

    fn wait_ready(&self, deadline: Option<Instant>) -> bool {
        if !self.graph.wait_server(&self.name, &self.hash, deadline) {
            return false;
        }
        // The server's token can come before zenoh routes queries to its queryable; a
        // call made in between finds no queryable and fails at once.
        let bound = Instant::now() + ROUTING_BOUND;
        self.wait_routed(deadline.map_or(bound, |d| d.min(bound)));
        true
    }

    fn gid(&self) -> Option<[u8; 16]> {
        Some(self.gid)
    }

    fn call(&self, request: AnyValue, seq: u64, reply: Reply) {
        let once = Arc::new(ReplyOnce {
            reply: Mutex::new(Some((reply, self.board.call(&self.name)))),
            board: self.board.clone(),
            service: self.name.clone(),
            seq,
        });
        let Some(payload) = self.wire.request.encode(&*request) else {
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
        let response_wire = self.wire.response;
        let (service, answer) = (self.name.clone(), once.clone());
        let sent = self
            .session
            .get(&self.key)
            .payload(payload)
            .attachment(attachment.to_bytes())
            .target(QueryTarget::AllComplete)
            .timeout(NO_QUERY_TIMEOUT)
            .consolidation(ConsolidationMode::None)
            .allowed_destination(Locality::Remote)
            .callback(move |response| {
                let result = match response.result() {
                    Ok(sample) => response_wire
                        .decode_value(&sample.payload().to_bytes())
                        .map_err(|e| CallError::Transport {
                            service: service.clone(),
                            seq,
                            reason: format!("the response does not decode: {e}"),
                        }),
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

impl ZenohTransport {
    pub(super) fn carry_client(
        &self,
        endpoint: &ServiceEndpoint<'_>,
    ) -> Result<Option<Arc<dyn RemoteClient>>, TransportError> {
        self.client_of(endpoint.node, endpoint.name, &endpoint.wire)
    }

    pub(super) fn client_of(
        &self,
        node: &Node,
        name: &str,
        wire: &ServiceWire,
    ) -> Result<Option<Arc<dyn RemoteClient>>, TransportError> {
        let Some(node) = self.node_entry(node)? else {
            return Ok(None);
        };
        self.types.remember(service_type(wire));
        let (dds_type, hash) = (wire.dds_type()?, wire.type_hash().to_string());
        let (token, gid) = self.announce(
            &node,
            EntityKind::Client,
            name,
            &dds_type,
            &hash,
            WireQos::default(),
        )?;
        let key = self.key(name, &dds_type, &hash);
        let probe = self
            .session
            .declare_querier(key.clone())
            .target(QueryTarget::AllComplete)
            .allowed_destination(Locality::Remote)
            .wait()
            .map_err(crate::transport::zenoh_err(format!(
                "declare the querier of service {name}"
            )))?;
        Ok(Some(Arc::new(ZenohClient {
            probe,
            key,
            name: name.to_owned(),
            wire: wire.clone(),
            hash,
            session: self.session.clone(),
            graph: self.graph.clone(),
            board: self.settle.clone(),
            gid,
            _token: token,
            _node: node,
        })))
    }
}
