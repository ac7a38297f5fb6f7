//! What can go wrong reading a trace. Every error names the file and, for stream data,
//! the byte offset and what the reader expected to find there.

use std::path::PathBuf;

use super::metadata::MetadataError;

#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{}: {cause}", path.display())]
    Io {
        path: PathBuf,
        cause: std::io::Error,
    },

    #[error("{}: bad metadata at {cause}; the trace cannot be read without it", path.display())]
    Metadata { path: PathBuf, cause: MetadataError },

    #[error(
        "{} at byte {offset}: expected {expected}; the events before this point were read, the rest of this stream is skipped",
        path.display()
    )]
    Damaged {
        path: PathBuf,
        offset: u64,
        expected: String,
    },

    #[error("{}: no CTF trace here (a CTF trace is a folder holding a `metadata` file and stream files)", path.display())]
    NoTrace { path: PathBuf },
}
