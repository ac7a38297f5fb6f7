//! Tracing the runtime: sessions and the glue between kairos's types and the tracepoints
//! of [`kairos_trace::tp`].
//!
//! Start a session from code with [`Session::start`], or for any kairos program by setting
//! `KAIROS_TRACE=<dir>` and calling [`init_from_env`] at start (the `kairos` binary does):
//! each process then traces into its own folder `<dir>/<procname>-<pid>-<time>`, so a
//! program and the children it starts are all traced; `babeltrace2 <dir>` and
//! `kairos trace ... <dir>` read them together.
//! While no session runs, every tracepoint costs one relaxed atomic load.

pub use kairos_trace::Session;
pub use kairos_trace::tp;

use crate::time::ClockKind;
use std::sync::atomic::{AtomicU64, Ordering};

/// Starts a session when `KAIROS_TRACE=<dir>` is set; keep the returned session alive
/// for as long as the program should be traced (dropping it flushes and stops).
pub fn init_from_env() -> Result<Option<Session>, kairos_trace::write::Error> {
    Session::from_env()
}

/// A process-unique handle for a traced object (timer, node, publisher, ...).
pub(crate) fn next_handle() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

pub(crate) fn clock(kind: ClockKind) -> kairos_trace::schema::ClockKind {
    match kind {
        ClockKind::System => kairos_trace::schema::ClockKind::System,
        ClockKind::Steady => kairos_trace::schema::ClockKind::Steady,
        ClockKind::Sim => kairos_trace::schema::ClockKind::Sim,
    }
}
