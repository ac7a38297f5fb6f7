//! Timer slack: how late the kernel may wake a thread to batch wake-ups.
//!
//! Linux lets a thread's timed waits expire up to its timer slack late (50 us by default)
//! to save power. For a thread whose job is to wake on time that is a floor on lateness,
//! so kairos sets the slack of threads that block in its timed waits (sleeps, timers,
//! rates, the time driver, executor workers) to 1 ns, once per thread. Call
//! [`set_auto_timer_slack(false)`](set_auto_timer_slack) before starting such threads to
//! keep the kernel default.

use std::cell::Cell;
use std::num::NonZeroU64;
use std::sync::atomic::{AtomicBool, Ordering};

static AUTO: AtomicBool = AtomicBool::new(true);

thread_local! {
    static DONE: Cell<bool> = const { Cell::new(false) };
}

/// Whether kairos sets 1 ns slack on threads that wait in its timed waits (default: yes).
pub fn set_auto_timer_slack(enabled: bool) {
    AUTO.store(enabled, Ordering::Relaxed);
}

/// Sets the calling thread's timer slack; `None` restores the process default.
pub fn set_current_thread_timer_slack(nanos: Option<NonZeroU64>) -> std::io::Result<()> {
    rustix::thread::set_current_timer_slack(nanos).map_err(std::io::Error::from)
}

/// The calling thread's timer slack in nanoseconds.
pub fn current_thread_timer_slack() -> std::io::Result<u64> {
    rustix::thread::current_timer_slack().map_err(std::io::Error::from)
}

/// Gives the calling thread 1 ns slack, once, unless disabled.
#[inline]
pub(crate) fn ensure_fine_slack() {
    if !AUTO.load(Ordering::Relaxed) || DONE.with(Cell::get) {
        return;
    }
    DONE.with(|d| d.set(true));
    // Best effort: a kernel without PR_SET_TIMERSLACK leaves the default, which only
    // costs precision, never correctness.
    let _ = set_current_thread_timer_slack(NonZeroU64::new(1));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fine_slack_is_applied_to_waiting_threads() {
        std::thread::spawn(|| {
            assert!(
                current_thread_timer_slack().unwrap() > 1,
                "kernel default expected first"
            );
            ensure_fine_slack();
            assert_eq!(current_thread_timer_slack().unwrap(), 1);
        })
        .join()
        .unwrap();
    }
}
