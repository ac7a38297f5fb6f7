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
//! Types cross the hook as `dyn Any` plus their `TypeId`; the transport keeps the codecs
//! of the message types it knows (Rust cannot ask "does `T` implement `Message`?" of a
//! `T` that the API does not bound).

use super::client::CallError;
use super::node::Node;
use super::qos::Qos;
use super::subscription::{Envelope, SubInner};
use std::any::{Any, TypeId, type_name};
use std::sync::{Arc, Weak};
use std::time::Instant;

/// A message as it crosses the hook.
pub type AnyMessage = Arc<dyn Any + Send + Sync>;
/// A service request or response as it crosses the hook.
pub type AnyValue = Box<dyn Any + Send>;
/// Something the transport keeps alive for as long as the entity lives (its declarations
/// on the network); dropping it withdraws them.
pub type Declaration = Box<dyn Any + Send + Sync>;
/// Where a remote call's outcome goes (called once, from any thread).
pub type Reply = Box<dyn FnOnce(Result<AnyValue, CallError>) + Send>;

/// What is being created: a publisher or subscription of `message`, or a service or client
/// of `message` (request) -> `response`.
#[derive(Debug)]
pub struct Endpoint<'a> {
    /// The node creating it.
    pub node: &'a Node,
    /// The resolved topic or service name.
    pub name: &'a str,
    /// The message type (the request type of a service or client).
    pub message: TypeId,
    /// The message type's Rust name.
    pub message_type: &'static str,
    /// The response type of a service or client; `None` for a topic.
    pub response: Option<TypeId>,
    /// The QoS of a publisher or subscription.
    pub qos: Qos,
}

/// Carries topics and services beyond the process. Each method returns `None` for what it
/// does not carry (e.g. a message type it has no codec for).
pub trait Transport: Send + Sync + 'static {
    /// Sends a publisher's messages to other processes.
    fn publisher(&self, endpoint: &Endpoint<'_>) -> Option<Box<dyn RemotePublisher>>;
    /// Delivers messages from other processes into `inbox` until the declaration drops.
    fn subscription(&self, endpoint: &Endpoint<'_>, inbox: Inbox) -> Option<Declaration>;
    /// Serves requests from other processes with the service `endpoint.name` of this
    /// context until the declaration drops.
    fn service(&self, endpoint: &Endpoint<'_>) -> Option<Declaration>;
    /// Sends a client's requests to servers in other processes.
    fn client(&self, endpoint: &Endpoint<'_>) -> Option<Arc<dyn RemoteClient>>;
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
}

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
}

/// The entry of one subscription for messages from other processes.
pub struct Inbox {
    deliver: Box<dyn Fn(AnyMessage, u64, u64) -> bool + Send + Sync>,
    /// The subscription's trace handle.
    subscription: u64,
}

impl Inbox {
    pub(crate) fn new<T: Send + Sync + 'static>(subscription: &Arc<SubInner<T>>) -> Self {
        let target: Weak<SubInner<T>> = Arc::downgrade(subscription);
        Self {
            deliver: Box::new(move |message, publisher, seq| {
                let (Some(target), Ok(message)) = (target.upgrade(), message.downcast::<T>())
                else {
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
                });
                true
            }),
            subscription: subscription.core.id(),
        }
    }

    /// Records that `count` messages of remote publisher `publisher`, from sequence number
    /// `first_seq` on, never reached this subscription (a gap in its sequence numbers), as
    /// a `kairos:message_loss` event the analyzer counts.
    pub fn lost(&self, publisher: u64, first_seq: u64, count: u64) {
        crate::trace::tp::message_loss(self.subscription, publisher, first_seq, count);
    }

    /// The handle traces know this subscription by.
    pub fn subscription_handle(&self) -> u64 {
        self.subscription
    }

    /// Queues `message` (of the subscription's type) from remote publisher `publisher`
    /// (the handle traces link it by) with its sequence number; false if the subscription
    /// is gone or the type is not its own.
    pub fn deliver(&self, message: AnyMessage, publisher: u64, seq: u64) -> bool {
        (self.deliver)(message, publisher, seq)
    }
}

impl std::fmt::Debug for Inbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inbox").finish_non_exhaustive()
    }
}

fn endpoint<'a, T: 'static>(node: &'a Node, name: &'a str, qos: Qos) -> Endpoint<'a> {
    Endpoint {
        node,
        name,
        message: TypeId::of::<T>(),
        message_type: type_name::<T>(),
        response: None,
        qos,
    }
}

pub(crate) fn publisher<T: 'static>(
    node: &Node,
    name: &str,
    qos: Qos,
) -> Option<Box<dyn RemotePublisher>> {
    let transport = node.context().transport()?;
    transport.publisher(&endpoint::<T>(node, name, qos))
}

pub(crate) fn subscription<T: Send + Sync + 'static>(
    node: &Node,
    name: &str,
    qos: Qos,
    inner: &Arc<SubInner<T>>,
) -> Option<Declaration> {
    let transport = node.context().transport()?;
    transport.subscription(&endpoint::<T>(node, name, qos), Inbox::new(inner))
}

pub(crate) fn service<Req: 'static, Resp: 'static>(node: &Node, name: &str) -> Option<Declaration> {
    let transport = node.context().transport()?;
    let endpoint = Endpoint {
        response: Some(TypeId::of::<Resp>()),
        ..endpoint::<Req>(node, name, Qos::default())
    };
    transport.service(&endpoint)
}

pub(crate) fn client<Req: 'static, Resp: 'static>(
    node: &Node,
    name: &str,
) -> Option<Arc<dyn RemoteClient>> {
    let transport = node.context().transport()?;
    let endpoint = Endpoint {
        response: Some(TypeId::of::<Resp>()),
        ..endpoint::<Req>(node, name, Qos::default())
    };
    transport.client(&endpoint)
}
