//! A kairos service server on the network: one zenoh queryable per service key in the
//! process, shared by its servers, answering through a client of the context so the graph
//! picks the server, and the server's group shared as a wait-for edge.

use super::{INTERNAL_NODE, NodeEntry, TransportError, ZenohTransport, zenoh_err};
use crate::attachment::{Attachment, now_ns};
use crate::graph_key::{EntityKind, WireQos};
use crate::shared_waits::ServedGuard;
use kairos::graph::transport::{Declaration, ServiceEndpoint, ServiceWire};
use kairos::graph::{Caller, Node, NodeOptions};
use std::sync::{Arc, Weak};
use zenoh::Wait;
use zenoh::liveliness::LivelinessToken;
use zenoh::sample::Locality;

/// A service type's description, as its hash is computed from (request, response,
/// event).
pub(super) fn service_type(wire: &ServiceWire) -> kairos_msgs::TypeDescription {
    kairos_msgs::message::service_description(
        wire.type_name(),
        wire.request.description(),
        wire.response.description(),
    )
}

struct ZenohService {
    _queryable: Arc<ServiceQueryable>,
    _served: Option<ServedGuard>,
    _token: LivelinessToken,
    _node: Arc<NodeEntry>,
}

/// The queryable of one service name, shared by its servers in this process: requests go
/// through a client of the context, so the server that answers is the one the graph picks
/// (the oldest alive), and a request is answered once however many servers there are.
pub(super) struct ServiceQueryable {
    _queryable: zenoh::query::Queryable<()>,
    _server_node: Node,
}

impl ZenohTransport {
    pub(super) fn carry_service(
        &self,
        endpoint: &ServiceEndpoint<'_>,
    ) -> Result<Option<Declaration>, TransportError> {
        let Some(node) = self.node_entry(endpoint.node)? else {
            return Ok(None);
        };
        self.types.remember(service_type(&endpoint.wire));
        let (dds_type, hash) = (
            endpoint.wire.dds_type()?,
            endpoint.wire.type_hash().to_string(),
        );
        let key = self.key(endpoint.name, &dds_type, &hash);
        let queryable = {
            let mut queryables = self.queryables.lock();
            queryables.retain(|_, q| q.strong_count() > 0);
            match queryables.get(&key).and_then(Weak::upgrade) {
                Some(shared) => shared,
                None => {
                    let shared = Arc::new(self.service_queryable(endpoint, &key)?);
                    queryables.insert(key, Arc::downgrade(&shared));
                    shared
                }
            }
        };
        let (token, _) = self.announce(
            &node,
            EntityKind::Service,
            endpoint.name,
            &dds_type,
            &hash,
            WireQos::default(),
        )?;
        let served = endpoint.server_group().map(|(group, callback)| {
            self.waits.serve(kairos::exec::shared_waits::ServedBy {
                service: endpoint.name.to_owned(),
                group,
                callback,
            })
        });
        Ok(Some(Box::new(ZenohService {
            _queryable: queryable,
            _served: served,
            _token: token,
            _node: node,
        })))
    }

    /// Declares the queryable of service `endpoint` on `key`, answering through a client
    /// of a node of the transport's own.
    fn service_queryable(
        &self,
        endpoint: &ServiceEndpoint<'_>,
        key: &str,
    ) -> Result<ServiceQueryable, TransportError> {
        let server_node = Node::with_options(
            endpoint.node.context(),
            &format!("{INTERNAL_NODE}{}", self.next_id()),
            NodeOptions::new().use_global_arguments(false),
        )?;
        let server = endpoint.local_server(&server_node)?;
        let board = self.settle.clone();
        let queryable = self
            .session
            .declare_queryable(key.to_owned())
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
                // A clone is a reference count: the server decodes the request from zenoh's
                // buffer (joined only if it came in pieces), not from a copy of it.
                let payload = query.payload().cloned().unwrap_or_default();
                let reply_key = query.key_expr().clone().into_owned();
                // One delivery of the settle protocol: the request's callback is its work.
                board.inflow().deliver(|| {
                    let caller = Caller {
                        gid: attachment.gid,
                        seq: attachment.sequence_number,
                    };
                    server(
                        &payload.to_bytes(),
                        Some(caller),
                        Box::new(move |result| {
                            let echo = Attachment {
                                source_timestamp: now_ns(),
                                ..attachment
                            };
                            // A reply fails only if the querier is gone; nothing waits for it then.
                            let _ = match result {
                                Ok(bytes) => query
                                    .reply(reply_key, bytes)
                                    .attachment(echo.to_bytes())
                                    .wait(),
                                Err(why) => query.reply_err(why).wait(),
                            };
                        }),
                    )
                });
            })
            .wait()
            .map_err(zenoh_err(format!(
                "declare the queryable of service {}",
                endpoint.name
            )))?;
        Ok(ServiceQueryable {
            _queryable: queryable,
            _server_node: server_node,
        })
    }
}
