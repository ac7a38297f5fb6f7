//! The graph: nodes, topics, publishers, subscriptions, services and clients.
//!
//! What this module promises:
//! - Names are validated and resolved against the node (absolute, relative, `~` private);
//!   a bad name is a [`NameError`] saying what is wrong.
//! - A topic has one message type; a publisher or subscription of another type is a
//!   [`GraphError::TypeMismatch`]. Delivery in the process shares one `Arc<T>`, no copies.
//! - Every subscription accounts for every message: received = delivered + dropped +
//!   queued ([`SubscriptionStats`]); a full queue drops its oldest message and counts it.
//! - A service call ends with a response or a [`CallError`] saying why not (no server,
//!   service panicked, timeout, would deadlock), never a hang.
//! - What a topic or service carries is a [`Payload`]: a [`Message`] crosses to other
//!   processes when a transport is installed (its codec travels with each entity, nothing
//!   to register); any other type stays in the process by its own opt-in. A client is
//!   typed by its service ([`ServiceType`], or `fn(Request) -> Response`).
//! - A node sees the graph of its context and, through a transport, of its domain
//!   ([`GraphView`]), and can wait for it to change, with a deadline.
//! - ROS arguments (`--ros-args`: remaps, parameters, parameter files) are read as rcl
//!   reads them and applied by the context to every node it makes ([`RosArgs`]).

mod backlog;
mod client;
mod clock_msg;
mod context;
mod error;
mod history;
mod introspection;
mod loan;
mod message_callback;
mod name;
mod node;
mod parameters;
mod params_file;
mod pool;
mod publisher;
mod qos;
mod qos_event;
mod qos_match;
mod ros_args;
mod rosout;
mod service;
mod subscription;
mod topic;
pub mod transport;
mod view;

pub use client::{CallError, Client, ResponseFuture};
pub use clock_msg::{CLOCK_TOPIC, ClockMsg};
pub use context::{Context, SimStall};
pub use error::GraphError;
pub use loan::{Loan, LoanStats};
pub use message_callback::MessageCallback;
pub use name::{
    NameError, NameKind, normalize_namespace, resolve, split_node_name, validate_node_name,
};
pub use node::{Node, NodeOptions};
pub use parameters::{
    FloatingPointRange, IntegerRange, ParameterDescriptor, ParameterError, ParameterEvent,
    ParameterEventListener, ParameterHook, ParameterType, ParameterValue, Parameters, USE_SIM_TIME,
};
pub use publisher::Publisher;
pub use qos::{
    Durability, History, Incompatibility, Liveliness, Qos, QosError, QosPolicy, Reliability,
};
pub use qos_event::{
    DeadlineMissed, IncompatibleQos, IncompatibleType, LivelinessChanged, LivelinessLost, Matched,
    MessageLost, PublisherEvents, PublisherQosEvents, QosEventHandler, SubscriptionEvents,
    SubscriptionQosEvents,
};
pub use ros_args::{LogLevel, ParameterOverride, Remap, RosArgs, RosArgsError};
pub use rosout::{LogMsg, ROSOUT_QOS, ROSOUT_TOPIC, StampMsg};
pub use service::Service;
pub use subscription::{Subscription, SubscriptionStats};
pub use view::{EntityKind, GraphEntity, GraphView, INTERNAL_NODE_PREFIX};

pub use introspection::{Caller, IntrospectionState, event_topic};
pub use kairos_interface::{
    ActionType, GoalUuid, Message, Payload, ServiceCall, ServiceEvent, ServiceRequest, ServiceType,
};
