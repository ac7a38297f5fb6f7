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
//!
//! [`Publisher::qos_events`]: super::Publisher::qos_events
//! [`Subscription::qos_events`]: super::Subscription::qos_events
//! [`Publisher::assert_liveliness`]: super::Publisher::assert_liveliness

use super::node::Node;
use super::qos::{Liveliness, Qos, QosPolicy};
use super::view::{EntityKind, GraphEntity, Registry};
use crate::exec::{CallbackTimer, GuardCondition, GuardInner};
use crate::time::Clock;
use parking_lot::Mutex;
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
    /// Whether it is alive (always, for automatic liveliness).
    pub alive: bool,
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
    /// Messages of remote publishers that never arrived.
    pub message_lost: u64,
    /// Messages dropped because their publisher's lifespan passed before they were taken.
    pub message_expired: u64,
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
    /// The handle the trace knows the endpoint by (set once it is made).
    handle: AtomicU64,
    deadline: Counter,
    liveliness_lost: Counter,
    message_lost: Counter,
    expired: AtomicU64,
    incompatible: Incompatible,
    alive_publishers: Alive,
    /// A manual-liveliness publisher's own liveliness.
    alive: AtomicBool,
    deadline_timer: OnceLock<CallbackTimer>,
    lease_timer: OnceLock<CallbackTimer>,
    /// Whether a message or an assertion pushes a timer back (one load on the hot path).
    timed: bool,
    registry: Weak<Registry>,
}

impl EndpointEvents {
    /// The event state of a `kind` endpoint (publisher or subscription) of `topic`, made
    /// by `node`; its timers are made by [`start`](Self::start).
    pub(crate) fn new(node: &Node, kind: EntityKind, topic: &str, qos: Qos) -> Arc<Self> {
        let manual = kind == EntityKind::Publisher
            && qos.liveliness == Liveliness::ManualByTopic
            && qos.liveliness_lease.is_some();
        Arc::new(EndpointEvents {
            kind,
            topic: topic.to_owned(),
            qos,
            handle: AtomicU64::new(0),
            deadline: Counter::default(),
            liveliness_lost: Counter::default(),
            message_lost: Counter::default(),
            expired: AtomicU64::new(0),
            incompatible: Incompatible::default(),
            alive_publishers: Alive::default(),
            alive: AtomicBool::new(true),
            deadline_timer: OnceLock::new(),
            lease_timer: OnceLock::new(),
            timed: qos.deadline.is_some() || manual,
            registry: Arc::downgrade(node.context().registry()),
        })
    }

    /// Makes the deadline and lease timers on `node` and joins the QoS matching of its
    /// context; `handle` is the endpoint's trace handle.
    pub(crate) fn start(
        self: &Arc<Self>,
        node: &Node,
        handle: u64,
    ) -> Result<(), super::GraphError> {
        self.handle.store(handle, Ordering::Release);
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
    /// publisher and subscription of it, this one included) and `not_alive` publishers.
    /// Returns the warning to log when it found its first incompatible peer (logged by
    /// the caller, outside its locks: a log line may publish on `/rosout`).
    pub(crate) fn rematch(&self, peers: &[GraphEntity], not_alive: u64) -> Option<String> {
        let mut warning = None;
        let other = match self.kind {
            EntityKind::Publisher => EntityKind::Subscription,
            _ => EntityKind::Publisher,
        };
        let mut incompatible = 0;
        let mut compatible = 0;
        let mut policy = None;
        for peer in peers.iter().filter(|p| p.kind == other) {
            let Some(theirs) = &peer.qos else {
                compatible += 1;
                continue;
            };
            let checked = match self.kind {
                EntityKind::Publisher => Qos::check_compatible(&self.qos, theirs),
                _ => Qos::check_compatible(theirs, &self.qos),
            };
            match checked {
                Ok(()) => compatible += 1,
                Err(why) => {
                    incompatible += 1;
                    policy = Some(why);
                }
            }
        }
        let before = self.incompatible.now.swap(incompatible, Ordering::AcqRel);
        if incompatible > before {
            if let Some(why) = &policy {
                *self.incompatible.last_policy.lock() = Some(why.policy);
                if self.incompatible.counter.total() == 0 {
                    warning = Some(format!(
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
                .add(incompatible - before, self.handle(), event);
        }
        if self.kind == EntityKind::Subscription {
            let not_alive = not_alive.min(compatible);
            let now = (compatible - not_alive, not_alive);
            let before = std::mem::replace(&mut *self.alive_publishers.now.lock(), now);
            if before != now {
                let change = now.0 as i64 - before.0 as i64;
                crate::trace::tp::qos_event(self.handle(), "liveliness_changed", now.0, change);
                self.alive_publishers.listener.notify();
            }
        }
        warning
    }

    fn kind_name(&self) -> &'static str {
        match self.kind {
            EntityKind::Publisher => "a publisher",
            _ => "a subscription",
        }
    }

    pub(crate) fn publisher_events(&self) -> PublisherQosEvents {
        PublisherQosEvents {
            offered_deadline_missed: self.deadline.total(),
            liveliness_lost: self.liveliness_lost.total(),
            offered_incompatible_qos: self.incompatible.counter.total(),
            incompatible_now: self.incompatible.now.load(Ordering::Acquire),
            alive: self.alive.load(Ordering::Acquire),
        }
    }

    pub(crate) fn subscription_events(&self) -> SubscriptionQosEvents {
        let (alive_count, not_alive_count) = *self.alive_publishers.now.lock();
        SubscriptionQosEvents {
            requested_deadline_missed: self.deadline.total(),
            alive_count,
            not_alive_count,
            requested_incompatible_qos: self.incompatible.counter.total(),
            incompatible_now: self.incompatible.now.load(Ordering::Acquire),
            message_lost: self.message_lost.total(),
            message_expired: self.expired.load(Ordering::Relaxed),
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
