//! kairos: the runtime robot code links.
//!
//! - [`time`]: clocks, sleeps, timers and rates that are never early and never hang.
//! - [`graph`]: nodes, topics, services and clients, type checked, nothing lost silently.
//! - [`exec`]: executors and callback groups that never deadlock silently.
//! - [`thread`]: threads the runtime owns, stopped with a deadline and a report.
//! - [`trace`]: trace sessions (CTF) and the runtime's tracepoints.
//!
//! The invariants every module keeps are in `ARCHITECTURE.md`; each module's docs say
//! which of them it is responsible for and how.

pub mod exec;
pub mod graph;
mod loom;
pub mod thread;
pub mod time;
pub mod trace;
