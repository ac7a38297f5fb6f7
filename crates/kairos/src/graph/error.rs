//! What graph operations report for bad input.

use super::name::NameError;
use super::qos::QosError;

/// Why a node, entity or context could not be made as asked; each message says what to
/// do.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum GraphError {
    /// A node, namespace, topic or service name is not a valid ROS 2 name.
    #[error(transparent)]
    InvalidName(#[from] NameError),
    /// The QoS cannot be honoured.
    #[error(transparent)]
    InvalidQos(#[from] QosError),
    /// A parameter could not be declared (see [`ParameterError`](super::ParameterError)).
    #[error(transparent)]
    Parameter(#[from] super::parameters::ParameterError),
    /// The program's ROS arguments cannot be used.
    #[error(transparent)]
    RosArgs(#[from] super::ros_args::RosArgsError),
    /// A time argument (a timer's period) is invalid.
    #[error(transparent)]
    Time(#[from] crate::time::TimeError),
    /// The topic already carries another message type.
    #[error(
        "topic '{topic}' carries `{existing}`, not `{requested}`: use that type, or another topic name"
    )]
    TypeMismatch {
        /// The topic's resolved name.
        topic: String,
        /// The type the topic carries.
        existing: &'static str,
        /// The type asked for.
        requested: &'static str,
    },
    /// The service already has other request or response types.
    #[error(
        "service '{service}' takes `{existing}`, not `{requested}`: use those types, or another service name"
    )]
    ServiceTypeMismatch {
        /// The service's resolved name.
        service: String,
        /// Its types, `Request -> Response`.
        existing: String,
        /// The types asked for.
        requested: String,
    },
    /// The callback group was made by another node.
    #[error(
        "callback group '{group}' does not belong to node '{node}'; create it with that node's create_callback_group"
    )]
    ForeignGroup {
        /// The group's name.
        group: String,
        /// The node that was asked to use it.
        node: String,
    },
    /// The process's transport could not carry the entity to other processes (it was not
    /// created: a publisher meant for the network never silently stays in the process).
    #[error(
        "the transport could not carry {entity} to other processes: {source}; check the transport's configuration (KAIROS_TRANSPORT, ZENOH_CONFIG_OVERRIDE) and that the router is reachable"
    )]
    Transport {
        /// What was being created, with its name.
        entity: String,
        /// The transport's error.
        source: super::transport::TransportFailure,
    },
    /// A simulation-time stall timeout that is zero or negative.
    #[error(
        "a simulation-time stall timeout must be positive, got {0}; pass e.g. Duration::from_secs(1)"
    )]
    InvalidStallTimeout(crate::time::Duration),
}
