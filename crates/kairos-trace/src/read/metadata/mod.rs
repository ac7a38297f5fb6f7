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

/// What is wrong with a metadata text, and on which line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct MetadataError {
    pub line: u32,
    pub message: String,
}

impl MetadataError {
    pub(crate) fn new(line: u32, message: impl Into<String>) -> Self {
        Self {
            line,
            message: message.into(),
        }
    }
}

/// A clock class: its frequency and its offset from the Unix epoch.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Clock {
    pub name: String,
    pub description: Option<String>,
    pub uuid: Option<String>,
    /// Cycles per second, never zero.
    pub freq: u64,
    pub offset_s: i64,
    /// In cycles, added to `offset_s`.
    pub offset: i64,
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
    Int(i64),
    Str(String),
}

/// An event class: the name and the types of an event's own context and payload.
#[derive(Debug, Clone, PartialEq)]
pub struct EventClass {
    pub id: u64,
    pub name: Arc<str>,
    pub stream_id: u64,
    pub loglevel: Option<i64>,
    pub context: Option<FieldType>,
    pub payload: Option<FieldType>,
}

/// A stream class: the types shared by every packet and event of its streams.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamClass {
    pub id: u64,
    pub packet_context: Option<FieldType>,
    pub event_header: Option<FieldType>,
    pub event_context: Option<FieldType>,
    pub events: HashMap<u64, Arc<EventClass>>,
}

/// A parsed metadata file.
#[derive(Debug, Clone, PartialEq)]
pub struct Metadata {
    pub major: u64,
    pub minor: u64,
    pub uuid: Option<String>,
    pub byte_order: ByteOrder,
    pub packet_header: Option<FieldType>,
    pub env: Vec<(String, EnvValue)>,
    pub clocks: Vec<Clock>,
    pub streams: Vec<StreamClass>,
}

impl Metadata {
    /// Parses TSDL text.
    pub fn parse(text: &str) -> Result<Self, MetadataError> {
        parser::parse(text)
    }

    pub fn stream(&self, id: u64) -> Option<&StreamClass> {
        self.streams.iter().find(|s| s.id == id)
    }

    pub fn env_str(&self, key: &str) -> Option<&str> {
        self.env.iter().find_map(|(k, v)| match v {
            EnvValue::Str(s) if k == key => Some(s.as_str()),
            _ => None,
        })
    }
}
