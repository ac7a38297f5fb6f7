//! `Session::start` refuses a directory that already holds other files.
//!
//! Every regular file in a CTF trace directory is read as a data stream, so a trace
//! written into `$HOME/logs` or next to a leftover `stream_0` of an interrupted trace
//! would be rejected by babeltrace2 or lose every event: `start` refuses such a directory
//! with a typed error saying to give a new or empty one.

mod write_support;

use kairos_trace::write::Error;
use kairos_trace::{Session, tp};

/// Either `start` refuses the directory with a typed error (which says what to do), or
/// the trace it writes reads cleanly with its event.
fn start_traces_cleanly_or_refuses(dir: &std::path::Path) {
    let session = match Session::start(dir) {
        Err(refused) => {
            assert!(!matches!(refused, Error::AlreadyActive { .. }), "{refused}");
            assert!(
                refused
                    .to_string()
                    .contains("give a new or empty directory"),
                "the refusal says what to do: {refused}"
            );
            return;
        }
        Ok(session) => session,
    };
    tp::rcl_publish(0x1, 0x2, 0);
    let stats = session
        .stop()
        .expect("stop succeeds in a directory start accepted");
    assert_eq!(stats.events_written, 1);
    let events = write_support::read_clean(dir);
    assert_eq!(events.len(), 1);
}

#[test]
fn a_directory_with_other_files_is_refused_or_traced_readably() {
    let _session_lock = write_support::exclusive();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "robot run of Tuesday\n").unwrap();
    start_traces_cleanly_or_refuses(dir.path());
}

#[test]
fn a_directory_with_a_leftover_stream_file_is_refused_or_traced_readably() {
    let _session_lock = write_support::exclusive();
    let dir = tempfile::tempdir().unwrap();
    // What a trace whose metadata was removed (or not yet written) leaves.
    std::fs::write(dir.path().join("stream_0"), []).unwrap();
    start_traces_cleanly_or_refuses(dir.path());
}
