//! Ctrl-C: SIGINT and SIGTERM shut the executors down gracefully, as `rclcpp::init` and
//! `rclpy.init` arrange.
//!
//! What this module promises:
//! - On the runtime's first use (the first [`Context`](crate::graph::Context), hence the
//!   first node) a handler for SIGINT and SIGTERM is installed, unless the program opted
//!   out with [`set_shutdown_on_signal(false)`](set_shutdown_on_signal) or the environment
//!   variable `KAIROS_SIGNAL_HANDLER=0`.
//! - The first signal shuts down every executor that runs a node (with the deadline of
//!   [`set_shutdown_deadline`], 1 s by default): their `spin` calls return, and each
//!   [`ShutdownReport`](crate::exec::ShutdownReport) is printed on stderr. A trace that
//!   `KAIROS_TRACE` started is flushed, so the trace ends whole. The program then goes on
//!   from where it spun and exits as it normally does.
//! - The first signal also cancels [`shutdown_token`]: a blocking wait outside any
//!   executor (a service `call()` from `main`) ends at once with an error saying so,
//!   where it would otherwise wait for its own timeout.
//! - Ctrl-C always works: a first signal when no executor runs a node exits with status
//!   128 + signal (130 for SIGINT); a second signal flushes the trace and exits at once
//!   with that status, without waiting for callbacks or exit handlers; an opted-out
//!   program gets the default action (termination by the signal).
//!
//! Ground rules: the OS handler (signal-hook's, async-signal-safe) only wakes the
//! `kairos-signal` thread, which does all the work outside signal context. What the
//! handler says goes to stderr through `say`, which never panics: a program whose
//! stderr is a closed pipe (its launcher died, `| head` ended) still stops on a signal. `EXECUTORS`
//! holds weak handles, registered by `Node::attach` and pruned on each registration; its
//! lock is never held while an executor shuts down.

use crate::exec::{ExecShared, Executor};
use crate::say::say;
use crate::time::Duration;
use parking_lot::Mutex;
use signal_hook::consts::{SIGINT, SIGTERM};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, OnceLock, Weak};

/// The environment variable that turns the handler off when it is `0`, `off` or `false`.
pub const ENV_VAR: &str = "KAIROS_SIGNAL_HANDLER";

/// The handler could not be installed.
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "cannot install the SIGINT/SIGTERM handler ({source}); Ctrl-C will kill the program without a shutdown report"
)]
pub struct SignalError {
    #[source]
    source: Arc<std::io::Error>,
}

static ENABLED: AtomicBool = AtomicBool::new(true);
static REQUESTED: AtomicBool = AtomicBool::new(false);
static DEADLINE_NS: AtomicI64 = AtomicI64::new(1_000_000_000);
static INSTALLED: OnceLock<Result<(), SignalError>> = OnceLock::new();
static EXECUTORS: Mutex<Vec<Weak<ExecShared>>> = Mutex::new(Vec::new());
/// Held by the handler thread while it shuts down, prints and flushes: the spins it ends
/// may let `main` return before the report is printed, so exit waits for it (bounded).
static HANDLING: Mutex<()> = Mutex::new(());
/// Set by a second signal: exit without waiting for the first one's report.
static EXIT_NOW: AtomicBool = AtomicBool::new(false);
/// How often an exit that waits for the report checks for a second signal.
const EXIT_POLL: std::time::Duration = std::time::Duration::from_millis(10);

/// Turns graceful shutdown on SIGINT/SIGTERM on (the default) or off. Off before the
/// runtime's first use, no handler is installed at all; off later, a signal gets its
/// default action (the program is terminated by it).
pub fn set_shutdown_on_signal(on: bool) {
    ENABLED.store(on, Ordering::Release);
}

/// How long the handler waits for each executor's running callbacks (1 s by default).
pub fn set_shutdown_deadline(deadline: impl Into<Duration>) {
    DEADLINE_NS.store(deadline.into().as_nanos(), Ordering::Release);
}

/// Whether a SIGINT or SIGTERM asked the program to stop (the negation of `rclcpp::ok()`):
/// a loop that does not spin an executor checks it to end in time.
pub fn shutdown_requested() -> bool {
    REQUESTED.load(Ordering::Acquire)
}

/// Cancelled by the first SIGINT or SIGTERM the handler takes: what blocking waits
/// outside executors end on (inside a callback, the executor's own shutdown ends them).
pub fn shutdown_token() -> crate::time::CancelToken {
    static TOKEN: OnceLock<crate::time::CancelToken> = OnceLock::new();
    TOKEN.get_or_init(crate::time::CancelToken::new).clone()
}

/// Installs the handler now (the runtime's first use does it unless opted out); installing
/// twice is harmless.
pub fn install() -> Result<(), SignalError> {
    INSTALLED.get_or_init(start_handler_thread).clone()
}

/// The runtime's first use: installs the handler unless opted out.
pub(crate) fn install_on_first_use() {
    let env_off = std::env::var(ENV_VAR).is_ok_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "0" | "off" | "false"
        )
    });
    if env_off {
        ENABLED.store(false, Ordering::Release);
    }
    if ENABLED.load(Ordering::Acquire)
        && let Err(err) = install()
    {
        say(format_args!("kairos: {err}"));
    }
}

/// Remembers `exec` (which now runs a node) for the handler to shut down.
pub(crate) fn watch(exec: &Arc<ExecShared>) {
    let mut executors = EXECUTORS.lock();
    executors.retain(|e| e.strong_count() > 0);
    if !executors
        .iter()
        .any(|e| std::ptr::eq(e.as_ptr(), Arc::as_ptr(exec)))
    {
        executors.push(Arc::downgrade(exec));
    }
}

fn start_handler_thread() -> Result<(), SignalError> {
    let error = |source| SignalError {
        source: Arc::new(source),
    };
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]).map_err(error)?;
    crate::at_exit::at_exit(
        finish_handling_at_exit,
        "finish a Ctrl-C shutdown report before exiting",
    );
    std::thread::Builder::new()
        .name("kairos-signal".into())
        .spawn(move || {
            for signal in signals.forever() {
                on_signal(signal);
            }
        })
        .map_err(error)?;
    Ok(())
}

extern "C" fn finish_handling_at_exit() {
    if !REQUESTED.load(Ordering::Acquire) {
        return;
    }
    let limit = Duration::from_nanos(DEADLINE_NS.load(Ordering::Acquire)) + Duration::from_secs(2);
    let until = std::time::Instant::now() + limit.to_std().unwrap_or_default();
    // In slices, so that a second signal (which `_exit`s from its own thread) is never
    // kept waiting behind this exit.
    while !EXIT_NOW.load(Ordering::Acquire) && std::time::Instant::now() < until {
        if HANDLING.try_lock_for(EXIT_POLL).is_some() {
            return;
        }
    }
}

fn on_signal(signal: i32) {
    let name = if signal == SIGINT {
        "SIGINT"
    } else {
        "SIGTERM"
    };
    if !ENABLED.load(Ordering::Acquire) {
        // Opted out after the handler was installed: what the signal would have done.
        let _ = signal_hook::low_level::emulate_default_handler(signal);
        std::process::exit(128 + signal);
    }
    if REQUESTED.swap(true, Ordering::AcqRel) {
        say(format_args!("kairos: {name} again: exiting now"));
        EXIT_NOW.store(true, Ordering::Release);
        crate::trace::flush_from_env();
        // `_exit`: no atexit handler runs, so neither a `main` already exiting (which
        // waits for the first signal's report) nor a stuck callback can hold the exit up.
        signal_hook::low_level::exit(128 + signal);
    }
    shutdown_token().cancel();
    // The shutdown runs in its own thread, so that this one hears a second signal while
    // callbacks keep the shutdown waiting for its deadline.
    let spawned = std::thread::Builder::new()
        .name("kairos-shutdown".into())
        .spawn(move || shut_down(name, signal));
    if let Err(err) = spawned {
        say(format_args!(
            "kairos: {name}: cannot start the shutdown ({err}); exiting"
        ));
        std::process::exit(128 + signal);
    }
}

fn shut_down(name: &str, signal: i32) {
    let handling = HANDLING.lock();
    let executors: Vec<Executor> = EXECUTORS
        .lock()
        .iter()
        .filter_map(Weak::upgrade)
        .map(Executor::from_shared)
        .collect();
    if executors.is_empty() {
        say(format_args!(
            "kairos: {name}: no executor runs a node; exiting"
        ));
        crate::trace::flush_from_env();
        drop(handling); // The exit below waits for it.
        std::process::exit(128 + signal);
    }
    let deadline = Duration::from_nanos(DEADLINE_NS.load(Ordering::Acquire));
    say(format_args!(
        "kairos: {name}: shutting down {} executor(s), deadline {deadline} (again to exit at once)",
        executors.len()
    ));
    for executor in executors {
        let report = executor.shutdown(deadline);
        say(format_args!("kairos: {report}"));
    }
    crate::trace::flush_from_env();
}
