//! The one error type of this crate.
//!
//! What this module promises: every failure of opening, reading or writing a bag is an
//! [`Error`] naming the file it concerns and saying what the user can do about it; no bad
//! input (a truncated file, garbage bytes, a malformed `metadata.yaml`) makes this crate
//! panic.

use std::path::PathBuf;

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why a bag could not be opened, read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The path does not exist.
    #[error("{path} does not exist: give the path of a bag folder, a .mcap or a .db3 file")]
    NotFound {
        /// The path given.
        path: PathBuf,
    },

    /// The path exists but holds nothing this crate reads.
    #[error(
        "not a bag: {path} has no metadata.yaml, .mcap or .db3 file \
         (give a rosbag2 bag folder, or one of its .mcap or .db3 files)"
    )]
    NotABag {
        /// The path given.
        path: PathBuf,
    },

    /// `metadata.yaml` names a storage plugin this crate does not read.
    #[error("unsupported storage '{id}' in {path} (kairos reads mcap and sqlite3)")]
    UnsupportedStorage {
        /// The `storage_identifier` found.
        id: String,
        /// The `metadata.yaml` it was found in.
        path: PathBuf,
    },

    /// The bag is compressed in a way this crate does not read.
    #[error(
        "unsupported compression '{format}' (mode '{mode}') in {path}: kairos reads zstd file \
         and message compression; decompress the bag with `ros2 bag convert` first"
    )]
    UnsupportedCompression {
        /// `compression_format` of the bag.
        format: String,
        /// `compression_mode` of the bag.
        mode: String,
        /// The `metadata.yaml` it was found in.
        path: PathBuf,
    },

    /// `metadata.yaml` (or the metadata stored in a storage file) does not parse.
    #[error("cannot parse rosbag2 metadata in {path}: {reason}")]
    Metadata {
        /// The file the metadata came from.
        path: PathBuf,
        /// What was wrong with it.
        reason: String,
    },

    /// A file of the bag is damaged: truncated, not the format its name says, or
    /// inconsistent.
    #[error(
        "{path} is corrupt or truncated: {reason} (if the recording was interrupted, \
         `mcap recover` or `ros2 bag reindex` may save what was written)"
    )]
    Corrupt {
        /// The damaged file.
        path: PathBuf,
        /// What the reader found.
        reason: String,
    },

    /// A file listed in `metadata.yaml` is not in the bag folder.
    #[error("{path} is listed in the bag's metadata.yaml but missing: was the bag copied whole?")]
    MissingFile {
        /// The missing file.
        path: PathBuf,
    },

    /// The operating system refused a read or write.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder concerned.
        path: PathBuf,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },

    /// SQLite refused a query on a `.db3` file.
    #[error("{path}: sqlite3 error: {source} (is it a rosbag2 .db3 file?)")]
    Sqlite {
        /// The `.db3` file.
        path: PathBuf,
        /// SQLite's error.
        #[source]
        source: rusqlite::Error,
    },

    /// The MCAP writer failed (for a full disk, the cause says "No space left on device").
    #[error("writing {path}: {}", mcap_cause(source))]
    McapWrite {
        /// The `.mcap` file being written.
        path: PathBuf,
        /// The MCAP library's error.
        #[source]
        source: mcap::McapError,
    },

    /// A writer whose file failed to close or open earlier cannot write on.
    #[error(
        "the writer of bag {path} failed earlier (see the error it returned then); \
         the messages written before that are in the bag"
    )]
    WriterFailed {
        /// The bag folder.
        path: PathBuf,
    },

    /// [`BagWriter::create`](crate::BagWriter::create) was given a folder that exists.
    #[error("bag folder {path} already exists: choose a new path (a bag is never overwritten)")]
    BagExists {
        /// The folder.
        path: PathBuf,
    },

    /// A writer option is out of range or not supported.
    #[error("invalid writer option: {0}")]
    InvalidOption(String),

    /// A bag cannot be played as asked: a bad option, nothing selected, a publisher the
    /// transport refused.
    #[error("cannot play: {0}")]
    Play(String),

    /// A message was written to a topic that was never added.
    #[error("topic '{topic}' was not added to the bag: call add_topic before writing to it")]
    UnknownTopic {
        /// The topic written to.
        topic: String,
    },

    /// A topic was added twice with different types or formats.
    #[error("topic '{topic}' was already added as {existing}, cannot add it again as {requested}")]
    TopicConflict {
        /// The topic.
        topic: String,
        /// The type it has in the bag.
        existing: String,
        /// The type asked for now.
        requested: String,
    },

    /// A message definition needed for a schema was not found by the lookup.
    #[error(
        "no message definition for '{type_name}' (needed by '{needed_by}'): \
         the lookup must return the .msg text of every type a message refers to"
    )]
    MissingDefinition {
        /// The type the lookup did not know.
        type_name: String,
        /// The type whose definition refers to it.
        needed_by: String,
    },

    /// A type name is not `pkg/msg/Type` or `pkg/Type`.
    #[error("'{0}' is not a ROS message type name; write it as pkg/msg/Type")]
    BadTypeName(String),

    /// A topic of the bag is not in the bag.
    #[error("the bag has no topic '{topic}' (its topics: {known})")]
    NoSuchTopic {
        /// The topic asked for.
        topic: String,
        /// The topics the bag has, comma-separated.
        known: String,
    },

    /// A typed read asked for a type other than the topic's.
    #[error("topic '{topic}' holds {bag_type}, not {requested}")]
    TypeMismatch {
        /// The topic.
        topic: String,
        /// The type recorded in the bag.
        bag_type: String,
        /// The type asked for.
        requested: String,
    },

    /// A message of a typed read did not decode as its type.
    #[error("message on '{topic}' at {log_time} ns: {source}")]
    Decode {
        /// The topic.
        topic: String,
        /// The message's log (receive) time.
        log_time: u64,
        /// What the CDR decoder said.
        #[source]
        source: kairos_interface::DecodeError,
    },
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn corrupt(path: impl Into<PathBuf>, reason: impl ToString) -> Self {
        Self::Corrupt {
            path: path.into(),
            reason: reason.to_string(),
        }
    }

    pub(crate) fn sqlite(path: impl Into<PathBuf>, source: rusqlite::Error) -> Self {
        Self::Sqlite {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn metadata(path: impl Into<PathBuf>, reason: impl ToString) -> Self {
        Self::Metadata {
            path: path.into(),
            reason: reason.to_string(),
        }
    }
}

/// The MCAP library's error with the I/O error under it (its own text leaves it out), and
/// what to do when the disk is full.
fn mcap_cause(error: &mcap::McapError) -> String {
    match error {
        mcap::McapError::Io(io) if io.kind() == std::io::ErrorKind::StorageFull => format!(
            "{io}: the disk is full; free space, or record to another disk (the bag holds what was written before)"
        ),
        mcap::McapError::Io(io) => io.to_string(),
        other => other.to_string(),
    }
}
