//! Asymmetric fences: a store-buffering handshake whose one side runs on every callback
//! and whose other side runs once in a while (an executor shutting down).
//!
//! The handshake "store my flag, fence, load yours" on both sides guarantees that at least
//! one side sees the other's store. With a `SeqCst` fence on both sides, the hot side pays
//! a full memory barrier (about as much as a locked read-modify-write) on every callback.
//! Here the hot side uses [`light_fence`], which only keeps the compiler from reordering,
//! and the rare side uses [`heavy_fence`], which makes every thread of the process execute
//! a full barrier (Linux `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`, a few hundred
//! nanoseconds to microseconds). Either a hot thread's load ran before that barrier in its
//! own program order (then its store did too, and the rare side's loads after the barrier
//! see it) or after it (then it sees the rare side's store, made before the barrier): the
//! guarantee of a fence pair, as in Linux's `sys_membarrier` pairing and folly's
//! `asymmetricLightBarrier`.
//!
//! Where `membarrier` is unavailable (an old kernel, a seccomp filter), both fences are
//! full `SeqCst` fences, which is always correct. The choice is made once, before the
//! first light fence that may pair with a heavy one: a light fence that runs before the
//! choice is made is a full fence.
//!
//! The loom model (`tests/exec_loom.rs`) maps both to `SeqCst` fences: it checks each
//! protocol as a symmetric fence pair, which the asymmetric pair is equivalent to.

use std::sync::OnceLock;
use std::sync::atomic::{Ordering, compiler_fence, fence};

/// Whether the heavy side is `membarrier` (true) or a plain fence (false).
static ASYMMETRIC: OnceLock<bool> = OnceLock::new();

/// Decides once whether `membarrier` can serve the heavy side (registers the process for
/// it). Call before the first light fence whose pairing matters; later calls are free.
pub(crate) fn init() -> bool {
    *ASYMMETRIC.get_or_init(|| {
        use rustix::thread::{MembarrierCommand, membarrier, membarrier_query};
        // Miri runs no membarrier: the symmetric fallback, which it checks as it is.
        !cfg!(miri)
            && membarrier_query().contains_command(MembarrierCommand::PrivateExpedited)
            && membarrier(MembarrierCommand::RegisterPrivateExpedited).is_ok()
    })
}

/// The frequent side of a handshake: a compiler fence when [`heavy_fence`] makes every
/// thread execute a barrier, else a full fence.
#[inline]
pub(crate) fn light_fence() {
    if ASYMMETRIC.get() == Some(&true) {
        compiler_fence(Ordering::SeqCst);
    } else {
        fence(Ordering::SeqCst);
    }
}

/// The rare side of a handshake: a full barrier on this thread and on every thread of the
/// process that runs at the time.
pub(crate) fn heavy_fence() {
    fence(Ordering::SeqCst);
    if init() {
        // Cannot fail: the command was queried and the process registered in `init`
        // (membarrier(2): EPERM only without the registration).
        let done = rustix::thread::membarrier(rustix::thread::MembarrierCommand::PrivateExpedited);
        debug_assert!(done.is_ok(), "membarrier after registration: {done:?}");
    }
    fence(Ordering::SeqCst);
}

#[cfg(test)]
mod tests {
    use super::{heavy_fence, init, light_fence};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

    /// One side of a store-buffering round: waits at the start line for the other side,
    /// stores its flag, fences, and reports whether it missed the other's flag.
    fn side(
        start: &AtomicU64,
        round: u64,
        mine: &AtomicBool,
        theirs: &AtomicBool,
        fence: fn(),
    ) -> bool {
        start.fetch_add(1, Ordering::AcqRel);
        while start.load(Ordering::Acquire) < 2 * round {
            std::hint::spin_loop();
        }
        mine.store(true, Ordering::Relaxed);
        fence();
        !theirs.load(Ordering::Relaxed)
    }

    /// Store buffering, the outcome a fence pair forbids: each thread stores its flag, fences
    /// and loads the other's, and both loads miss both stores. Round after round, the two
    /// threads leave a spinning start line together. (With compiler fences on both sides,
    /// x86's store buffer shows the outcome in a fraction of the rounds.)
    #[test]
    fn a_light_and_a_heavy_fence_never_let_both_loads_miss() {
        const ROUNDS: usize = 20_000;
        init();
        let flags: Arc<Vec<(AtomicBool, AtomicBool)>> = Arc::new(
            (0..ROUNDS)
                .map(|_| (AtomicBool::new(false), AtomicBool::new(false)))
                .collect(),
        );
        let start = Arc::new(AtomicU64::new(0));
        let heavy_side = {
            let (flags, start) = (flags.clone(), start.clone());
            std::thread::spawn(move || {
                (0..ROUNDS)
                    .map(|r| {
                        let (light, heavy) = &flags[r];
                        side(&start, r as u64 + 1, heavy, light, heavy_fence)
                    })
                    .collect::<Vec<bool>>()
            })
        };
        let light_missed: Vec<bool> = (0..ROUNDS)
            .map(|r| {
                let (light, heavy) = &flags[r];
                side(&start, r as u64 + 1, light, heavy, light_fence)
            })
            .collect();
        let heavy_missed = heavy_side.join().unwrap();
        let both_missed = light_missed
            .iter()
            .zip(&heavy_missed)
            .filter(|(light, heavy)| **light && **heavy)
            .count();
        assert_eq!(
            both_missed, 0,
            "in {both_missed} of {ROUNDS} rounds neither side saw the other's store"
        );
    }
}
