//! The machine's floor for a payload: what one `memcpy` of it costs, hot and paced; and
//! the clocks the benchmark reads.

use super::*;

/// The floor for a payload of `size`: p50 of one copy of it into another buffer, done
/// back to back (`hot`: both buffers stay in the cache) and done once per `pace` as the
/// latency samples are (`paced`: what the same copy costs a publisher that idles between
/// messages, when other work has had the cache meanwhile).
#[derive(Debug, Clone, Copy)]
pub(super) struct Floor {
    pub(super) hot_us: f64,
    pub(super) paced_us: f64,
}

pub(super) fn memcpy_floor(size: usize, pace: Duration) -> Floor {
    let source = vec![0x5au8; size];
    // The target starts at the source's offset within a page: on some CPUs (AMD Zen 3,
    // glibc 2.36) a copy whose target is 1-31 bytes past the source modulo 4 KiB runs
    // 15x slower, which two buffers allocated one after the other can hit. The floor is
    // the machine's fast copy.
    let mut spare = vec![0u8; size + 4096];
    let skew = (source.as_ptr() as usize).wrapping_sub(spare.as_ptr() as usize) % 4096;
    let target = &mut spare[skew..skew + size];
    // A copy of a few bytes takes about as long as reading the clock, and may read as
    // 0 ns: small copies are timed 4 KiB at a time, so the floor is never 0.
    let copies = (4096 / size.max(1)).max(1);
    let mut p50 = |runs: usize, pause: Option<Duration>| {
        let mut nanos: Vec<f64> = (0..runs)
            .map(|_| {
                if let Some(pause) = pause {
                    std::thread::sleep(pause);
                }
                let start = mono_ns();
                for _ in 0..copies {
                    target.copy_from_slice(std::hint::black_box(&source));
                    std::hint::black_box(&mut *target);
                }
                (mono_ns() - start).max(1) as f64 / copies as f64
            })
            .collect();
        nanos.sort_unstable_by(f64::total_cmp);
        nanos[nanos.len() / 2] / 1e3
    };
    let large = size >= LARGE;
    Floor {
        hot_us: p50(if large { 50 } else { 2000 }, None),
        paced_us: p50(if large { 30 } else { 200 }, Some(pace)),
    }
}

pub(super) fn mono_ns() -> i64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// The CPU time the calling thread has used, in ns.
pub(super) fn thread_cpu_ns() -> i64 {
    clock_ns(libc::CLOCK_THREAD_CPUTIME_ID)
}

fn clock_ns(clock: libc::clockid_t) -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; both clocks this file reads
    // (CLOCK_MONOTONIC, CLOCK_THREAD_CPUTIME_ID) always exist on Linux.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}
