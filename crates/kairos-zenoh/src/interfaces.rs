//! The interface types `kairos-msgs` ships, by ROS type name, for tools that take a type
//! as text (`kairos topic echo /scan sensor_msgs/msg/LaserScan`, `kairos service call`).
//!
//! A tool's publisher, subscription or client goes to the network directly (see
//! [`ZenohTransport::direct_publisher`]): the table holds, per type, only its codec (a
//! [`Wire`]) and its JSON conversion, never the runtime's publish, subscribe and call paths,
//! which would be compiled once per shipped type (~200 of them) for every build of this
//! crate.
//!
//! Node code never goes through this table: a publisher, subscription, service or client
//! carries its own type's codec to the transport. The table is built once, from the
//! generated packages, and only read afterwards; values are handed over as JSON.

use crate::ZenohTransport;
use crate::message::DecodeError;
use kairos::graph::transport::{AnyValue, RemoteClient, ServiceWire, Wire};
use kairos::graph::{Message, Node, Qos, ServiceEvent, ServiceRequest, ServiceType};
use kairos::time::Duration;
pub use kairos_msgs::service_event::{EventInfo, EventKind};
use std::any::Any;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, mpsc};
use std::time::Instant;

/// A publisher of values given as JSON (for tools that know the type only by name).
pub type JsonPublisher = Box<dyn Fn(serde_json::Value) -> Result<(), String> + Send + Sync>;
/// Called with each message, as JSON.
pub type JsonCallback = Box<dyn Fn(serde_json::Value) + Send + Sync>;
/// A kairos entity kept alive by the tool that made it.
pub type Held = Box<dyn Any + Send + Sync>;

/// A value of type `M` from JSON, boxed for the transport.
fn from_json<M: Message>(value: serde_json::Value) -> Result<Box<dyn Any + Send + Sync>, String> {
    serde_json::from_value::<M>(value)
        .map(|m| Box::new(m) as Box<dyn Any + Send + Sync>)
        .map_err(|e| format!("not a {}: {e}", M::TYPE_NAME))
}

/// A value the transport decoded as `M`, as JSON (`None` if it is not an `M`).
fn to_json<M: Message>(value: &dyn Any) -> Option<serde_json::Value> {
    value
        .downcast_ref::<M>()
        .map(|m| serde_json::to_value(m).unwrap_or_default())
}

/// One message type, for a tool.
pub struct MessageTool {
    wire: Wire,
    dds_type: String,
    hash: String,
    definition: &'static str,
    from_json: fn(serde_json::Value) -> Result<Box<dyn Any + Send + Sync>, String>,
    to_json: fn(&dyn Any) -> Option<serde_json::Value>,
}

impl MessageTool {
    fn of<M: Message>() -> Self {
        MessageTool {
            wire: Wire::of::<M>(),
            dds_type: crate::message::dds_type_name(M::TYPE_NAME)
                .expect("a Message's TYPE_NAME is pkg/msg/Type"),
            hash: M::type_hash().to_string(),
            definition: M::DEFINITION,
            from_json: from_json::<M>,
            to_json: to_json::<M>,
        }
    }

    /// The ROS type name.
    pub fn ros_type(&self) -> &'static str {
        self.wire.type_name()
    }

    /// The RIHS01 type hash, `RIHS01_` and 64 hex digits.
    pub fn type_hash(&self) -> &str {
        &self.hash
    }

    /// The type's `.msg` text (`Message::DEFINITION`; empty when not known).
    pub fn definition(&self) -> &'static str {
        self.definition
    }

    /// A publisher of this type on `node`, fed JSON values, sending to other processes.
    pub fn json_publisher(
        &self,
        transport: &ZenohTransport,
        node: &Node,
        topic: &str,
        qos: Qos,
    ) -> Result<JsonPublisher, crate::TransportError> {
        let publisher = transport.direct_publisher(node, topic, self.wire, qos)?;
        let from_json = self.from_json;
        let seq = AtomicU64::new(0);
        Ok(Box::new(move |value| {
            let message = from_json(value)?;
            publisher.publish(&*message, seq.fetch_add(1, Ordering::Relaxed) + 1);
            Ok(())
        }))
    }

    /// A subscription of this type on `node`, handing each message from other processes
    /// over as JSON (on the transport's thread).
    pub fn json_subscription(
        &self,
        transport: &ZenohTransport,
        node: &Node,
        topic: &str,
        qos: Qos,
        callback: JsonCallback,
    ) -> Result<Held, crate::TransportError> {
        let to_json = self.to_json;
        transport.direct_subscription(node, topic, self.wire, qos, move |message| {
            callback(to_json(&*message).unwrap_or_default())
        })
    }

    /// The data key expression of `topic` (absolute) for this type in `domain`.
    pub fn data_key(&self, domain: u32, topic: &str) -> String {
        crate::graph_key::data_key(domain, topic, &self.dds_type, &self.hash)
    }

    /// A payload of this type, as JSON.
    pub fn payload_to_json(&self, payload: &[u8]) -> Result<serde_json::Value, DecodeError> {
        let message = self.wire.decode(payload)?;
        Ok((self.to_json)(&*message).unwrap_or_default())
    }
}

/// One service type, for a tool.
pub struct ServiceTool {
    wire: ServiceWire,
    definitions: (&'static str, &'static str),
    request_from_json: fn(serde_json::Value) -> Result<Box<dyn Any + Send + Sync>, String>,
    response_to_json: fn(&dyn Any) -> Option<serde_json::Value>,
    recorded_call: fn(&[u8]) -> Result<RecordedCall, String>,
}

/// A call as one of its introspection events (`<Type>_Event`, as a bag holds it) tells it.
pub struct RecordedCall {
    /// Which moment of the call, which client, which request.
    pub info: EventInfo,
    /// The request, when the event carries it (a request event, with contents).
    pub request: Option<AnyValue>,
}

/// Sends requests of one service type to one service in other processes, without waiting
/// for the answers (what a bag player does with recorded requests).
pub struct ServiceSender {
    client: Arc<dyn RemoteClient>,
    next_seq: AtomicU64,
}

impl std::fmt::Debug for RecordedCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordedCall")
            .field("info", &self.info)
            .field("has_request", &self.request.is_some())
            .finish()
    }
}

impl std::fmt::Debug for ServiceSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceSender").finish_non_exhaustive()
    }
}

impl ServiceSender {
    /// Whether a server exists now.
    pub fn is_ready(&self) -> bool {
        self.client.is_ready()
    }

    /// Waits up to `timeout` for a server; true if one exists.
    pub fn wait_ready(&self, timeout: std::time::Duration) -> bool {
        self.client.wait_ready(Instant::now().checked_add(timeout))
    }

    /// Sends `request` (of the service's request type); `answered` is told, from the
    /// transport's thread, whether a response came (or why not).
    pub fn send(&self, request: AnyValue, answered: Box<dyn FnOnce(Result<(), String>) + Send>) {
        let seq = self.next_seq.fetch_add(1, Ordering::Relaxed);
        self.client.call(
            request,
            seq,
            Box::new(move |result| answered(result.map(|_| ()).map_err(|e| e.to_string()))),
        );
    }
}

impl ServiceTool {
    fn of<S: ServiceType>() -> Self {
        ServiceTool {
            wire: ServiceWire::of::<S>(),
            definitions: (S::Request::DEFINITION, S::Response::DEFINITION),
            request_from_json: from_json::<S::Request>,
            response_to_json: to_json::<S::Response>,
            recorded_call: recorded_call::<S>,
        }
    }

    /// The call one of this service's introspection events (its CDR payload) tells of.
    pub fn recorded_call(&self, event: &[u8]) -> Result<RecordedCall, String> {
        (self.recorded_call)(event)
    }

    /// A sender of requests to service `name` from `node` (a node the transport announces).
    pub fn sender(
        &self,
        transport: &ZenohTransport,
        node: &Node,
        name: &str,
    ) -> Result<ServiceSender, String> {
        let client = transport
            .direct_client(node, name, &self.wire)
            .map_err(|e| e.to_string())?;
        Ok(ServiceSender {
            client,
            next_seq: AtomicU64::new(1),
        })
    }

    /// The ROS type name.
    pub fn ros_type(&self) -> &str {
        self.wire.type_name()
    }

    /// The `.srv` text of the request (before its `---`) and of the response (after it).
    pub fn definitions(&self) -> (&'static str, &'static str) {
        self.definitions
    }

    /// Calls service `name` in another process from `node` with a request given as CDR
    /// bytes (encapsulation header included); the response as CDR bytes. A request that
    /// does not decode as this type is refused before anything is sent. `timeout` bounds
    /// the wait for a server and for its answer.
    pub fn call_cdr(
        &self,
        transport: &ZenohTransport,
        node: &Node,
        name: &str,
        request: &[u8],
        timeout: Duration,
    ) -> Result<Vec<u8>, String> {
        let request = self.wire.request.decode_value(request).map_err(|e| {
            format!(
                "the request is not a {}: {e}",
                self.wire.request.type_name()
            )
        })?;
        let response = self.call(transport, node, name, request, timeout)?;
        self.wire.response.encode(&*response).ok_or_else(|| {
            format!(
                "the response of '{name}' is not a {}",
                self.wire.response.type_name()
            )
        })
    }

    /// Calls service `name` in another process from `node` with a request given as JSON;
    /// the response as JSON. `timeout` bounds the wait for a server and for its answer.
    pub fn call_json(
        &self,
        transport: &ZenohTransport,
        node: &Node,
        name: &str,
        request: serde_json::Value,
        timeout: Duration,
    ) -> Result<serde_json::Value, String> {
        let request = (self.request_from_json)(request)? as AnyValue;
        let response = self.call(transport, node, name, request, timeout)?;
        Ok((self.response_to_json)(&*response).unwrap_or_default())
    }

    fn call(
        &self,
        transport: &ZenohTransport,
        node: &Node,
        name: &str,
        request: AnyValue,
        timeout: Duration,
    ) -> Result<AnyValue, String> {
        let client = transport
            .direct_client(node, name, &self.wire)
            .map_err(|e| e.to_string())?;
        let deadline = timeout.to_std().and_then(|t| Instant::now().checked_add(t));
        if !client.wait_ready(deadline) {
            return Err(format!("no server for service '{name}' within {timeout}"));
        }
        let (tx, rx) = mpsc::sync_channel(1);
        client.call(
            request,
            1,
            Box::new(move |result| {
                let _ = tx.send(result);
            }),
        );
        let result = match deadline {
            None => rx.recv().map_err(|_| ()),
            Some(deadline) => rx
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .map_err(|_| ()),
        };
        result
            .map_err(|()| format!("service '{name}' did not answer within {timeout}"))?
            .map_err(|e| e.to_string())
    }
}

fn recorded_call<S: ServiceType>(payload: &[u8]) -> Result<RecordedCall, String> {
    let event: <S::Request as ServiceRequest>::Event = crate::message::decode(payload)
        .map_err(|e| format!("not a {}_Event: {e}", S::TYPE_NAME))?;
    let info = event
        .info()
        .ok_or_else(|| format!("a {}_Event of none of the four event types", S::TYPE_NAME))?;
    let request = event.into_request().map(|r| Box::new(r) as AnyValue);
    Ok(RecordedCall { info, request })
}

#[derive(Default)]
struct Table {
    messages: HashMap<&'static str, Arc<MessageTool>>,
    services: HashMap<&'static str, Arc<ServiceTool>>,
}

impl kairos_msgs::InterfaceVisitor for Table {
    fn message<M: Message>(&mut self) {
        self.messages
            .insert(M::TYPE_NAME, Arc::new(MessageTool::of::<M>()));
    }
    fn service<S: ServiceType>(&mut self) {
        self.services
            .insert(S::TYPE_NAME, Arc::new(ServiceTool::of::<S>()));
    }
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table = Table::default();
        kairos_msgs::visit_interfaces(&mut table);
        table
    })
}

/// The message type named `ros_type` (`pkg/msg/Type`).
pub fn message_by_name(ros_type: &str) -> Option<Arc<MessageTool>> {
    table().messages.get(ros_type).cloned()
}

/// The service type named `ros_type` (`pkg/srv/Type`).
pub fn service_by_name(ros_type: &str) -> Option<Arc<ServiceTool>> {
    table().services.get(ros_type).cloned()
}

impl std::fmt::Debug for MessageTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MessageTool")
            .field("ros_type", &self.ros_type())
            .field("hash", &self.hash)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for ServiceTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceTool")
            .field("ros_type", &self.ros_type())
            .finish_non_exhaustive()
    }
}
