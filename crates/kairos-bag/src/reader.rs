//! Reading a bag: finding its files, describing it, and merging its messages.
//!
//! What this module promises: [`Bag::open`] accepts
//!
//! - a bag folder with a `metadata.yaml` of any rosbag2 version (1 to 9; a newer version
//!   is read as 9 with a warning), storage `mcap` or `sqlite3`, uncompressed or
//!   zstd-compressed (`file` or `message` mode);
//! - a single `.mcap` or `.db3` file, or a folder of them without `metadata.yaml`: the
//!   bag is then described from the files, as rosbag2 describes a single storage file
//!   (topics from MCAP channels and schemas or the `topics` table);
//! - the path of a bag's `metadata.yaml` itself.
//!
//! [`Bag::info`] is the bag's [`BagMetadata`]: the `metadata.yaml` when there is one (what
//! `ros2 bag info` shows), else the one built from the files. [`Bag::messages`] and
//! [`Bag::read`] yield every message of every file, merged in log-time (receive-time)
//! order (equal times: earlier file first, then file order), filtered by topic and time;
//! a failure while reading is yielded as an error, after which the iterator ends.

use crate::error::{Error, Result};
use crate::mcap_file::McapFile;
use crate::metadata::{BagMetadata, CURRENT_VERSION, METADATA_FILENAME, TopicInformation};
use crate::schema::MessageDefinition;
use crate::sqlite::SqliteFile;
use crate::writer::StorageId;
use bytes::Bytes;
use kairos_interface::Message;
use std::cmp::{Ordering, Reverse};
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One message of a bag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BagMessage {
    /// The topic it was recorded on.
    pub topic: Arc<str>,
    /// Its type, `pkg/msg/Type`.
    pub type_name: Arc<str>,
    /// When it was received (recorded), nanoseconds since the epoch.
    pub log_time: u64,
    /// When it was sent, nanoseconds since the epoch (the receive time for `.db3` files,
    /// which do not store it).
    pub publish_time: u64,
    /// The publisher's sequence number as stored (0 when not stored).
    pub sequence: u32,
    /// The serialized message (CDR with its encapsulation header, for `cdr` topics).
    pub data: Bytes,
}

/// Which messages to read: all by default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadFilter {
    /// Only these topics (`None`: all).
    pub topics: Option<BTreeSet<String>>,
    /// Only messages received at or after this time (ns since the epoch).
    pub start_ns: Option<u64>,
    /// Only messages received at or before this time (ns since the epoch).
    pub end_ns: Option<u64>,
}

impl ReadFilter {
    /// Every message.
    pub fn all() -> Self {
        Self::default()
    }

    /// Only messages on `topics`.
    pub fn topics<I, S>(mut self, topics: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.topics = Some(topics.into_iter().map(Into::into).collect());
        self
    }

    /// Only messages received at or after `start_ns`.
    pub fn start(mut self, start_ns: u64) -> Self {
        self.start_ns = Some(start_ns);
        self
    }

    /// Only messages received at or before `end_ns`.
    pub fn end(mut self, end_ns: u64) -> Self {
        self.end_ns = Some(end_ns);
        self
    }

    pub(crate) fn accepts_topic(&self, topic: &str) -> bool {
        self.topics.as_ref().is_none_or(|t| t.contains(topic))
    }

    pub(crate) fn accepts(&self, topic: &str, log_time: u64) -> bool {
        self.accepts_topic(topic)
            && self.start_ns.is_none_or(|s| log_time >= s)
            && self.end_ns.is_none_or(|e| log_time <= e)
    }
}

/// The messages of one storage file, in log-time order.
pub(crate) type MessageIter = Box<dyn Iterator<Item = Result<BagMessage>> + Send>;

/// How a bag's files are compressed (rosbag2_compression).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Compressed {
    /// Each storage file is one zstd frame (`compression_mode: file`).
    file: bool,
    /// Each message is a zstd frame (`compression_mode: message`).
    message: bool,
}

/// An open bag (see the module docs).
#[derive(Debug)]
pub struct Bag {
    path: PathBuf,
    storage: StorageId,
    files: Vec<PathBuf>,
    compressed: Compressed,
    metadata: BagMetadata,
}

impl Bag {
    /// Opens a bag folder, a `.mcap` or `.db3` file, or a folder of them.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let stat = std::fs::metadata(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Error::NotFound {
                path: path.to_owned(),
            },
            _ => Error::io(path, e),
        })?;
        if stat.is_dir() {
            let yaml = path.join(METADATA_FILENAME);
            if yaml.is_file() {
                return Self::open_with_metadata(path, &yaml);
            }
            for storage in [StorageId::Mcap, StorageId::Sqlite3] {
                let files = storage_files(path, storage)?;
                if !files.is_empty() {
                    return Self::open_files(path, storage, files);
                }
            }
            return Err(Error::NotABag {
                path: path.to_owned(),
            });
        }
        if path.file_name().is_some_and(|n| n == METADATA_FILENAME) {
            let folder = path.parent().unwrap_or(Path::new("."));
            return Self::open_with_metadata(folder, path);
        }
        let storage = storage_of(path)?.ok_or_else(|| Error::NotABag {
            path: path.to_owned(),
        })?;
        Self::open_files(path, storage, vec![path.to_owned()])
    }

    /// Rebuilds the `metadata.yaml` of the bag folder `dir` from its storage files, as
    /// `ros2 bag reindex` does: for a bag whose recorder was killed (no `metadata.yaml`,
    /// the last file without its summary) or whose `metadata.yaml` is lost. A file cut short
    /// counts up to its last complete record. Returns the metadata written.
    pub fn reindex(dir: impl AsRef<Path>) -> Result<BagMetadata> {
        let dir = dir.as_ref();
        if !dir.is_dir() {
            return Err(Error::NotABag {
                path: dir.to_owned(),
            });
        }
        for storage in [StorageId::Mcap, StorageId::Sqlite3] {
            let files = storage_files(dir, storage)?;
            if files.is_empty() {
                continue;
            }
            let metadata = Self::open_files(dir, storage, files)?.metadata;
            let yaml = dir.join(METADATA_FILENAME);
            let temporary = dir.join(format!("{METADATA_FILENAME}.tmp"));
            std::fs::write(&temporary, metadata.to_metadata_yaml())
                .map_err(|e| Error::io(&temporary, e))?;
            std::fs::rename(&temporary, &yaml).map_err(|e| Error::io(&yaml, e))?;
            return Ok(metadata);
        }
        Err(Error::NotABag {
            path: dir.to_owned(),
        })
    }

    fn open_with_metadata(folder: &Path, yaml: &Path) -> Result<Self> {
        let metadata = BagMetadata::read(yaml)?;
        if metadata.version > CURRENT_VERSION {
            log::warn!(
                "kairos-bag: {} is metadata version {}, newer than the {CURRENT_VERSION} \
                 kairos-bag knows; reading it as version {CURRENT_VERSION}",
                yaml.display(),
                metadata.version
            );
        }
        let storage = match metadata.storage_identifier.as_str() {
            "mcap" => StorageId::Mcap,
            "sqlite3" => StorageId::Sqlite3,
            // Not written by rosbag2, but the file names tell.
            "" if metadata
                .relative_file_paths
                .iter()
                .any(|p| p.contains(".mcap")) =>
            {
                StorageId::Mcap
            }
            "" => StorageId::Sqlite3,
            other => {
                return Err(Error::UnsupportedStorage {
                    id: other.to_owned(),
                    path: yaml.to_owned(),
                });
            }
        };
        let compressed = compression(&metadata, yaml)?;
        // Before version 4 the paths start with the bag folder's name.
        let base = if metadata.version < 4 {
            folder.parent().unwrap_or(Path::new("."))
        } else {
            folder
        };
        let files = metadata
            .relative_file_paths
            .iter()
            .map(|relative| {
                let candidate = base.join(relative);
                if candidate.is_file() {
                    return Ok(candidate);
                }
                // A bag folder that was renamed, or paths written with the folder name.
                let by_name = Path::new(relative)
                    .file_name()
                    .map(|name| folder.join(name))
                    .filter(|p| p.is_file());
                by_name.ok_or(Error::MissingFile { path: candidate })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            path: folder.to_owned(),
            storage,
            files,
            compressed,
            metadata,
        })
    }

    fn open_files(path: &Path, storage: StorageId, files: Vec<PathBuf>) -> Result<Self> {
        let mut merged: Option<BagMetadata> = None;
        for file in &files {
            let metadata = match storage {
                StorageId::Mcap => McapFile::open(file, false)?.metadata()?,
                StorageId::Sqlite3 => SqliteFile::open(file, false)?.metadata()?,
            };
            merged = Some(match merged {
                None => metadata,
                Some(bag) => merge(bag, metadata),
            });
        }
        let metadata = merged.ok_or_else(|| Error::NotABag {
            path: path.to_owned(),
        })?;
        // The files opened, so they are not compressed whole; their messages may be (as the
        // metadata stored in them says).
        let compressed = Compressed {
            file: false,
            message: metadata.compression_mode.eq_ignore_ascii_case("message")
                && metadata.compression_format.eq_ignore_ascii_case("zstd"),
        };
        Ok(Self {
            path: path.to_owned(),
            storage,
            files,
            compressed,
            metadata,
        })
    }

    /// The bag's metadata (see the module docs).
    pub fn info(&self) -> &BagMetadata {
        &self.metadata
    }

    /// The path the bag was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The storage of the bag's files.
    pub fn storage(&self) -> StorageId {
        self.storage
    }

    /// The storage files, in the order the bag lists them.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// Every message, in log-time order.
    pub fn messages(&self) -> Result<Messages> {
        self.read(&ReadFilter::all())
    }

    /// The messages that pass `filter`, in log-time order.
    pub fn read(&self, filter: &ReadFilter) -> Result<Messages> {
        let mut sources = Vec::with_capacity(self.files.len());
        for file in &self.files {
            let messages = match self.storage {
                StorageId::Mcap => McapFile::open(file, self.compressed.file)?.messages(filter)?,
                StorageId::Sqlite3 => {
                    SqliteFile::open(file, self.compressed.file)?.messages(filter)?
                }
            };
            let messages: MessageIter = if self.compressed.message {
                let path = file.clone();
                Box::new(messages.map(move |m| decompress(m?, &path)))
            } else {
                messages
            };
            sources.push(messages);
        }
        Ok(Messages {
            sources,
            heap: BinaryHeap::new(),
            primed: false,
            pending_error: None,
            failed: false,
        })
    }

    /// The message definitions the bag's files store (MCAP schemas, sqlite3's
    /// `message_definitions` table), each type once (the first file's), by type name.
    pub fn message_definitions(&self) -> Result<Vec<MessageDefinition>> {
        let mut found: BTreeMap<String, MessageDefinition> = BTreeMap::new();
        for file in &self.files {
            let definitions = match self.storage {
                StorageId::Mcap => McapFile::open(file, self.compressed.file)?.definitions()?,
                StorageId::Sqlite3 => {
                    SqliteFile::open(file, self.compressed.file)?.definitions()?
                }
            };
            for definition in definitions {
                found
                    .entry(definition.type_name.clone())
                    .or_insert(definition);
            }
        }
        Ok(found.into_values().collect())
    }

    /// The messages of `topic` decoded as the kairos message type `M`, in log-time order.
    pub fn typed<M: Message>(&self, topic: &str) -> Result<Typed<M>> {
        let info = self.topic(topic)?;
        if info.type_name != M::TYPE_NAME {
            return Err(Error::TypeMismatch {
                topic: topic.to_owned(),
                bag_type: info.type_name.clone(),
                requested: M::TYPE_NAME.to_owned(),
            });
        }
        Ok(Typed {
            messages: self.read(&ReadFilter::all().topics([topic]))?,
            _type: PhantomData,
        })
    }

    /// The topic named `name`, or an error listing the bag's topics.
    pub fn topic(&self, name: &str) -> Result<&TopicInformation> {
        self.metadata.topic(name).ok_or_else(|| Error::NoSuchTopic {
            topic: name.to_owned(),
            known: self
                .metadata
                .topics
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        })
    }
}

/// The compression of a bag's files, checked to be one this crate reads.
fn compression(metadata: &BagMetadata, yaml: &Path) -> Result<Compressed> {
    let mode = metadata.compression_mode.to_ascii_lowercase();
    let format = metadata.compression_format.to_ascii_lowercase();
    let unsupported = || Error::UnsupportedCompression {
        format: metadata.compression_format.clone(),
        mode: metadata.compression_mode.clone(),
        path: yaml.to_owned(),
    };
    match mode.as_str() {
        "" | "none" => Ok(Compressed::default()),
        "file" | "message" if format == "zstd" => Ok(Compressed {
            file: mode == "file",
            message: mode == "message",
        }),
        _ => Err(unsupported()),
    }
}

fn decompress(mut message: BagMessage, path: &Path) -> Result<BagMessage> {
    let data = zstd::decode_all(&message.data[..]).map_err(|e| {
        Error::corrupt(
            path,
            format!(
                "message on '{}' at {} ns does not zstd-decompress: {e}",
                message.topic, message.log_time
            ),
        )
    })?;
    message.data = Bytes::from(data);
    Ok(message)
}

/// The storage of `path`, by its extension or its first bytes.
fn storage_of(path: &Path) -> Result<Option<StorageId>> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("mcap") => return Ok(Some(StorageId::Mcap)),
        Some("db3") => return Ok(Some(StorageId::Sqlite3)),
        _ => {}
    }
    let mut head = [0u8; 16];
    let read = {
        use std::io::Read;
        let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        let mut filled = 0;
        loop {
            match file.read(&mut head[filled..]) {
                Ok(0) => break filled,
                Ok(n) => {
                    filled += n;
                    if filled == head.len() {
                        break filled;
                    }
                }
                Err(e) => return Err(Error::io(path, e)),
            }
        }
    };
    let head = &head[..read];
    Ok(if head.starts_with(mcap::MAGIC) {
        Some(StorageId::Mcap)
    } else if head.starts_with(b"SQLite format 3\0") {
        Some(StorageId::Sqlite3)
    } else {
        None
    })
}

/// The `.mcap` or `.db3` files of `folder`, in rosbag2's order (`name_0`, `name_1`, ...,
/// `name_10`).
fn storage_files(folder: &Path, storage: StorageId) -> Result<Vec<PathBuf>> {
    let extension = match storage {
        StorageId::Mcap => "mcap",
        StorageId::Sqlite3 => "db3",
    };
    let entries = std::fs::read_dir(folder).map_err(|e| Error::io(folder, e))?;
    let mut files = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| Error::io(folder, e))?.path();
        if path.is_file() && path.extension().is_some_and(|e| e == extension) {
            files.push(path);
        }
    }
    files.sort_by_cached_key(|p| {
        let stem = p
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let digits = stem.len() - stem.chars().rev().take_while(char::is_ascii_digit).count();
        let index = stem[digits..].parse::<u64>().ok();
        (stem[..digits].to_owned(), index, stem)
    });
    Ok(files)
}

/// The description of two storage files of one bag, as one.
fn merge(mut bag: BagMetadata, file: BagMetadata) -> BagMetadata {
    let span =
        |m: &BagMetadata| (m.message_count > 0).then(|| (m.starting_time_ns, m.end_time_ns()));
    let combined = match (span(&bag), span(&file)) {
        (Some(a), Some(b)) => Some((a.0.min(b.0), a.1.max(b.1))),
        (a, b) => a.or(b),
    };
    if let Some((start, end)) = combined {
        bag.starting_time_ns = start;
        bag.duration_ns = end.saturating_sub(start);
    }
    bag.message_count += file.message_count;
    bag.relative_file_paths.extend(file.relative_file_paths);
    bag.files.extend(file.files);
    for topic in file.topics {
        match bag.topics.iter_mut().find(|t| t.name == topic.name) {
            Some(existing) => existing.message_count += topic.message_count,
            None => bag.topics.push(topic),
        }
    }
    bag
}

/// The messages of a bag in log-time order, merged across its files.
pub struct Messages {
    sources: Vec<MessageIter>,
    heap: BinaryHeap<Reverse<Head>>,
    primed: bool,
    pending_error: Option<Error>,
    failed: bool,
}

impl std::fmt::Debug for Messages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Messages")
            .field("files", &self.sources.len())
            .field("queued", &self.heap.len())
            .finish_non_exhaustive()
    }
}

/// The next message of one file.
struct Head {
    source: usize,
    message: BagMessage,
}

impl Head {
    fn key(&self) -> (u64, usize) {
        (self.message.log_time, self.source)
    }
}

impl PartialEq for Head {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for Head {}

impl PartialOrd for Head {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Head {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key().cmp(&other.key())
    }
}

impl Messages {
    /// Queues the next message of `source`; an error is kept to be yielded next.
    fn pull(&mut self, source: usize) {
        match self.sources[source].next() {
            Some(Ok(message)) => self.heap.push(Reverse(Head { source, message })),
            Some(Err(e)) => self.pending_error = Some(e),
            None => {}
        }
    }
}

impl Iterator for Messages {
    type Item = Result<BagMessage>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        if !self.primed {
            self.primed = true;
            for source in 0..self.sources.len() {
                self.pull(source);
                if self.pending_error.is_some() {
                    break;
                }
            }
        }
        if let Some(e) = self.pending_error.take() {
            self.failed = true;
            return Some(Err(e));
        }
        let Reverse(head) = self.heap.pop()?;
        self.pull(head.source);
        Some(Ok(head.message))
    }
}

/// The messages of one topic decoded as `M` (see [`Bag::typed`]).
pub struct Typed<M> {
    messages: Messages,
    _type: PhantomData<fn() -> M>,
}

impl<M> std::fmt::Debug for Typed<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Typed")
            .field("messages", &self.messages)
            .finish()
    }
}

impl<M: Message> Iterator for Typed<M> {
    type Item = Result<(BagMessage, M)>;

    fn next(&mut self) -> Option<Self::Item> {
        let message = match self.messages.next()? {
            Ok(message) => message,
            Err(e) => return Some(Err(e)),
        };
        Some(match kairos_interface::decode::<M>(&message.data) {
            Ok(value) => Ok((message, value)),
            Err(source) => Err(Error::Decode {
                topic: message.topic.to_string(),
                log_time: message.log_time,
                source,
            }),
        })
    }
}
