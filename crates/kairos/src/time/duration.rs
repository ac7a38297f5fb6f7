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

    pub const fn from_nanos(nanos: i64) -> Self {
        Duration { nanos }
    }

    pub const fn from_micros(micros: i64) -> Self {
        Duration {
            nanos: micros.saturating_mul(1_000),
        }
    }

    pub const fn from_millis(millis: i64) -> Self {
        Duration {
            nanos: millis.saturating_mul(1_000_000),
        }
    }

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

    pub const fn as_nanos(self) -> i64 {
        self.nanos
    }

    pub fn as_secs_f64(self) -> f64 {
        self.nanos as f64 / 1e9
    }

    pub fn as_millis_f64(self) -> f64 {
        self.nanos as f64 / 1e6
    }

    pub fn as_micros_f64(self) -> f64 {
        self.nanos as f64 / 1e3
    }

    pub const fn is_negative(self) -> bool {
        self.nanos < 0
    }

    pub const fn is_positive(self) -> bool {
        self.nanos > 0
    }

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
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.nanos;
        let a = n.unsigned_abs();
        if a >= 1_000_000_000 {
            write!(f, "{:.3} s", n as f64 / 1e9)
        } else if a >= 1_000_000 {
            write!(f, "{:.3} ms", n as f64 / 1e6)
        } else if a >= 1_000 {
            write!(f, "{:.3} us", n as f64 / 1e3)
        } else {
            write!(f, "{n} ns")
        }
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
}
