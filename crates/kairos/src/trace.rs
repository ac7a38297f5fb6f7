//! Tracing the runtime: sessions and the glue between kairos's types and the tracepoints
//! of [`kairos_trace::tp`].
//!
//! Two ways to trace:
//! - **Any kairos program**: set `KAIROS_TRACE=<dir>`. On the runtime's first use (the
//!   first [`Context`](crate::graph::Context), hence the first node) the process starts
//!   tracing into its own folder `<dir>/<procname>-<pid>-<time>`, and the trace is
//!   stopped and written whole when the process exits (or flushed when Ctrl-C shuts it
//!   down, see [`crate::signal`]). A program and the children it starts are all traced;
//!   `babeltrace2 <dir>` and `kairos trace ... <dir>` read them together. A program that
//!   wants the session in its own hands calls [`init_from_env`] before its first node.
//! - **From code**: [`Session::start`] (or [`Session::start_with`] and a
//!   [`SessionConfig`]) records into one directory until the session is stopped or
//!   dropped. While `KAIROS_TRACE` traces the process, another session cannot start
//!   ([`Error::AlreadyActive`]).
//!
//! While no session runs, every tracepoint costs one relaxed atomic load.
//!
//! ```
//! let dir = tempfile::tempdir()?;
//! let session = kairos::trace::Session::start(dir.path().join("trace"))?;
//! let node = kairos::graph::Node::new_in(&kairos::graph::Context::new(), "traced", "/")?;
//! let stats: kairos::trace::Stats = session.stop()?;
//! assert!(stats.events_written >= 1, "the node's creation is traced");
//! # drop(node);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub use kairos_trace::tp;
pub use kairos_trace::write::{ENV_VAR, Error, Session, SessionConfig, Stats};

use crate::time::ClockKind;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// The trace handle of the callback this thread runs, if any: for tracepoints outside
/// this crate that name the callback they happen in (as `kairos:log` does).
pub fn running_callback() -> Option<u64> {
    crate::current::callback::handle()
}

/// The session `KAIROS_TRACE` started on first use, stopped at exit.
static FROM_ENV: Mutex<Option<Session>> = Mutex::new(None);
/// Set once `KAIROS_TRACE` has been looked at (by first use or [`init_from_env`]).
static ENV_CHECKED: std::sync::Once = std::sync::Once::new();

/// Starts a session when `KAIROS_TRACE=<dir>` is set and hands it to the caller: keep it
/// alive for as long as the program should be traced (dropping it flushes and stops).
///
/// Call it before the first node to own the session; without the call, the first node
/// starts the same session and the runtime stops it at exit. `Ok(None)` when the variable
/// is unset or empty, or when the runtime already started tracing from it.
pub fn init_from_env() -> Result<Option<Session>, Error> {
    let mut started = Ok(None);
    ENV_CHECKED.call_once(|| started = Session::from_env());
    started
}

/// The runtime's first use: starts tracing if `KAIROS_TRACE` is set and no session runs.
/// A failure cannot be returned from here; it is printed, readably, on stderr.
pub(crate) fn start_from_env_on_first_use() {
    ENV_CHECKED.call_once(|| {
        if tp::enabled() {
            return; // A session started from code already traces the process.
        }
        match Session::from_env() {
            Ok(Some(session)) => {
                *FROM_ENV.lock() = Some(session);
                stop_at_exit();
            }
            Ok(None) => {}
            Err(err) => crate::say::say(format_args!(
                "kairos: cannot trace this process as {ENV_VAR} asks: {err}; running untraced"
            )),
        }
    });
}

/// Writes what the `KAIROS_TRACE` session recorded so far (the signal handler calls it).
pub(crate) fn flush_from_env() {
    // Bounded: a signal must never wait on this lock for ever.
    let Some(slot) = FROM_ENV.try_lock_for(std::time::Duration::from_secs(1)) else {
        return;
    };
    if let Some(session) = slot.as_ref()
        && let Err(err) = session.flush()
    {
        crate::say::say(format_args!(
            "kairos: flushing the {ENV_VAR} trace failed: {err}"
        ));
    }
}

/// Stops the `KAIROS_TRACE` session when the process exits (returning from `main` or
/// `std::process::exit`), so its last events are written: Rust never drops statics.
fn stop_at_exit() {
    extern "C" fn stop() {
        // Bounded: at exit no kairos thread should hold this lock, but never wait forever.
        let Some(mut slot) = FROM_ENV.try_lock_for(std::time::Duration::from_secs(1)) else {
            return;
        };
        if let Some(session) = slot.take()
            && let Err(err) = session.stop()
        {
            crate::say::say(format_args!(
                "kairos: stopping the {ENV_VAR} trace at exit failed: {err}"
            ));
        }
    }
    crate::at_exit::at_exit(stop, "write the end of the KAIROS_TRACE trace");
}

/// A process-unique handle for a traced object (timer, node, publisher, ...): never 0, never
/// given twice. Crates built on kairos (actions, lifecycle nodes) take their objects'
/// handles from here, so no two objects of one trace share one.
pub fn next_handle() -> u64 {
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
