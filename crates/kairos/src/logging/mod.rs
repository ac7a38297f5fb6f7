//! Logging as ROS 2 nodes log: named loggers with severities, a console line in rcutils'
//! format, each line on `/rosout` as `rcl_interfaces/msg/Log`, and each line traced.
//!
//! What this module promises:
//! - Every node has a [`Logger`] named after it as rcl names it (`/ns/talker` logs as
//!   `ns.talker`, [`Node::logger`](crate::graph::Node::logger)); child loggers add
//!   `.suffix`. A level belongs to a name, as in rcutils ([`levels`]): setting it on one
//!   handle sets it for every logger of that name and its descendants. A line below its
//!   logger's level costs three atomic loads and no lock.
//! - The Rust ecosystem's `log` facade is bridged ([`install_log_bridge`], done when the
//!   first context is made): a `log::info!` inside a callback is logged by the logger of
//!   the callback's node; outside any callback, by a logger named after the record's
//!   target. A program may see every bridged record first ([`set_log_tap`]), to count
//!   what a library only reports in its log.
//! - A line at or above its logger's level is written to the console in rcutils' default
//!   format, `[INFO] [1700000000.123456789] [talker]: message`
//!   (`RCUTILS_CONSOLE_OUTPUT_FORMAT` replaces it, see [`mod@format`]), on stderr
//!   (`RCUTILS_LOGGING_USE_STDOUT=1`: stdout); a node's line is also published on
//!   `/rosout` (its publisher is made at the node's first line), and every line is traced
//!   as `kairos:log` with the callback that wrote it, so the analyzer shows it beside that
//!   callback.
//! - Levels come from the program's ROS arguments: `--log-level LEVEL` for every logger,
//!   `--log-level NAME:=LEVEL` for one; `--disable-stdout-logs` and
//!   `--disable-rosout-logs` turn the console and `/rosout` off.
//! - Once, throttled and skip-first lines ([`log_once!`](crate::log_once),
//!   [`log_throttle!`](crate::log_throttle), [`log_skip_first!`](crate::log_skip_first))
//!   keep their state per call site, as rclcpp's macros do.
//!
//! Ground rules: logging never blocks on the graph (a `/rosout` publish is the graph's
//! non-blocking publish) and never panics on what it is given; a sink that fails reports
//! once on stderr and is then skipped.

mod call_site;
pub mod format;
pub mod levels;
mod log_bridge;

pub use call_site::CallSite;
pub use levels::{effective_level, set_logger_level};
pub use log_bridge::{LogTap, install_log_bridge, set_log_tap};

use crate::time::Clock;
use std::fmt;
use std::panic::Location;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// How severe a line is; the values are rcutils' (and `rcl_interfaces/msg/Log`'s).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Severity {
    /// Detail for whoever debugs the node.
    Debug = 10,
    /// What the node does.
    Info = 20,
    /// Something unexpected the node goes on after.
    Warn = 30,
    /// Something the node could not do.
    Error = 40,
    /// Something the node cannot go on after.
    Fatal = 50,
}

impl Severity {
    /// `DEBUG`, `INFO`, `WARN`, `ERROR` or `FATAL`, as the console prints it.
    pub fn label(self) -> &'static str {
        match self {
            Severity::Debug => "DEBUG",
            Severity::Info => "INFO",
            Severity::Warn => "WARN",
            Severity::Error => "ERROR",
            Severity::Fatal => "FATAL",
        }
    }

    /// The severity named `name` (`debug`, `INFO`, ...), as `--log-level` takes it.
    pub fn parse(name: &str) -> Option<Severity> {
        match name.to_ascii_lowercase().as_str() {
            "debug" => Some(Severity::Debug),
            "info" => Some(Severity::Info),
            "warn" | "warning" => Some(Severity::Warn),
            "error" => Some(Severity::Error),
            "fatal" => Some(Severity::Fatal),
            _ => None,
        }
    }

    fn from_u8(value: u8) -> Severity {
        match value {
            0..=10 => Severity::Debug,
            11..=20 => Severity::Info,
            21..=30 => Severity::Warn,
            31..=40 => Severity::Error,
            _ => Severity::Fatal,
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// One line, as sinks receive it.
#[derive(Debug, Clone, Copy)]
pub struct Record<'a> {
    /// How severe it is.
    pub severity: Severity,
    /// The logger's name.
    pub name: &'a str,
    /// The text.
    pub message: &'a str,
    /// The source file that logged it.
    pub file: &'a str,
    /// The function (or module) that logged it, where known.
    pub function: &'a str,
    /// The line in `file`.
    pub line: u32,
    /// When, in ns of system (wall) time, as rcutils stamps lines.
    pub stamp_ns: i64,
}

/// Where a node's lines go besides the console (its `/rosout` publisher).
pub(crate) type Sink = Box<dyn Fn(&Record<'_>) + Send + Sync>;

/// A named logger; clones are handles to the same one.
#[derive(Clone)]
pub struct Logger {
    shared: Arc<LoggerShared>,
}

struct LoggerShared {
    name: String,
    level: levels::CachedLevel,
    sink: Option<Sink>,
}

impl Logger {
    /// A logger named `name` (not a node's: its lines go to the console and the trace).
    pub fn new(name: &str) -> Logger {
        Logger::with_sink(name, None)
    }

    pub(crate) fn with_sink(name: &str, sink: Option<Sink>) -> Logger {
        Logger {
            shared: Arc::new(LoggerShared {
                name: name.to_owned(),
                level: levels::CachedLevel::default(),
                sink,
            }),
        }
    }

    /// The logger's name, e.g. `ns.talker`.
    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// A logger named `<name>.<suffix>`, with this one's level (unless it has one of its
    /// own) and its lines also going where this one's go.
    pub fn child(&self, suffix: &str) -> Logger {
        let name = format!("{}.{suffix}", self.shared.name);
        let parent = self.clone();
        let sink = self
            .shared
            .sink
            .is_some()
            .then(|| Box::new(move |record: &Record<'_>| parent.to_sink(record)) as Sink);
        Logger::with_sink(&name, sink)
    }

    /// Lines below `level` are skipped from now on, by every logger of this name and by
    /// its descendants that have no level of their own ([`set_logger_level`]).
    pub fn set_level(&self, level: Severity) {
        set_logger_level(&self.shared.name, Some(level));
    }

    /// The lowest severity logged ([`effective_level`] of the name).
    pub fn level(&self) -> Severity {
        self.shared.level.get(&self.shared.name)
    }

    /// Whether a line of `severity` would be logged.
    pub fn is_enabled_for(&self, severity: Severity) -> bool {
        severity >= self.level()
    }

    /// Logs `message` at `Debug`.
    #[track_caller]
    pub fn debug(&self, message: impl fmt::Display) {
        self.log_at(Severity::Debug, message, Location::caller());
    }

    /// Logs `message` at `Info`.
    #[track_caller]
    pub fn info(&self, message: impl fmt::Display) {
        self.log_at(Severity::Info, message, Location::caller());
    }

    /// Logs `message` at `Warn`.
    #[track_caller]
    pub fn warn(&self, message: impl fmt::Display) {
        self.log_at(Severity::Warn, message, Location::caller());
    }

    /// Logs `message` at `Error`.
    #[track_caller]
    pub fn error(&self, message: impl fmt::Display) {
        self.log_at(Severity::Error, message, Location::caller());
    }

    /// Logs `message` at `Fatal`.
    #[track_caller]
    pub fn fatal(&self, message: impl fmt::Display) {
        self.log_at(Severity::Fatal, message, Location::caller());
    }

    /// Logs `message` at `severity`, as written at `location`.
    pub fn log_at(&self, severity: Severity, message: impl fmt::Display, location: &Location<'_>) {
        self.log(severity, message, location.file(), location.line());
    }

    /// Logs `message` at `severity`, as written at `line` of `file` (what the macros
    /// pass).
    pub fn log(&self, severity: Severity, message: impl fmt::Display, file: &str, line: u32) {
        if self.is_enabled_for(severity) {
            let message = message.to_string();
            self.emit(severity, &message, file, "", line);
        }
    }

    /// Writes one line to the console, the sink and the trace (the level was checked).
    pub(crate) fn emit(
        &self,
        severity: Severity,
        message: &str,
        file: &str,
        function: &str,
        line: u32,
    ) {
        let record = Record {
            severity,
            name: &self.shared.name,
            message,
            file,
            function,
            line,
            stamp_ns: Clock::system().now().nanos(),
        };
        let settings = settings();
        if settings.console.load(Ordering::Relaxed) {
            format::write_console(&record);
        }
        if settings.rosout.load(Ordering::Relaxed) {
            self.to_sink(&record);
        }
        crate::trace::tp::log(
            crate::current::callback::handle().unwrap_or(0),
            &self.shared.name,
            severity as i32,
            message,
        );
    }

    fn to_sink(&self, record: &Record<'_>) {
        if let Some(sink) = &self.shared.sink {
            sink(record);
        }
    }
}

impl fmt::Debug for Logger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Logger")
            .field("name", &self.shared.name)
            .field("level", &self.level())
            .finish_non_exhaustive()
    }
}

/// The logger name rcl gives node `fq_name`: `/ns/talker` -> `ns.talker`.
pub fn node_logger_name(fq_name: &str) -> String {
    fq_name.trim_start_matches('/').replace('/', ".")
}

/// The switches of the program (from its ROS arguments).
struct Settings {
    console: AtomicBool,
    rosout: AtomicBool,
}

fn settings() -> &'static Settings {
    static SETTINGS: OnceLock<Settings> = OnceLock::new();
    SETTINGS.get_or_init(|| Settings {
        console: AtomicBool::new(true),
        rosout: AtomicBool::new(true),
    })
}

/// Applies the logging part of `args` (`--log-level`, `--disable-stdout-logs`,
/// `--disable-rosout-logs`, ...); an invalid level was refused when the arguments were
/// read.
pub(crate) fn configure(args: &crate::graph::RosArgs) {
    let settings = settings();
    for rule in args.log_levels() {
        let Some(level) = Severity::parse(&rule.level) else {
            // `unset`: the default applies.
            continue;
        };
        match &rule.logger {
            None => levels::set_default_level(level),
            Some(name) => set_logger_level(name, Some(level)),
        }
    }
    for flag in args.logging_flags() {
        match flag.as_str() {
            "--disable-stdout-logs" => settings.console.store(false, Ordering::Relaxed),
            "--enable-stdout-logs" => settings.console.store(true, Ordering::Relaxed),
            "--disable-rosout-logs" => settings.rosout.store(false, Ordering::Relaxed),
            "--enable-rosout-logs" => settings.rosout.store(true, Ordering::Relaxed),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_logger_names_are_rcls() {
        assert_eq!(node_logger_name("/talker"), "talker");
        assert_eq!(node_logger_name("/robot/arm/driver"), "robot.arm.driver");
    }

    #[test]
    fn levels_filter_and_children_inherit() {
        let logger = Logger::new("levels_test");
        assert!(logger.is_enabled_for(Severity::Info));
        assert!(!logger.is_enabled_for(Severity::Debug));
        logger.set_level(Severity::Error);
        assert!(!logger.is_enabled_for(Severity::Warn));
        let child = logger.child("part");
        assert_eq!(child.name(), "levels_test.part");
        assert_eq!(child.level(), Severity::Error);
        assert_eq!(Severity::parse("WARN"), Some(Severity::Warn));
        assert_eq!(Severity::parse("loud"), None);
    }
}
