//! Nodes on the network: a liveliness token per node, and the token of each entity
//! under it (rmw_zenoh's `NN` and `MP`/`MS`/`SS`/`SC` keys). Every entity is checked
//! against the security configuration's rules before its token is declared.

use super::{INTERNAL_NODE, TransportError, ZenohTransport, zenoh_err};
use crate::attachment::Gid;
use crate::graph_key::{
    Durability, EndpointKey, EntityKind, History, NodeKey, Reliability, Token, WireQos, data_key,
};
use kairos::graph::Node;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use zenoh::Wait;
use zenoh::liveliness::LivelinessToken;

pub(crate) struct NodeEntry {
    pub(super) key: NodeKey,
    _token: LivelinessToken,
}

impl ZenohTransport {
    pub(super) fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// The node's key, declaring its token if the node has none here yet (at its creation,
    /// or at its first entity for a node made before the transport came); `None`
    /// for the transport's own nodes, which are never announced nor carried.
    pub(crate) fn node_entry(&self, node: &Node) -> Result<Option<Arc<NodeEntry>>, TransportError> {
        if node.name().starts_with(INTERNAL_NODE) {
            return Ok(None);
        }
        let mut nodes = self.nodes.lock();
        let fq = node.fully_qualified_name().to_owned();
        if let Some(entry) = nodes.get(&fq).and_then(Weak::upgrade) {
            return Ok(Some(entry));
        }
        let nid = self.next_id();
        let key = NodeKey {
            domain: self.domain,
            zid: self.zid.clone(),
            nid,
            // The enclave whose identity the session presents (see crate::config).
            enclave: node
                .ros_args()
                .enclave()
                .map(str::to_owned)
                .or_else(|| std::env::var("ROS_SECURITY_ENCLAVE_OVERRIDE").ok())
                .unwrap_or_default(),
            namespace: node.namespace().to_owned(),
            name: node.name().to_owned(),
        };
        let token = Token::of_node(key.clone());
        let token = self
            .session
            .liveliness()
            .declare_token(token.key_expr())
            .wait()
            .map_err(zenoh_err(format!(
                "declare the liveliness token of node {fq}"
            )))?;
        let entry = Arc::new(NodeEntry { key, _token: token });
        nodes.insert(fq, Arc::downgrade(&entry));
        Ok(Some(entry))
    }

    /// Declares the token of an entity; returns it with the entity's gid.
    pub(crate) fn announce(
        &self,
        node: &NodeEntry,
        kind: EntityKind,
        name: &str,
        dds_type: &str,
        hash: &str,
        qos: WireQos,
    ) -> Result<(LivelinessToken, Gid), TransportError> {
        self.access
            .check(kind, name, &self.key(name, dds_type, hash))?;
        let token = Token {
            node: node.key.clone(),
            id: self.next_id(),
            kind,
            endpoint: Some(EndpointKey {
                name: name.to_owned(),
                dds_type: dds_type.to_owned(),
                hash: hash.to_owned(),
                qos,
            }),
        };
        let key = token.key_expr();
        let declared = self
            .session
            .liveliness()
            .declare_token(&key)
            .wait()
            .map_err(zenoh_err(format!("declare the liveliness token of {name}")))?;
        self.graph.declared(name, dds_type, hash);
        Ok((declared, token.gid()))
    }

    pub(crate) fn key(&self, name: &str, dds_type: &str, hash: &str) -> String {
        data_key(self.domain, name, dds_type, hash)
    }
}

pub(crate) fn wire_qos(qos: kairos::graph::Qos) -> WireQos {
    WireQos {
        reliability: match qos.reliability {
            kairos::graph::Reliability::Reliable => Reliability::Reliable,
            kairos::graph::Reliability::BestEffort => Reliability::BestEffort,
        },
        durability: match qos.durability {
            kairos::graph::Durability::Volatile => Durability::Volatile,
            kairos::graph::Durability::TransientLocal => Durability::TransientLocal,
        },
        history: match qos.history {
            kairos::graph::History::KeepLast(depth) => History::KeepLast(depth as u64),
            kairos::graph::History::KeepAll { bound } => History::KeepAll(bound as u64),
        },
        deadline: qos.deadline,
        lifespan: qos.lifespan,
        liveliness: qos.liveliness,
        liveliness_lease: qos.liveliness_lease,
    }
}
