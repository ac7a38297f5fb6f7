//! An event traced while a thread is being torn down is written (or at least counted).
//!
//! A thread-local whose destructor traces (a runtime object kept per thread, reporting at
//! its end) runs after the tracer's own thread-local is gone when it was created before
//! the thread's first event (thread-local destructors run in reverse order of creation):
//! the event then has no queue of its thread to go to.

mod write_support;

use kairos_trace::write::SessionConfig;
use kairos_trace::{Session, tp};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Traces `callback_end` when its thread ends.
struct ReportsOnExit {
    callback: Cell<u64>,
}

static REPORTED: AtomicBool = AtomicBool::new(false);

impl Drop for ReportsOnExit {
    fn drop(&mut self) {
        tp::callback_end(self.callback.get());
        REPORTED.store(true, Ordering::SeqCst);
    }
}

thread_local! {
    static REPORTER: ReportsOnExit = const { ReportsOnExit { callback: Cell::new(0) } };
}

#[test]
fn an_event_traced_in_a_thread_local_destructor_is_written_or_counted() {
    let dir = tempfile::tempdir().unwrap();
    let config = SessionConfig {
        flush_interval: Duration::from_secs(3600),
        ..SessionConfig::default()
    };
    let session = Session::start_with(dir.path(), config).unwrap();
    std::thread::spawn(|| {
        // Created before the thread's first event, so destroyed after the tracer's.
        REPORTER.with(|r| r.callback.set(0x2));
        tp::callback_start(0x1, 0);
    })
    .join()
    .unwrap();
    assert!(REPORTED.load(Ordering::SeqCst), "the destructor traced");
    let stats = session.stop().unwrap();
    let emitted = 2;
    assert_eq!(
        stats.events_written + stats.events_discarded + stats.events_lost,
        emitted,
        "every emitted event is written or counted: {stats:?}"
    );
    let reading = write_support::read(dir.path());
    assert!(reading.success, "{}", reading.stderr);
    assert_eq!(
        reading.events.len() as u64 + reading.discarded(),
        emitted,
        "babeltrace2 shows or reports every emitted event:\n{}",
        reading.stderr
    );
}
