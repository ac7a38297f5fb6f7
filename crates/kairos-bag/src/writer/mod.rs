//! Writing a bag: a folder of MCAP files and a `metadata.yaml`, as rosbag2 writes them.
//!
//! What this module promises: a [`BagWriter`] writes what rosbag2_cpp's `SequentialWriter`
//! with the MCAP storage plugin (rosbag2_storage_mcap) writes:
//!
//! - files `<folder name>_0.mcap`, `_1.mcap`, ... (a new one when the current one reaches
//!   [`WriterOptions::max_file_size`] or spans [`WriterOptions::max_file_duration`]; every
//!   topic is registered again in each new file, as rosbag2 does);
//! - in each: the MCAP header profile `ros2`, a schema per message type (name
//!   `pkg/msg/Type`, encoding `ros2msg`, data the complete definition, see
//!   [`ros2msg_definition`](crate::ros2msg_definition)), a channel per topic (message
//!   encoding `cdr`, metadata `offered_qos_profiles` and `topic_type_hash`), messages with
//!   log time = receive time and publish time = send time, a `rosbag2` metadata record
//!   whose `serialized_metadata` is the bag's metadata when the file was closed, then chunk
//!   indexes and statistics (the `mcap` crate's writer);
//! - `metadata.yaml`, version 9, written when the writer finishes.
//!
//! With [`StorageId::Sqlite3`] the files are `<folder name>_N.db3`, written as
//! rosbag2_storage_sqlite3 writes them (see `sqlite_writer`). With a [`BagCompression`],
//! each message's data, or each closed file (then `<file>.zstd`), is one zstd frame, and
//! `metadata.yaml` says so, as rosbag2_compression's `SequentialCompressionWriter` does.
//!
//! Differences from rosbag2: the MCAP library string names kairos-bag; a message's MCAP
//! `sequence` is the one given to [`BagWriter::write`] (rosbag2 writes 0); each file holds one `rosbag2` metadata record, written when
//! it is closed (rosbag2 also writes one when it opens the file).
//!
//! A writer never drops a message silently: every [`BagWriter::write`] either stores the
//! message and counts it, or returns an error. Dropping a writer without calling
//! [`BagWriter::finish`] finishes it all the same (errors are logged with the `log`
//! crate), so the bag stays readable; call `finish` to see the errors.

use crate::error::{Error, Result};
use crate::metadata::{
    BagMetadata, CURRENT_VERSION, FileInformation, METADATA_FILENAME, TopicInformation,
};
use crate::qos::{QosProfile, profiles_to_yaml};
use crate::schema::encoding_of;
use crate::sqlite_writer::SqliteOut;
use kairos_interface::Message;
use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

mod options;
pub use options::{BagCompression, Compression, StorageId, WriterOptions};

/// The MCAP header profile of ROS 2 bags.
pub const MCAP_PROFILE: &str = "ros2";

/// The name of the MCAP metadata record rosbag2 stores its metadata in.
pub const MCAP_METADATA_NAME: &str = "rosbag2";

/// The key of the bag metadata in the `rosbag2` MCAP metadata record.
pub const SERIALIZED_METADATA_KEY: &str = "serialized_metadata";

/// rosbag2's value for times not yet known (`std::chrono::nanoseconds::max()`), written
/// as the start of a bag or file without messages.
const NO_TIME: u64 = i64::MAX as u64;

/// The zstd level of rosbag2_compression_zstd (its default).
const ZSTD_LEVEL: i32 = 1;

/// A topic to record: what rosbag2 stores about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicInfo {
    /// The topic name, e.g. `/chatter`.
    pub name: String,
    /// The message type, `pkg/msg/Type`.
    pub type_name: String,
    /// `cdr` for ROS 2 messages.
    pub serialization_format: String,
    /// The QoS profiles the topic's publishers offer (empty: not known).
    pub qos_profiles: Vec<QosProfile>,
    /// The RIHS01 type hash (`RIHS01_` and 64 hex digits), empty when not known.
    pub type_hash: String,
    /// The complete message definition, `ros2msg` (see
    /// [`ros2msg_definition`](crate::ros2msg_definition)); empty when not known, which
    /// leaves readers that need it unable to decode the topic.
    pub schema_text: String,
}

impl TopicInfo {
    /// Topic `name` of type `type_name`, CDR, with no QoS profiles, hash or definition.
    pub fn new(name: impl Into<String>, type_name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            type_name: type_name.into(),
            serialization_format: "cdr".to_owned(),
            qos_profiles: Vec::new(),
            type_hash: String::new(),
            schema_text: String::new(),
        }
    }

    /// Topic `name` of the kairos message type `M`: its ROS name and type hash.
    pub fn of<M: Message>(name: impl Into<String>) -> Self {
        Self {
            type_hash: M::type_hash().to_string(),
            ..Self::new(name, M::TYPE_NAME)
        }
    }

    /// With these offered QoS profiles.
    pub fn with_qos(mut self, profiles: Vec<QosProfile>) -> Self {
        self.qos_profiles = profiles;
        self
    }

    /// With this complete message definition.
    pub fn with_schema_text(mut self, text: impl Into<String>) -> Self {
        self.schema_text = text.into();
        self
    }

    /// With this type hash.
    pub fn with_type_hash(mut self, hash: impl Into<String>) -> Self {
        self.type_hash = hash.into();
        self
    }
}

/// Writes a rosbag2 bag (see the module docs).
///
/// ```no_run
/// use kairos_bag::{BagWriter, TopicInfo, WriterOptions};
/// let mut bag = BagWriter::create("my_bag", WriterOptions::default())?;
/// bag.add_topic(
///     TopicInfo::new("/chatter", "std_msgs/msg/String").with_schema_text("string data\n"),
/// )?;
/// let cdr = [0, 1, 0, 0, 3, 0, 0, 0, b'h', b'i', 0];
/// bag.write("/chatter", 1_700_000_000_000_000_000, 1_700_000_000_000_000_000, 1, &cdr)?;
/// bag.finish()?;
/// # Ok::<(), kairos_bag::Error>(())
/// ```
#[derive(Debug)]
pub struct BagWriter {
    dir: PathBuf,
    base_name: String,
    options: WriterOptions,
    ros_distro: String,
    topics: Vec<TopicState>,
    topic_index: HashMap<String, usize>,
    current: Option<OpenFile>,
    /// Every file opened so far; the last one is `current`'s.
    files: Vec<FileState>,
    /// Splits not yet taken by [`BagWriter::take_splits`].
    splits: Vec<FileSplit>,
    finished: bool,
}

/// One split of a bag: the storage file closed and the one opened to go on, full paths,
/// as rosbag2's writer reports it (`rosbag2_interfaces/msg/WriteSplitEvent`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSplit {
    /// The file finished and closed (its compressed name in file compression mode).
    pub closed_file: PathBuf,
    /// The file opened to continue.
    pub opened_file: PathBuf,
    /// Why the file was split.
    pub reason: SplitReason,
}

/// Why a [`BagWriter`] started a new file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplitReason {
    /// The file reached [`WriterOptions::max_file_size`].
    MaxSize,
    /// The file's messages spanned [`WriterOptions::max_file_duration`].
    MaxDuration,
    /// [`BagWriter::split`] was called (the recorder's `split_bagfile` service).
    Asked,
}

impl SplitReason {
    /// The name a trace and a report give it: `max_bag_size`, `max_bag_duration`, `asked`
    /// (after the recorder options that cause them).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::MaxSize => "max_bag_size",
            Self::MaxDuration => "max_bag_duration",
            Self::Asked => "asked",
        }
    }
}

#[derive(Debug)]
struct TopicState {
    info: TopicInfo,
    message_count: u64,
}

#[derive(Debug, Default, Clone)]
struct FileState {
    name: String,
    span: Option<(u64, u64)>,
    message_count: u64,
}

/// The storage file being written.
#[derive(Debug)]
enum OpenFile {
    // Boxed: the writers' states differ in size (a kilobyte for MCAP).
    Mcap(Box<McapOut>),
    Sqlite(Box<SqliteOut>),
}

impl OpenFile {
    fn path(&self) -> &Path {
        match self {
            Self::Mcap(file) => &file.path,
            Self::Sqlite(file) => file.path(),
        }
    }

    fn size(&self) -> u64 {
        match self {
            Self::Mcap(file) => file.size.load(Ordering::Relaxed),
            Self::Sqlite(file) => file.size(),
        }
    }

    /// Registers `topic` as the next topic index.
    fn add_topic(&mut self, topic: &TopicInfo) -> Result<()> {
        match self {
            Self::Mcap(file) => {
                let channel = register(file, topic)?;
                file.channels.push(channel);
                Ok(())
            }
            Self::Sqlite(file) => file.add_topic(topic),
        }
    }
}

struct McapOut {
    path: PathBuf,
    writer: mcap::Writer<CountingWriter<File>>,
    /// MCAP channel id of each topic, by topic index.
    channels: Vec<u16>,
    size: Arc<AtomicU64>,
}

impl std::fmt::Debug for McapOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McapOut")
            .field("path", &self.path)
            .field("channels", &self.channels)
            .finish_non_exhaustive()
    }
}

impl BagWriter {
    /// Creates the bag folder `dir` (which must not exist) and its first file.
    pub fn create(dir: impl AsRef<Path>, options: WriterOptions) -> Result<Self> {
        let dir = dir.as_ref().to_path_buf();
        if options.storage == StorageId::Sqlite3 && options.compression != Compression::None {
            return Err(Error::InvalidOption(
                "chunk compression is for MCAP files; a sqlite3 bag has no chunks (compress \
                 its messages or files with bag_compression)"
                    .into(),
            ));
        }
        if options.chunk_size == 0 || options.max_file_size == Some(0) {
            return Err(Error::InvalidOption(
                "chunk_size and max_file_size must be above 0 (use None for no split)".into(),
            ));
        }
        if options.max_file_duration == Some(Duration::ZERO) {
            return Err(Error::InvalidOption(
                "max_file_duration must be above 0 (use None for no split)".into(),
            ));
        }
        let base_name = dir
            .file_name()
            .and_then(|n| n.to_str())
            .filter(|n| !n.is_empty())
            .ok_or_else(|| {
                Error::InvalidOption(format!(
                    "{} has no UTF-8 folder name to name the bag's files after",
                    dir.display()
                ))
            })?
            .to_owned();
        if dir.exists() {
            return Err(Error::BagExists { path: dir });
        }
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        let ros_distro = options
            .ros_distro
            .clone()
            .unwrap_or_else(|| std::env::var("ROS_DISTRO").unwrap_or_default());
        let mut writer = Self {
            dir,
            base_name,
            options,
            ros_distro,
            topics: Vec::new(),
            topic_index: HashMap::new(),
            current: None,
            files: Vec::new(),
            splits: Vec::new(),
            finished: false,
        };
        writer.open_next_file()?;
        Ok(writer)
    }

    /// The bag folder.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Adds a topic (its schema and channel go into the current file at once). Adding a
    /// topic again with the same type and format does nothing.
    pub fn add_topic(&mut self, topic: TopicInfo) -> Result<()> {
        if let Some(&index) = self.topic_index.get(&topic.name) {
            let existing = &self.topics[index].info;
            if existing.type_name == topic.type_name
                && existing.serialization_format == topic.serialization_format
            {
                return Ok(());
            }
            return Err(Error::TopicConflict {
                topic: topic.name,
                existing: format!("{} ({})", existing.type_name, existing.serialization_format),
                requested: format!("{} ({})", topic.type_name, topic.serialization_format),
            });
        }
        let index = self.topics.len();
        if let Some(file) = self.current.as_mut() {
            file.add_topic(&topic)?;
        }
        self.topic_index.insert(topic.name.clone(), index);
        self.topics.push(TopicState {
            info: topic,
            message_count: 0,
        });
        Ok(())
    }

    /// Writes one message: `cdr` (the serialized message, with its 4-byte encapsulation
    /// header) on `topic`, received at `receive_time_ns` (the MCAP log time) and sent at
    /// `publish_time_ns`, nanoseconds since the epoch; `sequence` is the publisher's
    /// sequence number. Starts a new file first when the current one is full.
    pub fn write(
        &mut self,
        topic: &str,
        receive_time_ns: u64,
        publish_time_ns: u64,
        sequence: u32,
        cdr: &[u8],
    ) -> Result<()> {
        let index = *self
            .topic_index
            .get(topic)
            .ok_or_else(|| Error::UnknownTopic {
                topic: topic.to_owned(),
            })?;
        if let Some(reason) = self.split_due(receive_time_ns) {
            self.split_because(reason)?;
        }
        let compressed;
        let data = if self.options.bag_compression == BagCompression::Message {
            compressed = zstd::bulk::compress(cdr, ZSTD_LEVEL)
                .map_err(|e| Error::io(self.dir.clone(), e))?;
            &compressed[..]
        } else {
            cdr
        };
        let file = self.current.as_mut().ok_or_else(|| Error::WriterFailed {
            path: self.dir.clone(),
        })?;
        match file {
            OpenFile::Mcap(file) => {
                let header = mcap::records::MessageHeader {
                    channel_id: file.channels[index],
                    sequence,
                    log_time: receive_time_ns,
                    publish_time: publish_time_ns,
                };
                file.writer
                    .write_to_known_channel(&header, data)
                    .map_err(|source| Error::McapWrite {
                        path: file.path.clone(),
                        source,
                    })?;
            }
            OpenFile::Sqlite(file) => file.write(index, receive_time_ns, data)?,
        }
        self.topics[index].message_count += 1;
        if let Some(state) = self.files.last_mut() {
            state.message_count += 1;
            state.span = Some(extend(state.span, receive_time_ns));
        }
        Ok(())
    }

    /// Closes the current storage file and starts the next one now, as rosbag2's
    /// `split_bagfile` does (the new file may stay empty).
    pub fn split(&mut self) -> Result<()> {
        self.split_because(SplitReason::Asked)
    }

    fn split_because(&mut self, reason: SplitReason) -> Result<()> {
        self.close_current_file()?;
        let closed_file = self.current_file_path();
        self.open_next_file()?;
        self.splits.push(FileSplit {
            closed_file,
            opened_file: self.current_file_path(),
            reason,
        });
        Ok(())
    }

    /// The splits since the last call, by size, by duration or asked for, in order.
    pub fn take_splits(&mut self) -> Vec<FileSplit> {
        std::mem::take(&mut self.splits)
    }

    /// The path of the last file opened, under its final name.
    fn current_file_path(&self) -> PathBuf {
        self.dir
            .join(self.files.last().map_or("", |f| f.name.as_str()))
    }

    /// Sets one entry of the metadata's `custom_data` (written into `metadata.yaml` at
    /// [`finish`](Self::finish)); a recorder stores what it lost there.
    pub fn set_custom_data(&mut self, key: impl Into<String>, value: impl Into<String>) {
        self.options.custom_data.insert(key.into(), value.into());
    }

    /// Messages written to `topic` so far (0 for a topic not added).
    pub fn message_count(&self, topic: &str) -> u64 {
        self.topic_index
            .get(topic)
            .map_or(0, |&i| self.topics[i].message_count)
    }

    /// Messages written so far, all topics.
    pub fn total_message_count(&self) -> u64 {
        self.topics.iter().map(|t| t.message_count).sum()
    }

    /// The bag's metadata as it stands (what `metadata.yaml` will say if the writer
    /// finishes now).
    pub fn metadata(&self) -> BagMetadata {
        let span = self
            .files
            .iter()
            .filter_map(|f| f.span)
            .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)));
        BagMetadata {
            version: CURRENT_VERSION,
            storage_identifier: self.options.storage.as_str().to_owned(),
            relative_file_paths: self.files.iter().map(|f| f.name.clone()).collect(),
            files: self
                .files
                .iter()
                .map(|f| FileInformation {
                    path: f.name.clone(),
                    starting_time_ns: f.span.map_or(NO_TIME, |s| s.0),
                    duration_ns: f.span.map_or(0, |s| s.1 - s.0),
                    message_count: f.message_count,
                })
                .collect(),
            duration_ns: span.map_or(0, |s| s.1 - s.0),
            starting_time_ns: span.map_or(NO_TIME, |s| s.0),
            message_count: self.total_message_count(),
            topics: self
                .topics
                .iter()
                .map(|t| TopicInformation {
                    name: t.info.name.clone(),
                    type_name: t.info.type_name.clone(),
                    serialization_format: t.info.serialization_format.clone(),
                    offered_qos_profiles: t.info.qos_profiles.clone(),
                    type_description_hash: t.info.type_hash.clone(),
                    message_count: t.message_count,
                })
                .collect(),
            compression_format: self.options.bag_compression.format().to_owned(),
            compression_mode: self.options.bag_compression.mode().to_owned(),
            custom_data: self.options.custom_data.clone(),
            ros_distro: self.ros_distro.clone(),
        }
    }

    /// Closes the last file and writes `metadata.yaml`; returns the bag's metadata.
    pub fn finish(mut self) -> Result<BagMetadata> {
        self.finish_inner()?;
        Ok(self.metadata())
    }

    fn finish_inner(&mut self) -> Result<()> {
        if self.finished {
            return Ok(());
        }
        self.finished = true;
        // Write metadata.yaml even when the last file failed to close: the other files
        // are still readable through it.
        let closed = self.close_current_file();
        let yaml = self.write_metadata_yaml();
        closed.and(yaml)
    }

    fn write_metadata_yaml(&self) -> Result<()> {
        let path = self.dir.join(METADATA_FILENAME);
        let temporary = self.dir.join(format!("{METADATA_FILENAME}.tmp"));
        std::fs::write(&temporary, self.metadata().to_metadata_yaml())
            .map_err(|e| Error::io(&temporary, e))?;
        std::fs::rename(&temporary, &path).map_err(|e| Error::io(&path, e))
    }

    /// Why the file must be split before a message received at `receive_time_ns`, if it
    /// must.
    fn split_due(&self, receive_time_ns: u64) -> Option<SplitReason> {
        let (Some(file), Some(state)) = (&self.current, self.files.last()) else {
            return None;
        };
        let Some((start, _)) = state.span else {
            return None; // never leave a file empty
        };
        let too_big = self
            .options
            .max_file_size
            .is_some_and(|max| file.size() >= max);
        let too_long = self
            .options
            .max_file_duration
            .is_some_and(|max| u128::from(receive_time_ns.saturating_sub(start)) > max.as_nanos());
        if too_big {
            Some(SplitReason::MaxSize)
        } else {
            too_long.then_some(SplitReason::MaxDuration)
        }
    }

    fn open_next_file(&mut self) -> Result<()> {
        let name = format!(
            "{}_{}.{}",
            self.base_name,
            self.files.len(),
            self.options.storage.extension()
        );
        let path = self.dir.join(&name);
        let mut open = match self.options.storage {
            StorageId::Mcap => OpenFile::Mcap(Box::new(self.create_mcap(path)?)),
            StorageId::Sqlite3 => {
                OpenFile::Sqlite(Box::new(SqliteOut::create(&path, &self.ros_distro)?))
            }
        };
        for topic in &self.topics {
            open.add_topic(&topic.info)?;
        }
        self.current = Some(open);
        self.files.push(FileState {
            name,
            ..FileState::default()
        });
        Ok(())
    }

    fn create_mcap(&self, path: PathBuf) -> Result<McapOut> {
        let file = File::create_new(&path).map_err(|e| Error::io(&path, e))?;
        let size = Arc::new(AtomicU64::new(0));
        // Unbuffered: the mcap writer hands over whole chunks, and a chunk it handed over
        // is in the file at once, so a recorder killed afterwards loses only the chunk it
        // was filling (the reader recovers up to the last complete one).
        let sink = CountingWriter {
            inner: file,
            position: 0,
            size: Arc::clone(&size),
        };
        let compression = match self.options.compression {
            Compression::Zstd => Some(mcap::Compression::Zstd),
            Compression::Lz4 => Some(mcap::Compression::Lz4),
            Compression::None => None,
        };
        let writer = mcap::WriteOptions::new()
            .profile(MCAP_PROFILE)
            .library(format!(
                "kairos-bag/{} ({})",
                env!("CARGO_PKG_VERSION"),
                mcap::LIBRARY_IDENTIFIER
            ))
            .compression(compression)
            .chunk_size(Some(self.options.chunk_size))
            // Compress in the writing thread: no worker threads per file.
            .compression_threads(0)
            .create(sink)
            .map_err(|source| Error::McapWrite {
                path: path.clone(),
                source,
            })?;
        Ok(McapOut {
            path,
            writer,
            channels: Vec::with_capacity(self.topics.len()),
            size,
        })
    }

    fn close_current_file(&mut self) -> Result<()> {
        let Some(file) = self.current.take() else {
            return Ok(());
        };
        let path = file.path().to_owned();
        let metadata = self.metadata();
        match file {
            OpenFile::Mcap(mut file) => {
                let record = mcap::records::Metadata {
                    name: MCAP_METADATA_NAME.to_owned(),
                    metadata: [(SERIALIZED_METADATA_KEY.to_owned(), metadata.to_yaml())].into(),
                };
                let mcap_error = |source| Error::McapWrite {
                    path: path.clone(),
                    source,
                };
                file.writer.write_metadata(&record).map_err(mcap_error)?;
                file.writer.finish().map_err(mcap_error)?;
                let sink = file.writer.into_inner();
                sink.inner.sync_data().map_err(|e| Error::io(&path, e))?;
            }
            OpenFile::Sqlite(file) => file.close(metadata.version, &metadata.to_yaml())?,
        }
        if self.options.bag_compression == BagCompression::File {
            let compressed = compress_file(&path)?;
            if let Some(state) = self.files.last_mut() {
                state.name = compressed;
            }
        }
        Ok(())
    }
}

/// zstd-compresses the closed storage file `path` into `<path>.zstd` and removes it, as
/// rosbag2_compression's file mode does; returns the new file's name.
fn compress_file(path: &Path) -> Result<String> {
    let mut name = path.as_os_str().to_owned();
    name.push(".zstd");
    let target = PathBuf::from(name);
    let mut input = File::open(path).map_err(|e| Error::io(path, e))?;
    let output = File::create_new(&target).map_err(|e| Error::io(&target, e))?;
    let mut encoder =
        zstd::stream::Encoder::new(output, ZSTD_LEVEL).map_err(|e| Error::io(&target, e))?;
    std::io::copy(&mut input, &mut encoder).map_err(|e| Error::io(&target, e))?;
    let output = encoder.finish().map_err(|e| Error::io(&target, e))?;
    output.sync_data().map_err(|e| Error::io(&target, e))?;
    std::fs::remove_file(path).map_err(|e| Error::io(path, e))?;
    Ok(target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default())
}

impl Drop for BagWriter {
    fn drop(&mut self) {
        if let Err(e) = self.finish_inner() {
            log::error!(
                "kairos-bag: finishing bag {} on drop failed: {e}",
                self.dir.display()
            );
        }
    }
}

/// Adds `topic`'s schema and channel to `file`; returns the channel id.
fn register(file: &mut McapOut, topic: &TopicInfo) -> Result<u16> {
    let path = &file.path;
    let mcap_error = |source| Error::McapWrite {
        path: path.clone(),
        source,
    };
    let schema = file
        .writer
        .add_schema(
            &topic.type_name,
            encoding_of(&topic.schema_text),
            topic.schema_text.as_bytes(),
        )
        .map_err(mcap_error)?;
    let metadata = BTreeMap::from([
        (
            "offered_qos_profiles".to_owned(),
            profiles_to_yaml(&topic.qos_profiles),
        ),
        ("topic_type_hash".to_owned(), topic.type_hash.clone()),
    ]);
    file.writer
        .add_channel(schema, &topic.name, &topic.serialization_format, &metadata)
        .map_err(mcap_error)
}

fn extend(span: Option<(u64, u64)>, t: u64) -> (u64, u64) {
    span.map_or((t, t), |(a, b)| (a.min(t), b.max(t)))
}

/// A writer that keeps count of the size of what was written (without asking the file).
struct CountingWriter<W> {
    inner: W,
    position: u64,
    size: Arc<AtomicU64>,
}

impl<W: Write> Write for CountingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.position += n as u64;
        self.size.fetch_max(self.position, Ordering::Relaxed);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

impl<W: Seek> Seek for CountingWriter<W> {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        self.position = self.inner.seek(to)?;
        Ok(self.position)
    }
}
