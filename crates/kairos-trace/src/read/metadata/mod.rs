//! The trace description a CTF 1.8 `metadata` file holds: the trace's byte order and
//! packet header, its clocks and environment, and the stream and event classes with the
//! types of every field, parsed from TSDL (plain text or packetized).

mod lexer;
mod packetized;
mod parser;
pub mod types;
mod validate;

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
    /// What kind of fault it is, for callers that act on it.
    pub fault: MetadataFault,
    /// What is wrong, and where.
    pub message: String,
}

/// The kind of a [`MetadataError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum MetadataFault {
    /// Any other fault: syntax, an unknown type, an absurd size, a missing declaration.
    Invalid,
    /// A sequence's length names a field that is not an unsigned integer (an unsigned
    /// integer or an enumeration of one).
    SequenceLengthNotUnsigned,
    /// A variant's tag names a field that is not an enumeration.
    VariantTagNotEnum,
}

impl MetadataError {
    /// A fault on `line` of the TSDL text.
    pub(crate) fn new(line: u32, message: impl Into<String>) -> Self {
        Self::of(Some(line), MetadataFault::Invalid, message)
    }

    /// A fault of the metadata file as a whole, not of one of its lines.
    pub(crate) fn whole(message: impl Into<String>) -> Self {
        Self::of(None, MetadataFault::Invalid, message)
    }

    /// A fault of kind `fault`, on `line` when it is known.
    pub(crate) fn of(line: Option<u32>, fault: MetadataFault, message: impl Into<String>) -> Self {
        Self {
            line,
            fault,
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

    /// Nanoseconds from the Unix epoch of a cycle count, computed exactly as
    /// babeltrace2 computes it, so that timestamps and the merge order they give agree
    /// with it to the nanosecond: the offset's whole seconds of cycles move into
    /// `offset_s`; then the offset's remaining cycles and the count are each converted
    /// to nanoseconds on their own, as `1e9 * cycles / freq` in 64-bit floating point
    /// truncated toward zero (exact at 1 GHz), and added to `offset_s` seconds.
    ///
    /// The floating-point division is babeltrace2's: once `1e9 * cycles` passes 2^53
    /// (about 9 million cycles) the product is rounded, and the result can be 1 ns off
    /// the exact quotient (`cycles * 10^9 / freq` in integers), hundreds of ns for
    /// counts near 2^60; converting offset and count together would round differently
    /// again. The reader's timestamps follow babeltrace2 rather than the exact
    /// quotient, as the dump is defined to match it.
    ///
    /// `Err` holds the clamped value when the result does not fit in 64-bit
    /// nanoseconds (an absurd offset): the caller warns, naming the clock.
    pub fn to_ns_checked(&self, cycles: u64) -> Result<i64, i64> {
        const NS: i128 = 1_000_000_000;
        let freq = self.freq.max(1);
        let offset = i128::from(self.offset);
        let wide = i128::from(freq);
        let seconds = i128::from(self.offset_s) + offset.div_euclid(wide);
        let rest = offset.rem_euclid(wide) as u64;
        let ns = seconds * NS
            + i128::from(cycles_to_ns(freq, rest))
            + i128::from(cycles_to_ns(freq, cycles));
        i64::try_from(ns).map_err(|_| ns.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64)
    }
}

/// Nanoseconds in `cycles` of a clock of `freq` Hz, as babeltrace2 computes them: the
/// count itself at 1 GHz, else `1e9 * cycles / freq` in 64-bit floating point,
/// truncated toward zero (saturating at `u64::MAX`).
pub fn cycles_to_ns(freq: u64, cycles: u64) -> u64 {
    if freq == 1_000_000_000 {
        cycles
    } else {
        // `as` truncates toward zero and saturates, as babeltrace2's cast after its
        // overflow check does.
        (1e9 * cycles as f64 / freq as f64) as u64
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
