//! Time stamps of transforms: nanoseconds on the clock the transforms were stamped with.
//!
//! Ground rules:
//! - A [`Stamp`] is an integer count of nanoseconds, like tf2's `TimePoint` and ROS 2's
//!   `builtin_interfaces/Time`; comparisons and differences are exact.
//! - [`Stamp::LATEST`] (zero) in a lookup means "the latest time at which every link of the
//!   path has data", as in tf2. A transform may still carry stamp zero (static
//!   transforms often do); stored, it is an ordinary time.
//! - Displayed in seconds, exact to the nanosecond without trailing zeros (`12.5 s`), the
//!   way kairos shows its own times; never as a raw `Debug` number in a user message.

use std::fmt;

/// A point in time, in nanoseconds since the clock's origin (ROS time: the epoch, or the
/// start of a simulation).
///
/// Zero is special in lookups: [`Stamp::LATEST`] asks for the latest common time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Stamp(i64);

impl Stamp {
    /// Zero: in a lookup, "the latest time at which the whole path has data" (tf2's
    /// `TimePointZero`).
    pub const LATEST: Stamp = Stamp(0);

    /// A stamp `nanos` nanoseconds after the clock's origin.
    pub const fn from_nanos(nanos: i64) -> Stamp {
        Stamp(nanos)
    }

    /// A stamp `secs` whole seconds after the clock's origin.
    pub const fn from_secs(secs: i64) -> Stamp {
        Stamp(secs.saturating_mul(1_000_000_000))
    }

    /// A stamp from seconds as a float, rounded to the nearest nanosecond (saturating).
    pub fn from_secs_f64(secs: f64) -> Stamp {
        Stamp((secs * 1e9).round() as i64)
    }

    /// A stamp from a ROS `builtin_interfaces/Time` (`sec`, `nanosec`).
    pub const fn from_sec_nanosec(sec: i32, nanosec: u32) -> Stamp {
        Stamp(sec as i64 * 1_000_000_000 + nanosec as i64)
    }

    /// Nanoseconds since the clock's origin.
    #[inline]
    pub const fn nanos(self) -> i64 {
        self.0
    }

    /// Seconds since the clock's origin, as a float (nanosecond-exact up to ~104 days).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }

    /// Whether this is zero, which a lookup reads as "the latest common time".
    #[inline]
    pub const fn is_latest(self) -> bool {
        self.0 == 0
    }
}

impl fmt::Display for Stamp {
    /// Seconds, exact to the nanosecond without trailing zeros: `12.5 s`, `0 s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_seconds(f, self.0)
    }
}

/// A span of nanoseconds shown in the unit people write it in (`10 s`, `1.5 ms`,
/// `250 ns`), for cache lengths and the width of a cache's time range in messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Span(pub(crate) i64);

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [(u64, &str); 3] = [(1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us")];
        let sign = if self.0 < 0 { "-" } else { "" };
        let abs = self.0.unsigned_abs();
        let Some(&(scale, unit)) = UNITS.iter().find(|(scale, _)| abs >= *scale) else {
            return write!(f, "{sign}{abs} ns");
        };
        let text = format!("{:.3}", abs as f64 / scale as f64);
        let text = text.trim_end_matches('0').trim_end_matches('.');
        write!(f, "{sign}{text} {unit}")
    }
}

fn write_seconds(f: &mut fmt::Formatter<'_>, nanos: i64) -> fmt::Result {
    let sign = if nanos < 0 { "-" } else { "" };
    let secs = nanos.unsigned_abs() / 1_000_000_000;
    let frac = nanos.unsigned_abs() % 1_000_000_000;
    if frac == 0 {
        return write!(f, "{sign}{secs} s");
    }
    let frac = format!("{frac:09}");
    write!(f, "{sign}{secs}.{} s", frac.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_display_as_exact_seconds() {
        assert_eq!(Stamp::from_nanos(12_500_000_000).to_string(), "12.5 s");
        assert_eq!(Stamp::from_nanos(1_000).to_string(), "0.000001 s");
        assert_eq!(Stamp::LATEST.to_string(), "0 s");
        assert_eq!(Stamp::from_nanos(-1_500_000_000).to_string(), "-1.5 s");
    }

    #[test]
    fn spans_display_in_the_largest_whole_unit() {
        assert_eq!(Span(10_000_000_000).to_string(), "10 s");
        assert_eq!(Span(1_500_000).to_string(), "1.5 ms");
        assert_eq!(Span(250).to_string(), "250 ns");
    }

    #[test]
    fn conversions_agree() {
        assert_eq!(Stamp::from_secs(2), Stamp::from_nanos(2_000_000_000));
        assert_eq!(Stamp::from_secs_f64(0.5), Stamp::from_nanos(500_000_000));
        assert_eq!(
            Stamp::from_sec_nanosec(1, 5),
            Stamp::from_nanos(1_000_000_005)
        );
        assert_eq!(Stamp::from_secs(3).as_secs_f64(), 3.0);
    }
}
