//! The message and service types the transport can put on the wire, by Rust `TypeId`.
//!
//! Ground rules: the registry is process-wide; entries are only added (registering a type
//! twice keeps the first entry), under its `RwLock`; readers clone the `Arc` out and never
//! hold the lock while encoding, decoding or calling into kairos.

use crate::message::{DecodeError, Message, ServiceType, dds_type_name, decode, encode};
use kairos::graph::transport::{AnyMessage, AnyValue};
use kairos::graph::{GraphError, Node, Qos};
use kairos::time::Duration;
use parking_lot::RwLock;
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

/// A publisher of values given as JSON (for tools that know the type only by name).
pub type JsonPublisher = Box<dyn Fn(serde_json::Value) -> Result<(), String> + Send + Sync>;
/// Called with each message, as JSON.
pub type JsonCallback = Box<dyn Fn(serde_json::Value) + Send + Sync>;
/// A kairos entity kept alive by the tool that made it.
pub type Held = Box<dyn Any + Send + Sync>;

/// How one message type crosses the wire.
pub struct MessageCodec {
    pub(crate) ros_type: &'static str,
    pub(crate) dds_type: String,
    pub(crate) hash: String,
    pub(crate) encode: fn(&(dyn Any + Send + Sync)) -> Option<Vec<u8>>,
    pub(crate) decode: fn(&[u8]) -> Result<AnyMessage, DecodeError>,
    json_publisher: fn(&Node, &str, Qos) -> Result<JsonPublisher, GraphError>,
    json_subscription: fn(&Node, &str, Qos, JsonCallback) -> Result<Held, GraphError>,
    to_json: fn(&[u8]) -> Result<serde_json::Value, DecodeError>,
}

impl MessageCodec {
    /// The ROS type name.
    pub fn ros_type(&self) -> &'static str {
        self.ros_type
    }

    /// A kairos publisher of this type on `node`, fed JSON values.
    pub fn json_publisher(
        &self,
        node: &Node,
        topic: &str,
        qos: Qos,
    ) -> Result<JsonPublisher, GraphError> {
        (self.json_publisher)(node, topic, qos)
    }

    /// A kairos subscription of this type on `node`, handing each message over as JSON.
    pub fn json_subscription(
        &self,
        node: &Node,
        topic: &str,
        qos: Qos,
        callback: JsonCallback,
    ) -> Result<Held, GraphError> {
        (self.json_subscription)(node, topic, qos, callback)
    }

    /// The data key expression of `topic` (absolute) for this type in `domain`.
    pub fn data_key(&self, domain: u32, topic: &str) -> String {
        crate::graph_key::data_key(domain, topic, &self.dds_type, &self.hash)
    }

    /// A payload of this type, as JSON.
    pub fn payload_to_json(&self, payload: &[u8]) -> Result<serde_json::Value, DecodeError> {
        (self.to_json)(payload)
    }
}

/// Answers one encoded request; the reply gets the encoded response or why there is none.
pub(crate) type Answer = Box<dyn FnOnce(Result<Vec<u8>, String>) + Send>;
/// Serves encoded requests with a service of this process.
pub(crate) type Server = Arc<dyn Fn(&[u8], Answer) + Send + Sync>;

/// How one service type crosses the wire.
pub struct ServiceCodec {
    pub(crate) ros_type: &'static str,
    pub(crate) dds_type: String,
    pub(crate) hash: String,
    pub(crate) encode_request: fn(AnyValue) -> Option<Vec<u8>>,
    pub(crate) decode_response: fn(&[u8]) -> Result<AnyValue, DecodeError>,
    /// A server forwarding to the service `name` of `node`'s context through a client of
    /// `node` (a node of the transport's own, never attached to an executor).
    pub(crate) serve: fn(&Node, &str) -> Result<Server, GraphError>,
    json_call: fn(&Node, &str, serde_json::Value, Duration) -> Result<serde_json::Value, String>,
}

impl ServiceCodec {
    pub fn ros_type(&self) -> &'static str {
        self.ros_type
    }

    /// Calls service `name` from `node` with a request given as JSON; the response as JSON.
    pub fn call_json(
        &self,
        node: &Node,
        name: &str,
        request: serde_json::Value,
        timeout: Duration,
    ) -> Result<serde_json::Value, String> {
        (self.json_call)(node, name, request, timeout)
    }
}

#[derive(Default)]
struct Registry {
    messages: HashMap<TypeId, Arc<MessageCodec>>,
    /// By (request, response).
    services: HashMap<(TypeId, TypeId), Arc<ServiceCodec>>,
    /// kairos's `ClockMsg` as `rosgraph_msgs/msg/Clock` (see `insert_clock`).
    clock: Option<Arc<MessageCodec>>,
}

fn registry() -> &'static RwLock<Registry> {
    static REGISTRY: OnceLock<RwLock<Registry>> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let registry = RwLock::new(Registry::default());
        {
            use crate::msg::*;
            let mut r = registry.write();
            insert_message::<StringMsg>(&mut r);
            insert_message::<Time>(&mut r);
            insert_message::<Clock>(&mut r);
            insert_service::<AddTwoInts>(&mut r);
            insert_clock(&mut r);
        }
        registry
    })
}

/// Lets messages of type `M` cross the process boundary (the built-in types are
/// registered already). Call it before creating publishers or subscriptions of `M`.
pub fn register<M: Message>() {
    insert_message::<M>(&mut registry().write());
}

/// Lets calls of service type `S` cross the process boundary.
pub fn register_service<S: ServiceType>() {
    insert_service::<S>(&mut registry().write());
}

fn insert_message<M: Message>(registry: &mut Registry) {
    registry
        .messages
        .entry(TypeId::of::<M>())
        .or_insert_with(|| {
            Arc::new(MessageCodec {
                ros_type: M::TYPE_NAME,
                dds_type: dds_type_name(M::TYPE_NAME)
                    .expect("a Message's TYPE_NAME is pkg/msg/Type"),
                hash: M::type_hash().to_string(),
                encode: |message| message.downcast_ref::<M>().map(encode),
                decode: |payload| decode::<M>(payload).map(|m| Arc::new(m) as AnyMessage),
                json_publisher: json_publisher::<M>,
                json_subscription: json_subscription::<M>,
                to_json: |payload| {
                    decode::<M>(payload).map(|m| serde_json::to_value(m).unwrap_or_default())
                },
            })
        });
}

/// kairos's own `/clock` message ([`kairos::graph::ClockMsg`]) goes out as
/// `rosgraph_msgs/msg/Clock`, so a kairos simulator drives ROS 2 nodes and other kairos
/// processes. Only outgoing: `/clock` from other processes enters through the transport's
/// clock bridge (see `ZenohTransport::install`), so subscriptions of `ClockMsg` stay local.
fn insert_clock(registry: &mut Registry) {
    use crate::msg::Clock;
    use kairos::graph::ClockMsg;
    fn json_publisher(node: &Node, topic: &str, qos: Qos) -> Result<JsonPublisher, GraphError> {
        let publisher = node.create_publisher::<ClockMsg>(topic, qos)?;
        Ok(Box::new(move |value| {
            let clock: Clock = serde_json::from_value(value)
                .map_err(|e| format!("not a {}: {e}", Clock::TYPE_NAME))?;
            publisher.publish(clock_from_wire(&clock));
            Ok(())
        }))
    }
    fn json_subscription(
        node: &Node,
        topic: &str,
        qos: Qos,
        callback: JsonCallback,
    ) -> Result<Held, GraphError> {
        let subscription =
            node.create_subscription::<ClockMsg, _>(topic, qos, move |m: Arc<ClockMsg>| {
                callback(serde_json::to_value(clock_to_wire(&m)).unwrap_or_default())
            })?;
        Ok(Box::new(subscription))
    }
    let codec = Arc::new(MessageCodec {
        ros_type: Clock::TYPE_NAME,
        dds_type: dds_type_name(Clock::TYPE_NAME).expect("rosgraph_msgs/msg/Clock is pkg/msg/Type"),
        hash: Clock::type_hash().to_string(),
        encode: |message| {
            message
                .downcast_ref::<ClockMsg>()
                .map(|m| encode(&clock_to_wire(m)))
        },
        decode: |payload| {
            decode::<Clock>(payload).map(|c| Arc::new(clock_from_wire(&c)) as AnyMessage)
        },
        json_publisher,
        json_subscription,
        to_json: |payload| {
            decode::<Clock>(payload).map(|m| serde_json::to_value(m).unwrap_or_default())
        },
    });
    registry.clock = Some(codec.clone());
    registry
        .messages
        .entry(TypeId::of::<ClockMsg>())
        .or_insert(codec);
}

/// `ClockMsg` (simulation time in ns) as `rosgraph_msgs/msg/Clock`.
pub fn clock_to_wire(message: &kairos::graph::ClockMsg) -> crate::msg::Clock {
    let nanos = message.clock.nanos().max(0);
    crate::msg::Clock {
        clock: crate::msg::Time {
            sec: i32::try_from(nanos / 1_000_000_000).unwrap_or(i32::MAX),
            nanosec: (nanos % 1_000_000_000) as u32,
        },
    }
}

/// `rosgraph_msgs/msg/Clock` as `ClockMsg` (simulation time).
pub fn clock_from_wire(clock: &crate::msg::Clock) -> kairos::graph::ClockMsg {
    let nanos = i64::from(clock.clock.sec) * 1_000_000_000 + i64::from(clock.clock.nanosec);
    kairos::graph::ClockMsg {
        clock: kairos::time::Time::new(kairos::time::ClockKind::Sim, nanos),
    }
}

fn insert_service<S: ServiceType>(registry: &mut Registry) {
    let key = (TypeId::of::<S::Request>(), TypeId::of::<S::Response>());
    registry.services.entry(key).or_insert_with(|| {
        Arc::new(ServiceCodec {
            ros_type: S::TYPE_NAME,
            dds_type: dds_type_name(S::TYPE_NAME)
                .expect("a ServiceType's TYPE_NAME is pkg/srv/Type"),
            hash: S::type_hash().to_string(),
            encode_request: |request| request.downcast::<S::Request>().ok().map(|r| encode(&*r)),
            decode_response: |payload| {
                decode::<S::Response>(payload).map(|r| Box::new(r) as AnyValue)
            },
            serve: serve::<S>,
            json_call: json_call::<S>,
        })
    });
}

fn json_publisher<M: Message>(
    node: &Node,
    topic: &str,
    qos: Qos,
) -> Result<JsonPublisher, GraphError> {
    let publisher = node.create_publisher::<M>(topic, qos)?;
    Ok(Box::new(move |value| {
        let message: M =
            serde_json::from_value(value).map_err(|e| format!("not a {}: {e}", M::TYPE_NAME))?;
        publisher.publish(message);
        Ok(())
    }))
}

fn json_subscription<M: Message>(
    node: &Node,
    topic: &str,
    qos: Qos,
    callback: JsonCallback,
) -> Result<Held, GraphError> {
    let subscription = node.create_subscription::<M, _>(topic, qos, move |m: Arc<M>| {
        callback(serde_json::to_value(&*m).unwrap_or_default())
    })?;
    Ok(Box::new(subscription))
}

fn json_call<S: ServiceType>(
    node: &Node,
    name: &str,
    request: serde_json::Value,
    timeout: Duration,
) -> Result<serde_json::Value, String> {
    let request: S::Request = serde_json::from_value(request)
        .map_err(|e| format!("not a {}: {e}", S::Request::TYPE_NAME))?;
    let client = node
        .create_client::<S::Request, S::Response>(name)
        .map_err(|e| e.to_string())?;
    if !client.wait_for_service(timeout) {
        return Err(format!("no server for service '{name}' within {timeout:?}"));
    }
    let response = client.call(request, timeout).map_err(|e| e.to_string())?;
    Ok(serde_json::to_value(response).unwrap_or_default())
}

fn serve<S: ServiceType>(node: &Node, name: &str) -> Result<Server, GraphError> {
    let client = node.create_client::<S::Request, S::Response>(name)?;
    Ok(Arc::new(
        move |payload: &[u8], answer: Answer| match decode::<S::Request>(payload) {
            Err(e) => answer(Err(e.to_string())),
            Ok(request) => client.call_async(request).on_done(move |result| {
                answer(result.map(|r| encode(&r)).map_err(|e| e.to_string()))
            }),
        },
    ))
}

pub(crate) fn message(type_id: TypeId) -> Option<Arc<MessageCodec>> {
    registry().read().messages.get(&type_id).cloned()
}

pub(crate) fn service(request: TypeId, response: TypeId) -> Option<Arc<ServiceCodec>> {
    registry()
        .read()
        .services
        .get(&(request, response))
        .cloned()
}

/// The codec of a ROS type name, for tools that only know the name (`kairos topic pub`).
pub fn message_by_name(ros_type: &str) -> Option<Arc<MessageCodec>> {
    let registry = registry().read();
    registry
        .messages
        .values()
        .filter(|c| {
            !registry
                .clock
                .as_ref()
                .is_some_and(|clock| Arc::ptr_eq(c, clock))
        })
        .find(|c| c.ros_type == ros_type)
        .cloned()
}

/// The codec a tool uses for `ros_type` on `topic`: on `/clock`, where every process on
/// the transport keeps kairos's own `ClockMsg`, ROS's clock message is carried as it.
pub fn message_for_topic(ros_type: &str, topic: &str) -> Option<Arc<MessageCodec>> {
    if topic == kairos::graph::CLOCK_TOPIC {
        let clock = registry().read().clock.clone();
        if let Some(clock) = clock.filter(|c| c.ros_type == ros_type) {
            return Some(clock);
        }
    }
    message_by_name(ros_type)
}

pub fn service_by_name(ros_type: &str) -> Option<Arc<ServiceCodec>> {
    registry()
        .read()
        .services
        .values()
        .find(|c| c.ros_type == ros_type)
        .cloned()
}

impl std::fmt::Debug for MessageCodec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MessageCodec")
            .field("ros_type", &self.ros_type)
            .field("hash", &self.hash)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for ServiceCodec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceCodec")
            .field("ros_type", &self.ros_type)
            .field("hash", &self.hash)
            .finish_non_exhaustive()
    }
}
