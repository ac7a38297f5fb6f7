//! Logger levels by name, as rcutils keeps them: a level belongs to a logger's name, not
//! to one handle of it.
//!
//! What this module promises:
//! - [`set_logger_level`]`("a.b", Some(level))` applies to every [`Logger`](super::Logger)
//!   named `a.b`, made before or after, and to its descendants (`a.b.c`) that have no
//!   level of their own; `None` unsets it, so the nearest ancestor's level (or the
//!   default) applies again.
//! - [`effective_level`] is the name's own level, else its nearest dotted ancestor's,
//!   else the default ([`set_default_level`], `--log-level LEVEL`).
//! - Reading a level on the logging path takes no lock while no level changes, only
//!   three atomic loads (the registry's `OnceLock`, its generation, the logger's cache):
//!   each logger caches its effective level with the generation it was computed at, and
//!   every change bumps the generation.

use super::Severity;
use parking_lot::RwLock;
use std::collections::HashMap;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

struct Levels {
    default: AtomicU8,
    by_name: RwLock<HashMap<String, Severity>>,
    /// Bumped by every change; starts at 1 so that a cache of 0 is never current.
    generation: AtomicU64,
}

fn levels() -> &'static Levels {
    static LEVELS: OnceLock<Levels> = OnceLock::new();
    LEVELS.get_or_init(|| Levels {
        default: AtomicU8::new(Severity::Info as u8),
        by_name: RwLock::new(HashMap::new()),
        generation: AtomicU64::new(1),
    })
}

fn changed() {
    levels().generation.fetch_add(1, Ordering::Release);
    super::log_bridge::admit(lowest_level());
}

/// Sets (`Some`) or unsets (`None`) the level of the loggers named `name`.
pub fn set_logger_level(name: &str, level: Option<Severity>) {
    {
        let mut by_name = levels().by_name.write();
        match level {
            Some(level) => by_name.insert(name.to_owned(), level),
            None => by_name.remove(name),
        };
    }
    changed();
}

/// The level set for `name` itself, if any.
pub fn logger_level(name: &str) -> Option<Severity> {
    levels().by_name.read().get(name).copied()
}

/// The level of every logger with no level of its own and no ancestor with one.
pub fn default_level() -> Severity {
    Severity::from_u8(levels().default.load(Ordering::Relaxed))
}

/// Sets the default level ([`default_level`]).
pub fn set_default_level(level: Severity) {
    levels().default.store(level as u8, Ordering::Relaxed);
    changed();
}

/// The level lines of logger `name` are filtered at: its own, its nearest ancestor's
/// (`a.b` for `a.b.c`), or the default.
pub fn effective_level(name: &str) -> Severity {
    let by_name = levels().by_name.read();
    let mut prefix = name;
    loop {
        if let Some(level) = by_name.get(prefix) {
            return *level;
        }
        match prefix.rfind('.') {
            Some(dot) => prefix = &prefix[..dot],
            None => return default_level(),
        }
    }
}

/// Forgets every level set by name and puts the default back to `Info` (rcutils'
/// "clear config"); `--log-level` rules read before are forgotten too.
pub fn clear() {
    levels().by_name.write().clear();
    set_default_level(Severity::Info);
}

/// The lowest level any logger can have now (what the `log` facade must let through).
pub(crate) fn lowest_level() -> Severity {
    let by_name = levels().by_name.read();
    by_name
        .values()
        .copied()
        .fold(default_level(), Severity::min)
}

/// A logger's cached effective level: `generation << 8 | level`.
#[derive(Debug, Default)]
pub(crate) struct CachedLevel(AtomicU64);

impl CachedLevel {
    /// The effective level of `name`, from the cache while no level changed.
    pub(crate) fn get(&self, name: &str) -> Severity {
        let generation = levels().generation.load(Ordering::Acquire);
        let cached = self.0.load(Ordering::Relaxed);
        if cached >> 8 == generation {
            return Severity::from_u8(cached as u8);
        }
        let level = effective_level(name);
        self.0
            .store(generation << 8 | level as u64, Ordering::Relaxed);
        level
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_level_belongs_to_the_name_and_descendants_inherit_it() {
        assert_eq!(effective_level("levels_rs.a.b"), default_level());
        set_logger_level("levels_rs.a", Some(Severity::Error));
        assert_eq!(effective_level("levels_rs.a"), Severity::Error);
        assert_eq!(effective_level("levels_rs.a.b"), Severity::Error);
        assert_eq!(effective_level("levels_rs.ab"), default_level());
        set_logger_level("levels_rs.a.b", Some(Severity::Debug));
        assert_eq!(effective_level("levels_rs.a.b.c"), Severity::Debug);
        set_logger_level("levels_rs.a", None);
        assert_eq!(effective_level("levels_rs.a"), default_level());
        assert_eq!(logger_level("levels_rs.a.b"), Some(Severity::Debug));

        let cache = CachedLevel::default();
        assert_eq!(cache.get("levels_rs.a.b"), Severity::Debug);
        set_logger_level("levels_rs.a.b", Some(Severity::Fatal));
        assert_eq!(cache.get("levels_rs.a.b"), Severity::Fatal);
        set_logger_level("levels_rs.a.b", None);
    }
}
