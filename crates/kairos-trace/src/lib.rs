//! The kairos trace format: the event schema shared by the runtime's tracepoints and the
//! analyzer, a CTF 1.8 writer and a CTF 1.8 reader.
//!
//! Not built yet: this crate is a seam that the tracing and trace-analysis issues fill.

pub mod schema;
pub mod tp;
pub mod write;

pub use write::Session;
