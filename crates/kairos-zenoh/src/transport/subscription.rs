//! A kairos subscription on the network, and the one path every remote sample takes.
//!
//! ## The receive path
//!
//! A sample from another process reaches a callback through these steps, all in
//! [`ZenohTransport::subscriber`]'s closure on a zenoh thread:
//! 1. zenoh hands the sample to the closure (through zenoh-ext's advanced subscriber and
//!    [`crate::late_join`]'s gate when the QoS keeps history);
//! 2. the attachment is read (missing or short: counted as malformed, reported once per
//!    publisher); a sample of this process's own publishers, heard through a history
//!    query, is skipped;
//! 3. the sequence number is accounted per publisher: a gap is counted and handed to
//!    `lost` (the subscription's `lost` counters), a repeat or a step back is malformed;
//! 4. the lifespan left is computed from the source timestamp when the publisher
//!    announced one;
//! 5. the payload is decoded with the entity's [`Wire`] into the [`Sink`]: a subscription
//!    is lent the decoded `Option<M>` and moves it into its inbox (no second box); tools'
//!    direct subscriptions get a boxed message; raw subscriptions the bytes.
//!
//! From the inbox on, the message is the executor's, as for an in-process publish.
//!
//! Ground rules: the closure touches only atomics, the graph cache, and the inbox's
//! thread-safe entry points; it never blocks on a lock held across a callback.

use super::{NodeEntry, TransportError, ZenohTransport, gid_handle, wire_qos, zenoh_err};
use crate::attachment::{Attachment, Gid};
use crate::graph_key::EntityKind;
use crate::sender_state::{Arrival, MalformedReport};
use kairos::graph::transport::{AnyMessage, Declaration, Endpoint, Inbox, Wire};
use parking_lot::Mutex;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;
use zenoh::Wait;
use zenoh::liveliness::LivelinessToken;
use zenoh::sample::Locality;

/// Where a subscriber hands each message: decoded with the `Wire`, with the publisher's
/// trace handle, the sequence number and the lifespan left (if the publisher has one), or
/// undecoded.
pub(crate) enum Sink {
    /// In a shared box of its own.
    Shared(Wire, Box<SharedSink>),
    /// Lent as `Option<M>` (see `Wire::decode_to`), for the taker to box as it likes.
    Lent(Wire, Box<LentSink>),
    /// The payload as it arrived, with its attachment (see [`crate::raw`]), to the
    /// subscription of that trace handle.
    Raw(u64, Box<crate::raw::RawSink>),
}

/// [`Sink::Shared`]'s handler.
type SharedSink = dyn Fn(AnyMessage, u64, u64, Option<kairos::time::Duration>) + Send + Sync;
/// [`Sink::Lent`]'s handler.
type LentSink =
    dyn Fn(&mut dyn std::any::Any, u64, u64, Option<kairos::time::Duration>) + Send + Sync;

/// Counts every malformed sample of one subscription and reports them (see
/// [`MalformedReport`]).
struct MalformedLog {
    count: Arc<AtomicU64>,
    report: Mutex<MalformedReport>,
}

impl MalformedLog {
    fn record(&self, publisher: Option<Gid>, why: &str) {
        self.count.fetch_add(1, Ordering::Relaxed);
        let who = publisher.map_or("a sender without attachment".to_owned(), |g| {
            g.iter().map(|b| format!("{b:02x}")).collect()
        });
        if let Some(line) = self.report.lock().record(&who, why, Instant::now()) {
            crate::report::warn(line);
        }
    }
}

impl ZenohTransport {
    /// Declares a zenoh subscriber of `name` (of the type `dds_type` with `hash`) hearing
    /// remote publishers only: each sample's attachment is checked, its sequence number
    /// accounted (`lost` gets each gap), its payload decoded with the sink's wire (or
    /// handed over as it is, [`Sink::Raw`]), and `deliver` gets the message with its publisher's
    /// trace handle and sequence number; a sample that fails any step is counted in
    /// [`Self::malformed_samples`] and reported. Every subscription and the `/clock`
    /// bridge take this one path. `deliver`'s last argument is what remains of the
    /// message's life when its publisher announces a lifespan: the lifespan less the age
    /// the source timestamp gives (as DDS counts it, so clocks of two hosts should agree).
    pub(crate) fn subscriber(
        &self,
        name: &str,
        dds_type: &str,
        hash: &str,
        qos: kairos::graph::Qos,
        deliver: Sink,
        lost: impl Fn(u64, u64, u64) + Send + Sync + 'static,
    ) -> Result<Declaration, TransportError> {
        use zenoh_ext::AdvancedSubscriberBuilderExt;
        let key = self.key(name, dds_type, hash);
        let log = MalformedLog {
            count: self.malformed.clone(),
            report: Mutex::new(MalformedReport::new(name)),
        };
        let (heard, gaps) = (self.settle.heard(name, dds_type), self.gaps.clone());
        let board = self.settle.clone();
        let plan = crate::qos::subscriber_plan(&qos);
        let local = plan.history.is_some().then(|| self.local.clone());
        let shm = self.shm.clone();
        let graph = self.graph.clone();
        let receive = move |sample: zenoh::sample::Sample| {
            shm.note_arrival(sample.payload());
            let attachment = match sample.attachment() {
                None => Err(crate::attachment::AttachmentError::Missing),
                Some(bytes) => Attachment::from_bytes(&bytes.to_bytes()),
            };
            let attachment = match attachment {
                Ok(a) => a,
                Err(e) => return log.record(None, &e.to_string()),
            };
            if local
                .as_ref()
                .is_some_and(|local| local.0.read().contains(&attachment.gid))
            {
                return;
            }
            let handle = gid_handle(&attachment.gid);
            let seq = attachment.sequence_number;
            // A sample that then does not decode still took its number: it is counted as
            // malformed, not again as lost.
            match heard.tracker.lock().record(attachment.gid, seq) {
                Arrival::Malformed(why) => return log.record(Some(attachment.gid), why),
                Arrival::Gap { first, count } => {
                    gaps.fetch_add(count, Ordering::Relaxed);
                    lost(handle, first, count);
                }
                Arrival::Fine => {}
            }
            let left = graph
                .lifespan_of(&attachment.gid)
                .map(|lifespan| lifespan - age(attachment.source_timestamp));
            // Not negative: a negative number is malformed.
            let seq = seq as u64;
            let decoded = match &deliver {
                Sink::Shared(wire, deliver) => crate::received::decode(wire, sample.payload())
                    .map(|message| deliver(message, handle, seq, left)),
                Sink::Lent(wire, deliver) => {
                    crate::received::decode_to(wire, sample.payload(), &mut |value| {
                        deliver(value, handle, seq, left)
                    })
                }
                Sink::Raw(subscription_handle, deliver) => {
                    let payload = sample.payload().to_bytes().into_owned();
                    kairos::trace::tp::rmw_take(
                        *subscription_handle,
                        payload.as_ptr() as u64,
                        attachment.source_timestamp,
                        1,
                        handle,
                        seq,
                    );
                    deliver(crate::raw::RawSample {
                        payload,
                        attachment,
                        subscription_handle: *subscription_handle,
                    });
                    Ok(())
                }
            };
            if let Err(e) = decoded {
                log.record(Some(attachment.gid), &e.to_string());
            }
        };
        // The whole path is one delivery for the settle protocol: the sequence number is
        // recorded as heard only inside it (see `crate::settle`).
        // Admitted at once unless a lock-step replay holds this process's clock.
        let receive = Arc::new(receive);
        let on_sample = move |sample: zenoh::sample::Sample| {
            board.inflow().deliver(|| {
                if board.gate_closed() {
                    let receive = receive.clone();
                    board.admit(Box::new(move || receive(sample)));
                } else {
                    receive(sample);
                }
            })
        };
        let action = || format!("declare the subscriber of {name}");
        let subscriber: Declaration = match plan.history {
            None => Box::new(
                self.session
                    .declare_subscriber(key)
                    .allowed_origin(Locality::Remote)
                    .callback(on_sample)
                    .wait()
                    .map_err(zenoh_err(action()))?,
            ),
            Some(depth) => {
                let mut builder = self
                    .session
                    .declare_subscriber(key.clone())
                    .history(
                        zenoh_ext::HistoryConfig::default()
                            .detect_late_publishers()
                            .max_samples(depth),
                    )
                    .query_timeout(crate::qos::HISTORY_QUERY_TIMEOUT)
                    .allowed_origin(Locality::Remote);
                if plan.recovery {
                    builder = builder.recovery(zenoh_ext::RecoveryConfig::default().heartbeat());
                }
                if plan.detectable {
                    builder = builder.subscriber_detection();
                }
                // The advanced subscriber's samples pass a gate that asks the caches too,
                // then orders and de-duplicates (see `late_join`).
                let gate = crate::late_join::LateJoin::new(on_sample);
                let offer = {
                    let gate = gate.clone();
                    move |sample| gate.offer(sample)
                };
                let advanced = builder
                    .callback(offer)
                    .wait()
                    .map_err(zenoh_err(action()))?;
                let tokens = gate
                    .start(&self.session, &key, depth)
                    .map_err(zenoh_err(action()))?;
                Box::new((advanced, tokens))
            }
        };
        Ok(subscriber)
    }

    pub(super) fn carry_subscription(
        &self,
        endpoint: &Endpoint<'_>,
        inbox: Inbox,
    ) -> Result<Option<Declaration>, TransportError> {
        if Self::bridged(endpoint) {
            return self.announce_only(endpoint);
        }
        let inbox = Arc::new(inbox);
        let lost = inbox.clone();
        self.subscribe_announced(
            endpoint,
            Sink::Lent(
                endpoint.wire,
                Box::new(move |value, publisher, seq, left| {
                    match left {
                        Some(left) => inbox.deliver_lent_expiring(value, publisher, seq, left),
                        None => inbox.deliver_lent(value, publisher, seq),
                    };
                }),
            ),
            move |publisher, first, count| lost.lost(publisher, first, count),
        )
    }

    /// The token of a subscription whose remote samples reach the context another way
    /// (through a bridge, see [`Self::bridged`]): other processes see it, as they see
    /// any subscription, and samples reach it once.
    pub(super) fn announce_only(
        &self,
        endpoint: &Endpoint<'_>,
    ) -> Result<Option<Declaration>, TransportError> {
        let Some(node) = self.node_entry(endpoint.node)? else {
            return Ok(None);
        };
        let token = self.announce_subscription(&node, endpoint)?;
        Ok(Some(Box::new((token, node))))
    }

    fn announce_subscription(
        &self,
        node: &NodeEntry,
        endpoint: &Endpoint<'_>,
    ) -> Result<LivelinessToken, TransportError> {
        self.types.remember(endpoint.wire.description());
        let (token, _) = self.announce(
            node,
            EntityKind::Subscription,
            endpoint.name,
            &endpoint.wire.dds_type()?,
            &endpoint.wire.type_hash().to_string(),
            wire_qos(endpoint.qos),
        )?;
        Ok(token)
    }

    /// A subscriber of `endpoint` (see [`Self::subscriber`]), announced under its node.
    pub(super) fn subscribe_announced(
        &self,
        endpoint: &Endpoint<'_>,
        deliver: Sink,
        lost: impl Fn(u64, u64, u64) + Send + Sync + 'static,
    ) -> Result<Option<Declaration>, TransportError> {
        let Some(node) = self.node_entry(endpoint.node)? else {
            return Ok(None);
        };
        let subscriber = self.subscriber(
            endpoint.name,
            &endpoint.wire.dds_type()?,
            &endpoint.wire.type_hash().to_string(),
            endpoint.qos,
            deliver,
            lost,
        )?;
        // Announced once it can receive, so whoever sees the token reaches it.
        let token = self.announce_subscription(&node, endpoint)?;
        Ok(Some(Box::new((subscriber, token, node))))
    }
}

/// How long ago a sample with `source_timestamp` (wall-clock ns) was published, by this
/// host's wall clock; zero when the sample has no timestamp.
fn age(source_timestamp: i64) -> kairos::time::Duration {
    if source_timestamp <= 0 {
        return kairos::time::Duration::ZERO;
    }
    kairos::time::Duration::from_nanos(crate::attachment::now_ns().saturating_sub(source_timestamp))
}
