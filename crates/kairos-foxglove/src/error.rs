//! Why a bridge could not start or a client's request was refused.

use std::net::SocketAddr;

/// Why [`Bridge::start`](crate::Bridge::start) failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BridgeError {
    /// The listening socket could not be bound.
    #[error(
        "cannot listen on {address}: {source}; choose another port with --port (0 picks a free one)"
    )]
    Bind {
        /// The address asked for.
        address: SocketAddr,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// The bridge's threads (its async runtime, its graph follower) could not start.
    #[error("cannot start the bridge's threads: {0}")]
    Threads(#[source] std::io::Error),
    /// An option is out of range.
    #[error("invalid bridge option: {0}")]
    InvalidOption(String),
}

/// Why a client's advertisement (a topic it wants to publish on) was refused; sent to
/// the client as an error status.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PublishError {
    /// The client offered an encoding other than CDR.
    #[error(
        "the bridge publishes CDR only; advertise {topic} with encoding \"cdr\", not {encoding:?}"
    )]
    Encoding {
        /// The topic.
        topic: String,
        /// The encoding the client named.
        encoding: String,
    },
    /// The type is neither in the graph for that topic nor shipped with kairos, so its
    /// RIHS01 hash is unknown.
    #[error(
        "cannot publish {topic} as {ros_type}: the type is not one kairos ships and no process announces {topic} with it (name it pkg/msg/Type)"
    )]
    UnknownType {
        /// The topic.
        topic: String,
        /// The schema name the client gave.
        ros_type: String,
    },
    /// The transport refused to declare the publisher.
    #[error("cannot publish {topic}: {source}")]
    Transport {
        /// The topic.
        topic: String,
        /// The transport's error.
        #[source]
        source: kairos_zenoh::TransportError,
    },
}
