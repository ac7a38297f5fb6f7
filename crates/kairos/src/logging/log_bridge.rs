//! The `log` facade's records, logged by kairos loggers: inside a callback by its node's
//! logger, elsewhere by a logger named after the record's target; and shown first to the
//! program's tap, if it set one ([`set_log_tap`]).

use super::{Logger, Severity};
use parking_lot::RwLock;
use std::collections::HashMap;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

struct Bridge;

static BRIDGE: Bridge = Bridge;
/// Whether the bridge is the facade's logger (the program did not install its own first).
static INSTALLED: AtomicBool = AtomicBool::new(false);
/// What the program wants to see of every bridged record.
static TAP: OnceLock<LogTap> = OnceLock::new();

/// A function shown every record that reaches the bridge: its target (a module path, such
/// as `zenoh_link_tls::unicast`), its severity and its message.
pub type LogTap = fn(target: &str, severity: Severity, message: &std::fmt::Arguments<'_>);

/// Shows `tap` every record the facade hands the bridge, before the bridge logs it: a
/// program counts what a library only reports in its log (`kairos router` counts the
/// connections zenoh refused at the TLS handshake). Records below their logger's level
/// (at default levels, below `Info`) never reach the bridge, nor the tap. One tap per
/// process: false (and nothing changes) if one was set. The tap runs on the thread that
/// logs, so it must not block.
pub fn set_log_tap(tap: LogTap) -> bool {
    TAP.set(tap).is_ok()
}

/// Makes kairos the `log` facade's logger, so `log::info!` and friends reach the console,
/// `/rosout` and the trace as kairos lines. Done when the first context is made; returns
/// false (and changes nothing) when the program installed another logger first.
pub fn install_log_bridge() -> bool {
    let installed = log::set_logger(&BRIDGE).is_ok();
    if installed {
        INSTALLED.store(true, Ordering::Release);
        // Lines below every logger's level stop at the facade's own check, for free.
        log::set_max_level(level_filter(super::levels::lowest_level()));
    }
    installed
}

/// Lets `log` records down to `severity` reach the bridge (a logger's level was lowered).
pub(crate) fn admit(severity: Severity) {
    let filter = level_filter(severity);
    if INSTALLED.load(Ordering::Acquire) && filter > log::max_level() {
        log::set_max_level(filter);
    }
}

fn level_filter(severity: Severity) -> log::LevelFilter {
    match severity {
        Severity::Debug => log::LevelFilter::Trace,
        Severity::Info => log::LevelFilter::Info,
        Severity::Warn => log::LevelFilter::Warn,
        Severity::Error | Severity::Fatal => log::LevelFilter::Error,
    }
}

fn severity(level: log::Level) -> Severity {
    match level {
        log::Level::Error => Severity::Error,
        log::Level::Warn => Severity::Warn,
        log::Level::Info => Severity::Info,
        log::Level::Debug | log::Level::Trace => Severity::Debug,
    }
}

/// The loggers of targets, made on first use (targets are module paths: a bounded set).
fn target_logger(target: &str) -> Logger {
    static TARGETS: OnceLock<RwLock<HashMap<String, Logger>>> = OnceLock::new();
    let targets = TARGETS.get_or_init(Default::default);
    if let Some(logger) = targets.read().get(target) {
        return logger.clone();
    }
    targets
        .write()
        .entry(target.to_owned())
        .or_insert_with(|| Logger::new(&target.replace("::", ".")))
        .clone()
}

impl log::Log for Bridge {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        let logger =
            crate::current::callback::logger().unwrap_or_else(|| target_logger(metadata.target()));
        logger.is_enabled_for(severity(metadata.level()))
    }

    fn log(&self, record: &log::Record<'_>) {
        if let Some(tap) = TAP.get() {
            tap(record.target(), severity(record.level()), record.args());
        }
        let logger =
            crate::current::callback::logger().unwrap_or_else(|| target_logger(record.target()));
        let severity = severity(record.level());
        if logger.is_enabled_for(severity) {
            let message = record.args().to_string();
            logger.emit(
                severity,
                &message,
                record.file().unwrap_or(""),
                record.module_path().unwrap_or(""),
                record.line().unwrap_or(0),
            );
        }
    }

    fn flush(&self) {}
}
