//! A pure-Rust reader of CTF 1.8 traces: LTTng 2.x (kernel and user space, including
//! ros2_tracing and ROS 1 tracetools traces) and kairos traces.
//!
//! [`TraceSet::open`] finds every trace under a folder and parses its metadata;
//! [`TraceSet::events`] yields their events merged by timestamp. The reader streams:
//! it holds one packet per stream, so memory does not grow with the trace's length.
//! Damage never panics: a damaged stream yields its events up to the damage, then a
//! [`ReadError::Damaged`] naming the file, byte offset and what was expected, and the
//! other streams go on. Discarded events and timestamps going backwards are reported as
//! [`Notice`]s while reading continues.

mod bits;
mod decode;
mod error;
mod event;
mod lttng_header;
mod merge;
pub mod metadata;
mod notice;
mod plan;
mod select;
mod stream;
pub mod text;
mod tournament;
mod trace;
mod value;

pub use bits::DecodeError;
pub use error::ReadError;
pub use event::{Event, EventRef, Trace};
pub use merge::Events;
pub use metadata::{Metadata, MetadataError, MetadataFault};
pub use notice::Notice;
pub use select::Selection;
pub use trace::TraceSet;
pub use value::Value;

/// Decodes one packet of a stream described by `metadata` from `bytes`, for fuzzing and
/// robustness tests: every event until the end or the first error. Not part of the API.
#[doc(hidden)]
pub fn decode_stream_bytes(metadata: &Metadata, bytes: &[u8]) -> (usize, Option<ReadError>) {
    stream::decode_bytes(metadata, bytes)
}
