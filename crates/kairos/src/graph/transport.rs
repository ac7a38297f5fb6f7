//! The hook through which a transport carries a context's topics and services to other
//! processes and hosts.
//!
//! What this module promises:
//! - Without a transport (the default) nothing changes: a publish is delivered in the
//!   process as one `Arc`, and the only cost of this hook is one `Option` test.
//! - With one ([`Context::set_transport`](super::Context::set_transport)), each
//!   publisher, subscription, service and client is offered to it when created; what it
//!   accepts (the message types it can put on the wire) it also carries to and from other
//!   processes, and what it declines stays in the process. Node code never changes: the
//!   program installs a transport once (the `kairos-zenoh` crate does it from
//!   configuration), as it would pick an allocator.
//! - Messages from another process enter exactly where local ones do (the subscription's
//!   queue), so they are counted, dropped and traced by the same rules.
//!
//! Why a trait object here and not a dependency: the graph never compiles a network stack;
//! `kairos-zenoh` implements [`Transport`], and the analyzer and trace crates never see it.
//! Values cross the hook as `dyn Any`; each endpoint carries the [`Wire`] of its type (made
//! where the type is known, from its [`Payload`] bound), so the
//! transport needs no table of types and a message type cannot be forgotten. A type without
//! a wire (an in-process opt-in) is never offered to the transport.
//!
//! A hook that cannot carry an entity it was offered returns the error; the graph then
//! fails the creation with [`GraphError::Transport`], so a publisher meant for the network
//! never silently stays in the process.

use super::client::CallError;
use super::error::GraphError;
use super::introspection::Caller;
use super::node::Node;
use super::qos::Qos;
use super::subscription::{Envelope, SubInner};
use super::view::GraphEntity;
use kairos_interface::{Payload, ServiceCall};
use std::any::Any;
use std::sync::{Arc, Weak};
use std::time::Instant;

pub use kairos_interface::{AnyMessage, AnyValue, ServiceWire, Wire};

/// Something the transport keeps alive for as long as the entity lives (its declarations
/// on the network); dropping it withdraws them.
pub type Declaration = Box<dyn Any + Send + Sync>;
/// Where a remote call's outcome goes (called once, from any thread).
pub type Reply = Box<dyn FnOnce(Result<AnyValue, CallError>) + Send>;
/// Why a transport could not carry an entity (the transport's own error, kept as the
/// source of [`GraphError::Transport`]).
pub type TransportFailure = Arc<dyn std::error::Error + Send + Sync>;
/// What a hook returns: the entity's remote side, `None` for an entity the transport does
/// not carry by design (its own internal nodes), or why it failed.
pub type Carried<T> = Result<Option<T>, TransportFailure>;
/// Answers one encoded request with the encoded response, or why there is none.
pub type Answer = Box<dyn FnOnce(Result<Vec<u8>, String>) + Send>;
/// Serves encoded requests with a service of this process: the request's payload, the
/// client that sent it (its gid and sequence number, as the wire names them) when known,
/// and where the encoded answer goes.
pub type LocalServer = Arc<dyn Fn(&[u8], Option<Caller>, Answer) + Send + Sync>;

/// A publisher or subscription being created, of a message type that crosses.
#[derive(Debug)]
pub struct Endpoint<'a> {
    /// The node creating it.
    pub node: &'a Node,
    /// The resolved topic name.
    pub name: &'a str,
    /// The message type's wire form.
    pub wire: Wire,
    /// The QoS of the publisher or subscription.
    pub qos: Qos,
}

/// A service or client being created, of a service type that crosses.
pub struct ServiceEndpoint<'a> {
    /// The node creating it.
    pub node: &'a Node,
    /// The resolved service name.
    pub name: &'a str,
    /// The service type's wire form.
    pub wire: ServiceWire,
    serve: fn(&Node, &str, &ServiceWire) -> Result<LocalServer, GraphError>,
}

impl ServiceEndpoint<'_> {
    /// The group the service's callback runs in, when it is mutually exclusive (what a
    /// transport shares so that waits in other processes can be checked against it),
    /// with the callback's name.
    pub fn server_group(&self) -> Option<(crate::exec::shared_waits::GroupRef, String)> {
        self.node.context().server_group(self.name)
    }

    /// Serves encoded requests from other processes with this service, through a client
    /// of `via` (a node of the transport's own, never attached to an executor).
    pub fn local_server(&self, via: &Node) -> Result<LocalServer, GraphError> {
        (self.serve)(via, self.name, &self.wire)
    }
}

impl std::fmt::Debug for ServiceEndpoint<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceEndpoint")
            .field("name", &self.name)
            .field("wire", &self.wire)
            .finish_non_exhaustive()
    }
}

/// Carries topics and services beyond the process. Each method returns the remote side,
/// `Ok(None)` for what it does not carry by design, or the error that kept it from
/// carrying the entity.
pub trait Transport: Send + Sync + 'static {
    /// Announces a node to other processes until the declaration drops, whatever
    /// entities it has (`Ok(None)`: nodes are known only through their entities).
    fn node(&self, node: &Node) -> Carried<Declaration> {
        let _ = node;
        Ok(None)
    }
    /// Sends a publisher's messages to other processes.
    fn publisher(&self, endpoint: &Endpoint<'_>) -> Carried<Box<dyn RemotePublisher>>;
    /// Delivers messages from other processes into `inbox` until the declaration drops.
    fn subscription(&self, endpoint: &Endpoint<'_>, inbox: Inbox) -> Carried<Declaration>;
    /// Serves requests from other processes with the service `endpoint.name` of this
    /// context until the declaration drops.
    fn service(&self, endpoint: &ServiceEndpoint<'_>) -> Carried<Declaration>;
    /// Announces a subscription whose messages reach this context another way (the
    /// `/clock` of a node on simulation time, which the context's clock hears once for
    /// all): other processes see it; nothing is delivered through it.
    fn announced_subscription(&self, endpoint: &Endpoint<'_>) -> Carried<Declaration> {
        let _ = endpoint;
        Ok(None)
    }
    /// Sends a client's requests to servers in other processes.
    fn client(&self, endpoint: &ServiceEndpoint<'_>) -> Carried<Arc<dyn RemoteClient>>;
    /// The entities of other processes the transport sees now (never this process's own:
    /// the context lists those itself).
    fn graph(&self) -> Vec<GraphEntity> {
        Vec::new()
    }
    /// Calls `changed`, from any thread, after each change of what [`graph`](Self::graph)
    /// returns, for as long as the transport lives.
    fn watch_graph(&self, changed: Box<dyn Fn() + Send + Sync>) {
        let _ = changed;
    }
    /// Shares this process's blocked waits with the other processes it reaches, so a
    /// blocking call that closes a cycle through them fails with `WouldDeadlock` (see
    /// [`shared_waits`](crate::exec::shared_waits)); `None`: it does not.
    fn wait_sharing(&self) -> Option<Arc<dyn crate::exec::shared_waits::WaitSharing>> {
        None
    }
}

/// Sends a publisher's messages to other processes.
pub trait RemotePublisher: Send + Sync {
    /// `message` is the publisher's message type; `seq` its sequence number (from 1).
    fn publish(&self, message: &(dyn Any + Send + Sync), seq: u64);

    /// The handle traces know this publisher by in every process: the one the receiving
    /// side records its messages under, so the analyzer links a message published here to
    /// its callbacks elsewhere by (handle, seq). `None` keeps a process-local handle, and
    /// flows stop at the process boundary.
    fn trace_handle(&self) -> Option<u64> {
        None
    }

    /// Where a manual-liveliness publisher's changes of liveliness go (`false` when its
    /// lease lapses, `true` when it asserts itself again), so other processes count it
    /// alive or not; `None`: they are not told.
    fn liveliness_sink(&self) -> Option<LivelinessSink> {
        None
    }

    /// A buffer of at least `capacity` bytes to write a message's payload in place, the
    /// buffer it will be sent from ([`Publisher::loan`](super::Publisher::loan)); `None`
    /// when this transport lends none for it (the loan is then a buffer of the heap).
    fn lend(&self, capacity: usize) -> Option<Box<dyn LentBuffer>> {
        let _ = capacity;
        None
    }

    /// Sends a payload written in place in a buffer a publisher of this transport lent;
    /// returns it as shared bytes for this process's subscriptions to view. `Err` gives
    /// the payload back unsent when the buffer is not one this publisher can send as it
    /// is: it is then published as any message, with one copy.
    fn publish_lent(&self, payload: Written, seq: u64) -> Result<bytes::Bytes, Written> {
        let _ = seq;
        Err(payload)
    }
}

pub use kairos_interface::loan::{LentBuffer, Written};

/// Told each change of a publisher's manual liveliness (see
/// [`RemotePublisher::liveliness_sink`]); called on the thread that saw the change.
pub type LivelinessSink = Box<dyn Fn(bool) + Send + Sync>;

/// Calls services in other processes.
pub trait RemoteClient: Send + Sync {
    /// Whether a server exists beyond the process now.
    fn is_ready(&self) -> bool;
    /// Waits until a server exists beyond the process or `deadline` passes (none: no
    /// deadline); true if one does.
    fn wait_ready(&self, deadline: Option<Instant>) -> bool;
    /// Sends request `seq`; `reply` gets the response (of the client's response type) or
    /// why there is none. A transport must call `reply` at most once.
    fn call(&self, request: AnyValue, seq: u64, reply: Reply);
    /// The 16-byte id servers in other processes know this client by (its gid in the
    /// request's attachment), so its introspection events and theirs name it alike;
    /// `None` when the transport sends none.
    fn gid(&self) -> Option<[u8; 16]> {
        None
    }
}

/// A message from another process as it enters a subscription.
enum Arrival<'a> {
    /// Already in a shared box.
    Shared(AnyMessage),
    /// Lent as an `Option<T>` holding it (see [`Wire::decode_to`]): boxed in a box the
    /// subscription's topic recycles.
    Lent(&'a mut dyn Any),
}

/// Queues an arrival in the subscription: (message, publisher, sequence number, monotonic
/// expiry or `NEVER`) -> whether it was queued.
type Deliver = dyn Fn(Arrival<'_>, u64, u64, i64) -> bool + Send + Sync;

/// The entry of one subscription for messages from other processes.
pub struct Inbox {
    deliver: Box<Deliver>,
    /// The subscription's QoS events (message lost).
    events: Weak<super::qos_event::EndpointEvents>,
    /// The subscription's trace handle.
    subscription: u64,
}

impl Inbox {
    pub(crate) fn new<T: Send + Sync + 'static>(subscription: &Arc<SubInner<T>>) -> Self {
        let target: Weak<SubInner<T>> = Arc::downgrade(subscription);
        Self {
            deliver: Box::new(move |arrival, publisher, seq, expires| {
                let Some(target) = target.upgrade() else {
                    return false;
                };
                let message = match arrival {
                    Arrival::Shared(message) => message.downcast::<T>().ok(),
                    Arrival::Lent(value) => value
                        .downcast_mut::<Option<T>>()
                        .and_then(Option::take)
                        .map(|message| target.boxed(message)),
                };
                let Some(message) = message else {
                    return false;
                };
                let stamp = if crate::trace::tp::enabled() {
                    crate::trace::tp::timestamp() as i64
                } else {
                    0
                };
                target.deliver(Envelope {
                    message,
                    publisher,
                    seq,
                    stamp,
                    expires,
                });
                true
            }),
            subscription: subscription.core.id(),
            events: Arc::downgrade(&subscription.events),
        }
    }

    /// Records that `count` messages of remote publisher `publisher`, from sequence number
    /// `first_seq` on, never reached this subscription (a gap in its sequence numbers), as
    /// a `kairos:message_loss` event the analyzer counts, and as the subscription's
    /// message-lost QoS event.
    pub fn lost(&self, publisher: u64, first_seq: u64, count: u64) {
        crate::trace::tp::message_loss(self.subscription, publisher, first_seq, count);
        if let Some(events) = self.events.upgrade() {
            events.messages_lost(count);
        }
    }

    /// The handle traces know this subscription by.
    pub fn subscription_handle(&self) -> u64 {
        self.subscription
    }

    /// Queues `message` (of the subscription's type) from remote publisher `publisher`
    /// (the handle traces link it by) with its sequence number; false if the subscription
    /// is gone or the type is not its own.
    pub fn deliver(&self, message: AnyMessage, publisher: u64, seq: u64) -> bool {
        (self.deliver)(
            Arrival::Shared(message),
            publisher,
            seq,
            super::subscription::NEVER,
        )
    }

    /// [`deliver`](Self::deliver) for a message lent by [`Wire::decode_to`] (an
    /// `Option<T>` holding it, `T` the subscription's type), moved into a box the
    /// subscription's topic recycles: a steady stream from another process allocates no
    /// box per message, as a local one does not. False, and `value` left as it was, if the
    /// subscription is gone or the type is not its own.
    pub fn deliver_lent(&self, value: &mut dyn Any, publisher: u64, seq: u64) -> bool {
        (self.deliver)(
            Arrival::Lent(value),
            publisher,
            seq,
            super::subscription::NEVER,
        )
    }

    /// [`deliver`](Self::deliver) for a message of a publisher with a lifespan, of which
    /// `left` remains (zero or negative: none): a message still queued when it runs out is
    /// dropped where the subscription would take it, and counted as expired, as a local
    /// publisher's is.
    pub fn deliver_expiring(
        &self,
        message: AnyMessage,
        publisher: u64,
        seq: u64,
        left: crate::time::Duration,
    ) -> bool {
        (self.deliver)(Arrival::Shared(message), publisher, seq, expiry(left))
    }

    /// [`deliver_lent`](Self::deliver_lent) for a message of a publisher with a lifespan,
    /// as [`deliver_expiring`](Self::deliver_expiring).
    pub fn deliver_lent_expiring(
        &self,
        value: &mut dyn Any,
        publisher: u64,
        seq: u64,
        left: crate::time::Duration,
    ) -> bool {
        (self.deliver)(Arrival::Lent(value), publisher, seq, expiry(left))
    }
}

/// The monotonic time at which a message with `left` of its lifespan remaining expires.
fn expiry(left: crate::time::Duration) -> i64 {
    crate::time::wait::mono_now().saturating_add(left.as_nanos())
}

impl std::fmt::Debug for Inbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inbox").finish_non_exhaustive()
    }
}

/// Fails the creation of `entity` if the transport could not carry it.
fn carried<T>(entity: &str, name: &str, result: Carried<T>) -> Result<Option<T>, GraphError> {
    result.map_err(|source| GraphError::Transport {
        entity: format!("{entity} '{name}'"),
        source,
    })
}

pub(crate) fn node(node: &Node) -> Result<Option<Declaration>, GraphError> {
    let Some(transport) = node.context().transport() else {
        return Ok(None);
    };
    carried("node", node.fully_qualified_name(), transport.node(node))
}

/// Carries the topic endpoint `name` of `node` with `carry`, if the context has a
/// transport and `T` crosses processes.
fn carry_endpoint<T: Payload, R>(
    entity: &str,
    node: &Node,
    name: &str,
    qos: Qos,
    carry: impl FnOnce(&dyn Transport, &Endpoint<'_>) -> Carried<R>,
) -> Result<Option<R>, GraphError> {
    let (Some(transport), Some(wire)) = (node.context().transport(), T::wire()) else {
        return Ok(None);
    };
    let endpoint = Endpoint {
        node,
        name,
        wire,
        qos,
    };
    carried(entity, name, carry(transport.as_ref(), &endpoint))
}

pub(crate) fn publisher<T: Payload>(
    node: &Node,
    name: &str,
    qos: Qos,
) -> Result<Option<Box<dyn RemotePublisher>>, GraphError> {
    carry_endpoint::<T, _>("publisher", node, name, qos, |t, e| t.publisher(e))
}

pub(crate) fn subscription<T: Payload>(
    node: &Node,
    name: &str,
    qos: Qos,
    inner: &Arc<SubInner<T>>,
) -> Result<Option<Declaration>, GraphError> {
    carry_endpoint::<T, _>("subscription", node, name, qos, |t, e| {
        t.subscription(e, Inbox::new(inner))
    })
}

pub(crate) fn announced_subscription<T: Payload>(
    node: &Node,
    name: &str,
    qos: Qos,
) -> Result<Option<Declaration>, GraphError> {
    carry_endpoint::<T, _>("subscription", node, name, qos, |t, e| {
        t.announced_subscription(e)
    })
}

pub(crate) fn service<Req: Payload, Resp: Payload>(
    node: &Node,
    name: &str,
) -> Result<Option<Declaration>, GraphError> {
    let (Some(transport), Some(wire)) = (
        node.context().transport(),
        <fn(Req) -> Resp as ServiceCall>::wire(),
    ) else {
        return Ok(None);
    };
    let endpoint = ServiceEndpoint {
        node,
        name,
        wire,
        serve: serve::<Req, Resp>,
    };
    carried("service", name, transport.service(&endpoint))
}

pub(crate) fn client<S: ServiceCall>(
    node: &Node,
    name: &str,
) -> Result<Option<Arc<dyn RemoteClient>>, GraphError> {
    let (Some(transport), Some(wire)) = (node.context().transport(), S::wire()) else {
        return Ok(None);
    };
    let endpoint = ServiceEndpoint {
        node,
        name,
        wire,
        serve: serve::<S::Request, S::Response>,
    };
    carried("client", name, transport.client(&endpoint))
}

/// Decodes each request, calls service `name` through a client of `via`, and encodes the
/// response.
fn serve<Req: Payload, Resp: Payload>(
    via: &Node,
    name: &str,
    wire: &ServiceWire,
) -> Result<LocalServer, GraphError> {
    let client = via.create_client::<fn(Req) -> Resp>(name)?;
    let (request, response) = (wire.request, wire.response);
    Ok(Arc::new(
        move |payload: &[u8], caller: Option<Caller>, answer: Answer| {
            let decoded = request.decode_value(payload).map(|r| r.downcast::<Req>());
            match decoded {
                Err(e) => answer(Err(e.to_string())),
                Ok(Err(_)) => answer(Err(format!(
                    "the request does not decode as {}",
                    request.type_name()
                ))),
                Ok(Ok(req)) => client.call_async_as(*req, caller).on_done(move |result| {
                    answer(result.map_err(|e| e.to_string()).and_then(|r| {
                        response.encode(&r).ok_or_else(|| {
                            format!("the response is not a {}", response.type_name())
                        })
                    }))
                }),
            }
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::Executor;
    use crate::graph::Context;
    use parking_lot::Mutex;

    // A message from another process used to take a new `Arc` every time: allocated on
    // the transport's thread, freed on the executor's, glibc's slow path on both.
    #[test]
    fn a_lent_message_from_another_process_goes_into_a_recycled_box() {
        let context = Context::new();
        let node = Node::new_in(&context, "listener", "/").unwrap();
        let heard = Arc::new(Mutex::new(Vec::new()));
        let sink = heard.clone();
        let subscription = node
            .create_subscription("numbers", Qos::keep_last(10), move |n: Arc<u64>| {
                sink.lock().push((*n, Arc::as_ptr(&n) as usize));
            })
            .unwrap();
        let exec = Executor::single_threaded();
        exec.add_node(&node).unwrap();
        let inbox = Inbox::new(&subscription.inner);
        let pool = &subscription.topic.pool;

        let mut first = Some(1u64);
        assert!(inbox.deliver_lent(&mut first, 7, 1));
        assert_eq!(first, None, "the message was moved out");
        exec.spin_some().unwrap();
        assert_eq!(
            pool.len(),
            1,
            "the callback is done: its box is back in the pool"
        );

        let mut second = Some(2u64);
        assert!(inbox.deliver_lent(&mut second, 7, 2));
        assert_eq!(pool.len(), 0, "the second message took the recycled box");
        exec.spin_some().unwrap();
        let heard = heard.lock().clone();
        assert_eq!(heard.iter().map(|h| h.0).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(heard[0].1, heard[1].1, "both in one box");

        // Another type is refused and left to its owner.
        let mut other = Some(String::from("not a number"));
        assert!(!inbox.deliver_lent(&mut other, 7, 3));
        assert_eq!(other.as_deref(), Some("not a number"));
        assert_eq!(subscription.stats().received, 2);
    }
}
