//! A relative trace directory means the directory at start, wherever the program goes.
//!
//! `KAIROS_TRACE=trace ./robot` is the natural use, and programs change directory (daemons
//! `chdir("/")`, tools `cd` into a workspace); stream files created relative to the new
//! current directory would leave the trace without events.

mod write_support;

use kairos_trace::{Session, tp};

#[test]
fn a_relative_trace_dir_means_the_directory_at_start() {
    let root = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    std::env::set_current_dir(root.path()).unwrap();
    let session = Session::start("trace").unwrap();
    // The program moves on, as programs do.
    std::env::set_current_dir(elsewhere.path()).unwrap();
    tp::rcl_publish(0x1, 0x2, 0);
    let stats = session.stop();
    let trace = root.path().join("trace");
    assert!(
        !elsewhere.path().join("trace").exists(),
        "stream files went to the new current directory"
    );
    let stats = stats.expect("stop succeeds");
    assert_eq!(stats.events_written, 1);
    let events = write_support::read_clean(&trace);
    assert_eq!(
        events.len(),
        1,
        "the event is in the trace started at {trace:?}"
    );
}
