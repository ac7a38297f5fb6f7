//! The trace description a CTF 1.8 `metadata` file holds: the trace's byte order and
//! packet header, its clocks and environment, and the stream and event classes with the
//! types of every field, parsed from TSDL (plain text or packetized).

mod lexer;
mod packetized;
mod parser;
pub mod types;

use std::collections::HashMap;
use std::sync::Arc;

pub use packetized::{MetadataText, read_metadata_text};
use types::{ByteOrder, FieldType};

/// What is wrong with a metadata text, and on which line when the fault is on one.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}{message}", line.map(|line| format!("line {line}: ")).unwrap_or_default())]
pub struct MetadataError {
    /// The line (from 1) of the TSDL text, or `None` when the fault is not on a line
    /// (the file's size, its packet framing).
    pub line: Option<u32>,
    /// What is wrong.
    pub message: String,
}

impl MetadataError {
    /// A fault on `line` of the TSDL text.
    pub(crate) fn new(line: u32, message: impl Into<String>) -> Self {
        Self {
            line: Some(line),
            message: message.into(),
        }
    }

    /// A fault of the metadata file as a whole, not of one of its lines.
    pub(crate) fn whole(message: impl Into<String>) -> Self {
        Self {
            line: None,
            message: message.into(),
        }
    }
}

/// A clock class: its frequency and its offset from the Unix epoch.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Clock {
    /// The clock's name, as events' integer fields refer to it.
    pub name: String,
    /// The tracer's description of the clock.
    pub description: Option<String>,
    /// The clock's UUID, when the tracer gave one.
    pub uuid: Option<String>,
    /// Cycles per second, never zero.
    pub freq: u64,
    /// Seconds from the Unix epoch to the clock's zero.
    pub offset_s: i64,
    /// In cycles, added to `offset_s`.
    pub offset: i64,
    /// Whether the clock is absolute (comparable across traces), as the tracer declared.
    pub absolute: bool,
}

impl Clock {
    /// Nanoseconds from the Unix epoch of a cycle count of this clock, clamped to the
    /// 64-bit range (see [`Clock::to_ns_checked`] to learn that it was).
    pub fn to_ns(&self, cycles: u64) -> i64 {
        match self.to_ns_checked(cycles) {
            Ok(ns) => ns,
            Err(clamped) => clamped,
        }
    }

    /// Nanoseconds from the Unix epoch of a cycle count, computed as CTF 1.8 and
    /// babeltrace2 do: the offset in cycles beyond whole seconds moves into `offset_s`,
    /// then the offset's remaining cycles and the count are each converted to whole
    /// nanoseconds (rounded down) and added to `offset_s` seconds. Converting the sum of
    /// both cycle counts at once would round differently (1 ns later on about half the
    /// events of a 3.29 GHz clock) and reorder events of different streams. Integer
    /// arithmetic throughout, so no drift however large the count.
    ///
    /// `Err` holds the clamped value when the result does not fit in 64-bit
    /// nanoseconds (an absurd offset): the caller warns, naming the clock.
    pub fn to_ns_checked(&self, cycles: u64) -> Result<i64, i64> {
        const NS: i128 = 1_000_000_000;
        let ns = if self.freq == 1_000_000_000 {
            i128::from(self.offset_s) * NS + i128::from(self.offset) + i128::from(cycles)
        } else {
            let freq = i128::from(self.freq.max(1));
            let offset = i128::from(self.offset);
            let seconds = i128::from(self.offset_s) + offset.div_euclid(freq);
            let rest = offset.rem_euclid(freq);
            seconds * NS + rest * NS / freq + i128::from(cycles) * NS / freq
        };
        i64::try_from(ns).map_err(|_| ns.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64)
    }
}

/// An `env` entry's value.
#[derive(Debug, Clone, PartialEq)]
pub enum EnvValue {
    /// An integer.
    Int(i64),
    /// A string.
    Str(String),
}

/// An event class: the name and the types of an event's own context and payload.
#[derive(Debug, Clone, PartialEq)]
pub struct EventClass {
    /// The id events of its stream class carry in their header.
    pub id: u64,
    /// The event's name, e.g. `ros2:rcl_publish`.
    pub name: Arc<str>,
    /// The id of its stream class.
    pub stream_id: u64,
    /// The tracer's log level for the event, when declared.
    pub loglevel: Option<i64>,
    /// The type of the event's own context, when it has one.
    pub context: Option<FieldType>,
    /// The type of the payload, when it has one.
    pub payload: Option<FieldType>,
}

/// A stream class: the types shared by every packet and event of its streams.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamClass {
    /// The id the packet header's `stream_id` names it by.
    pub id: u64,
    /// The type of each packet's context (sizes, timestamps, discarded events).
    pub packet_context: Option<FieldType>,
    /// The type of each event's header (its class id and timestamp).
    pub event_header: Option<FieldType>,
    /// The type of the context every event of the stream carries.
    pub event_context: Option<FieldType>,
    /// Its event classes by id.
    pub events: HashMap<u64, Arc<EventClass>>,
}

/// A parsed metadata file.
#[derive(Debug, Clone, PartialEq)]
pub struct Metadata {
    /// The CTF major version (1).
    pub major: u64,
    /// The CTF minor version (8).
    pub minor: u64,
    /// The trace's UUID, which packet headers repeat, when it has one.
    pub uuid: Option<String>,
    /// The trace's byte order, which every `native` type was resolved to.
    pub byte_order: ByteOrder,
    /// The type of each packet's header (magic, UUID, stream id).
    pub packet_header: Option<FieldType>,
    /// The `env` block (hostname, procname, tracer version ...), in declaration order.
    pub env: Vec<(String, EnvValue)>,
    /// The clock classes.
    pub clocks: Vec<Clock>,
    /// The stream classes.
    pub streams: Vec<StreamClass>,
}

impl Metadata {
    /// Parses TSDL text.
    pub fn parse(text: &str) -> Result<Self, MetadataError> {
        parser::parse(text)
    }

    /// The stream class with id `id`.
    pub fn stream(&self, id: u64) -> Option<&StreamClass> {
        self.streams.iter().find(|s| s.id == id)
    }

    /// The `env` entry `key` when it is a string.
    pub fn env_str(&self, key: &str) -> Option<&str> {
        self.env.iter().find_map(|(k, v)| match v {
            EnvValue::Str(s) if k == key => Some(s.as_str()),
            _ => None,
        })
    }
}
