//! What can go wrong reading a trace. Every error names the file and, for stream data,
//! the byte offset and what the reader expected to find there.

use std::path::PathBuf;

use super::metadata::MetadataError;

/// A trace, or part of one, could not be read.
///
/// `Display` prints the whole sentence, cause included; [`source`](std::error::Error::source)
/// returns the cause (the operating system's error, or what is wrong in the metadata) for
/// callers that walk the chain.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// A file of the trace could not be opened or read.
    #[error("{}: {cause}", path.display())]
    Io {
        /// The file or directory concerned.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        cause: std::io::Error,
    },

    /// The trace's `metadata` file is not CTF 1.8 the reader understands.
    #[error("{}: bad metadata{}{cause}; the trace cannot be read without it", path.display(), if cause.line.is_some() { " at " } else { ": " })]
    Metadata {
        /// The metadata file.
        path: PathBuf,
        /// What is wrong in it, and on which line when that is known.
        #[source]
        cause: MetadataError,
    },

    /// A stream file holds bytes the metadata does not describe: the events before them
    /// were read, the rest of the stream is skipped.
    #[error(
        "{} at byte {offset}: expected {expected}; the events before this point were read, the rest of this stream is skipped",
        path.display()
    )]
    Damaged {
        /// The stream file.
        path: PathBuf,
        /// The byte offset in the file where decoding stopped.
        offset: u64,
        /// What the reader expected to find there.
        expected: String,
    },

    /// The path holds no CTF trace.
    #[error("{}: no CTF trace here (a CTF trace is a folder holding a `metadata` file and stream files)", path.display())]
    NoTrace {
        /// The path given.
        path: PathBuf,
    },
}
