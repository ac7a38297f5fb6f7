//! Service introspection: a service or client that is asked to publishes each moment of
//! every call on `<service>/_service_event`, as ROS 2 does since Iron (rclcpp's and
//! rclpy's `configure_introspection`), so `ros2 service echo`, a kairos or rosbag2
//! recorder and any subscriber see the calls.
//!
//! What this module promises:
//! - Off by default, as in ROS 2: nothing is published and nothing is copied.
//! - A server publishes `REQUEST_RECEIVED` before its callback runs and `RESPONSE_SENT`
//!   when it answers; a client `REQUEST_SENT` when it sends and `RESPONSE_RECEIVED` when
//!   the response arrives. A call that fails (no server, timeout, panic) has no response
//!   events, as in ROS 2.
//! - Each event carries the calling client's 16-byte id and the request's sequence number
//!   as that client numbered it, on the client's and on the server's side, in one process
//!   or across processes (the transport hands the caller's id and number to the server), so
//!   the four events of one call can be matched.
//! - With [`IntrospectionState::Contents`] the request or response is copied into the
//!   event; with [`IntrospectionState::Metadata`] the event has neither.
//! - Stamps are read from the clock given, so under simulation time they are simulated.

use super::error::GraphError;
use super::node::Node;
use super::qos::Qos;
use crate::time::Clock;
use arc_swap::ArcSwapOption;
use kairos_interface::service_event::{EventInfo, EventKind, SERVICE_EVENT_SUFFIX};
use kairos_interface::{Message, ServiceEvent, ServiceRequest};
use std::sync::Arc;

/// What a service or client publishes about its calls (rclpy's
/// `ServiceIntrospectionState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IntrospectionState {
    /// Nothing (the default).
    #[default]
    Off,
    /// An event per moment of each call, without the request or response.
    Metadata,
    /// An event per moment of each call, with the request or response.
    Contents,
}

/// Who made a call: the client's id and the request's sequence number as it numbered it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caller {
    /// The client's 16-byte id (its gid on the wire).
    pub gid: [u8; 16],
    /// The request's sequence number.
    pub seq: i64,
}

/// Publishes one event: the moment, the call, and the request or response (either may be
/// withheld by the state).
type Publish<Req, Resp> = dyn Fn(EventKind, Caller, Option<&Req>, Option<&Resp>) + Send + Sync;

/// A service's or client's introspection: off, or how to publish its events. Read on
/// every request and response: while off, that is one atomic load.
pub(crate) struct Introspection<Req, Resp> {
    publish: ArcSwapOption<Box<Publish<Req, Resp>>>,
}

impl<Req, Resp> Default for Introspection<Req, Resp> {
    fn default() -> Self {
        Self {
            publish: ArcSwapOption::empty(),
        }
    }
}

impl<Req, Resp> Introspection<Req, Resp> {
    /// Publishes a request's event, if introspection is on.
    pub(crate) fn request(&self, kind: EventKind, caller: Caller, request: &Req) {
        if let Some(publish) = &*self.publish.load() {
            publish(kind, caller, Some(request), None);
        }
    }

    /// Publishes a response's event, if introspection is on.
    pub(crate) fn response(&self, kind: EventKind, caller: Caller, response: &Resp) {
        if let Some(publish) = &*self.publish.load() {
            publish(kind, caller, None, Some(response));
        }
    }

    /// Stops publishing and lets the event publisher go (its service or client is gone).
    pub(crate) fn turn_off(&self) {
        self.set(None);
    }

    fn set(&self, publish: Option<Box<Publish<Req, Resp>>>) {
        self.publish.store(publish.map(Arc::new));
    }
}

impl<Req, Resp> Introspection<Req, Resp>
where
    Req: ServiceRequest<Response = Resp>,
    Resp: Message + Clone,
{
    /// Turns introspection to `state`: events of `service` published by `node` with `qos`,
    /// stamped by `clock`.
    pub(crate) fn configure(
        &self,
        node: &Node,
        service: &str,
        clock: &Clock,
        qos: Qos,
        state: IntrospectionState,
    ) -> Result<(), GraphError> {
        let contents = match state {
            IntrospectionState::Off => {
                self.set(None);
                return Ok(());
            }
            IntrospectionState::Metadata => false,
            IntrospectionState::Contents => true,
        };
        let topic = event_topic(service);
        let publisher = node.create_publisher::<Req::Event>(&topic, qos)?;
        let clock = clock.clone();
        self.set(Some(Box::new(move |kind, caller, request, response| {
            let nanos = clock.now().nanos();
            let info = EventInfo {
                kind,
                stamp: (
                    i32::try_from(nanos.div_euclid(1_000_000_000)).unwrap_or(i32::MAX),
                    nanos.rem_euclid(1_000_000_000) as u32,
                ),
                client_gid: caller.gid,
                sequence_number: caller.seq,
            };
            let (request, response) = if contents {
                (request.cloned(), response.cloned())
            } else {
                (None, None)
            };
            publisher.publish(Req::Event::new(info, request, response));
        })));
        Ok(())
    }
}

/// The topic the events of service `service` (a resolved name) are published on.
pub fn event_topic(service: &str) -> String {
    format!("{}{SERVICE_EVENT_SUFFIX}", service.trim_end_matches('/'))
}

/// The 16-byte id of the client with entity id `id` in this process: its id, little
/// endian, then zeros (a transport that carries the client gives its own gid instead).
pub(crate) fn local_gid(id: u64) -> [u8; 16] {
    let mut gid = [0u8; 16];
    gid[..8].copy_from_slice(&id.to_le_bytes());
    gid
}
