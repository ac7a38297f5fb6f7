//! The interface types `kairos-msgs` ships, by ROS type name, for tools that take a type
//! as text (`kairos topic echo /scan sensor_msgs/msg/LaserScan`, `kairos service call`).
//!
//! A tool's generated type and the runtime's own (`/clock`'s `ClockMsg`, `/rosout`'s
//! `LogMsg`) meet on one in-process topic as twins (see `kairos::graph`'s topic), so the
//! table needs no exceptions for the topics the runtime publishes itself.
//!
//! Node code never goes through this table: a publisher, subscription, service or client
//! carries its own type's codec to the transport. The table is built once, from the
//! generated packages, and only read afterwards; values are handed over as JSON.

use crate::message::{DecodeError, Message, ServiceType, decode};
use kairos::graph::{GraphError, Node, Qos};
use kairos::time::Duration;
use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

/// A publisher of values given as JSON (for tools that know the type only by name).
pub type JsonPublisher = Box<dyn Fn(serde_json::Value) -> Result<(), String> + Send + Sync>;
/// Called with each message, as JSON.
pub type JsonCallback = Box<dyn Fn(serde_json::Value) + Send + Sync>;
/// A kairos entity kept alive by the tool that made it.
pub type Held = Box<dyn Any + Send + Sync>;

/// One message type, for a tool.
pub struct MessageTool {
    ros_type: &'static str,
    dds_type: String,
    hash: String,
    json_publisher: fn(&Node, &str, Qos) -> Result<JsonPublisher, GraphError>,
    json_subscription: fn(&Node, &str, Qos, JsonCallback) -> Result<Held, GraphError>,
    to_json: fn(&[u8]) -> Result<serde_json::Value, DecodeError>,
}

impl MessageTool {
    fn of<M: Message>() -> Self {
        MessageTool {
            ros_type: M::TYPE_NAME,
            dds_type: crate::message::dds_type_name(M::TYPE_NAME)
                .expect("a Message's TYPE_NAME is pkg/msg/Type"),
            hash: M::type_hash().to_string(),
            json_publisher: json_publisher::<M>,
            json_subscription: json_subscription::<M>,
            to_json: |payload| {
                decode::<M>(payload).map(|m| serde_json::to_value(m).unwrap_or_default())
            },
        }
    }

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

/// One service type, for a tool.
pub struct ServiceTool {
    ros_type: &'static str,
    json_call: fn(&Node, &str, serde_json::Value, Duration) -> Result<serde_json::Value, String>,
}

impl ServiceTool {
    fn of<S: ServiceType>() -> Self {
        ServiceTool {
            ros_type: S::TYPE_NAME,
            json_call: json_call::<S>,
        }
    }

    /// The ROS type name.
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
    let client = node.create_client::<S>(name).map_err(|e| e.to_string())?;
    if !client.wait_for_service(timeout) {
        return Err(format!("no server for service '{name}' within {timeout}"));
    }
    let response = client.call(request, timeout).map_err(|e| e.to_string())?;
    Ok(serde_json::to_value(response).unwrap_or_default())
}

impl std::fmt::Debug for MessageTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MessageTool")
            .field("ros_type", &self.ros_type)
            .field("hash", &self.hash)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for ServiceTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceTool")
            .field("ros_type", &self.ros_type)
            .finish_non_exhaustive()
    }
}
