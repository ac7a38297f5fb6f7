//! The trace clock: where every event's timestamp comes from.
//!
//! By default CLOCK_MONOTONIC in nanoseconds, with its offset to the Unix epoch in the
//! metadata. A session may instead stamp events with a clock of the program's own
//! ([`TraceClock::Custom`]), such as simulation time, so that a run driven by a simulator
//! gives the same trace, timestamps included, every time.
//!
//! Ground rules: the custom source is installed by the one active session before it
//! activates the buffers and removed after it deactivates them; tracepoints only read it.
//! A tracepoint pays one relaxed load to learn that there is none.

use parking_lot::RwLock;
use rustix::time::{ClockId, Timespec, clock_gettime};
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A program's own time source for event timestamps, in nanoseconds since its zero. It
/// must not go backwards while a thread traces (CTF streams are in timestamp order).
pub type ClockSource = Arc<dyn Fn() -> u64 + Send + Sync>;

/// The clock a session stamps events with.
#[derive(Clone, Default)]
pub enum TraceClock {
    /// CLOCK_MONOTONIC, placed on the Unix epoch by the metadata's offset.
    #[default]
    Monotonic,
    /// A clock of the program's own (simulation time): `name` is the CTF clock's name (a
    /// TSDL identifier: letters, digits, `_`, not starting with a digit), `now` its
    /// reading. The metadata gives it offset 0, so timestamps read as time since its zero.
    Custom {
        /// The CTF clock's name.
        name: String,
        /// The CTF clock's description, which babeltrace2 shows.
        description: String,
        /// Reads the clock now, in nanoseconds since its zero.
        now: ClockSource,
    },
}

impl TraceClock {
    /// The CTF clock's name.
    pub(crate) fn name(&self) -> &str {
        match self {
            TraceClock::Monotonic => "monotonic",
            TraceClock::Custom { name, .. } => name,
        }
    }

    pub(crate) fn description(&self) -> &str {
        match self {
            TraceClock::Monotonic => "Monotonic Clock",
            TraceClock::Custom { description, .. } => description,
        }
    }

    /// Whether `name` can name a CTF clock.
    pub(crate) fn valid_name(name: &str) -> bool {
        let mut chars = name.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    }
}

impl fmt::Debug for TraceClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceClock::Monotonic => f.write_str("Monotonic"),
            TraceClock::Custom { name, .. } => {
                f.debug_struct("Custom").field("name", name).finish()
            }
        }
    }
}

/// Two custom clocks are the same when they share their source.
impl PartialEq for TraceClock {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (TraceClock::Monotonic, TraceClock::Monotonic) => true,
            (
                TraceClock::Custom { name, now, .. },
                TraceClock::Custom {
                    name: other_name,
                    now: other_now,
                    ..
                },
            ) => name == other_name && Arc::ptr_eq(now, other_now),
            _ => false,
        }
    }
}

impl Eq for TraceClock {}

static CUSTOM_ACTIVE: AtomicBool = AtomicBool::new(false);
static CUSTOM: RwLock<Option<ClockSource>> = RwLock::new(None);

/// Makes `clock` the source of every timestamp until [`uninstall`].
pub(crate) fn install(clock: &TraceClock) {
    if let TraceClock::Custom { now, .. } = clock {
        *CUSTOM.write() = Some(Arc::clone(now));
        CUSTOM_ACTIVE.store(true, Ordering::Release);
    }
}

/// Back to the monotonic clock.
pub(crate) fn uninstall() {
    CUSTOM_ACTIVE.store(false, Ordering::Release);
    *CUSTOM.write() = None;
}

#[cold]
fn custom_now() -> u64 {
    match CUSTOM.read().as_ref() {
        Some(now) => now(),
        None => monotonic_now(),
    }
}

fn nanos(ts: Timespec) -> i128 {
    i128::from(ts.tv_sec) * 1_000_000_000 + i128::from(ts.tv_nsec)
}

/// Nanoseconds on the trace clock: every event's timestamp.
#[inline]
pub(crate) fn now_ns() -> u64 {
    if CUSTOM_ACTIVE.load(Ordering::Relaxed) {
        return custom_now();
    }
    monotonic_now()
}

#[inline]
fn monotonic_now() -> u64 {
    // The monotonic clock starts at boot: it is never negative and fits 64 bits for
    // centuries.
    nanos(clock_gettime(ClockId::Monotonic)) as u64
}

/// The Unix-epoch time of monotonic zero, in ns: wall clock minus monotonic, measured
/// with the tightest bracket of a few tries so a preemption does not skew it.
pub(crate) fn epoch_offset_ns() -> i64 {
    let mut best: Option<(i128, i128)> = None;
    for _ in 0..5 {
        let before = nanos(clock_gettime(ClockId::Monotonic));
        let wall = nanos(clock_gettime(ClockId::Realtime));
        let after = nanos(clock_gettime(ClockId::Monotonic));
        let width = after - before;
        let offset = wall - (before + width / 2);
        if best.is_none_or(|(w, _)| width < w) {
            best = Some((width, offset));
        }
    }
    best.map_or(0, |(_, offset)| offset as i64)
}
