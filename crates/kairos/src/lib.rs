//! kairos: the runtime robot code links.
//!
//! - [`time`]: clocks, sleeps, timers and rates that are never early and never hang.
//! - [`graph`]: nodes, topics, services and clients, type checked, nothing lost silently.
//! - [`exec`]: executors and callback groups that never deadlock silently.
//! - [`thread`]: threads the runtime owns, stopped with a deadline and a report.
//! - [`trace`]: trace sessions (CTF) and the runtime's tracepoints; `KAIROS_TRACE=<dir>`
//!   traces any kairos program from its first node on.
//! - [`logging`]: node loggers, `log` facade lines with their node's name, the console in
//!   rcutils' format, `/rosout`, and each line traced.
//! - [`signal`]: Ctrl-C (SIGINT, SIGTERM) shuts the executors down with a report, as in
//!   rclcpp and rclpy.
//!
//! The invariants every module keeps are in `docs/architecture.md`; each module's docs say
//! which of them it is responsible for and how.

#![warn(missing_docs)]
// No `unsafe` but where a module allows it with a comment saying why: `at_exit`
// (registering with libc's `atexit`), the deadlock detector's per-callback frame
// (`exec/deadlock.rs`, borrowed pointers) and `graph::pool` (reusing an `Arc`'s block for
// the next message).
#![deny(unsafe_code)]

mod at_exit;
mod current;
pub mod exec;
mod fence;
pub mod graph;
pub mod logging;
mod loom;
mod say;
pub mod signal;
pub mod thread;
pub mod time;
pub mod trace;

/// The runtime's first use (the first `Context`, hence the first node): what `rclcpp::init`
/// does, done once per process without asking the program to call anything.
pub(crate) fn runtime_first_use() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        trace::start_from_env_on_first_use();
        signal::install_on_first_use();
        // A program that installed its own `log` logger first keeps it.
        let _ = logging::install_log_bridge();
    });
}
