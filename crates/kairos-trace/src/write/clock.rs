//! The trace clock: CLOCK_MONOTONIC in nanoseconds, and its offset to the Unix epoch.

use rustix::time::{ClockId, Timespec, clock_gettime};

fn nanos(ts: Timespec) -> i128 {
    i128::from(ts.tv_sec) * 1_000_000_000 + i128::from(ts.tv_nsec)
}

/// Nanoseconds on the monotonic clock: every event's timestamp.
#[inline]
pub(crate) fn now_ns() -> u64 {
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
