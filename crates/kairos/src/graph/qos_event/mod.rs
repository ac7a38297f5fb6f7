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
//!   [`GraphEntity::liveliness_lost`](super::GraphEntity::liveliness_lost)).
//! - Matched (publication / subscription matched) counts the endpoints of the other side
//!   whose QoS is compatible: how many now, and how many came in all. The graph has no
//!   per-endpoint id, so a peer is told apart by its node, type, QoS and process: a peer
//!   that leaves while another comes is counted, unless the two are alike in all four.
//!
//! [`Publisher::qos_events`]: super::Publisher::qos_events
//! [`Subscription::qos_events`]: super::Subscription::qos_events
//! [`Publisher::assert_liveliness`]: super::Publisher::assert_liveliness

use super::node::Node;
use super::qos::QosPolicy;
use crate::exec::GuardCondition;
use std::fmt;
use std::sync::Arc;

mod callbacks;
mod counters;
mod endpoint;

pub(crate) use endpoint::EndpointEvents;

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
    /// offers (see [`Qos::check_compatible`](super::Qos::check_compatible)).
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
    /// requests (see [`Qos::check_compatible`](super::Qos::check_compatible)).
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
