//! The one wait primitive under every sleep, timer and rate.
//!
//! A blocking wait parks the calling thread with a *relative* timeout computed from
//! `CLOCK_MONOTONIC` (`std::thread::park_timeout`, a futex wait whose timeout the kernel
//! measures on the monotonic clock: no `FUTEX_CLOCK_REALTIME`, no
//! `clock_nanosleep(CLOCK_REALTIME)`). Whatever can end the wait early (cancellation, a
//! clock jump, a simulated clock update, a timer reset) wakes the thread through a
//! [`Waker`] registered with that source; the caller then re-reads its clock and decides.
//! Spurious wake-ups are therefore harmless, and never-early is decided by the caller's
//! loop, not by the kernel.

use std::cell::RefCell;
use std::sync::Arc;
use std::task::{Wake, Waker};
use std::thread::Thread;

/// `CLOCK_MONOTONIC` in nanoseconds.
#[inline]
pub(crate) fn mono_now() -> i64 {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    ts.tv_sec
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec as i64)
}

/// `CLOCK_REALTIME` in nanoseconds since the Unix epoch, read through libc
/// (`std::time::SystemTime`), so that libfaketime and other interposers see the read.
#[inline]
pub(crate) fn wall_now() -> i64 {
    match std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
        Err(before_epoch) => -i64::try_from(before_epoch.duration().as_nanos()).unwrap_or(i64::MAX),
    }
}

struct ThreadWaker(Thread);

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

thread_local! {
    static THREAD_WAKER: RefCell<Option<Waker>> = const { RefCell::new(None) };
}

/// A waker that unparks the current thread; built once per thread.
pub(crate) fn thread_waker() -> Waker {
    THREAD_WAKER.with(|cell| {
        cell.borrow_mut()
            .get_or_insert_with(|| Waker::from(Arc::new(ThreadWaker(std::thread::current()))))
            .clone()
    })
}

/// Parks the current thread until `deadline` on the monotonic clock (or indefinitely when
/// `None`), or until its [`thread_waker`] is woken, or spuriously.
pub(crate) fn park_until_mono(deadline: Option<i64>) {
    match deadline {
        None => std::thread::park(),
        Some(deadline) => {
            let remaining = deadline.saturating_sub(mono_now());
            if remaining > 0 {
                std::thread::park_timeout(std::time::Duration::from_nanos(remaining as u64));
            }
        }
    }
}
