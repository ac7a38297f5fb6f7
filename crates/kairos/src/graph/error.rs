//! What graph operations report for bad input.

use super::name::NameError;
use super::qos::QosError;

#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum GraphError {
    #[error(transparent)]
    InvalidName(#[from] NameError),
    #[error(transparent)]
    InvalidQos(#[from] QosError),
    #[error(transparent)]
    Time(#[from] crate::time::TimeError),
    #[error(
        "topic '{topic}' carries `{existing}`, not `{requested}`: use that type, or another topic name"
    )]
    TypeMismatch {
        topic: String,
        existing: &'static str,
        requested: &'static str,
    },
    #[error(
        "service '{service}' takes `{existing}`, not `{requested}`: use those types, or another service name"
    )]
    ServiceTypeMismatch {
        service: String,
        existing: String,
        requested: String,
    },
    #[error(
        "service '{service}' already has a server; a service has one server (drop it first, or use another name)"
    )]
    ServiceExists { service: String },
    #[error(
        "callback group '{group}' does not belong to node '{node}'; create it with that node's create_callback_group"
    )]
    ForeignGroup { group: String, node: String },
    #[error(
        "a simulation-time stall timeout must be positive, got {0}; pass e.g. Duration::from_secs(1)"
    )]
    InvalidStallTimeout(crate::time::Duration),
}
