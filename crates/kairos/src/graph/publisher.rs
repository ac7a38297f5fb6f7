//! Publishers: send `Arc<T>` to every subscription of a topic, in this process, without
//! copying the message.

use super::node::Node;
use super::qos::Qos;
use super::qos_event::{
    DeadlineMissed, EndpointEvents, IncompatibleQos, IncompatibleType, LivelinessLost, Matched,
    PublisherEvents, PublisherQosEvents, QosEventHandler,
};
use super::subscription::{Envelope, NEVER};
use super::topic::Topic;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Sends messages of type `T` on one topic; made by
/// [`Node::create_publisher`](super::Node::create_publisher).
///
/// # Examples
///
/// ```
/// use kairos::graph::{Context, Node, Qos};
///
/// let node = Node::new_in(&Context::new(), "talker", "/")?;
/// let publisher = node.create_publisher::<String>("chatter", Qos::keep_last(10))?;
/// assert_eq!(publisher.publish("nobody listens yet".to_owned()), 0);
/// let _sub = node.create_subscription("chatter", Qos::keep_last(10), |_: &String| {})?;
/// // Queued for the subscription; its callback runs when an executor spins the node.
/// assert_eq!(publisher.publish("hello".to_owned()), 1);
/// assert_eq!(publisher.published(), 2);
/// # Ok::<(), kairos::graph::GraphError>(())
/// ```
#[must_use = "a publisher does nothing unless you publish with it"]
pub struct Publisher<T> {
    pub(crate) topic: Arc<Topic<T>>,
    pub(crate) qos: Qos,
    pub(crate) published: AtomicU64,
    /// How its loaned messages went out (see `graph::loan`).
    pub(crate) loans: super::loan::LoanCounts,
    /// The handle the trace knows this publisher by; messages carry it with their `seq`.
    pub(crate) handle: u64,
    /// Sends to other processes, when a transport carries this topic.
    pub(crate) remote: Option<Box<dyn super::transport::RemotePublisher>>,
    /// Its place in the graph.
    pub(crate) _in_graph: super::view::GraphEntry,
    /// Its QoS events (see `qos_event`), and the node its event callbacks run on.
    pub(crate) events: Arc<EndpointEvents>,
    pub(crate) node: Node,
    /// `now + lifespan` stamps each message, when the QoS has a lifespan.
    pub(crate) lifespan: Option<i64>,
}

impl<T> Drop for Publisher<T> {
    /// A publisher's history goes with it: later joiners no longer get its messages.
    fn drop(&mut self) {
        if self.qos.is_transient_local() {
            self.topic.forget_publisher(self.handle);
        }
    }
}

impl<T: Send + Sync + 'static> Publisher<T> {
    /// Publishes `message`; returns how many subscriptions it reached.
    ///
    /// The message goes into a box its topic's subscriptions gave back when their
    /// callbacks were done with an earlier one, if there is one (see `graph::pool`). When
    /// only other processes hear the topic, it is encoded for them from where it is, with no
    /// box at all.
    pub fn publish(&self, message: T) -> usize {
        if let Some(remote) = self.remote_only() {
            // Nothing here shares the message: it is encoded from where it is, not boxed.
            let seq = self.published.fetch_add(1, Ordering::Relaxed) + 1;
            self.events.on_message();
            remote.publish(&message, seq);
            return 0;
        }
        self.publish_arc(self.topic.pool.boxed(message))
    }

    /// The transport, when it is all a publish reaches: nothing in this process hears the
    /// topic, nothing keeps the message for late joiners (transient local), and the trace
    /// is off (its events name the message by its box's address).
    fn remote_only(&self) -> Option<&dyn super::transport::RemotePublisher> {
        let remote = self.remote.as_deref()?;
        let alone = !self.topic.reaches_any()
            && !self.qos.is_transient_local()
            && !crate::trace::tp::enabled();
        alone.then_some(remote)
    }

    /// Publishes a shared message (subscribers get the same `Arc`, no copy).
    pub fn publish_arc(&self, message: Arc<T>) -> usize {
        let seq = self.published.fetch_add(1, Ordering::Relaxed) + 1;
        let Some(remote) = &self.remote else {
            return self.publish_here(message, seq);
        };
        let reached = self.publish_here(message.clone(), seq);
        remote.publish(&*message, seq);
        reached
    }

    /// Hands message `seq` to this process's subscriptions (and its trace and QoS events);
    /// returns how many it reached.
    pub(crate) fn publish_here(&self, message: Arc<T>, seq: u64) -> usize {
        use crate::trace::tp;
        let mut envelope = Envelope {
            message,
            publisher: self.handle,
            seq,
            stamp: 0,
            expires: match self.lifespan {
                None => NEVER,
                Some(span) => crate::time::wait::mono_now().saturating_add(span),
            },
        };
        self.events.on_message();
        if tp::enabled() {
            let address = envelope.address();
            tp::rclcpp_publish(address, self.handle, seq);
            tp::rcl_publish(self.handle, address, seq);
            envelope.stamp = tp::timestamp() as i64;
            tp::rmw_publish(address, self.handle, seq);
        }
        let keep = self.qos.is_transient_local().then(|| self.qos.depth());
        self.topic.publish(envelope, keep)
    }

    /// The handle of this publisher in traces (`publisher_handle`).
    pub fn trace_handle(&self) -> u64 {
        self.handle
    }

    /// Messages published so far.
    pub fn published(&self) -> u64 {
        self.published.load(Ordering::Relaxed)
    }

    /// The resolved topic name.
    pub fn topic(&self) -> &str {
        &self.topic.name
    }

    /// How many subscriptions in this process the topic has now.
    pub fn subscription_count(&self) -> usize {
        self.topic.subscription_count()
    }

    /// The QoS the publisher was created with.
    pub fn qos(&self) -> Qos {
        self.qos
    }

    /// Shows that the publisher is alive without publishing (for
    /// [`Liveliness::ManualByTopic`](super::Liveliness::ManualByTopic); a publish does it
    /// too). Nothing for automatic liveliness.
    pub fn assert_liveliness(&self) {
        self.events.assert_liveliness();
    }

    /// Its QoS events so far.
    pub fn qos_events(&self) -> PublisherQosEvents {
        self.events.publisher_events()
    }

    /// Its QoS event callbacks, apart from its message type (so code that registers them
    /// for many types is compiled once).
    pub fn events(&self) -> PublisherEvents {
        PublisherEvents {
            events: self.events.clone(),
            node: self.node.clone(),
        }
    }

    /// Runs `callback` on the event; see [`PublisherEvents::on_deadline_missed`].
    pub fn on_deadline_missed(
        &self,
        callback: impl Fn(DeadlineMissed) + Send + Sync + 'static,
    ) -> QosEventHandler {
        self.events().on_deadline_missed(callback)
    }

    /// Runs `callback` on the event; see [`PublisherEvents::on_liveliness_lost`].
    pub fn on_liveliness_lost(
        &self,
        callback: impl Fn(LivelinessLost) + Send + Sync + 'static,
    ) -> QosEventHandler {
        self.events().on_liveliness_lost(callback)
    }

    /// Runs `callback` on the event; see [`PublisherEvents::on_incompatible_qos`].
    pub fn on_incompatible_qos(
        &self,
        callback: impl Fn(IncompatibleQos) + Send + Sync + 'static,
    ) -> QosEventHandler {
        self.events().on_incompatible_qos(callback)
    }

    /// Runs `callback` on the event; see [`PublisherEvents::on_incompatible_type`].
    pub fn on_incompatible_type(
        &self,
        callback: impl Fn(IncompatibleType) + Send + Sync + 'static,
    ) -> QosEventHandler {
        self.events().on_incompatible_type(callback)
    }

    /// Runs `callback` on the event; see [`PublisherEvents::on_publication_matched`].
    pub fn on_publication_matched(
        &self,
        callback: impl Fn(Matched) + Send + Sync + 'static,
    ) -> QosEventHandler {
        self.events().on_publication_matched(callback)
    }
}

impl<T> fmt::Debug for Publisher<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Publisher")
            .field("topic", &self.topic.name)
            .field("qos", &self.qos)
            .finish_non_exhaustive()
    }
}
