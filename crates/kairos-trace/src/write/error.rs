//! What can go wrong while tracing.

use std::io;
use std::path::PathBuf;
use std::sync::Arc;

/// A trace session could not start, flush or stop cleanly.
///
/// `Debug` prints the variant's name and the `Display` sentence (`TraceExists: /tmp/t
/// already holds a trace ...`): a `main` that returns `Result<_, kairos_trace::write::Error>`
/// (or a `Box<dyn Error>` holding one) shows users what to do, not the variant's fields.
#[derive(Clone, thiserror::Error)]
pub enum Error {
    /// A file-system operation failed.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// What the writer was doing, e.g. "write a packet to".
        action: &'static str,
        /// The file or directory concerned.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: Arc<io::Error>,
    },
    /// The directory already holds a trace.
    #[error(
        "{} already holds a trace (it has a metadata file): give a new or empty directory",
        path.display()
    )]
    TraceExists {
        /// The directory given.
        path: PathBuf,
    },
    /// The directory holds files that are not a trace: babeltrace2 reads every file of a
    /// trace directory as trace data, so a trace written there would be unreadable.
    #[error(
        "{} is not empty (it holds {}): a trace directory holds only the trace; give a new or empty directory",
        path.display(),
        entry.display()
    )]
    DirectoryNotEmpty {
        /// The directory given.
        path: PathBuf,
        /// One of the entries found in it.
        entry: PathBuf,
    },
    /// Another session is running in this process.
    #[error(
        "a trace session is already running in this process, writing to {}: stop it before starting another",
        dir.display()
    )]
    AlreadyActive {
        /// Where the running session writes.
        dir: PathBuf,
    },
    /// A [`SessionConfig`](super::SessionConfig) value is unusable.
    #[error("invalid trace session configuration: {0}")]
    InvalidConfig(&'static str),
    /// The writer thread died (a bug): the trace ends at its last complete packet.
    #[error("the trace writer thread stopped unexpectedly; the trace ends at its last packet")]
    WriterGone,
}

impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let variant = match self {
            Error::Io { .. } => "Io",
            Error::TraceExists { .. } => "TraceExists",
            Error::DirectoryNotEmpty { .. } => "DirectoryNotEmpty",
            Error::AlreadyActive { .. } => "AlreadyActive",
            Error::InvalidConfig(_) => "InvalidConfig",
            Error::WriterGone => "WriterGone",
        };
        write!(f, "{variant}: {self}")
    }
}

impl Error {
    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        Error::Io {
            action,
            path: path.into(),
            source: Arc::new(source),
        }
    }
}
