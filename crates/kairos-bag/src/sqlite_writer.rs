//! Writing one sqlite3 storage file (`.db3`) of a bag, with rusqlite.
//!
//! What this module promises: a [`SqliteOut`] writes what rosbag2_storage_sqlite3 writes
//! at its db schema version 4 (rosbag2 since Iron): tables `schema` (version and ROS
//! distro), `metadata` (one row, the bag's metadata when the file was closed), `topics`
//! (with `offered_qos_profiles` and `type_description_hash`), `message_definitions` (each
//! type once) and `messages` (receive timestamp, topic id, data) with rosbag2's
//! `timestamp_idx` index. A `.db3` file has no column for the send time or sequence
//! number, as in rosbag2.
//!
//! Messages are written in transactions of [`BATCH`] rows (rosbag2 commits a cache's worth
//! at a time), with the pragmas of rosbag2's `resilient` preset (`journal_mode=WAL`,
//! `synchronous=NORMAL`): a writer killed loses at most the batch it was filling, and the
//! file stays readable; closing checkpoints the WAL into the file and goes back to a
//! rollback journal, so a closed `.db3` is one self-contained file. (rosbag2's default, `journal_mode=MEMORY` and `synchronous=OFF`,
//! is about as fast here but can leave a half-written page behind a killed writer.)

use crate::error::{Error, Result};
use crate::qos::profiles_to_yaml;
use crate::schema::encoding_of;
use crate::writer::TopicInfo;
use rusqlite::{Connection, params};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The db schema version written (rosbag2's `kDBSchemaVersion_`).
const SCHEMA_VERSION: i64 = 4;

/// Messages per transaction.
const BATCH: u32 = 1024;

/// The bytes a message row costs beyond its data (row header, index entry), for the
/// file size a split compares against.
const ROW_OVERHEAD: u64 = 40;

/// One `.db3` file being written.
#[derive(Debug)]
pub(crate) struct SqliteOut {
    path: PathBuf,
    connection: Connection,
    /// The `topics` row id of each topic, by topic index.
    topic_ids: Vec<i64>,
    /// The types whose definition is already in `message_definitions`.
    defined: HashSet<String>,
    /// Rows written in the open transaction.
    in_batch: u32,
    /// The file's size: SQLite's pages at creation, then what each row adds.
    size: u64,
}

impl SqliteOut {
    /// Creates `path` (which must not exist) with rosbag2's tables.
    pub(crate) fn create(path: &Path, ros_distro: &str) -> Result<Self> {
        if path.exists() {
            return Err(Error::io(
                path,
                std::io::Error::from(std::io::ErrorKind::AlreadyExists),
            ));
        }
        let connection = Connection::open(path).map_err(|e| Error::sqlite(path, e))?;
        let create = || -> rusqlite::Result<u64> {
            connection.pragma_update(None, "journal_mode", "WAL")?;
            connection.pragma_update(None, "synchronous", "NORMAL")?;
            connection.execute_batch(
                "CREATE TABLE schema(schema_version INTEGER PRIMARY KEY, ros_distro TEXT NOT NULL);
                 CREATE TABLE metadata(id INTEGER PRIMARY KEY, metadata_version INTEGER NOT NULL, metadata TEXT NOT NULL);
                 CREATE TABLE topics(id INTEGER PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL, serialization_format TEXT NOT NULL, offered_qos_profiles TEXT NOT NULL, type_description_hash TEXT NOT NULL);
                 CREATE TABLE message_definitions(id INTEGER PRIMARY KEY, topic_type TEXT NOT NULL, encoding TEXT NOT NULL, encoded_message_definition TEXT NOT NULL, type_description_hash TEXT NOT NULL);
                 CREATE TABLE messages(id INTEGER PRIMARY KEY, topic_id INTEGER NOT NULL, timestamp INTEGER NOT NULL, data BLOB NOT NULL);
                 CREATE INDEX timestamp_idx ON messages (timestamp ASC);",
            )?;
            connection.execute(
                "INSERT INTO schema (schema_version, ros_distro) VALUES (?1, ?2)",
                params![SCHEMA_VERSION, ros_distro],
            )?;
            let pages: u64 = connection.query_row("PRAGMA page_count", [], |row| row.get(0))?;
            let page_size: u64 = connection.query_row("PRAGMA page_size", [], |row| row.get(0))?;
            connection.execute_batch("BEGIN")?;
            Ok(pages * page_size)
        };
        let size = create().map_err(|e| Error::sqlite(path, e))?;
        Ok(Self {
            path: path.to_owned(),
            connection,
            topic_ids: Vec::new(),
            defined: HashSet::new(),
            in_batch: 0,
            size,
        })
    }

    /// The file's path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The file's size so far, in bytes (estimated between transactions).
    pub(crate) fn size(&self) -> u64 {
        self.size
    }

    /// Adds a `topics` row for `topic` (the next topic index) and its definition, once per
    /// type.
    pub(crate) fn add_topic(&mut self, topic: &TopicInfo) -> Result<()> {
        let add = || -> rusqlite::Result<i64> {
            self.connection.execute(
                "INSERT INTO topics (name, type, serialization_format, offered_qos_profiles, type_description_hash) \
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![
                    topic.name,
                    topic.type_name,
                    topic.serialization_format,
                    profiles_to_yaml(&topic.qos_profiles),
                    topic.type_hash
                ],
            )?;
            let id = self.connection.last_insert_rowid();
            if !self.defined.contains(&topic.type_name) {
                self.connection.execute(
                    "INSERT INTO message_definitions (topic_type, encoding, encoded_message_definition, type_description_hash) \
                     VALUES (?1, ?2, ?3, ?4)",
                    params![
                        topic.type_name,
                        encoding_of(&topic.schema_text),
                        topic.schema_text,
                        topic.type_hash
                    ],
                )?;
            }
            Ok(id)
        };
        let id = add().map_err(|e| Error::sqlite(&self.path, e))?;
        self.defined.insert(topic.type_name.clone());
        self.topic_ids.push(id);
        self.size += ROW_OVERHEAD * 2 + topic.schema_text.len() as u64;
        Ok(())
    }

    /// Writes one message of the topic at `index`, received at `timestamp` ns.
    pub(crate) fn write(&mut self, index: usize, timestamp: u64, data: &[u8]) -> Result<()> {
        let topic_id = self.topic_ids[index];
        let timestamp = i64::try_from(timestamp).map_err(|_| {
            Error::InvalidOption(format!(
                "timestamp {timestamp} ns is past what a .db3 file stores (i64 nanoseconds)"
            ))
        })?;
        let write = || -> rusqlite::Result<()> {
            self.connection
                .prepare_cached(
                    "INSERT INTO messages (timestamp, topic_id, data) VALUES (?1, ?2, ?3)",
                )?
                .execute(params![timestamp, topic_id, data])?;
            Ok(())
        };
        write().map_err(|e| Error::sqlite(&self.path, e))?;
        self.size += data.len() as u64 + ROW_OVERHEAD;
        self.in_batch += 1;
        if self.in_batch >= BATCH {
            self.in_batch = 0;
            self.connection
                .execute_batch("COMMIT; BEGIN")
                .map_err(|e| Error::sqlite(&self.path, e))?;
        }
        Ok(())
    }

    /// Stores the bag's metadata (`serialized`, the YAML rosbag2 stores, of `version`)
    /// and commits.
    pub(crate) fn close(self, version: u32, serialized: &str) -> Result<()> {
        let close = || -> rusqlite::Result<()> {
            self.connection.execute(
                "INSERT INTO metadata (metadata_version, metadata) VALUES (?1, ?2)",
                params![version, serialized],
            )?;
            self.connection.execute_batch("COMMIT")?;
            // Back to a rollback journal: the closed file is then one self-contained
            // file, as rosbag2 leaves it (readers that open it read-only or from memory,
            // as a file-compressed bag is read, cannot use a WAL).
            self.connection
                .pragma_update(None, "journal_mode", "DELETE")
        };
        close().map_err(|e| Error::sqlite(&self.path, e))?;
        self.connection
            .close()
            .map_err(|(_, e)| Error::sqlite(&self.path, e))
    }
}
