//! QoS events: what ROS 2 reports about the contract a publisher offers and a subscription
//! requests (deadline, liveliness, compatibility) and about messages that never arrived.
//!
//! # Ground rules
//! - Every event is counted whether or not anyone listens ([`Publisher::qos_events`],
//!   [`Subscription::qos_events`]) and traced as `kairos:qos_event`.
//! - A callback (`on_deadline_missed`, `on_liveliness_changed`, ...) runs on the node's
//!   executor, in the node's group, like any callback. Events that come while a call is
//!   pending make one call, whose status carries the total and the change since the last
//!   call (ROS 2's `total_count` and `total_count_change`): nothing is lost by coalescing.
//! - Deadlines and liveliness leases are timed on the monotonic clock, by a steady timer of
//!   the node that each message (or [`Publisher::assert_liveliness`]) pushes back: a
//!   wall-clock step neither fires one nor hides one. A deadline starts with the first
//!   message, as in DDS (a topic nobody publishes on misses no deadline); a lease starts
//!   with the publisher. They are detected while an executor spins the node.
//! - Each period without a message is one deadline missed. Liveliness lost counts the
//!   times a publisher went from alive to not alive, not the periods it stayed so.
//! - Incompatible QoS and the alive count of a subscription's publishers are matched over
//!   the whole graph, this process and the others the transport sees, whenever it changes
//!   (see `qos_match`). An incompatible pair still delivers (see `graph::qos`), and its
//!   first detection is also logged as a warning, as rclcpp does when no callback is set.
//! - Incompatible type: an endpoint of the other side of the topic in another process
//!   whose type has another name, or the same name and another hash (built from another
//!   version of the message). The two never communicate (their samples travel on other
//!   key expressions), so such a peer neither matches nor counts as alive. In one process
//!   a topic has one type ([`GraphError::TypeMismatch`](super::GraphError::TypeMismatch)).
//! - A manual-liveliness publisher of another process counts as not alive from when its
//!   process says its lease lapsed until it asserts itself again (see
//!   [`GraphEntity::liveliness_lost`]).
//! - Matched (publication / subscription matched) counts the endpoints of the other side
//!   whose QoS is compatible: how many now, and how many came in all. The graph has no
//!   per-endpoint id, so a peer is told apart by its node, type, QoS and process: a peer
//!   that leaves while another comes is counted, unless the two are alike in all four.
//!
//! [`Publisher::qos_events`]: super::Publisher::qos_events
//! [`Subscription::qos_events`]: super::Subscription::qos_events
//! [`Publisher::assert_liveliness`]: super::Publisher::assert_liveliness

use super::node::Node;
use super::qos::{Liveliness, Qos, QosPolicy};
use super::transport::LivelinessSink;
use super::view::{EntityKind, GraphEntity, Registry};
use crate::exec::{CallbackTimer, GuardCondition, GuardInner};
use crate::time::Clock;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};

/// A deadline missed: offered (a publisher did not publish within its deadline) or
/// requested (a subscription received nothing within its deadline).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DeadlineMissed {
    /// Periods missed so far.
    pub total_count: u64,
    /// Periods missed since the last call.
    pub total_count_change: u64,
}

/// A manual-liveliness publisher that did not assert itself within its lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LivelinessLost {
    /// Times the publisher went from alive to not alive so far.
    pub total_count: u64,
    /// The same, since the last call.
    pub total_count_change: u64,
}

/// The publishers of a subscription's topic that are alive, and those that are not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LivelinessChanged {
    /// Matched publishers alive now.
    pub alive_count: u64,
    /// Matched publishers that lost their liveliness and have not regained it.
    pub not_alive_count: u64,
    /// Change of `alive_count` since the last call.
    pub alive_count_change: i64,
    /// Change of `not_alive_count` since the last call.
    pub not_alive_count_change: i64,
}

/// Endpoints found on the other side of a topic whose QoS does not match this one's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IncompatibleQos {
    /// Incompatible endpoints found so far.
    pub total_count: u64,
    /// The same, since the last call.
    pub total_count_change: u64,
    /// The policy that did not match, last time one was found.
    pub last_policy: Option<QosPolicy>,
}

/// The endpoints on the other side of a topic that match this one (compatible QoS):
/// ROS 2's publication matched (for a publisher) and subscription matched (for a
/// subscription) status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Matched {
    /// Times an endpoint came to match this one, so far.
    pub total_count: u64,
    /// The same, since the last call.
    pub total_count_change: u64,
    /// Endpoints that match now.
    pub current_count: u64,
    /// Change of `current_count` since the last call.
    pub current_count_change: i64,
}

/// Endpoints found on the other side of a topic with another type (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IncompatibleType {
    /// Endpoints of another type found so far.
    pub total_count: u64,
    /// The same, since the last call.
    pub total_count_change: u64,
}

/// Messages of remote publishers that never reached a subscription (gaps in their
/// sequence numbers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MessageLost {
    /// Messages lost so far.
    pub total_count: u64,
    /// The same, since the last call.
    pub total_count_change: u64,
}

/// A publisher's QoS events so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PublisherQosEvents {
    /// Deadline periods in which it published nothing.
    pub offered_deadline_missed: u64,
    /// Times it lost its (manual) liveliness.
    pub liveliness_lost: u64,
    /// Subscriptions found asking for more than it offers.
    pub offered_incompatible_qos: u64,
    /// Subscriptions incompatible with it now.
    pub incompatible_now: u64,
    /// The policy that did not match, last time an incompatible subscription was found.
    pub incompatible_policy: Option<QosPolicy>,
    /// Subscriptions of the topic found taking another type (see [`IncompatibleType`]).
    pub incompatible_type: u64,
    /// Whether it is alive (always, for automatic liveliness).
    pub alive: bool,
    /// Subscriptions that came to match it so far.
    pub matched_total: u64,
    /// Subscriptions that match it now.
    pub matched_now: u64,
}

/// A subscription's QoS events so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SubscriptionQosEvents {
    /// Deadline periods in which it received nothing.
    pub requested_deadline_missed: u64,
    /// Its topic's matched publishers alive now.
    pub alive_count: u64,
    /// Its topic's matched publishers not alive now.
    pub not_alive_count: u64,
    /// Publishers found offering less than it asks for.
    pub requested_incompatible_qos: u64,
    /// Publishers incompatible with it now.
    pub incompatible_now: u64,
    /// The policy that did not match, last time an incompatible publisher was found.
    pub incompatible_policy: Option<QosPolicy>,
    /// Publishers of the topic found sending another type (see [`IncompatibleType`]).
    pub incompatible_type: u64,
    /// Messages of remote publishers that never arrived.
    pub message_lost: u64,
    /// Messages dropped because their publisher's lifespan passed before they were taken.
    pub message_expired: u64,
    /// Publishers that came to match it so far.
    pub matched_total: u64,
    /// Publishers that match it now.
    pub matched_now: u64,
}

/// A publisher's QoS event callbacks, apart from its message type
/// ([`Publisher::events`](super::Publisher::events)).
#[derive(Clone)]
pub struct PublisherEvents {
    pub(crate) events: Arc<EndpointEvents>,
    pub(crate) node: Node,
}

impl PublisherEvents {
    /// Its QoS events so far (as [`Publisher::qos_events`](super::Publisher::qos_events)).
    pub fn qos_events(&self) -> PublisherQosEvents {
        self.events.publisher_events()
    }

    /// Runs `callback` on the node's executor when the publisher's offered deadline
    /// passes without a publish.
    pub fn on_deadline_missed(
        &self,
        callback: impl Fn(DeadlineMissed) + Send + Sync + 'static,
    ) -> QosEventHandler {
        self.events.on_deadline_missed(&self.node, callback)
    }

    /// Runs `callback` when the publisher, of manual liveliness, lets its lease pass
    /// without publishing or asserting its liveliness.
    pub fn on_liveliness_lost(
        &self,
        callback: impl Fn(LivelinessLost) + Send + Sync + 'static,
    ) -> QosEventHandler {
        self.events.on_liveliness_lost(&self.node, callback)
    }

    /// Runs `callback` when a subscription of the topic asks for more than this publisher
    /// offers (see [`Qos::check_compatible`]).
    pub fn on_incompatible_qos(
        &self,
        callback: impl Fn(IncompatibleQos) + Send + Sync + 'static,
    ) -> QosEventHandler {
        self.events.on_incompatible_qos(&self.node, callback)
    }

    /// Runs `callback` when a subscription of the topic in another process takes another
    /// type (another name, or the same name with another hash): the two never
    /// communicate. The first is also logged, as a warning.
    pub fn on_incompatible_type(
        &self,
        callback: impl Fn(IncompatibleType) + Send + Sync + 'static,
    ) -> QosEventHandler {
        self.events.on_incompatible_type(&self.node, callback)
    }

    /// Runs `callback` when a subscription of the topic comes to match this publisher or
    /// stops matching it (ROS 2's publication matched event).
    pub fn on_publication_matched(
        &self,
        callback: impl Fn(Matched) + Send + Sync + 'static,
    ) -> QosEventHandler {
        self.events.on_matched(&self.node, callback)
    }
}

/// A subscription's QoS event callbacks, apart from its message type
/// ([`Subscription::events`](super::Subscription::events)).
#[derive(Clone)]
pub struct SubscriptionEvents {
    pub(crate) events: Arc<EndpointEvents>,
    pub(crate) node: Node,
}

impl SubscriptionEvents {
    /// Its QoS events so far (as
    /// [`Subscription::qos_events`](super::Subscription::qos_events)).
    pub fn qos_events(&self) -> SubscriptionQosEvents {
        self.events.subscription_events()
    }

    /// Runs `callback` on the node's executor when the subscription's requested deadline
    /// passes without a message; the status says how many periods so far and since the
    /// last call.
    pub fn on_deadline_missed(
        &self,
        callback: impl Fn(DeadlineMissed) + Send + Sync + 'static,
    ) -> QosEventHandler {
        self.events.on_deadline_missed(&self.node, callback)
    }

    /// Runs `callback` when the count of the topic's alive or not-alive publishers changes.
    pub fn on_liveliness_changed(
        &self,
        callback: impl Fn(LivelinessChanged) + Send + Sync + 'static,
    ) -> QosEventHandler {
        self.events.on_liveliness_changed(&self.node, callback)
    }

    /// Runs `callback` when a publisher of the topic offers less than this subscription
    /// requests (see [`Qos::check_compatible`]).
    pub fn on_incompatible_qos(
        &self,
        callback: impl Fn(IncompatibleQos) + Send + Sync + 'static,
    ) -> QosEventHandler {
        self.events.on_incompatible_qos(&self.node, callback)
    }

    /// Runs `callback` when a publisher of the topic in another process sends another
    /// type (another name, or the same name with another hash): the two never
    /// communicate. The first is also logged, as a warning.
    pub fn on_incompatible_type(
        &self,
        callback: impl Fn(IncompatibleType) + Send + Sync + 'static,
    ) -> QosEventHandler {
        self.events.on_incompatible_type(&self.node, callback)
    }

    /// Runs `callback` when messages of a publisher in another process never arrived (a
    /// gap in its sequence numbers).
    pub fn on_message_lost(
        &self,
        callback: impl Fn(MessageLost) + Send + Sync + 'static,
    ) -> QosEventHandler {
        self.events.on_message_lost(&self.node, callback)
    }

    /// Runs `callback` when a publisher of the topic comes to match this subscription or
    /// stops matching it (ROS 2's subscription matched event).
    pub fn on_subscription_matched(
        &self,
        callback: impl Fn(Matched) + Send + Sync + 'static,
    ) -> QosEventHandler {
        self.events.on_matched(&self.node, callback)
    }
}

impl fmt::Debug for PublisherEvents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.events.fmt(f)
    }
}

impl fmt::Debug for SubscriptionEvents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.events.fmt(f)
    }
}

/// A registered QoS event callback; dropping it unregisters the callback (the events are
/// still counted).
#[must_use = "the callback is unregistered when its handler is dropped"]
pub struct QosEventHandler {
    _guard: GuardCondition,
}

impl fmt::Debug for QosEventHandler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QosEventHandler").finish_non_exhaustive()
    }
}

/// Where a counter tells its callback, if one is registered.
#[derive(Default)]
struct Listener(Mutex<Option<Weak<GuardInner>>>);

impl Listener {
    fn notify(&self) {
        if let Some(guard) = self.0.lock().as_ref().and_then(Weak::upgrade) {
            guard.trigger_coalesced();
        }
    }

    fn set(&self, guard: &GuardCondition) {
        *self.0.lock() = Some(Arc::downgrade(&guard.inner));
    }
}

/// A count of one event, and what its callback was last told.
#[derive(Default)]
struct Counter {
    total: AtomicU64,
    reported: Mutex<u64>,
    listener: Listener,
}

impl Counter {
    fn add(&self, n: u64, handle: u64, event: &str) {
        if n == 0 {
            return;
        }
        let total = self.total.fetch_add(n, Ordering::AcqRel) + n;
        crate::trace::tp::qos_event(handle, event, total, n as i64);
        self.listener.notify();
    }

    fn total(&self) -> u64 {
        self.total.load(Ordering::Acquire)
    }

    /// The total and its change since the last call.
    fn take(&self) -> (u64, u64) {
        let mut reported = self.reported.lock();
        let total = self.total();
        let change = total - *reported;
        *reported = total;
        (total, change)
    }
}

/// Incompatible endpoints: how many now, how many found in all, the last policy.
#[derive(Default)]
struct Incompatible {
    counter: Counter,
    now: AtomicU64,
    last_policy: Mutex<Option<QosPolicy>>,
}

/// The peers that match an endpoint: how many now, how many came in all, what the
/// callback was last told (both as `(total, now)`).
#[derive(Default)]
struct MatchedPeers {
    now: Mutex<(u64, u64)>,
    reported: Mutex<(u64, u64)>,
    listener: Listener,
}

/// The peers an endpoint saw at its last match, compatible and not, each kind by
/// signature with its multiplicity: a match counts as new every peer whose signature's
/// multiplicity rose, so a peer that leaves while another comes is still counted.
#[derive(Default)]
struct SeenPeers {
    compatible: HashMap<String, u64>,
    incompatible: HashMap<String, u64>,
    other_type: HashMap<String, u64>,
}

/// How many more of each signature `now` has than `before`.
fn arrivals(before: &HashMap<String, u64>, now: &HashMap<String, u64>) -> u64 {
    now.iter()
        .map(|(peer, n)| n.saturating_sub(before.get(peer).copied().unwrap_or(0)))
        .sum()
}

/// What tells two endpoints of a topic apart in the graph (it has no per-endpoint id):
/// their node, type, QoS and process.
fn signature(peer: &GraphEntity) -> String {
    format!(
        "{}|{}|{}|{}|{:?}|{}",
        peer.node_namespace, peer.node_name, peer.type_name, peer.type_hash, peer.qos, peer.local
    )
}

/// A subscription's alive and not-alive publishers, and what its callback was last told.
#[derive(Default)]
struct Alive {
    now: Mutex<(u64, u64)>,
    reported: Mutex<(u64, u64)>,
    listener: Listener,
}

/// The QoS event state of one publisher or subscription.
pub(crate) struct EndpointEvents {
    kind: EntityKind,
    pub(crate) topic: String,
    qos: Qos,
    /// Its type's name and RIHS01 hash (empty for a type that stays in the process).
    type_name: String,
    type_hash: String,
    /// The handle the trace knows the endpoint by (set once it is made).
    handle: AtomicU64,
    deadline: Counter,
    liveliness_lost: Counter,
    message_lost: Counter,
    other_type: Counter,
    expired: AtomicU64,
    incompatible: Incompatible,
    matched: MatchedPeers,
    seen: Mutex<SeenPeers>,
    alive_publishers: Alive,
    /// A manual-liveliness publisher's own liveliness.
    alive: AtomicBool,
    deadline_timer: OnceLock<CallbackTimer>,
    lease_timer: OnceLock<CallbackTimer>,
    /// Told when a manual-liveliness publisher's liveliness changes (other processes).
    liveliness_sink: OnceLock<LivelinessSink>,
    /// Whether a message or an assertion pushes a timer back (one load on the hot path).
    timed: bool,
    registry: Weak<Registry>,
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
    ) -> Result<(), super::GraphError> {
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

    // ---- callbacks ----

    pub(crate) fn on_deadline_missed(
        self: &Arc<Self>,
        node: &Node,
        callback: impl Fn(DeadlineMissed) + Send + Sync + 'static,
    ) -> QosEventHandler {
        self.on_count(
            node,
            "deadline missed",
            |e| &e.deadline,
            callback,
            |_, t, c| DeadlineMissed {
                total_count: t,
                total_count_change: c,
            },
        )
    }

    pub(crate) fn on_liveliness_lost(
        self: &Arc<Self>,
        node: &Node,
        callback: impl Fn(LivelinessLost) + Send + Sync + 'static,
    ) -> QosEventHandler {
        self.on_count(
            node,
            "liveliness lost",
            |e| &e.liveliness_lost,
            callback,
            |_, t, c| LivelinessLost {
                total_count: t,
                total_count_change: c,
            },
        )
    }

    pub(crate) fn on_message_lost(
        self: &Arc<Self>,
        node: &Node,
        callback: impl Fn(MessageLost) + Send + Sync + 'static,
    ) -> QosEventHandler {
        self.on_count(
            node,
            "message lost",
            |e| &e.message_lost,
            callback,
            |_, t, c| MessageLost {
                total_count: t,
                total_count_change: c,
            },
        )
    }

    pub(crate) fn on_incompatible_qos(
        self: &Arc<Self>,
        node: &Node,
        callback: impl Fn(IncompatibleQos) + Send + Sync + 'static,
    ) -> QosEventHandler {
        fn counter(e: &EndpointEvents) -> &Counter {
            &e.incompatible.counter
        }
        self.on_count(node, "incompatible qos", counter, callback, |e, t, c| {
            IncompatibleQos {
                total_count: t,
                total_count_change: c,
                last_policy: *e.incompatible.last_policy.lock(),
            }
        })
    }

    pub(crate) fn on_incompatible_type(
        self: &Arc<Self>,
        node: &Node,
        callback: impl Fn(IncompatibleType) + Send + Sync + 'static,
    ) -> QosEventHandler {
        self.on_count(
            node,
            "incompatible type",
            |e| &e.other_type,
            callback,
            |_, t, c| IncompatibleType {
                total_count: t,
                total_count_change: c,
            },
        )
    }

    /// Registers `callback` for the events `counter` counts: a guard condition of `node`
    /// that tells it the total and the change since its last call, `status` made of them.
    fn on_count<S: 'static>(
        self: &Arc<Self>,
        node: &Node,
        label: &str,
        counter: fn(&EndpointEvents) -> &Counter,
        callback: impl Fn(S) + Send + Sync + 'static,
        status: fn(&EndpointEvents, u64, u64) -> S,
    ) -> QosEventHandler {
        let me = Arc::downgrade(self);
        let guard = node.create_guard_condition(&format!("qos event: {label}"), move || {
            if let Some(me) = me.upgrade() {
                let (total, change) = counter(&me).take();
                if change > 0 {
                    callback(status(&me, total, change));
                }
            }
        });
        counter(self).listener.set(&guard);
        pending_now(counter(self).total() > 0, &guard);
        QosEventHandler { _guard: guard }
    }

    pub(crate) fn on_liveliness_changed(
        self: &Arc<Self>,
        node: &Node,
        callback: impl Fn(LivelinessChanged) + Send + Sync + 'static,
    ) -> QosEventHandler {
        let me = Arc::downgrade(self);
        let guard = node.create_guard_condition("qos event: liveliness changed", move || {
            if let Some(me) = me.upgrade() {
                let alive = &me.alive_publishers;
                let now = *alive.now.lock();
                let before = std::mem::replace(&mut *alive.reported.lock(), now);
                if now != before {
                    callback(LivelinessChanged {
                        alive_count: now.0,
                        not_alive_count: now.1,
                        alive_count_change: now.0 as i64 - before.0 as i64,
                        not_alive_count_change: now.1 as i64 - before.1 as i64,
                    });
                }
            }
        });
        self.alive_publishers.listener.set(&guard);
        let now = *self.alive_publishers.now.lock();
        pending_now(now != *self.alive_publishers.reported.lock(), &guard);
        QosEventHandler { _guard: guard }
    }
}

impl EndpointEvents {
    pub(crate) fn on_matched(
        self: &Arc<Self>,
        node: &Node,
        callback: impl Fn(Matched) + Send + Sync + 'static,
    ) -> QosEventHandler {
        let me = Arc::downgrade(self);
        let guard = node.create_guard_condition("qos event: matched", move || {
            if let Some(me) = me.upgrade() {
                let now = *me.matched.now.lock();
                let before = std::mem::replace(&mut *me.matched.reported.lock(), now);
                if now != before {
                    callback(Matched {
                        total_count: now.0,
                        total_count_change: now.0 - before.0,
                        current_count: now.1,
                        current_count_change: now.1 as i64 - before.1 as i64,
                    });
                }
            }
        });
        self.matched.listener.set(&guard);
        let now = *self.matched.now.lock();
        pending_now(now != *self.matched.reported.lock(), &guard);
        QosEventHandler { _guard: guard }
    }
}

/// Events counted before the callback was registered are told to it at once.
fn pending_now(any: bool, guard: &GuardCondition) {
    if any {
        guard.inner.trigger_coalesced();
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
