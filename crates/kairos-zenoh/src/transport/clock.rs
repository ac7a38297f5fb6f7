//! The `/clock` bridge: one per context, so remote simulation time drives the context's
//! clocks on the same sample path as every topic.

use super::{INTERNAL_NODE, Sink, TransportError, ZenohTransport};
use kairos::graph::transport::{Declaration, Endpoint};
use kairos::graph::{CLOCK_TOPIC, ClockMsg, Context, Message, Node, NodeOptions};

impl ZenohTransport {
    /// Remote `/clock` -> the context's `/clock` topic (`ClockMsg`, simulation time),
    /// through a publisher of an internal node, which stays in the process; so the
    /// context's simulated clocks, which listen to the topic itself, follow it. Local
    /// subscriptions of `/clock` hear it there too (the transport does not subscribe them
    /// again, see [`Self::bridged`]).
    pub(super) fn clock_bridge(&self, context: &Context) -> Result<Declaration, TransportError> {
        let node = Node::with_options(
            context,
            &format!("{INTERNAL_NODE}clock"),
            NodeOptions::new().use_global_arguments(false),
        )?;
        let publisher =
            node.create_publisher::<ClockMsg>(CLOCK_TOPIC, kairos::graph::Qos::keep_last(1))?;
        let publisher = std::sync::Arc::new(publisher);
        let board = self.settle.clone();
        let wire = kairos::graph::transport::Wire::of::<ClockMsg>();
        let deliver = Sink::Lent(
            wire,
            Box::new(
                move |value: &mut dyn std::any::Any, _publisher, _seq, _left| {
                    if let Some(clock) = value
                        .downcast_mut::<Option<ClockMsg>>()
                        .and_then(Option::take)
                    {
                        // Held while a lock-step replay asks (see `crate::settle`).
                        let publisher = publisher.clone();
                        board.clock(Box::new(move || {
                            publisher.publish(clock);
                        }));
                    }
                },
            ),
        );
        let subscriber = self.subscriber(
            CLOCK_TOPIC,
            &wire.dds_type()?,
            &wire.type_hash().to_string(),
            kairos::graph::Qos::keep_last(1),
            deliver,
            |_, _, _| {},
        )?;
        Ok(Box::new((subscriber, node)))
    }

    /// Whether remote samples of `endpoint` reach the context through a bridge already.
    pub(super) fn bridged(endpoint: &Endpoint<'_>) -> bool {
        endpoint.name == CLOCK_TOPIC && endpoint.wire.type_name() == ClockMsg::TYPE_NAME
    }
}
