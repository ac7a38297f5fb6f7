//! Reading one MCAP storage file of a bag, with the `mcap` crate.
//!
//! What this module promises: [`McapFile::messages`] yields a file's messages in log-time
//! order (equal times in file order), filtered by topic and time. A file with a summary and
//! chunk indexes (what rosbag2, the `mcap` CLI and this crate write) is read chunk by chunk
//! in file order through its indexes, holding messages only while a chunk still unread may
//! hold earlier ones; any other valid MCAP file (no summary, no chunks) is read whole into
//! memory and sorted. [`McapFile::metadata`] describes the file as rosbag2's MCAP
//! plugin does: topics from its channels (type from the schema name, QoS and type hash
//! from the channel metadata), counts and times from its statistics, the rest from its
//! last `rosbag2` metadata record. A damaged file is an [`Error::Corrupt`] naming it,
//! except one cut short (a recorder killed, a full disk): a file that starts as MCAP and
//! has no readable end is read up to its last complete record (for a chunked file, its
//! last complete chunk), with a warning that says how much was recovered.

use crate::error::{Error, Result};
use crate::metadata::{BagMetadata, FileInformation, TopicInformation};
use crate::qos::profiles_from_yaml;
use crate::reader::{BagMessage, MessageIter, ReadFilter};
use crate::schema::MessageDefinition;
use crate::writer::{MCAP_METADATA_NAME, SERIALIZED_METADATA_KEY, StorageId};
use bytes::Bytes;
use mcap::sans_io::indexed_reader::{
    IndexedReadEvent, IndexedReader, IndexedReaderOptions, ReadOrder,
};
use mcap::sans_io::summary_reader::{SummaryReadEvent, SummaryReader, SummaryReaderOptions};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};
use std::fs::File;
use std::io::{Cursor, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The bytes of a storage file: on disk, or decompressed in memory.
#[derive(Debug)]
pub(crate) enum Source {
    File(File),
    Memory(Cursor<Vec<u8>>),
}

impl Read for Source {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Self::File(f) => f.read(buf),
            Self::Memory(c) => c.read(buf),
        }
    }
}

impl Seek for Source {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        match self {
            Self::File(f) => f.seek(to),
            Self::Memory(c) => c.seek(to),
        }
    }
}

impl Source {
    /// `path`, decompressed into memory when `zstd` (rosbag2's file compression).
    pub(crate) fn open(path: &Path, zstd: bool) -> Result<Self> {
        let file = File::open(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Error::MissingFile {
                path: path.to_owned(),
            },
            _ => Error::io(path, e),
        })?;
        if !zstd {
            return Ok(Self::File(file));
        }
        let bytes = zstd::decode_all(file)
            .map_err(|e| Error::corrupt(path, format!("zstd decompression failed: {e}")))?;
        Ok(Self::Memory(Cursor::new(bytes)))
    }

    fn into_bytes(self, path: &Path) -> Result<Vec<u8>> {
        match self {
            Self::Memory(c) => Ok(c.into_inner()),
            Self::File(mut f) => {
                let mut bytes = Vec::new();
                f.seek(SeekFrom::Start(0))
                    .and_then(|_| f.read_to_end(&mut bytes))
                    .map_err(|e| Error::io(path, e))?;
                Ok(bytes)
            }
        }
    }
}

/// One open MCAP file and its summary.
#[derive(Debug)]
pub(crate) struct McapFile {
    path: PathBuf,
    source: Source,
    summary: Option<mcap::Summary>,
    /// The file has no readable end (no footer or summary): read up to its last complete
    /// record.
    truncated: bool,
    /// The largest record (or decompressed chunk) believed: a damaged length field must
    /// not make the reader allocate exabytes.
    record_limit: usize,
}

/// The largest record or decompressed chunk of a file of `size` bytes that is read: four
/// times the file, at least 1 GiB.
fn record_limit(size: u64) -> usize {
    usize::try_from(size.saturating_mul(4))
        .unwrap_or(usize::MAX)
        .max(1 << 30)
}

impl McapFile {
    /// Opens `path` (zstd-decompressing it first when `zstd`) and reads its summary.
    pub(crate) fn open(path: &Path, zstd: bool) -> Result<Self> {
        let mut source = Source::open(path, zstd)?;
        let mut magic = [0u8; 8];
        let read = read_fully(&mut source, &mut magic).map_err(|e| Error::io(path, e))?;
        if read < magic.len() || magic != mcap::MAGIC {
            return Err(Error::corrupt(
                path,
                "not an MCAP file (no MCAP magic bytes)",
            ));
        }
        let size = source
            .seek(SeekFrom::End(0))
            .map_err(|e| Error::io(path, e))?;
        let record_limit = record_limit(size);
        let (summary, truncated) = match read_summary(&mut source, size, record_limit) {
            Ok(summary) => (summary, false),
            Err(why) if !ends_with_magic(&mut source, size) => {
                log::warn!(
                    "kairos-bag: {} has no end ({why}): it was cut short (a recorder killed, a full disk?); reading it up to its last complete record",
                    path.display()
                );
                (None, true)
            }
            Err(why) => return Err(Error::corrupt(path, why)),
        };
        Ok(Self {
            path: path.to_owned(),
            source,
            summary,
            truncated,
            record_limit,
        })
    }

    /// Whether the chunk indexes can find every message.
    fn indexed(&self) -> bool {
        self.summary.as_ref().is_some_and(|s| {
            !s.chunk_indexes.is_empty() || s.stats.as_ref().is_some_and(|st| st.message_count == 0)
        })
    }

    /// The file described as rosbag2's MCAP plugin describes it (see the module docs).
    pub(crate) fn metadata(&mut self) -> Result<BagMetadata> {
        let file_name = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let from_summary = match (&self.summary, self.indexed()) {
            (Some(summary), true) => summary.stats.as_ref().map(|stats| {
                let channels: Vec<ChannelInfo> = summary
                    .channels
                    .values()
                    .map(|c| ChannelInfo::of(c))
                    .collect();
                let counts = Counts {
                    per_channel: stats.channel_message_counts.clone(),
                    span: (stats.message_count > 0)
                        .then_some((stats.message_start_time, stats.message_end_time)),
                };
                (channels, counts)
            }),
            _ => None,
        };
        let (channels, records, counts) = match from_summary {
            Some((channels, counts)) => (channels, self.read_metadata_records()?, counts),
            None => self.scan()?,
        };
        let mut base = records
            .iter()
            .rev()
            .filter_map(|r| r.get(SERIALIZED_METADATA_KEY))
            .find_map(|text| match BagMetadata::from_yaml(text) {
                Ok(m) => Some(m),
                Err(e) => {
                    log::warn!(
                        "kairos-bag: ignoring unreadable rosbag2 metadata in {}: {e}",
                        self.path.display()
                    );
                    None
                }
            })
            .unwrap_or_default();
        if let Some(distro) = records.iter().rev().find_map(|r| r.get("ROS_DISTRO")) {
            base.ros_distro = distro.clone();
        }
        let mut topics: Vec<TopicInformation> = Vec::new();
        let mut by_id: Vec<&ChannelInfo> = channels.iter().collect();
        by_id.sort_by_key(|c| c.id);
        for channel in by_id {
            let count = counts.per_channel.get(&channel.id).copied().unwrap_or(0);
            if let Some(existing) = topics.iter_mut().find(|t| t.name == channel.topic) {
                existing.message_count += count;
                continue;
            }
            let offered_qos_profiles = match channel.metadata.get("offered_qos_profiles") {
                Some(text) => profiles_from_yaml(text).map_err(|e| {
                    Error::metadata(
                        &self.path,
                        format!("offered_qos_profiles of channel '{}': {e}", channel.topic),
                    )
                })?,
                None => Vec::new(),
            };
            topics.push(TopicInformation {
                name: channel.topic.clone(),
                type_name: channel.type_name.clone(),
                serialization_format: channel.encoding.clone(),
                offered_qos_profiles,
                type_description_hash: channel
                    .metadata
                    .get("topic_type_hash")
                    .cloned()
                    .unwrap_or_default(),
                message_count: count,
            });
        }
        let message_count = counts.per_channel.values().sum();
        let (start, end) = counts.span.unwrap_or((0, 0));
        Ok(BagMetadata {
            storage_identifier: StorageId::Mcap.as_str().to_owned(),
            relative_file_paths: vec![file_name.clone()],
            files: vec![FileInformation {
                path: file_name,
                starting_time_ns: start,
                duration_ns: end.saturating_sub(start),
                message_count,
            }],
            duration_ns: end.saturating_sub(start),
            starting_time_ns: start,
            message_count,
            topics,
            ..base
        })
    }

    /// The key/value maps of the file's `rosbag2` metadata records, through the summary's
    /// metadata indexes.
    fn read_metadata_records(&mut self) -> Result<Vec<Record>> {
        let Some(summary) = &self.summary else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for index in summary
            .metadata_indexes
            .iter()
            .filter(|i| i.name == MCAP_METADATA_NAME)
        {
            let length = usize::try_from(index.length)
                .ok()
                .filter(|&l| l >= 9)
                .ok_or_else(|| Error::corrupt(&self.path, "bad metadata index length"))?;
            let mut buffer = Vec::new();
            read_at(&mut self.source, index.offset, length, &mut buffer)
                .map_err(|e| Error::corrupt(&self.path, format!("metadata record: {e}")))?;
            let record = mcap::parse_record(buffer[0], &buffer[9..])
                .map_err(|e| Error::corrupt(&self.path, format!("metadata record: {e}")))?;
            if let mcap::records::Record::Metadata(m) = record {
                out.push(m.metadata);
            }
        }
        Ok(out)
    }

    /// A pass over every record: channels, `rosbag2` metadata, counts (for files whose
    /// summary lacks statistics or indexes).
    fn scan(&mut self) -> Result<(Vec<ChannelInfo>, Vec<Record>, Counts)> {
        let source = std::mem::replace(&mut self.source, Source::Memory(Cursor::new(Vec::new())));
        let bytes = source.into_bytes(&self.path)?;
        let mut schemas: HashMap<u16, String> = HashMap::new();
        let mut channels: BTreeMap<u16, ChannelInfo> = BTreeMap::new();
        let mut records = Vec::new();
        let mut counts = Counts::default();
        let flattener =
            mcap::read::ChunkFlattener::new(&bytes).map_err(|e| Error::corrupt(&self.path, e))?;
        for record in flattener {
            let record = match record {
                Ok(record) => record,
                Err(_) if self.truncated => break,
                Err(e) => return Err(Error::corrupt(&self.path, e)),
            };
            match record {
                mcap::records::Record::Schema { header, .. } => {
                    schemas.insert(header.id, header.name);
                }
                mcap::records::Record::Channel(c) => {
                    let type_name = schemas.get(&c.schema_id).cloned().unwrap_or_default();
                    channels.insert(
                        c.id,
                        ChannelInfo {
                            id: c.id,
                            topic: c.topic,
                            type_name,
                            encoding: c.message_encoding,
                            metadata: c.metadata,
                        },
                    );
                }
                mcap::records::Record::Message { header, .. } => {
                    *counts.per_channel.entry(header.channel_id).or_default() += 1;
                    counts.span = Some(match counts.span {
                        None => (header.log_time, header.log_time),
                        Some((a, b)) => (a.min(header.log_time), b.max(header.log_time)),
                    });
                }
                mcap::records::Record::Metadata(m) if m.name == MCAP_METADATA_NAME => {
                    records.push(m.metadata);
                }
                _ => {}
            }
        }
        self.source = Source::Memory(Cursor::new(bytes));
        Ok((channels.into_values().collect(), records, counts))
    }

    /// The file's schemas, by schema id: from the summary, or from the records when the
    /// summary does not repeat them (or the file has none).
    pub(crate) fn definitions(&mut self) -> Result<Vec<MessageDefinition>> {
        if let Some(summary) = &self.summary
            && (!summary.schemas.is_empty() || summary.channels.is_empty())
        {
            let mut schemas: Vec<_> = summary.schemas.values().collect();
            schemas.sort_by_key(|s| s.id);
            return Ok(schemas
                .into_iter()
                .map(|s| definition(&s.name, &s.encoding, &s.data))
                .collect());
        }
        let source = std::mem::replace(&mut self.source, Source::Memory(Cursor::new(Vec::new())));
        let bytes = source.into_bytes(&self.path)?;
        let mut found = BTreeMap::new();
        let flattener =
            mcap::read::ChunkFlattener::new(&bytes).map_err(|e| Error::corrupt(&self.path, e))?;
        for record in flattener {
            match record {
                Ok(mcap::records::Record::Schema { header, data }) => {
                    found
                        .entry(header.id)
                        .or_insert_with(|| definition(&header.name, &header.encoding, &data));
                }
                Ok(_) => {}
                Err(_) if self.truncated => break,
                Err(e) => return Err(Error::corrupt(&self.path, e)),
            }
        }
        self.source = Source::Memory(Cursor::new(bytes));
        Ok(found.into_values().collect())
    }

    /// The file's messages that pass `filter`, in log-time order.
    pub(crate) fn messages(mut self, filter: &ReadFilter) -> Result<MessageIter> {
        let summary = match self.summary.take() {
            Some(summary) if !summary.chunk_indexes.is_empty() => summary,
            Some(summary) if summary.stats.as_ref().is_some_and(|s| s.message_count == 0) => {
                return Ok(Box::new(std::iter::empty()));
            }
            _ => return self.messages_linear(filter),
        };
        let mut topics: HashMap<u16, (Arc<str>, Arc<str>)> = HashMap::new();
        for (id, channel) in &summary.channels {
            if !filter.accepts_topic(&channel.topic) {
                continue;
            }
            let type_name = channel
                .schema
                .as_ref()
                .map(|s| s.name.as_str())
                .unwrap_or_default();
            topics.insert(
                *id,
                (Arc::from(channel.topic.as_str()), Arc::from(type_name)),
            );
        }
        if topics.is_empty() {
            return Ok(Box::new(std::iter::empty()));
        }
        // File order: the log-time order (with equal times in file order) is made here,
        // from the chunk indexes (see `IndexedMessages`).
        let mut options = IndexedReaderOptions::new()
            .with_order(ReadOrder::File)
            .with_record_length_limit(self.record_limit);
        if filter.topics.is_some() {
            let names: Vec<String> = topics
                .values()
                .map(|(topic, _)| topic.to_string())
                .collect();
            options = options.include_topics(names);
        }
        if let Some(start) = filter.start_ns {
            options = options.starting_at(start);
        }
        if let Some(end) = filter.end_ns {
            options = options.ending_at(end);
        }
        let reader = match IndexedReader::new_with_options(&summary, options) {
            Ok(reader) => reader,
            // A crossed time range selects nothing.
            Err(mcap::McapError::EndBeforeStart) => return Ok(Box::new(std::iter::empty())),
            Err(e) => return Err(Error::corrupt(&self.path, e)),
        };
        let mut chunks: Vec<(u64, u64)> = Vec::with_capacity(summary.chunk_indexes.len());
        for index in &summary.chunk_indexes {
            let offset = index
                .compressed_data_offset()
                .map_err(|e| Error::corrupt(&self.path, e))?;
            chunks.push((offset, index.message_start_time));
        }
        chunks.sort_unstable();
        let mut later_start = vec![u64::MAX; chunks.len() + 1];
        for (i, &(_, start)) in chunks.iter().enumerate().rev() {
            later_start[i] = start.min(later_start[i + 1]);
        }
        Ok(Box::new(IndexedMessages {
            path: self.path,
            source: self.source,
            reader,
            topics,
            buffer: Vec::new(),
            chunk_offsets: chunks.into_iter().map(|(offset, _)| offset).collect(),
            later_start,
            unread_start: 0,
            pending: BinaryHeap::new(),
            read: 0,
            reader_done: false,
            failed: false,
        }))
    }

    /// Reads the whole file and sorts its messages (files without chunk indexes).
    fn messages_linear(self, filter: &ReadFilter) -> Result<MessageIter> {
        let bytes = self.source.into_bytes(&self.path)?;
        let stream = mcap::MessageStream::new(&bytes).map_err(|e| Error::corrupt(&self.path, e))?;
        let mut names: HashMap<u16, (Arc<str>, Arc<str>)> = HashMap::new();
        let mut messages = Vec::new();
        for message in stream {
            let message = match message {
                Ok(message) => message,
                Err(_) if self.truncated => break,
                Err(e) => return Err(Error::corrupt(&self.path, e)),
            };
            let channel = &message.channel;
            if !filter.accepts(&channel.topic, message.log_time) {
                continue;
            }
            let (topic, type_name) = names.entry(channel.id).or_insert_with(|| {
                let type_name = channel
                    .schema
                    .as_ref()
                    .map(|s| s.name.as_str())
                    .unwrap_or_default();
                (Arc::from(channel.topic.as_str()), Arc::from(type_name))
            });
            messages.push(BagMessage {
                topic: Arc::clone(topic),
                type_name: Arc::clone(type_name),
                log_time: message.log_time,
                publish_time: message.publish_time,
                sequence: message.sequence,
                data: Bytes::from(message.data.into_owned()),
            });
        }
        messages.sort_by_key(|m| m.log_time);
        Ok(Box::new(messages.into_iter().map(Ok)))
    }
}

/// A schema as a [`MessageDefinition`] (MCAP schemas carry no type hash).
fn definition(name: &str, encoding: &str, data: &[u8]) -> MessageDefinition {
    MessageDefinition {
        type_name: name.to_owned(),
        encoding: encoding.to_owned(),
        text: String::from_utf8_lossy(data).into_owned(),
        type_hash: String::new(),
    }
}

/// The key/value map of a `rosbag2` metadata record.
type Record = BTreeMap<String, String>;

/// What rosbag2 reads from a channel.
#[derive(Debug)]
struct ChannelInfo {
    id: u16,
    topic: String,
    type_name: String,
    encoding: String,
    metadata: BTreeMap<String, String>,
}

impl ChannelInfo {
    fn of(channel: &mcap::Channel<'_>) -> Self {
        Self {
            id: channel.id,
            topic: channel.topic.clone(),
            type_name: channel
                .schema
                .as_ref()
                .map(|s| s.name.clone())
                .unwrap_or_default(),
            encoding: channel.message_encoding.clone(),
            metadata: channel.metadata.clone(),
        }
    }
}

/// Message counts by channel and the log-time span.
#[derive(Debug, Default)]
struct Counts {
    per_channel: BTreeMap<u16, u64>,
    span: Option<(u64, u64)>,
}

/// Messages read chunk by chunk through the chunk indexes, in log-time order with equal
/// times in file order.
///
/// The `mcap` reader's own log-time order does not keep equal times in file order when
/// chunks overlap in time, so chunks are read in file order and their messages held until
/// no chunk still unread can hold an earlier one: a message at time `t` goes out once every
/// unread chunk starts at `t` or later (messages of later chunks at `t` come after it in the
/// file).
struct IndexedMessages {
    path: PathBuf,
    source: Source,
    reader: IndexedReader,
    topics: HashMap<u16, (Arc<str>, Arc<str>)>,
    buffer: Vec<u8>,
    /// Compressed-data offsets of all chunks, in file order.
    chunk_offsets: Vec<u64>,
    /// `later_start[i]`: the earliest message start time of chunks `i..` (`u64::MAX` past
    /// the end).
    later_start: Vec<u64>,
    /// The earliest time a message not yet read can have.
    unread_start: u64,
    /// Messages read, by log time then position in the file.
    pending: BinaryHeap<Reverse<Pending>>,
    /// Messages read so far (their position in the file).
    read: u64,
    reader_done: bool,
    failed: bool,
}

struct Pending {
    log_time: u64,
    position: u64,
    message: BagMessage,
}

impl Pending {
    fn key(&self) -> (u64, u64) {
        (self.log_time, self.position)
    }
}

impl PartialEq for Pending {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for Pending {}

impl PartialOrd for Pending {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Pending {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}

impl IndexedMessages {
    fn fail(&mut self, reason: impl ToString) -> Option<Result<BagMessage>> {
        self.failed = true;
        Some(Err(Error::corrupt(&self.path, reason)))
    }
}

impl Iterator for IndexedMessages {
    type Item = Result<BagMessage>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        loop {
            if let Some(Reverse(first)) = self.pending.peek() {
                if self.reader_done || first.log_time <= self.unread_start {
                    return self.pending.pop().map(|Reverse(p)| Ok(p.message));
                }
            }
            if self.reader_done {
                return None;
            }
            let (offset, length) = match self.reader.next_event() {
                None => {
                    self.reader_done = true;
                    continue;
                }
                Some(Err(e)) => return self.fail(e),
                Some(Ok(IndexedReadEvent::Message { header, data })) => {
                    // The reader yields only the channels asked for, but a channel the
                    // summary does not know is damage, not a message to drop.
                    let Some((topic, type_name)) = self.topics.get(&header.channel_id) else {
                        let reason = format!("message on unknown channel {}", header.channel_id);
                        return self.fail(reason);
                    };
                    let message = BagMessage {
                        topic: Arc::clone(topic),
                        type_name: Arc::clone(type_name),
                        log_time: header.log_time,
                        publish_time: header.publish_time,
                        sequence: header.sequence,
                        data: Bytes::copy_from_slice(data),
                    };
                    self.pending.push(Reverse(Pending {
                        log_time: header.log_time,
                        position: self.read,
                        message,
                    }));
                    self.read += 1;
                    continue;
                }
                Some(Ok(IndexedReadEvent::ReadChunkRequest { offset, length })) => (offset, length),
            };
            // Every chunk before this one is read: what is unread starts here.
            let Ok(chunk) = self.chunk_offsets.binary_search(&offset) else {
                return self.fail(format!("read request for unknown chunk at {offset}"));
            };
            self.unread_start = self.later_start[chunk];
            if let Err(e) = read_at(&mut self.source, offset, length, &mut self.buffer) {
                return self.fail(format!("reading chunk at {offset}: {e}"));
            }
            if let Err(e) = self.reader.insert_chunk_record_data(offset, &self.buffer) {
                return self.fail(e);
            }
        }
    }
}

/// Reads `length` bytes at `offset` into `buffer`.
fn read_at(
    source: &mut Source,
    offset: u64,
    length: usize,
    buffer: &mut Vec<u8>,
) -> std::io::Result<()> {
    source.seek(SeekFrom::Start(offset))?;
    buffer.clear();
    // `take` bounds the allocation by what the file holds, not by the length asked for.
    let read = source.by_ref().take(length as u64).read_to_end(buffer)?;
    if read < length {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!("wanted {length} bytes, the file has {read}"),
        ));
    }
    Ok(())
}

/// Reads until `buf` is full or the end; returns how much was read.
fn read_fully(source: &mut Source, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match source.read(&mut buf[filled..])? {
            0 => break,
            n => filled += n,
        }
    }
    Ok(filled)
}

/// The summary section, if the file has one.
/// Whether the file of `size` bytes ends with the MCAP magic (a complete file does).
fn ends_with_magic(source: &mut Source, size: u64) -> bool {
    let mut magic = [0u8; 8];
    size >= 16
        && source.seek(SeekFrom::Start(size - 8)).is_ok()
        && read_fully(source, &mut magic).is_ok_and(|n| n == 8)
        && magic == mcap::MAGIC
}

fn read_summary(
    source: &mut Source,
    size: u64,
    record_limit: usize,
) -> std::result::Result<Option<mcap::Summary>, String> {
    let mut reader = SummaryReader::new_with_options(
        SummaryReaderOptions::default()
            .with_file_size(size)
            .with_record_length_limit(record_limit),
    );
    while let Some(event) = reader.next_event() {
        match event.map_err(|e| e.to_string())? {
            SummaryReadEvent::ReadRequest(n) => {
                let read = source.read(reader.insert(n)).map_err(|e| e.to_string())?;
                reader.notify_read(read);
            }
            SummaryReadEvent::SeekRequest(to) => {
                let position = source.seek(to).map_err(|e| e.to_string())?;
                reader.notify_seeked(position);
            }
        }
    }
    Ok(reader.finish())
}
