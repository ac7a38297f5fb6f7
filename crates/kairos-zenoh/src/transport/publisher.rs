//! A kairos publisher on the network: its zenoh publisher (plain or zenoh-ext's advanced
//! one, as rmw_zenoh picks by QoS), its token, and the attachment on every sample.

use super::{NodeEntry, TransportError, ZenohTransport, gid_handle, wire_qos, zenoh_err};
use crate::attachment::{Attachment, Gid, now_ns};
use crate::graph_key::EntityKind;
use crate::shared_memory::SharedMemory;
use kairos::graph::transport::{Endpoint, LentBuffer, RemotePublisher, Wire, Written};
use parking_lot::Mutex;
use std::collections::HashSet;
use std::sync::Arc;
use zenoh::Wait;
use zenoh::liveliness::LivelinessToken;
use zenoh::sample::Locality;

struct ZenohPublisher {
    wire: Wire,
    publisher: Sender,
    shm: Arc<SharedMemory>,
    gid: Gid,
    local: Arc<LocalPublishers>,
    /// Tells other processes when a manual-liveliness lease lapses (taken by the core).
    liveliness: Mutex<Option<kairos::graph::transport::LivelinessSink>>,
    _token: LivelinessToken,
    _node: Arc<NodeEntry>,
}

impl Drop for ZenohPublisher {
    fn drop(&mut self) {
        self.local.0.write().remove(&self.gid);
    }
}

impl RemotePublisher for ZenohPublisher {
    fn trace_handle(&self) -> Option<u64> {
        Some(gid_handle(&self.gid))
    }

    fn liveliness_sink(&self) -> Option<kairos::graph::transport::LivelinessSink> {
        self.liveliness.lock().take()
    }

    fn publish(&self, message: &(dyn std::any::Any + Send + Sync), seq: u64) {
        let Some(payload) = self.shm.payload(&self.wire, message) else {
            return;
        };
        let attachment = Attachment {
            sequence_number: seq as i64,
            source_timestamp: now_ns(),
            gid: self.gid,
        };
        self.publisher.put(payload, attachment);
    }

    fn lend(&self, capacity: usize) -> Option<Box<dyn LentBuffer>> {
        self.shm.lend(capacity)
    }

    fn publish_lent(&self, payload: Written, seq: u64) -> Result<bytes::Bytes, Written> {
        let payload = self.shm.lent_payload(payload)?;
        let attachment = Attachment {
            sequence_number: seq as i64,
            source_timestamp: now_ns(),
            gid: self.gid,
        };
        self.publisher.put(payload.clone(), attachment);
        Ok(crate::received::shared(payload))
    }
}

/// The zenoh publisher under a kairos one, with the record of what it sent that the
/// settle protocol reads (see [`crate::settle`]).
pub(crate) struct Sender {
    zenoh: ZenohSender,
    sent: Arc<crate::settle::Sent>,
}

/// A volatile publisher is zenoh's plain one: for it, zenoh-ext's advanced publisher adds
/// nothing to the samples (no cache, no sequence numbers, no token of its own; the session
/// stamps every put with its clock either way, timestamping being on) but wraps every put
/// in builders of its own.
enum ZenohSender {
    Plain(zenoh::pubsub::Publisher<'static>),
    Advanced(zenoh_ext::AdvancedPublisher<'static>),
}

impl Sender {
    /// Whether zenoh routes this publisher's samples to at least one subscriber now.
    pub(crate) fn matched(&self) -> bool {
        let status = match &self.zenoh {
            ZenohSender::Plain(publisher) => publisher.matching_status().wait(),
            ZenohSender::Advanced(publisher) => publisher.matching_status().wait(),
        };
        status.is_ok_and(|s| s.matching())
    }

    pub(crate) fn put(&self, payload: zenoh::bytes::ZBytes, attachment: Attachment) {
        // Recorded before it leaves: a subscription can never have heard more than this.
        self.sent.record(attachment.gid, attachment.sequence_number);
        // A put only fails once the session is closed; the message then has nowhere to go.
        let _ = match &self.zenoh {
            ZenohSender::Plain(publisher) => publisher
                .put(payload)
                .attachment(attachment.to_bytes())
                .wait(),
            ZenohSender::Advanced(publisher) => publisher
                .put(payload)
                .attachment(attachment.to_bytes())
                .wait(),
        };
    }
}

/// The gids of this process's publishers. A transient-local subscription hears the caches
/// of its own process too (zenoh-ext's history queries reach every cache); what those
/// hold was delivered in the process already, so it skips them.
#[derive(Default)]
pub(super) struct LocalPublishers(pub(super) parking_lot::RwLock<HashSet<Gid>>);

impl ZenohTransport {
    pub(super) fn carry_publisher(
        &self,
        endpoint: &Endpoint<'_>,
    ) -> Result<Option<Box<dyn RemotePublisher>>, TransportError> {
        let Some(node) = self.node_entry(endpoint.node)? else {
            return Ok(None);
        };
        let (dds_type, hash) = (
            endpoint.wire.dds_type()?,
            endpoint.wire.type_hash().to_string(),
        );
        self.types.remember(endpoint.wire.description());
        let key = self.key(endpoint.name, &dds_type, &hash);
        // Announced once it can send and its cache answers, as rmw_zenoh orders it: a late
        // joiner that sees the token and asks for the history at once finds the cache.
        let publisher = self.declare_sender(endpoint.name, &dds_type, key, &endpoint.qos)?;
        let (token, gid) = self.announce(
            &node,
            EntityKind::Publisher,
            endpoint.name,
            &dds_type,
            &hash,
            wire_qos(endpoint.qos),
        )?;
        self.local.0.write().insert(gid);
        let manual = endpoint.qos.liveliness == kairos::graph::Liveliness::ManualByTopic
            && endpoint.qos.liveliness_lease.is_some();
        Ok(Some(Box::new(ZenohPublisher {
            wire: endpoint.wire,
            publisher,
            shm: self.shm.clone(),
            gid,
            local: self.local.clone(),
            liveliness: Mutex::new(
                manual.then(|| crate::liveliness::sink(&self.session, self.domain, &gid)),
            ),
            _token: token,
            _node: node,
        })))
    }

    /// The zenoh publisher of topic `name` on `key`, declared with the plan of `qos` as
    /// rmw_zenoh declares it (see [`crate::qos::publisher_plan`]): plain for a volatile
    /// QoS, zenoh-ext's advanced publisher (cache, heartbeat, detection) otherwise. It
    /// sends only to other sessions.
    pub(crate) fn declare_sender(
        &self,
        name: &str,
        dds_type: &str,
        key: String,
        qos: &kairos::graph::Qos,
    ) -> Result<Sender, TransportError> {
        use zenoh_ext::AdvancedPublisherBuilderExt;
        let plan = crate::qos::publisher_plan(qos);
        let plain = self
            .session
            .declare_publisher(key)
            .allowed_destination(Locality::Remote)
            .reliability(plan.reliability)
            .congestion_control(plan.congestion_control);
        let failed = zenoh_err(format!("declare the publisher of {name}"));
        let zenoh = if plan.cache.is_none() && plan.heartbeat.is_none() && !plan.detectable {
            ZenohSender::Plain(plain.wait().map_err(failed)?)
        } else {
            let mut builder = plain.advanced();
            if let Some(depth) = plan.cache {
                builder = builder.cache(zenoh_ext::CacheConfig::default().max_samples(depth));
            }
            if let Some(period) = plan.heartbeat {
                builder = builder.sample_miss_detection(
                    zenoh_ext::MissDetectionConfig::default().sporadic_heartbeat(period),
                );
            }
            if plan.detectable {
                builder = builder.publisher_detection();
            }
            ZenohSender::Advanced(builder.wait().map_err(failed)?)
        };
        Ok(Sender {
            zenoh,
            sent: self.settle.sent(name, dds_type),
        })
    }
}
