//! A node's publishers and subscriptions.

use super::{Node, payload_type};
use crate::exec::entity::{BoxFuture, Entity};
use crate::graph::error::GraphError;
use crate::graph::message_callback::MessageCallback;
use crate::graph::name::NameKind;
use crate::graph::publisher::Publisher;
use crate::graph::qos::Qos;
use crate::graph::qos_event::EndpointEvents;
use crate::graph::subscription::{SubCallback, SubInner, Subscription};
use crate::graph::view::EntityKind;
use kairos_interface::Payload;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

impl Node {
    /// A publisher of `T` on `topic` (resolved against the node's namespace); see [`Publisher`].
    ///
    /// Fails when the name is invalid, the QoS cannot be honoured, or the topic already carries another type.
    pub fn create_publisher<T: Payload>(
        &self,
        topic: &str,
        qos: Qos,
    ) -> Result<Publisher<T>, GraphError> {
        qos.capacity()?;
        let name = self.resolve_name(NameKind::Topic, topic)?;
        let topic = self.shared.context.topic::<T>(&name)?;
        let remote = crate::graph::transport::publisher::<T>(self, &name, qos)?;
        // A publisher on the wire is traced by the handle its subscribers elsewhere know it
        // by, so flows cross processes.
        let handle = remote
            .as_ref()
            .and_then(|r| r.trace_handle())
            .unwrap_or_else(crate::trace::next_handle);
        let depth = qos.capacity()? as u64;
        crate::trace::tp::rcl_publisher_init(handle, self.shared.handle, handle, &name, depth);
        let (type_name, type_hash) = payload_type::<T>();
        let events = EndpointEvents::new(
            self,
            EntityKind::Publisher,
            &name,
            qos,
            (&type_name, &type_hash),
        );
        let sink = remote.as_ref().and_then(|r| r.liveliness_sink());
        events.start(self, handle, sink)?;
        Ok(Publisher {
            _in_graph: self.in_graph(
                EntityKind::Publisher,
                &name,
                (type_name, type_hash),
                Some(qos),
            ),
            remote,
            topic,
            qos,
            published: AtomicU64::new(0),
            loans: Default::default(),
            handle,
            events,
            node: self.clone(),
            lifespan: qos.lifespan.map(|span| span.as_nanos()),
        })
    }

    /// Runs `callback` once per message on the node's executor. The callback takes the
    /// message as `Arc<T>` (to keep it, without a copy) or as `&T` (to read it).
    ///
    /// ```
    /// use kairos::graph::{Context, Node, Qos};
    /// use std::sync::Arc;
    ///
    /// let node = Node::new_in(&Context::new(), "listener", "/")?;
    /// let _by_ref = node.create_subscription("chatter", Qos::keep_last(10), |m: &String| {
    ///     println!("{m}");
    /// })?;
    /// let _by_arc = node.create_subscription("chatter", Qos::keep_last(10), |m: Arc<String>| {
    ///     let _kept: Arc<String> = m;
    /// })?;
    /// # Ok::<(), kairos::graph::GraphError>(())
    /// ```
    pub fn create_subscription<T, Args>(
        &self,
        topic: &str,
        qos: Qos,
        callback: impl MessageCallback<T, Args>,
    ) -> Result<Subscription<T>, GraphError>
    where
        T: Payload,
    {
        self.subscribe(topic, qos, SubCallback::Sync(callback.into_arc_callback()))
    }

    /// Like [`create_subscription`](Self::create_subscription) with an `async` callback,
    /// polled by the executor; the group stays held until its future completes.
    ///
    /// The callback is cloned for each message and called once, so an async closure that
    /// captures state (`async move |m: Arc<T>| { state.use(m).await }`) works as it is;
    /// its captures must be `Clone` (wrap what is not in an `Arc`).
    pub fn create_subscription_async<T, F, Fut>(
        &self,
        topic: &str,
        qos: Qos,
        callback: F,
    ) -> Result<Subscription<T>, GraphError>
    where
        T: Payload,
        F: FnOnce(Arc<T>) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let callback = move |message| -> BoxFuture { Box::pin(callback.clone()(message)) };
        self.subscribe(topic, qos, SubCallback::Async(Box::new(callback)))
    }

    fn subscribe<T: Payload>(
        &self,
        topic: &str,
        qos: Qos,
        callback: SubCallback<T>,
    ) -> Result<Subscription<T>, GraphError> {
        let capacity = qos.capacity()?;
        let name = self.resolve_name(NameKind::Topic, topic)?;
        let topic = self.shared.context.topic::<T>(&name)?;
        let (type_name, type_hash) = payload_type::<T>();
        let events = EndpointEvents::new(
            self,
            EntityKind::Subscription,
            &name,
            qos,
            (&type_name, &type_hash),
        );
        let inner = self.add_entity(
            format_args!("subscription {name}"),
            |core| {
                let pool = topic.pool.clone();
                SubInner::new(core, qos, capacity, callback, pool, events.clone())
            },
            |_, id| {
                let capacity = capacity as u64;
                crate::trace::tp::rcl_subscription_init(
                    id,
                    self.shared.handle,
                    id,
                    &name,
                    capacity,
                );
                crate::trace::tp::rclcpp_subscription_init(id, id);
                crate::trace::tp::rclcpp_subscription_callback_added(id, id);
                Ok(())
            },
        )?;
        events.start(self, inner.core().id(), None)?;
        topic.subscribe(inner.clone());
        let remote = crate::graph::transport::subscription(self, &name, qos, &inner);
        let mut subscription = Subscription {
            _in_graph: self.in_graph(
                EntityKind::Subscription,
                &name,
                (type_name, type_hash),
                Some(qos),
            ),
            _remote: None,
            inner,
            topic,
            node: self.clone(),
        };
        // On failure the subscription drops here, which takes it off its node and topic.
        subscription._remote = remote?;
        Ok(subscription)
    }
}
