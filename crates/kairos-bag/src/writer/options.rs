//! How a bag is written: its storage, file splits, chunk and whole-file compression
//! ([`WriterOptions`] and the choices it holds).

use std::collections::BTreeMap;
use std::time::Duration;

/// How chunks of the MCAP files are compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Compression {
    /// zstd (the `mcap` library's default, rosbag2's `zstd_fast` preset).
    #[default]
    Zstd,
    /// LZ4 frames.
    Lz4,
    /// Uncompressed chunks (rosbag2's plugin default).
    None,
}

/// rosbag2_compression's compression of a whole bag (`ros2 bag record --compression-mode`),
/// always zstd; independent of the MCAP chunk [`Compression`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BagCompression {
    /// Nothing compressed (rosbag2's default).
    #[default]
    None,
    /// Each message's data is one zstd frame (`compression_mode: MESSAGE`).
    Message,
    /// Each storage file, once closed, becomes `<file>.zstd`, one zstd frame
    /// (`compression_mode: FILE`).
    File,
}

impl BagCompression {
    /// The `compression_mode` of `metadata.yaml` (empty for none, as rosbag2 writes it).
    pub fn mode(self) -> &'static str {
        match self {
            Self::None => "",
            Self::Message => "MESSAGE",
            Self::File => "FILE",
        }
    }

    /// The `compression_format` of `metadata.yaml`.
    pub fn format(self) -> &'static str {
        match self {
            Self::None => "",
            Self::Message | Self::File => "zstd",
        }
    }
}

/// A storage plugin of rosbag2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StorageId {
    /// MCAP files (`.mcap`), rosbag2's default since Iron.
    #[default]
    Mcap,
    /// SQLite 3 databases (`.db3`), rosbag2's default before Iron.
    Sqlite3,
}

impl StorageId {
    /// The `storage_identifier` of `metadata.yaml`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Mcap => "mcap",
            Self::Sqlite3 => "sqlite3",
        }
    }

    /// The extension of its storage files.
    pub fn extension(self) -> &'static str {
        match self {
            Self::Mcap => "mcap",
            Self::Sqlite3 => "db3",
        }
    }
}

/// How a [`BagWriter`](super::BagWriter) writes.
#[derive(Debug, Clone)]
pub struct WriterOptions {
    /// The storage: MCAP files or sqlite3 databases.
    pub storage: StorageId,
    /// MCAP chunk compression: none by default, as rosbag2's MCAP storage writes without
    /// a storage preset (its `zstd_fast` / `zstd_small` presets compress chunks with zstd).
    pub compression: Compression,
    /// rosbag2_compression's zstd of each message or each file: none by default.
    pub bag_compression: BagCompression,
    /// Start a new file once the current one has this many bytes (`None`: never).
    pub max_file_size: Option<u64>,
    /// Start a new file once a message was received this long after the current file's
    /// first (`None`: never).
    pub max_file_duration: Option<Duration>,
    /// Target uncompressed size of an MCAP chunk, in bytes (rosbag2: 768 KiB).
    pub chunk_size: u64,
    /// `custom_data` of the metadata.
    pub custom_data: BTreeMap<String, String>,
    /// `ros_distro` of the metadata; `None` takes the `ROS_DISTRO` environment variable,
    /// as rosbag2 does.
    pub ros_distro: Option<String>,
}

impl Default for WriterOptions {
    fn default() -> Self {
        Self {
            storage: StorageId::Mcap,
            compression: Compression::None,
            bag_compression: BagCompression::None,
            max_file_size: None,
            max_file_duration: None,
            chunk_size: 768 * 1024,
            custom_data: BTreeMap::new(),
            ros_distro: None,
        }
    }
}
