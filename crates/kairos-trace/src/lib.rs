//! The kairos trace format: the event schema shared by the runtime's tracepoints and the
//! analyzer, a CTF 1.8 writer and a CTF 1.8 reader.

#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod read;
pub mod schema;
pub mod tp;
pub mod write;

pub use write::Session;
