//! One thread that traces without pause does not keep the writer thread on its queue: a
//! pass over a queue takes at most what it held when the pass began, so `Session::flush`
//! returns and the other threads' queues are written at the flush interval.
//!
//! A thread that pushes at least as fast as the writer encodes (a burst of long-named
//! events; once its queue is full each failed push is cheaper still) refills its queue
//! behind each pop; a writer that popped until the queue was empty would never leave it.
//!
//! To be independent of the machine's load, every thread of the test (the writer
//! inherits it) runs on one CPU: the writer then never gets the long stretch without the
//! producer that emptying a full queue needs (the scheduler alternates runnable threads
//! every few ms), which is what a loaded machine gives it by chance, and a fast producer
//! on its own core gives it always.

use kairos_trace::write::SessionConfig;
use kairos_trace::{Session, tp};
use rustix::thread::{CpuSet, sched_getcpu, sched_setaffinity};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long the flush may take: far more than a writer that drains only what was queued
/// needs here (~250 ms of its CPU), however loaded the CPU the test runs on; the tracing
/// thread keeps tracing for longer still ([`HOG_FOR`]), so a flush that answers at all
/// answered while it traced. A writer that popped until the queue was empty would never
/// answer while it traces.
const FLUSH_BOUND: Duration = Duration::from_secs(60);
/// How long the tracing thread traces unless the flush answers first.
const HOG_FOR: Duration = Duration::from_secs(120);

#[test]
fn flush_returns_while_another_thread_traces_continuously() {
    let mut one_cpu = CpuSet::new();
    one_cpu.set(sched_getcpu());
    sched_setaffinity(None, &one_cpu).expect("pin the test thread to its CPU");

    let dir = tempfile::tempdir().unwrap();
    let config = SessionConfig {
        // The default 16 Ki events: some 120 ms of the writer's CPU time at one event per
        // page, so a writer that drained what was queued would answer within ~250 ms.
        flush_interval: Duration::from_millis(10),
        ..SessionConfig::default()
    };
    let session = Session::start_with(dir.path(), config).unwrap();
    let hog_done = AtomicBool::new(false);
    let (started_tx, started_rx) = crossbeam_channel::bounded(1);
    let (flushed_tx, flushed_rx) = crossbeam_channel::bounded(1);
    let took = std::thread::scope(|scope| {
        scope.spawn(|| {
            // A long callback name, as demangled C++ or Rust closure symbols are.
            let symbol = "kairos::exec::Callback<".repeat(100);
            let mut callback = 0;
            tp::rclcpp_callback_register(callback, &symbol);
            started_tx.send(()).unwrap();
            // Bounded, so a broken writer cannot keep the test running for ever.
            let give_up = Instant::now() + HOG_FOR;
            while !hog_done.load(Ordering::Relaxed) && Instant::now() < give_up {
                for _ in 0..100 {
                    callback += 1;
                    tp::rclcpp_callback_register(callback, &symbol);
                }
            }
        });
        started_rx.recv().unwrap();
        // Let the burst fill its queue and the writer start on it.
        std::thread::sleep(Duration::from_millis(200));
        let asked = Instant::now();
        scope.spawn(|| {
            tp::callback_start(0x1, 0); // one quiet thread's event
            flushed_tx.send(session.flush()).unwrap();
        });
        let answer = flushed_rx.recv_timeout(FLUSH_BOUND);
        let took = asked.elapsed();
        hog_done.store(true, Ordering::Relaxed);
        // Once the burst ends, the writer catches up and the flush returns.
        let result = answer.or_else(|_| flushed_rx.recv());
        result.expect("flush answered").expect("flush succeeded");
        took
    });
    session.stop().unwrap();
    assert!(
        took < FLUSH_BOUND,
        "flush took {took:?} while one other thread traced continuously"
    );
}
