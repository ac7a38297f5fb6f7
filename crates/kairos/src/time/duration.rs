//! [`Duration`]: a signed span of time in nanoseconds.
//!
//! Signed because clock arithmetic produces negative spans (a deadline already past, a
//! backward clock jump) and hiding them behind saturation or panics is how early returns
//! happen. `i64` nanoseconds cover ±292 years, which no robot outlives; arithmetic that
//! would overflow saturates at the bounds instead of wrapping.

use std::fmt;
use std::ops::{Add, AddAssign, Div, Mul, Neg, Sub, SubAssign};

/// A signed span of time with nanosecond resolution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Duration {
    nanos: i64,
}

impl Duration {
    /// No time at all.
    pub const ZERO: Duration = Duration { nanos: 0 };
    /// The longest representable span (about 292 years).
    pub const MAX: Duration = Duration { nanos: i64::MAX };

    /// `nanos` nanoseconds.
    pub const fn from_nanos(nanos: i64) -> Self {
        Duration { nanos }
    }

    /// `micros` microseconds, saturating.
    pub const fn from_micros(micros: i64) -> Self {
        Duration {
            nanos: micros.saturating_mul(1_000),
        }
    }

    /// `millis` milliseconds, saturating.
    pub const fn from_millis(millis: i64) -> Self {
        Duration {
            nanos: millis.saturating_mul(1_000_000),
        }
    }

    /// `secs` seconds, saturating.
    pub const fn from_secs(secs: i64) -> Self {
        Duration {
            nanos: secs.saturating_mul(1_000_000_000),
        }
    }

    /// Seconds as a float, rounded to the nearest nanosecond; saturates, NaN is zero.
    pub fn from_secs_f64(secs: f64) -> Self {
        Duration {
            nanos: (secs * 1e9).round() as i64,
        }
    }

    /// The span in nanoseconds.
    pub const fn as_nanos(self) -> i64 {
        self.nanos
    }

    /// The span in seconds.
    pub fn as_secs_f64(self) -> f64 {
        self.nanos as f64 / 1e9
    }

    /// The span in milliseconds.
    pub fn as_millis_f64(self) -> f64 {
        self.nanos as f64 / 1e6
    }

    /// The span in microseconds.
    pub fn as_micros_f64(self) -> f64 {
        self.nanos as f64 / 1e3
    }

    /// Whether the span is below zero.
    pub const fn is_negative(self) -> bool {
        self.nanos < 0
    }

    /// Whether the span is above zero.
    pub const fn is_positive(self) -> bool {
        self.nanos > 0
    }

    /// The span without its sign, saturating.
    pub const fn abs(self) -> Self {
        Duration {
            nanos: self.nanos.saturating_abs(),
        }
    }

    /// The span as a `std::time::Duration`, or `None` when it is negative.
    pub fn to_std(self) -> Option<std::time::Duration> {
        u64::try_from(self.nanos)
            .ok()
            .map(std::time::Duration::from_nanos)
    }
}

impl From<std::time::Duration> for Duration {
    /// Saturates at [`Duration::MAX`] for spans beyond 292 years.
    fn from(d: std::time::Duration) -> Self {
        Duration {
            nanos: i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
        }
    }
}

impl Add for Duration {
    type Output = Duration;
    fn add(self, rhs: Duration) -> Duration {
        Duration {
            nanos: self.nanos.saturating_add(rhs.nanos),
        }
    }
}

impl Sub for Duration {
    type Output = Duration;
    fn sub(self, rhs: Duration) -> Duration {
        Duration {
            nanos: self.nanos.saturating_sub(rhs.nanos),
        }
    }
}

impl AddAssign for Duration {
    fn add_assign(&mut self, rhs: Duration) {
        *self = *self + rhs;
    }
}

impl SubAssign for Duration {
    fn sub_assign(&mut self, rhs: Duration) {
        *self = *self - rhs;
    }
}

impl Neg for Duration {
    type Output = Duration;
    fn neg(self) -> Duration {
        Duration {
            nanos: self.nanos.saturating_neg(),
        }
    }
}

impl Mul<i64> for Duration {
    type Output = Duration;
    fn mul(self, rhs: i64) -> Duration {
        Duration {
            nanos: self.nanos.saturating_mul(rhs),
        }
    }
}

impl Div<i64> for Duration {
    type Output = Duration;
    /// Saturates instead of overflowing (`MIN / -1`); division by zero saturates to the
    /// bound of the dividend's sign instead of panicking.
    fn div(self, rhs: i64) -> Duration {
        if rhs == 0 {
            return if self.nanos < 0 {
                Duration { nanos: i64::MIN }
            } else {
                Duration::MAX
            };
        }
        Duration {
            nanos: self.nanos.saturating_div(rhs),
        }
    }
}

impl fmt::Display for Duration {
    /// Human units, as people write them: `100 ms`, `1.5 s`, `58.4 us`, `250 ns`: the
    /// largest unit (s, ms, us, ns) in which the span is at least 1, with three significant
    /// digits and no trailing zeros. An explicit precision (`{:.6}`) gives that many
    /// decimals in the same unit instead. `Debug` keeps the exact nanoseconds.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [(u64, &str); 3] = [(1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us")];
        let sign = if self.nanos < 0 { "-" } else { "" };
        let abs = self.nanos.unsigned_abs();
        let Some(i) = UNITS.iter().position(|(scale, _)| abs >= *scale) else {
            return write!(f, "{sign}{abs} ns");
        };
        let (mut scale, mut unit) = UNITS[i];
        // 999.9996 ms rounds to 1000 ms: say 1 s.
        if i > 0 && (abs as f64 / scale as f64).round() >= 1000.0 {
            (scale, unit) = UNITS[i - 1];
        }
        let value = abs as f64 / scale as f64;
        if let Some(decimals) = f.precision() {
            return write!(f, "{sign}{value:.decimals$} {unit}");
        }
        let decimals = match value {
            v if v < 10.0 => 2,
            v if v < 100.0 => 1,
            _ => 0,
        };
        let text = format!("{value:.decimals$}");
        let text = if text.contains('.') {
            text.trim_end_matches('0').trim_end_matches('.')
        } else {
            &text
        };
        write!(f, "{sign}{text} {unit}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_round_trip() {
        assert_eq!(Duration::from_millis(3).as_nanos(), 3_000_000);
        assert_eq!(Duration::from_secs_f64(0.0000015).as_nanos(), 1_500);
        assert_eq!(
            Duration::from(std::time::Duration::from_micros(7)),
            Duration::from_micros(7)
        );
        assert_eq!(Duration::from_nanos(-1).to_std(), None);
        assert_eq!(
            Duration::from_nanos(5).to_std(),
            Some(std::time::Duration::from_nanos(5))
        );
    }

    #[test]
    fn arithmetic_saturates_instead_of_wrapping() {
        assert_eq!(Duration::MAX + Duration::from_nanos(1), Duration::MAX);
        assert_eq!(
            Duration::from_nanos(i64::MIN) - Duration::from_nanos(1),
            Duration::from_nanos(i64::MIN)
        );
        assert_eq!(Duration::from_secs(1) / 0, Duration::MAX);
        assert_eq!(-Duration::from_nanos(i64::MIN), Duration::MAX);
    }

    #[test]
    fn display_is_in_human_units() {
        let cases = [
            (Duration::from_millis(100), "100 ms"),
            (Duration::from_millis(1_500), "1.5 s"),
            (Duration::from_nanos(58_356), "58.4 us"),
            (Duration::from_secs(2), "2 s"),
            (Duration::from_nanos(250), "250 ns"),
            (Duration::ZERO, "0 ns"),
            (Duration::from_micros(-1_250), "-1.25 ms"),
            (Duration::from_secs(3_600), "3600 s"),
            (Duration::from_nanos(999_999), "1 ms"),
        ];
        for (duration, text) in cases {
            assert_eq!(duration.to_string(), text, "{duration:?}");
        }
        assert_eq!(format!("{:.3}", Duration::from_micros(1_500)), "1.500 ms");
    }
}
