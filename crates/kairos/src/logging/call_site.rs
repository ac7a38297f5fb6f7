//! The state of one logging call site, for lines logged once, throttled, or from their
//! second time on (rclcpp's `_ONCE`, `_THROTTLE` and `_SKIPFIRST` macros).

use crate::time::{Clock, Duration};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

/// One call site's state; the macros keep one in a `static` per call site.
#[derive(Debug)]
pub struct CallSite {
    hits: AtomicU64,
    /// When the last throttled line passed, in ns of its clock (`i64::MIN`: never).
    last_ns: AtomicI64,
}

impl CallSite {
    /// A call site that has not logged yet.
    pub const fn new() -> Self {
        CallSite {
            hits: AtomicU64::new(0),
            last_ns: AtomicI64::new(i64::MIN),
        }
    }

    /// True the first time only.
    pub fn first(&self) -> bool {
        self.hits.fetch_add(1, Ordering::Relaxed) == 0
    }

    /// False the first time, true afterwards.
    pub fn after_first(&self) -> bool {
        self.hits.fetch_add(1, Ordering::Relaxed) > 0
    }

    /// True when `period` has passed on `clock` since the last time this returned true
    /// (and the first time); the clock is the node's, so throttling follows simulation
    /// time where the node does.
    pub fn throttle(&self, clock: &Clock, period: Duration) -> bool {
        let now = clock.now().nanos();
        let mut last = self.last_ns.load(Ordering::Relaxed);
        loop {
            let due = last == i64::MIN || now.saturating_sub(last) >= period.as_nanos();
            if !due {
                return false;
            }
            match self.last_ns.compare_exchange_weak(
                last,
                now,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(seen) => last = seen,
            }
        }
    }
}

impl Default for CallSite {
    fn default() -> Self {
        Self::new()
    }
}

/// Logs a line the first time this call site is reached, never again:
/// `kairos::log_once!(node.logger(), Severity::Warn, "no map yet")`.
#[macro_export]
macro_rules! log_once {
    ($logger:expr, $severity:expr, $($arg:tt)+) => {{
        static SITE: $crate::logging::CallSite = $crate::logging::CallSite::new();
        let logger = &$logger;
        if logger.is_enabled_for($severity) && SITE.first() {
            logger.log($severity, ::std::format_args!($($arg)+), file!(), line!());
        }
    }};
}

/// Logs a line at most once per `period` of `clock`:
/// `kairos::log_throttle!(logger, Severity::Info, node.clock(), Duration::from_secs(1), "at {x}")`.
#[macro_export]
macro_rules! log_throttle {
    ($logger:expr, $severity:expr, $clock:expr, $period:expr, $($arg:tt)+) => {{
        static SITE: $crate::logging::CallSite = $crate::logging::CallSite::new();
        let logger = &$logger;
        if logger.is_enabled_for($severity) && SITE.throttle(&$clock, $period) {
            logger.log($severity, ::std::format_args!($($arg)+), file!(), line!());
        }
    }};
}

/// Logs a line every time this call site is reached but the first.
#[macro_export]
macro_rules! log_skip_first {
    ($logger:expr, $severity:expr, $($arg:tt)+) => {{
        static SITE: $crate::logging::CallSite = $crate::logging::CallSite::new();
        let logger = &$logger;
        if logger.is_enabled_for($severity) && SITE.after_first() {
            logger.log($severity, ::std::format_args!($($arg)+), file!(), line!());
        }
    }};
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimClock;

    #[test]
    fn once_skip_first_and_throttle_follow_their_clock() {
        let site = CallSite::new();
        assert_eq!((site.first(), site.first()), (true, false));
        let site = CallSite::new();
        assert_eq!((site.after_first(), site.after_first()), (false, true));
        let sim = SimClock::new();
        let clock = sim.clock();
        let site = CallSite::new();
        let period = Duration::from_secs(1);
        let mut passed = 0;
        for step in 0..50 {
            let _ = sim.publish(crate::time::Time::new(
                crate::time::ClockKind::Sim,
                step * 100_000_000,
            ));
            passed += usize::from(site.throttle(&clock, period));
        }
        assert_eq!(passed, 5, "5 s of simulation time at most once per second");
    }
}
