//! The QoS event state of one publisher or subscription: its deadline and lease timers,
//! the messages and assertions that push them back, the matching of its peers over the
//! graph, and the snapshot of its counts.

use super::counters::{Alive, Counter, Incompatible, MatchedPeers, SeenPeers, arrivals, signature};
use super::{PublisherQosEvents, SubscriptionQosEvents};
use crate::exec::CallbackTimer;
use crate::graph::GraphError;
use crate::graph::node::Node;
use crate::graph::qos::{Liveliness, Qos};
use crate::graph::transport::LivelinessSink;
use crate::graph::view::{EntityKind, GraphEntity, Registry};
use crate::time::Clock;
use parking_lot::Mutex;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};

/// The QoS event state of one publisher or subscription.
pub(crate) struct EndpointEvents {
    pub(super) kind: EntityKind,
    pub(crate) topic: String,
    pub(super) qos: Qos,
    /// Its type's name and RIHS01 hash (empty for a type that stays in the process).
    pub(super) type_name: String,
    pub(super) type_hash: String,
    /// The handle the trace knows the endpoint by (set once it is made).
    pub(super) handle: AtomicU64,
    pub(super) deadline: Counter,
    pub(super) liveliness_lost: Counter,
    pub(super) message_lost: Counter,
    pub(super) other_type: Counter,
    pub(super) expired: AtomicU64,
    pub(super) incompatible: Incompatible,
    pub(super) matched: MatchedPeers,
    pub(super) seen: Mutex<SeenPeers>,
    pub(super) alive_publishers: Alive,
    /// A manual-liveliness publisher's own liveliness.
    pub(super) alive: AtomicBool,
    pub(super) deadline_timer: OnceLock<CallbackTimer>,
    pub(super) lease_timer: OnceLock<CallbackTimer>,
    /// Told when a manual-liveliness publisher's liveliness changes (other processes).
    pub(super) liveliness_sink: OnceLock<LivelinessSink>,
    /// Whether a message or an assertion pushes a timer back (one load on the hot path).
    pub(super) timed: bool,
    pub(super) registry: Weak<Registry>,
}

impl EndpointEvents {
    /// The event state of a `kind` endpoint (publisher or subscription) of `topic`, made
    /// by `node`, of the type named and hashed `type_name`, `type_hash`; its timers are
    /// made by [`start`](Self::start).
    pub(crate) fn new(
        node: &Node,
        kind: EntityKind,
        topic: &str,
        qos: Qos,
        (type_name, type_hash): (&str, &str),
    ) -> Arc<Self> {
        let manual = kind == EntityKind::Publisher
            && qos.liveliness == Liveliness::ManualByTopic
            && qos.liveliness_lease.is_some();
        Arc::new(EndpointEvents {
            kind,
            topic: topic.to_owned(),
            qos,
            type_name: type_name.to_owned(),
            type_hash: type_hash.to_owned(),
            handle: AtomicU64::new(0),
            deadline: Counter::default(),
            liveliness_lost: Counter::default(),
            message_lost: Counter::default(),
            other_type: Counter::default(),
            expired: AtomicU64::new(0),
            incompatible: Incompatible::default(),
            matched: MatchedPeers::default(),
            seen: Mutex::new(SeenPeers::default()),
            alive_publishers: Alive::default(),
            alive: AtomicBool::new(true),
            deadline_timer: OnceLock::new(),
            lease_timer: OnceLock::new(),
            liveliness_sink: OnceLock::new(),
            timed: qos.deadline.is_some() || manual,
            registry: Arc::downgrade(node.context().registry()),
        })
    }

    /// Makes the deadline and lease timers on `node` and joins the QoS matching of its
    /// context; `handle` is the endpoint's trace handle, `sink` where a manual-liveliness
    /// publisher's changes of liveliness go beyond the process.
    pub(crate) fn start(
        self: &Arc<Self>,
        node: &Node,
        handle: u64,
        sink: Option<LivelinessSink>,
    ) -> Result<(), GraphError> {
        self.handle.store(handle, Ordering::Release);
        if let Some(sink) = sink {
            let _ = self.liveliness_sink.set(sink);
        }
        if let Some(period) = self.qos.deadline {
            let me = Arc::downgrade(self);
            let event = match self.kind {
                EntityKind::Publisher => "offered_deadline_missed",
                _ => "requested_deadline_missed",
            };
            let timer = node.create_timer_on(Clock::steady(), period, move |tick| {
                if let Some(me) = me.upgrade() {
                    me.deadline.add(1 + tick.missed, me.handle(), event);
                }
            })?;
            // A deadline starts with the first message.
            timer.cancel();
            let _ = self.deadline_timer.set(timer);
        }
        if self.kind == EntityKind::Publisher
            && self.qos.liveliness == Liveliness::ManualByTopic
            && let Some(lease) = self.qos.liveliness_lease
        {
            let me = Arc::downgrade(self);
            let timer = node.create_timer_on(Clock::steady(), lease, move |_| {
                if let Some(me) = me.upgrade() {
                    me.lease_expired();
                }
            })?;
            let _ = self.lease_timer.set(timer);
        }
        node.context().registry().matcher().add(self);
        Ok(())
    }

    fn handle(&self) -> u64 {
        self.handle.load(Ordering::Acquire)
    }

    /// A message was published (publisher) or arrived (subscription).
    #[inline]
    pub(crate) fn on_message(&self) {
        if self.timed {
            self.push_back_timers();
        }
    }

    fn push_back_timers(&self) {
        if let Some(timer) = self.deadline_timer.get() {
            timer.push_back();
        }
        if self.lease_timer.get().is_some() {
            self.assert_liveliness();
        }
    }

    /// A manual-liveliness publisher showed it is alive.
    pub(crate) fn assert_liveliness(&self) {
        let Some(timer) = self.lease_timer.get() else {
            return;
        };
        timer.push_back();
        if !self.alive.swap(true, Ordering::AcqRel) {
            self.not_alive_changed(-1);
        }
    }

    fn lease_expired(&self) {
        if let Some(timer) = self.lease_timer.get() {
            timer.cancel();
        }
        if self.alive.swap(false, Ordering::AcqRel) {
            self.liveliness_lost
                .add(1, self.handle(), "liveliness_lost");
            self.not_alive_changed(1);
        }
    }

    fn not_alive_changed(&self, delta: i64) {
        if let Some(sink) = self.liveliness_sink.get() {
            sink(delta < 0);
        }
        if let Some(registry) = self.registry.upgrade() {
            registry.matcher().not_alive(&registry, &self.topic, delta);
        }
    }

    /// `count` messages of a remote publisher never arrived.
    pub(crate) fn messages_lost(&self, count: u64) {
        self.message_lost.add(count, self.handle(), "message_lost");
    }

    /// A message's lifespan had passed when it would have been taken.
    pub(crate) fn message_expired(&self) {
        let total = self.expired.fetch_add(1, Ordering::Relaxed) + 1;
        crate::trace::tp::qos_event(self.handle(), "message_expired", total, 1);
    }

    /// Matches this endpoint against the graph's endpoints of its topic (`peers`: every
    /// publisher and subscription of it, this one included) and `not_alive` publishers of
    /// this context. Returns the warnings to log: its first peer of incompatible QoS and
    /// its first of another type (logged by the caller, outside its locks: a log line may
    /// publish on `/rosout`).
    pub(crate) fn rematch(&self, peers: &[GraphEntity], not_alive: u64) -> Vec<String> {
        let mut warnings = Vec::new();
        let other = match self.kind {
            EntityKind::Publisher => EntityKind::Subscription,
            _ => EntityKind::Publisher,
        };
        let mut policy = None;
        let mut now = SeenPeers::default();
        let mut remote_not_alive = 0;
        let mut other_type = None;
        for peer in peers.iter().filter(|p| p.kind == other) {
            if self.of_another_type(peer) {
                *now.other_type.entry(signature(peer)).or_default() += 1;
                other_type = Some(peer);
                continue;
            }
            let checked = match (&peer.qos, self.kind) {
                (None, _) => Ok(()),
                (Some(theirs), EntityKind::Publisher) => Qos::check_compatible(&self.qos, theirs),
                (Some(theirs), _) => Qos::check_compatible(theirs, &self.qos),
            };
            let side = match checked {
                Ok(()) => {
                    remote_not_alive += u64::from(peer.liveliness_lost);
                    &mut now.compatible
                }
                Err(why) => {
                    policy = Some(why);
                    &mut now.incompatible
                }
            };
            *side.entry(signature(peer)).or_default() += 1;
        }
        let (compatible, incompatible): (u64, u64) = (
            now.compatible.values().sum(),
            now.incompatible.values().sum(),
        );
        let (new_incompatible, new_matched, new_other_type) = {
            let mut seen = self.seen.lock();
            let found = (
                arrivals(&seen.incompatible, &now.incompatible),
                arrivals(&seen.compatible, &now.compatible),
                arrivals(&seen.other_type, &now.other_type),
            );
            *seen = now;
            found
        };
        if let Some(peer) = other_type.filter(|_| new_other_type > 0) {
            if self.other_type.total() == 0 {
                warnings.push(format!(
                    "{} of {} {} on {} found {} of {} {}: the two never communicate",
                    self.kind_name(),
                    self.type_name,
                    self.type_hash,
                    self.topic,
                    match self.kind {
                        EntityKind::Publisher => "a subscription",
                        _ => "a publisher",
                    },
                    peer.type_name,
                    peer.type_hash,
                ));
            }
            self.other_type
                .add(new_other_type, self.handle(), "incompatible_type");
        }
        self.incompatible.now.store(incompatible, Ordering::Release);
        if new_incompatible > 0 {
            if let Some(why) = &policy {
                *self.incompatible.last_policy.lock() = Some(why.policy);
                if self.incompatible.counter.total() == 0 {
                    warnings.push(format!(
                        "{} on {} found {} incompatible QoS ({why}); they still communicate, as with rmw_zenoh",
                        self.kind_name(),
                        self.topic,
                        match self.kind {
                            EntityKind::Publisher => "a subscription with",
                            _ => "a publisher with",
                        },
                    ));
                }
            }
            let event = match self.kind {
                EntityKind::Publisher => "offered_incompatible_qos",
                _ => "requested_incompatible_qos",
            };
            self.incompatible
                .counter
                .add(new_incompatible, self.handle(), event);
        }
        self.matched_changed(new_matched, compatible);
        if self.kind == EntityKind::Subscription {
            let not_alive = (not_alive + remote_not_alive).min(compatible);
            let now = (compatible - not_alive, not_alive);
            let before = std::mem::replace(&mut *self.alive_publishers.now.lock(), now);
            if before != now {
                let change = now.0 as i64 - before.0 as i64;
                crate::trace::tp::qos_event(self.handle(), "liveliness_changed", now.0, change);
                self.alive_publishers.listener.notify();
            }
        }
        warnings
    }

    /// Whether `peer` carries another type than this endpoint: both cross processes, and
    /// their names or hashes differ.
    fn of_another_type(&self, peer: &GraphEntity) -> bool {
        !self.type_hash.is_empty()
            && !peer.type_hash.is_empty()
            && (peer.type_hash != self.type_hash || peer.type_name != self.type_name)
    }

    /// `arrived` peers came to match, and `current` match now: counted, traced (total and
    /// the change of the current count) and told to the callback.
    fn matched_changed(&self, arrived: u64, current: u64) {
        let (total, before) = {
            let mut now = self.matched.now.lock();
            let before = now.1;
            *now = (now.0 + arrived, current);
            (now.0, before)
        };
        if arrived == 0 && current == before {
            return;
        }
        let event = match self.kind {
            EntityKind::Publisher => "publication_matched",
            _ => "subscription_matched",
        };
        crate::trace::tp::qos_event(self.handle(), event, total, current as i64 - before as i64);
        self.matched.listener.notify();
    }

    fn kind_name(&self) -> &'static str {
        match self.kind {
            EntityKind::Publisher => "a publisher",
            _ => "a subscription",
        }
    }

    pub(crate) fn publisher_events(&self) -> PublisherQosEvents {
        let (matched_total, matched_now) = *self.matched.now.lock();
        PublisherQosEvents {
            offered_deadline_missed: self.deadline.total(),
            liveliness_lost: self.liveliness_lost.total(),
            offered_incompatible_qos: self.incompatible.counter.total(),
            incompatible_now: self.incompatible.now.load(Ordering::Acquire),
            incompatible_policy: *self.incompatible.last_policy.lock(),
            incompatible_type: self.other_type.total(),
            alive: self.alive.load(Ordering::Acquire),
            matched_total,
            matched_now,
        }
    }

    pub(crate) fn subscription_events(&self) -> SubscriptionQosEvents {
        let (alive_count, not_alive_count) = *self.alive_publishers.now.lock();
        let (matched_total, matched_now) = *self.matched.now.lock();
        SubscriptionQosEvents {
            requested_deadline_missed: self.deadline.total(),
            alive_count,
            not_alive_count,
            requested_incompatible_qos: self.incompatible.counter.total(),
            incompatible_now: self.incompatible.now.load(Ordering::Acquire),
            incompatible_policy: *self.incompatible.last_policy.lock(),
            incompatible_type: self.other_type.total(),
            message_lost: self.message_lost.total(),
            message_expired: self.expired.load(Ordering::Relaxed),
            matched_total,
            matched_now,
        }
    }
}

impl fmt::Debug for EndpointEvents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EndpointEvents")
            .field("kind", &self.kind)
            .field("topic", &self.topic)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Context;

    fn peer(node: &str, qos: Qos) -> GraphEntity {
        GraphEntity {
            kind: EntityKind::Publisher,
            node_name: node.to_owned(),
            node_namespace: "/".to_owned(),
            name: "/scan".to_owned(),
            type_name: "std_msgs/msg/UInt32".to_owned(),
            type_hash: UINT32.to_owned(),
            qos: Some(qos),
            local: false,
            liveliness_lost: false,
        }
    }

    /// A remote change can take one peer away and bring another in one match: both the
    /// incompatible total and the matched total count the newcomer.
    #[test]
    fn a_peer_that_replaces_another_between_two_matches_is_counted() {
        let node = Node::new_in(&Context::new(), "watcher", "/").unwrap();
        let events = EndpointEvents::new(
            &node,
            EntityKind::Subscription,
            "/scan",
            Qos::keep_last(5),
            ("std_msgs/msg/UInt32", UINT32),
        );
        let weak = Qos::keep_last(5).best_effort();
        let good = Qos::keep_last(5);
        events.rematch(&[peer("a", weak), peer("c", good)], 0);
        events.rematch(&[peer("b", weak), peer("d", good)], 0);
        let seen = events.subscription_events();
        assert_eq!(
            (seen.requested_incompatible_qos, seen.incompatible_now),
            (2, 1)
        );
        assert_eq!((seen.matched_total, seen.matched_now), (2, 1));
        // Alike in node, type, QoS and process: two of them, then one of them.
        events.rematch(&[peer("d", good), peer("d", good)], 0);
        events.rematch(&[peer("d", good)], 0);
        let seen = events.subscription_events();
        assert_eq!((seen.matched_total, seen.matched_now), (3, 1));
        assert_eq!(seen.incompatible_now, 0);
    }

    const UINT32: &str = "RIHS01_a11ab6a0e4ae8e3bd56a8d7aef8ba5e8ca8e1e1a0b3bb8e8c9a1c6a0d1ad4e5f";

    /// A peer of another type (name or hash) neither matches nor counts as alive; it is
    /// counted once as incompatible type and warned of; one that cannot cross processes
    /// (no hash) is not compared.
    #[test]
    fn a_peer_of_another_type_is_counted_as_such_and_never_matches() {
        let node = Node::new_in(&Context::new(), "watcher", "/").unwrap();
        let events = EndpointEvents::new(
            &node,
            EntityKind::Subscription,
            "/scan",
            Qos::keep_last(5),
            ("std_msgs/msg/UInt32", UINT32),
        );
        let good = Qos::keep_last(5);
        let other_name = GraphEntity {
            type_name: "std_msgs/msg/Int32".to_owned(),
            ..peer("a", good)
        };
        let other_hash = GraphEntity {
            type_hash: format!("{}0", &UINT32[..UINT32.len() - 1]),
            ..peer("b", good)
        };
        let warnings = events.rematch(&[other_name.clone(), other_hash.clone()], 0);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("std_msgs/msg/UInt32") && warnings[0].contains("never"));
        let seen = events.subscription_events();
        assert_eq!(seen.incompatible_type, 2);
        assert_eq!((seen.matched_total, seen.alive_count), (0, 0));
        // Seen again: not counted again, nor warned of.
        assert!(
            events
                .rematch(&[other_name, other_hash, peer("c", good)], 0)
                .is_empty()
        );
        let seen = events.subscription_events();
        assert_eq!(seen.incompatible_type, 2);
        assert_eq!((seen.matched_now, seen.alive_count), (1, 1));
        // A type that stays in its process has no hash: nothing to compare.
        let in_process = EndpointEvents::new(
            &node,
            EntityKind::Subscription,
            "/scan",
            Qos::keep_last(5),
            ("u32", ""),
        );
        in_process.rematch(&[peer("d", good)], 0);
        assert_eq!(in_process.subscription_events().incompatible_type, 0);
    }

    /// A remote publisher whose process says its lease lapsed counts as not alive, until
    /// it is alive again.
    #[test]
    fn a_remote_publisher_that_lost_its_liveliness_counts_as_not_alive() {
        let node = Node::new_in(&Context::new(), "watcher", "/").unwrap();
        let events = EndpointEvents::new(
            &node,
            EntityKind::Subscription,
            "/scan",
            Qos::keep_last(5),
            ("std_msgs/msg/UInt32", UINT32),
        );
        let good = Qos::keep_last(5);
        let lapsed = GraphEntity {
            liveliness_lost: true,
            ..peer("a", good)
        };
        events.rematch(&[lapsed, peer("b", good)], 0);
        let seen = events.subscription_events();
        assert_eq!((seen.alive_count, seen.not_alive_count), (1, 1));
        events.rematch(&[peer("a", good), peer("b", good)], 0);
        let seen = events.subscription_events();
        assert_eq!((seen.alive_count, seen.not_alive_count), (2, 0));
    }
}
