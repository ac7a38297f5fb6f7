//! Reading one sqlite3 storage file (`.db3`) of a bag, with rusqlite.
//!
//! What this module promises: every schema rosbag2_storage_sqlite3 wrote is read — tables
//! `topics` (with or without the `offered_qos_profiles` and `type_description_hash`
//! columns) and `messages`, and when present `schema` (the db schema version and ROS
//! distro) and `metadata` (the bag metadata, the last row being the latest).
//! [`SqliteFile::messages`] yields messages ordered by timestamp then row id, as rosbag2
//! reads them, a page at a time. A `.db3` file has no send time nor sequence number:
//! `publish_time` is the receive timestamp and `sequence` is 0. The file is opened read
//! only, and as immutable unless a `-wal` or `-journal` file lies beside it, so reading
//! leaves the bag folder as it was; a file that is not a rosbag2 database is an
//! [`Error::Corrupt`] naming it.

use crate::error::{Error, Result};
use crate::metadata::{BagMetadata, FileInformation, TopicInformation};
use crate::qos::profiles_from_yaml;
use crate::reader::{BagMessage, MessageIter, ReadFilter};
use crate::schema::MessageDefinition;
use crate::writer::StorageId;
use bytes::Bytes;
use rusqlite::{Connection, OpenFlags, params_from_iter, types::Value};
use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Messages fetched per query.
const PAGE: i64 = 256;

/// A topic's message count and first and last timestamp.
type Counts = (u64, (u64, u64));

/// One open `.db3` file.
#[derive(Debug)]
pub(crate) struct SqliteFile {
    path: PathBuf,
    connection: Connection,
}

/// A topic row.
#[derive(Debug)]
struct TopicRow {
    id: i64,
    name: String,
    type_name: String,
    serialization_format: String,
    offered_qos_profiles: String,
    type_description_hash: String,
}

impl SqliteFile {
    /// Opens `path` read only (zstd-decompressing it into memory first when `zstd`, rosbag2's
    /// file compression) and checks it has rosbag2's tables.
    pub(crate) fn open(path: &Path, zstd: bool) -> Result<Self> {
        if !path.is_file() {
            return Err(Error::MissingFile {
                path: path.to_owned(),
            });
        }
        let connection = if zstd {
            let bytes =
                zstd::decode_all(std::fs::File::open(path).map_err(|e| Error::io(path, e))?)
                    .map_err(|e| Error::corrupt(path, format!("zstd decompression failed: {e}")))?;
            let mut connection =
                Connection::open_in_memory().map_err(|e| Error::sqlite(path, e))?;
            connection
                .deserialize_read_exact(rusqlite::MAIN_DB, &bytes[..], bytes.len(), true)
                .map_err(|e| Error::corrupt(path, e))?;
            connection
        } else {
            let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
            match immutable_uri(path) {
                Some(uri) => Connection::open_with_flags(uri, flags | OpenFlags::SQLITE_OPEN_URI),
                None => Connection::open_with_flags(path, flags),
            }
            .map_err(|e| Error::sqlite(path, e))?
        };
        let file = Self {
            path: path.to_owned(),
            connection,
        };
        // The first query is where SQLite finds out a file is not a database.
        let tables = file.tables().map_err(|e| Error::corrupt(path, e))?;
        if !(tables.iter().any(|t| t == "topics") && tables.iter().any(|t| t == "messages")) {
            return Err(Error::corrupt(
                path,
                "not a rosbag2 database (no 'topics' and 'messages' tables)",
            ));
        }
        Ok(file)
    }

    fn tables(&self) -> rusqlite::Result<Vec<String>> {
        let mut statement = self
            .connection
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")?;
        statement.query_map([], |row| row.get(0))?.collect()
    }

    fn columns(&self, table: &str) -> rusqlite::Result<Vec<String>> {
        let mut statement = self
            .connection
            .prepare(&format!("PRAGMA table_info({table})"))?;
        statement.query_map([], |row| row.get(1))?.collect()
    }

    fn topics(&self) -> Result<Vec<TopicRow>> {
        let columns = self
            .columns("topics")
            .map_err(|e| Error::sqlite(&self.path, e))?;
        let has = |c: &str| columns.iter().any(|n| n == c);
        let optional = |c: &str| {
            if has(c) {
                c.to_owned()
            } else {
                "''".to_owned()
            }
        };
        let query = format!(
            "SELECT id, name, type, serialization_format, {}, {} FROM topics ORDER BY id",
            optional("offered_qos_profiles"),
            optional("type_description_hash"),
        );
        let run = || -> rusqlite::Result<Vec<TopicRow>> {
            let mut statement = self.connection.prepare(&query)?;
            statement
                .query_map([], |row| {
                    Ok(TopicRow {
                        id: row.get(0)?,
                        name: row.get(1)?,
                        type_name: row.get(2)?,
                        serialization_format: row.get(3)?,
                        offered_qos_profiles: row.get(4)?,
                        type_description_hash: row.get(5)?,
                    })
                })?
                .collect()
        };
        run().map_err(|e| Error::sqlite(&self.path, e))
    }

    /// The file described as rosbag2's sqlite3 plugin describes it: the latest row of the
    /// `metadata` table (when there is one) with topics, counts and times from the tables.
    pub(crate) fn metadata(&self) -> Result<BagMetadata> {
        let tables = self.tables().map_err(|e| Error::sqlite(&self.path, e))?;
        let has_table = |t: &str| tables.iter().any(|n| n == t);
        let mut base = BagMetadata::default();
        if has_table("metadata") {
            let latest: Option<String> = self
                .connection
                .query_row(
                    "SELECT metadata FROM metadata ORDER BY id DESC LIMIT 1",
                    [],
                    |row| row.get(0),
                )
                .map(Some)
                .or_else(|e| match e {
                    rusqlite::Error::QueryReturnedNoRows => Ok(None),
                    e => Err(Error::sqlite(&self.path, e)),
                })?;
            if let Some(text) = latest {
                match BagMetadata::from_yaml(&text) {
                    Ok(m) => base = m,
                    Err(e) => log::warn!(
                        "kairos-bag: ignoring unreadable metadata row in {}: {e}",
                        self.path.display()
                    ),
                }
            }
        }
        if has_table("schema") {
            let distro: rusqlite::Result<String> =
                self.connection
                    .query_row("SELECT ros_distro FROM schema LIMIT 1", [], |row| {
                        row.get(0)
                    });
            if let Ok(distro) = distro {
                base.ros_distro = distro;
            }
        }
        let counts = self.counts()?;
        let mut topics = Vec::new();
        for row in self.topics()? {
            let offered_qos_profiles =
                profiles_from_yaml(&row.offered_qos_profiles).map_err(|e| {
                    Error::metadata(
                        &self.path,
                        format!("offered_qos_profiles of topic '{}': {e}", row.name),
                    )
                })?;
            let (count, _) = counts.get(&row.id).copied().unwrap_or((0, (0, 0)));
            topics.push(TopicInformation {
                name: row.name,
                type_name: row.type_name,
                serialization_format: row.serialization_format,
                offered_qos_profiles,
                type_description_hash: row.type_description_hash,
                message_count: count,
            });
        }
        let message_count = counts.values().map(|(c, _)| c).sum();
        let span = counts
            .values()
            .map(|(_, span)| *span)
            .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)))
            .unwrap_or((0, 0));
        let file_name = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(BagMetadata {
            storage_identifier: StorageId::Sqlite3.as_str().to_owned(),
            relative_file_paths: vec![file_name.clone()],
            files: vec![FileInformation {
                path: file_name,
                starting_time_ns: span.0,
                duration_ns: span.1.saturating_sub(span.0),
                message_count,
            }],
            duration_ns: span.1.saturating_sub(span.0),
            starting_time_ns: span.0,
            message_count,
            topics,
            ..base
        })
    }

    /// The rows of the `message_definitions` table in insertion order (none before
    /// rosbag2's db schema 4, which added the table).
    pub(crate) fn definitions(&self) -> Result<Vec<MessageDefinition>> {
        let tables = self.tables().map_err(|e| Error::sqlite(&self.path, e))?;
        if !tables.iter().any(|t| t == "message_definitions") {
            return Ok(Vec::new());
        }
        let run = || -> rusqlite::Result<Vec<MessageDefinition>> {
            let mut statement = self.connection.prepare(
                "SELECT topic_type, encoding, encoded_message_definition, type_description_hash \
                 FROM message_definitions ORDER BY id",
            )?;
            statement
                .query_map([], |row| {
                    Ok(MessageDefinition {
                        type_name: row.get(0)?,
                        encoding: row.get(1)?,
                        text: row.get(2)?,
                        type_hash: row.get(3)?,
                    })
                })?
                .collect()
        };
        run().map_err(|e| Error::sqlite(&self.path, e))
    }

    /// Per topic id: message count and first and last timestamp.
    fn counts(&self) -> Result<HashMap<i64, Counts>> {
        let run = || -> rusqlite::Result<HashMap<i64, Counts>> {
            let mut statement = self.connection.prepare(
                "SELECT topic_id, COUNT(*), MIN(timestamp), MAX(timestamp) \
                 FROM messages GROUP BY topic_id",
            )?;
            statement
                .query_map([], |row| {
                    let count: i64 = row.get(1)?;
                    let min: i64 = row.get(2)?;
                    let max: i64 = row.get(3)?;
                    Ok((row.get(0)?, (to_u64(count), (to_u64(min), to_u64(max)))))
                })?
                .collect()
        };
        run().map_err(|e| Error::sqlite(&self.path, e))
    }

    /// The messages that pass `filter`, by timestamp then row id.
    pub(crate) fn messages(self, filter: &ReadFilter) -> Result<MessageIter> {
        let mut topics = HashMap::new();
        for row in self.topics()? {
            if filter.accepts_topic(&row.name) {
                topics.insert(row.id, (Arc::from(row.name), Arc::from(row.type_name)));
            }
        }
        if topics.is_empty() {
            return Ok(Box::new(std::iter::empty()));
        }
        let clamp = |t: u64| i64::try_from(t).unwrap_or(i64::MAX);
        let mut query = String::from(
            "SELECT id, topic_id, timestamp, data FROM messages \
             WHERE (timestamp > ?1 OR (timestamp = ?1 AND id > ?2)) \
             AND timestamp >= ?3 AND timestamp <= ?4",
        );
        if filter.topics.is_some() {
            let ids: Vec<String> = topics.keys().map(i64::to_string).collect();
            query.push_str(&format!(" AND topic_id IN ({})", ids.join(", ")));
        }
        query.push_str(&format!(" ORDER BY timestamp, id LIMIT {PAGE}"));
        Ok(Box::new(SqliteMessages {
            file: self,
            query,
            topics,
            start: filter.start_ns.map_or(i64::MIN, clamp),
            end: filter.end_ns.map_or(i64::MAX, clamp),
            after: (i64::MIN, i64::MIN),
            page: VecDeque::new(),
            done: false,
        }))
    }
}

/// A `file:` URI opening `path` as immutable, when nothing but the file holds its data: a
/// read-only connection to a WAL-mode database (rosbag2's `resilient` preset) would
/// otherwise leave `-wal` and `-shm` files in the bag folder. With a `-wal` or `-journal`
/// file beside it (a recording in progress or interrupted), `None`: SQLite must read
/// those too.
fn immutable_uri(path: &Path) -> Option<String> {
    let mut side = path.as_os_str().to_owned();
    side.push("-wal");
    let mut journal = path.as_os_str().to_owned();
    journal.push("-journal");
    if Path::new(&side).exists() || Path::new(&journal).exists() {
        return None;
    }
    let absolute = std::path::absolute(path).ok()?;
    let text = absolute.to_str()?;
    let mut uri = String::from("file:");
    for c in text.chars() {
        match c {
            '%' => uri.push_str("%25"),
            '?' => uri.push_str("%3f"),
            '#' => uri.push_str("%23"),
            c => uri.push(c),
        }
    }
    uri.push_str("?immutable=1");
    Some(uri)
}

fn to_u64(t: i64) -> u64 {
    u64::try_from(t).unwrap_or(0)
}

/// A row of `messages`.
type MessageRow = (i64, i64, i64, Vec<u8>);

/// Messages read a page at a time, each page after the last row of the one before.
struct SqliteMessages {
    file: SqliteFile,
    query: String,
    topics: HashMap<i64, (Arc<str>, Arc<str>)>,
    start: i64,
    end: i64,
    /// Timestamp and id of the last row read.
    after: (i64, i64),
    page: VecDeque<MessageRow>,
    done: bool,
}

impl SqliteMessages {
    fn fetch(&mut self) -> rusqlite::Result<()> {
        let mut statement = self.file.connection.prepare_cached(&self.query)?;
        let parameters = [self.after.0, self.after.1, self.start, self.end].map(Value::Integer);
        let rows = statement.query_map(params_from_iter(parameters), |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
        })?;
        for row in rows {
            self.page.push_back(row?);
        }
        Ok(())
    }
}

impl Iterator for SqliteMessages {
    type Item = Result<BagMessage>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.page.is_empty() && !self.done {
            if let Err(e) = self.fetch() {
                self.done = true;
                return Some(Err(Error::sqlite(&self.file.path, e)));
            }
            if (self.page.len() as i64) < PAGE {
                self.done = true;
            }
        }
        let (id, topic_id, timestamp, data) = self.page.pop_front()?;
        self.after = (timestamp, id);
        let Some((topic, type_name)) = self.topics.get(&topic_id) else {
            self.done = true;
            self.page.clear();
            return Some(Err(Error::corrupt(
                &self.file.path,
                format!("message {id} refers to topic id {topic_id}, which is not in 'topics'"),
            )));
        };
        let time = to_u64(timestamp);
        Some(Ok(BagMessage {
            topic: Arc::clone(topic),
            type_name: Arc::clone(type_name),
            log_time: time,
            publish_time: time,
            sequence: 0,
            data: Bytes::from(data),
        }))
    }
}
