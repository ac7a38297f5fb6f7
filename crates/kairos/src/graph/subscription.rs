//! Subscriptions: a bounded queue per subscription that drops its oldest message when full
//! and counts it, and a callback the executor runs once per message.
//!
//! # Ground rules
//! - Publishers (any thread) push to `queue` and count `received` and `dropped`; the
//!   worker running the subscription pops, counts `delivered` and keeps the backlog hint
//!   (`graph::backlog`: "more queued?" without reading the tail publishers write). The two sides' counters
//!   sit on separate cache lines, so a stream of messages does not move one line between
//!   the cores twice per message.
//! - After a plain callback returns, the worker hands the message's box back to the
//!   topic's pool (`graph::pool`), which reuses it only if the callback kept no reference.

use super::backlog::Backlog;
use super::node::Node;
use super::pool::MessagePool;
use super::qos::Qos;
use super::qos_event::{
    DeadlineMissed, EndpointEvents, IncompatibleQos, IncompatibleType, LivelinessChanged, Matched,
    MessageLost, QosEventHandler, SubscriptionEvents, SubscriptionQosEvents,
};
use super::topic::Topic;
use crate::exec::callback::Callback;
use crate::exec::entity::{Entity, EntityCore, Execution};
use crossbeam_queue::ArrayQueue;
use crossbeam_utils::CachePadded;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// What happened to the messages published to one subscription:
/// `received == delivered + dropped + expired + queued + in_flight` in every snapshot, read
/// while messages arrive and callbacks run as well as at rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SubscriptionStats {
    /// Messages that reached the subscription.
    pub received: u64,
    /// Messages handed to the callback.
    pub delivered: u64,
    /// Messages dropped, oldest first, because the queue was full.
    pub dropped: u64,
    /// Messages dropped because their publisher's lifespan had passed when they would
    /// have been taken.
    pub expired: u64,
    /// Messages waiting in the queue now.
    pub queued: u64,
    /// Messages between the queue and a count at the instant of the snapshot: being put in
    /// the queue, pushed out of it (about to count as dropped), or taken and being handed to
    /// the callback (about to count as delivered or expired). 0 at rest.
    pub in_flight: u64,
}

/// A message in a subscription queue, with the identity the trace links it by.
pub(crate) struct Envelope<T> {
    pub(crate) message: Arc<T>,
    pub(crate) publisher: u64,
    pub(crate) seq: u64,
    /// Steady time of the publish (0 when not tracing).
    pub(crate) stamp: i64,
    /// Monotonic time at which the publisher's lifespan ends (`NEVER` without one).
    pub(crate) expires: i64,
}

/// The `expires` of a message whose publisher has no lifespan.
pub(crate) const NEVER: i64 = i64::MAX;

impl<T> Clone for Envelope<T> {
    fn clone(&self) -> Self {
        Envelope {
            message: self.message.clone(),
            publisher: self.publisher,
            seq: self.seq,
            stamp: self.stamp,
            expires: self.expires,
        }
    }
}

impl<T> Envelope<T> {
    pub(crate) fn address(&self) -> u64 {
        Arc::as_ptr(&self.message) as *const () as usize as u64
    }
}

/// A subscription's callback, given each message.
pub(crate) type SubCallback<T> = Callback<Arc<T>>;

pub(crate) struct SubInner<T> {
    pub(crate) core: EntityCore,
    pub(crate) qos: Qos,
    queue: ArrayQueue<Envelope<T>>,
    /// Written by publishers.
    publish_side: CachePadded<PublishSide>,
    /// Written by the worker that runs the callback.
    take_side: CachePadded<TakeSide>,
    callback: SubCallback<T>,
    pool: Arc<MessagePool<T>>,
    /// Its QoS events (see `qos_event`).
    pub(crate) events: Arc<EndpointEvents>,
}

/// The counters publishers update.
#[derive(Default)]
struct PublishSide {
    received: AtomicU64,
    dropped: AtomicU64,
}

/// What the worker taking messages updates.
struct TakeSide {
    delivered: AtomicU64,
    expired: AtomicU64,
    /// Messages known queued, so a batch need not read the queue's tail per message.
    backlog: Backlog,
    /// Messages still to pass without offering their box to the pool, after it was full
    /// (publishers are not taking boxes: the offer would only cost the worker).
    pool_rest: AtomicU64,
}

/// How many messages a worker lets go without offering their box after the pool was full.
const POOL_REST: u64 = 63;

impl<T: Send + Sync + 'static> SubInner<T> {
    pub(crate) fn new(
        core: EntityCore,
        qos: Qos,
        capacity: usize,
        callback: SubCallback<T>,
        pool: Arc<MessagePool<T>>,
        events: Arc<EndpointEvents>,
    ) -> Self {
        Self {
            core,
            qos,
            queue: ArrayQueue::new(capacity),
            publish_side: CachePadded::new(PublishSide::default()),
            take_side: CachePadded::new(TakeSide {
                delivered: AtomicU64::new(0),
                expired: AtomicU64::new(0),
                backlog: Backlog::new(),
                pool_rest: AtomicU64::new(0),
            }),
            callback,
            pool,
            events,
        }
    }

    /// `message` in a shared box, one its topic recycled if there is one (see
    /// `graph::pool`).
    pub(crate) fn boxed(&self, message: T) -> Arc<T> {
        self.pool.boxed(message)
    }

    pub(crate) fn deliver(&self, envelope: Envelope<T>) {
        use crate::trace::tp;
        self.publish_side.received.fetch_add(1, Ordering::Relaxed);
        let (publisher, seq) = (envelope.publisher, envelope.seq);
        let evicted = self.queue.force_push(envelope);
        if tp::enabled() {
            let depth = self.queue.len() as u64;
            tp::message_enqueue(self.core.id(), publisher, seq, depth);
            if let Some(old) = &evicted {
                tp::message_drop(self.core.id(), old.publisher, old.seq, depth);
            }
        }
        if let Some(old) = evicted {
            self.publish_side.dropped.fetch_add(1, Ordering::Release);
            // On the publishing thread, which takes boxes: offered whatever the worker does.
            self.pool.recycle(old.message);
        }
        self.events.on_message();
        self.core.notify();
    }

    /// Drops `envelope` if its lifespan has passed: counted, traced, its box recycled.
    fn expired(&self, envelope: Envelope<T>) -> Option<Envelope<T>> {
        if envelope.expires == NEVER || crate::time::wait::mono_now() < envelope.expires {
            return Some(envelope);
        }
        self.take_side.expired.fetch_add(1, Ordering::Release);
        crate::trace::tp::message_drop(
            self.core.id(),
            envelope.publisher,
            envelope.seq,
            self.queue.len() as u64,
        );
        self.events.message_expired();
        self.pool.recycle(envelope.message);
        None
    }

    /// A snapshot in which every received message is counted once. Each message is
    /// counted `received` before it enters the queue, and `dropped`, `delivered` or
    /// `expired` only after it left it (Release, paired with the Acquire loads here), so
    /// reading those three first and `received` last gives `received >= accounted`: the
    /// difference is what the queue holds or what is between the queue and a counter.
    fn stats(&self) -> SubscriptionStats {
        let delivered = self.take_side.delivered.load(Ordering::Acquire);
        let expired = self.take_side.expired.load(Ordering::Acquire);
        let dropped = self.publish_side.dropped.load(Ordering::Acquire);
        let queue = self.queue.len() as u64;
        let received = self.publish_side.received.load(Ordering::Acquire);
        let accounted = delivered + expired + dropped;
        debug_assert!(
            received >= accounted,
            "a message counted before it was received"
        );
        let pending = received.saturating_sub(accounted);
        let queued = queue.min(pending);
        SubscriptionStats {
            received,
            delivered,
            dropped,
            expired,
            queued,
            in_flight: pending - queued,
        }
    }
}

impl<T: Send + Sync + 'static> Entity for SubInner<T> {
    fn core(&self) -> &EntityCore {
        &self.core
    }

    fn execute(&self) -> Execution {
        let envelope = loop {
            let Some(envelope) = self.queue.pop() else {
                self.take_side.backlog.none();
                return Execution::Idle;
            };
            self.take_side.backlog.took();
            if let Some(envelope) = self.expired(envelope) {
                break envelope;
            }
        };
        self.take_side.delivered.fetch_add(1, Ordering::Release);
        let (address, publisher, seq) = (envelope.address(), envelope.publisher, envelope.seq);
        crate::trace::tp::rmw_take(self.core.id(), address, envelope.stamp, 1, publisher, seq);
        if let Callback::Async(_) = self.callback {
            // Its future holds the message beyond this call.
            return self.callback.run(&self.core, envelope.message);
        }
        let rest = &self.take_side.pool_rest;
        let resting = rest.load(Ordering::Relaxed);
        if resting > 0 {
            rest.store(resting - 1, Ordering::Relaxed);
            return self.callback.run(&self.core, envelope.message);
        }
        let done = self.callback.run(&self.core, envelope.message.clone());
        if !self.pool.recycle(envelope.message) {
            rest.store(POOL_REST, Ordering::Relaxed);
        }
        done
    }

    fn has_work(&self) -> bool {
        // A "no" always comes from the queue itself (see `graph::backlog`).
        let backlog = &self.take_side.backlog;
        if backlog.known() {
            return true;
        }
        let queued = self.queue.len();
        backlog.saw(queued);
        queued > 0
    }

    fn batches(&self) -> bool {
        matches!(self.callback, Callback::Sync(_))
    }
}

/// A subscription to a topic; dropping it unsubscribes.
///
/// # Examples
///
/// Nothing is lost silently: a full queue drops its oldest message and counts it.
///
/// ```
/// use kairos::exec::Executor;
/// use kairos::graph::{Context, Node, Qos};
///
/// let node = Node::new_in(&Context::new(), "listener", "/")?;
/// let sub = node.create_subscription("scan", Qos::keep_last(2), |_: &u32| {})?;
/// let publisher = node.create_publisher::<u32>("scan", Qos::keep_last(2))?;
/// for i in 0..5 {
///     publisher.publish(i);
/// }
/// let executor = Executor::single_threaded();
/// executor.add_node(&node)?;
/// while executor.spin_some()? > 0 {}
/// let stats = sub.stats();
/// assert_eq!((stats.received, stats.delivered, stats.dropped), (5, 2, 3));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[must_use = "the subscription is removed when its handle is dropped"]
pub struct Subscription<T: Send + Sync + 'static> {
    pub(crate) inner: Arc<SubInner<T>>,
    pub(crate) topic: Arc<Topic<T>>,
    pub(crate) node: Node,
    /// Its declarations on the transport, when one carries this topic.
    pub(crate) _remote: Option<super::transport::Declaration>,
    /// Its place in the graph.
    pub(crate) _in_graph: super::view::GraphEntry,
}

impl<T: Send + Sync + 'static> Subscription<T> {
    /// The handle the trace knows this entity's callback by (`rclcpp_callback_register`'s
    /// `callback`), so that a language binding can name the callback it runs with
    /// `kairos::trace::tp::rclcpp_callback_register(handle, name)`.
    pub fn callback_handle(&self) -> u64 {
        self.inner.core().id()
    }

    /// This subscription as the completer of a blocking wait that only its callback can
    /// complete (see [`check_blocking_wait`](crate::exec::check_blocking_wait)).
    pub fn completer(&self) -> crate::exec::WaitCompleter {
        let entity: Arc<dyn Entity> = self.inner.clone();
        crate::exec::WaitCompleter::new(Arc::downgrade(&entity))
    }

    /// What reached the subscription so far, one consistent snapshot:
    /// `received = delivered + dropped + expired + queued + in_flight`.
    pub fn stats(&self) -> SubscriptionStats {
        self.inner.stats()
    }

    /// The resolved topic name.
    pub fn topic(&self) -> &str {
        &self.topic.name
    }

    /// The QoS the subscription was created with.
    pub fn qos(&self) -> Qos {
        self.inner.qos
    }

    /// Its QoS events so far (see [`Qos`]'s deadline, lifespan and liveliness).
    pub fn qos_events(&self) -> SubscriptionQosEvents {
        self.inner.events.subscription_events()
    }

    /// Its QoS event callbacks, apart from its message type (so code that registers them
    /// for many types is compiled once).
    pub fn events(&self) -> SubscriptionEvents {
        SubscriptionEvents {
            events: self.inner.events.clone(),
            node: self.node.clone(),
        }
    }

    /// Runs `callback` on the event; see [`SubscriptionEvents::on_deadline_missed`].
    pub fn on_deadline_missed(
        &self,
        callback: impl Fn(DeadlineMissed) + Send + Sync + 'static,
    ) -> QosEventHandler {
        self.events().on_deadline_missed(callback)
    }

    /// Runs `callback` on the event; see [`SubscriptionEvents::on_liveliness_changed`].
    pub fn on_liveliness_changed(
        &self,
        callback: impl Fn(LivelinessChanged) + Send + Sync + 'static,
    ) -> QosEventHandler {
        self.events().on_liveliness_changed(callback)
    }

    /// Runs `callback` on the event; see [`SubscriptionEvents::on_incompatible_qos`].
    pub fn on_incompatible_qos(
        &self,
        callback: impl Fn(IncompatibleQos) + Send + Sync + 'static,
    ) -> QosEventHandler {
        self.events().on_incompatible_qos(callback)
    }

    /// Runs `callback` on the event; see [`SubscriptionEvents::on_incompatible_type`].
    pub fn on_incompatible_type(
        &self,
        callback: impl Fn(IncompatibleType) + Send + Sync + 'static,
    ) -> QosEventHandler {
        self.events().on_incompatible_type(callback)
    }

    /// Runs `callback` on the event; see [`SubscriptionEvents::on_message_lost`].
    pub fn on_message_lost(
        &self,
        callback: impl Fn(MessageLost) + Send + Sync + 'static,
    ) -> QosEventHandler {
        self.events().on_message_lost(callback)
    }

    /// Runs `callback` on the event; see [`SubscriptionEvents::on_subscription_matched`].
    pub fn on_subscription_matched(
        &self,
        callback: impl Fn(Matched) + Send + Sync + 'static,
    ) -> QosEventHandler {
        self.events().on_subscription_matched(callback)
    }
}

impl<T: Send + Sync + 'static> Drop for Subscription<T> {
    fn drop(&mut self) {
        self.topic.unsubscribe(&self.inner);
        self.inner.core.destroy();
        self.node.forget(self.inner.core.id());
    }
}

impl<T: Send + Sync + 'static> fmt::Debug for Subscription<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subscription")
            .field("topic", &self.topic.name)
            .field("stats", &self.stats())
            .finish()
    }
}
