//! [`Time`]: a point on a named clock.
//!
//! A time value always says which clock it was read from. Times of different clocks are
//! never silently compared or subtracted: `partial_cmp` answers `None` (so `<` and `>=` are
//! false), and [`Time::since`] returns [`ClockMismatch`]. Converting between clocks is an
//! explicit act of the caller, never something the arithmetic does behind their back.

use super::Duration;
use std::cmp::Ordering;
use std::fmt;
use std::ops::{Add, Sub};

/// Which clock a [`Time`] was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClockKind {
    /// The wall clock (`CLOCK_REALTIME`): nanoseconds since the Unix epoch. Can jump.
    System,
    /// The monotonic clock (`CLOCK_MONOTONIC`): nanoseconds since boot. Never jumps.
    Steady,
    /// Simulation time, set by a simulator (see [`SimClock`](super::SimClock)).
    Sim,
}

impl ClockKind {
    /// `system`, `steady` or `sim`.
    pub fn name(self) -> &'static str {
        match self {
            ClockKind::System => "system",
            ClockKind::Steady => "steady",
            ClockKind::Sim => "sim",
        }
    }
}

impl fmt::Display for ClockKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Times of two different clocks were mixed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "cannot mix clocks: a {found} time was used where a {expected} time was expected; \
     read both times from the same Clock, or convert explicitly"
)]
pub struct ClockMismatch {
    /// The clock the operation works on.
    pub expected: ClockKind,
    /// The clock the time given was read from.
    pub found: ClockKind,
}

/// A point in time on a named clock, in signed nanoseconds since that clock's origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Time {
    nanos: i64,
    kind: ClockKind,
}

impl Time {
    /// The time `nanos` nanoseconds after the origin of clock `kind`.
    pub const fn new(kind: ClockKind, nanos: i64) -> Self {
        Time { nanos, kind }
    }

    /// Nanoseconds since the clock's origin.
    pub const fn nanos(self) -> i64 {
        self.nanos
    }

    /// The clock the time was read from.
    pub const fn kind(self) -> ClockKind {
        self.kind
    }

    /// `self - earlier`, when both are on the same clock.
    pub fn since(self, earlier: Time) -> Result<Duration, ClockMismatch> {
        self.check_same(earlier)?;
        Ok(Duration::from_nanos(
            self.nanos.saturating_sub(earlier.nanos),
        ))
    }

    /// Whether `self` is at or after `deadline`, when both are on the same clock.
    pub fn has_reached(self, deadline: Time) -> Result<bool, ClockMismatch> {
        self.check_same(deadline)?;
        Ok(self.nanos >= deadline.nanos)
    }

    pub(crate) fn check_same(self, other: Time) -> Result<(), ClockMismatch> {
        if self.kind == other.kind {
            Ok(())
        } else {
            Err(ClockMismatch {
                expected: self.kind,
                found: other.kind,
            })
        }
    }

    /// The wall-clock time as a `std::time::SystemTime`, for a `System` time.
    pub fn to_system_time(self) -> Result<std::time::SystemTime, ClockMismatch> {
        if self.kind != ClockKind::System {
            return Err(ClockMismatch {
                expected: ClockKind::System,
                found: self.kind,
            });
        }
        let epoch = std::time::UNIX_EPOCH;
        let offset = std::time::Duration::from_nanos(self.nanos.unsigned_abs());
        Ok(if self.nanos >= 0 {
            epoch + offset
        } else {
            epoch - offset
        })
    }
}

impl PartialOrd for Time {
    /// `None` across clocks: no ordering is claimed between different clocks.
    fn partial_cmp(&self, other: &Time) -> Option<Ordering> {
        (self.kind == other.kind).then(|| self.nanos.cmp(&other.nanos))
    }
}

impl Add<Duration> for Time {
    type Output = Time;
    fn add(self, rhs: Duration) -> Time {
        Time {
            nanos: self.nanos.saturating_add(rhs.as_nanos()),
            kind: self.kind,
        }
    }
}

impl Sub<Duration> for Time {
    type Output = Time;
    fn sub(self, rhs: Duration) -> Time {
        Time {
            nanos: self.nanos.saturating_sub(rhs.as_nanos()),
            kind: self.kind,
        }
    }
}

impl fmt::Display for Time {
    /// Seconds since the clock's origin, exact to the nanosecond without trailing zeros,
    /// and the clock: `12.5 s (sim)`, `1763820000.000123 s (system)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.nanos < 0 { "-" } else { "" };
        let secs = self.nanos.unsigned_abs() / 1_000_000_000;
        let frac = self.nanos.unsigned_abs() % 1_000_000_000;
        if frac == 0 {
            return write!(f, "{sign}{secs} s ({})", self.kind);
        }
        let frac = format!("{frac:09}");
        let frac = frac.trim_end_matches('0');
        write!(f, "{sign}{secs}.{frac} s ({})", self.kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixing_clocks_is_an_error_not_an_answer() {
        let s = Time::new(ClockKind::Steady, 10);
        let w = Time::new(ClockKind::System, 5);
        assert_eq!(s.partial_cmp(&w), None);
        assert_eq!((s < w, s >= w), (false, false));
        let err = s.since(w).unwrap_err();
        assert_eq!(
            err,
            ClockMismatch {
                expected: ClockKind::Steady,
                found: ClockKind::System
            }
        );
        assert!(err.to_string().contains("same Clock"));
        assert!(s.has_reached(w).is_err());
    }

    #[test]
    fn same_clock_arithmetic() {
        let a = Time::new(ClockKind::Sim, 1_000);
        let b = a + Duration::from_nanos(500);
        assert_eq!(b.since(a), Ok(Duration::from_nanos(500)));
        assert_eq!(a.since(b), Ok(Duration::from_nanos(-500)));
        assert!(b > a);
        assert_eq!(b.has_reached(a), Ok(true));
    }

    #[test]
    fn display_is_seconds_and_clock() {
        assert_eq!(
            Time::new(ClockKind::Sim, 12_500_000_000).to_string(),
            "12.5 s (sim)"
        );
        assert_eq!(
            Time::new(ClockKind::Steady, 3_000_000_000).to_string(),
            "3 s (steady)"
        );
        assert_eq!(
            Time::new(ClockKind::System, 1_000_000_123).to_string(),
            "1.000000123 s (system)"
        );
        assert_eq!(
            Time::new(ClockKind::Sim, -500_000_000).to_string(),
            "-0.5 s (sim)"
        );
    }
}
