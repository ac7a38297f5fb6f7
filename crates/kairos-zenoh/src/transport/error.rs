//! Why the transport could not start, carry an entity, or close.

use kairos::graph::GraphError;
use kairos::graph::transport::TransportFailure;
use std::sync::Arc;

/// Why the transport could not start, carry an entity, or close.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// The configuration from the environment is invalid.
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// Zenoh refused an operation.
    #[error("zenoh could not {action}: {source}")]
    Zenoh {
        /// What was being done, e.g. "declare the publisher of /chatter".
        action: String,
        /// Zenoh's error.
        #[source]
        source: zenoh::Error,
    },
    /// A type name that has no key-expression form.
    #[error(transparent)]
    TypeName(#[from] kairos_msgs::message::TypeNameError),
    /// The transport's own nodes could not be made.
    #[error(transparent)]
    Graph(#[from] GraphError),
    /// An entity asked for directly on a node the transport keeps to itself.
    #[error("node {0} is the transport's own and announces nothing; use a node of your own")]
    Unannounced(String),
    /// The security configuration forbids the entity.
    #[error(transparent)]
    Denied(#[from] Box<crate::access::Denied>),
    /// [`ZenohTransport::install`](super::ZenohTransport::install) on a context that has a transport already.
    #[error("this context already has a transport; install one transport per context")]
    AlreadyInstalled,
    /// The session did not close in time.
    #[error(
        "the zenoh session did not close within {}; it goes on closing in the background",
        kairos::time::Duration::from(*.0)
    )]
    CloseTimeout(std::time::Duration),
}

/// A zenoh error while doing `action`.
pub(crate) fn zenoh_err(action: impl Into<String>) -> impl FnOnce(zenoh::Error) -> TransportError {
    let action = action.into();
    move |source| TransportError::Zenoh { action, source }
}

/// A transport error as the graph keeps it (the source of `GraphError::Transport`).
pub(crate) fn failure(error: TransportError) -> TransportFailure {
    Arc::new(error)
}
