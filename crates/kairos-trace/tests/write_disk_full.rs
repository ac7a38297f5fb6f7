//! A write that fails part-way (disk full, file-size limit) leaves the trace readable up
//! to it.
//!
//! A `write` of a batch of packets can write some bytes and then fail (Linux writes up to
//! the space or limit left, then returns `ENOSPC`/`EFBIG`). The writer cuts the stream
//! file back to its last whole packet, so the trace stays readable, as it does for a
//! killed process, and `stop` reports the error.
//!
//! The child runs under `ulimit -f` (SIGXFSZ ignored, so the write fails with `EFBIG`
//! instead of killing it): a file-size limit not on a packet boundary stands in for a
//! full disk.

mod write_support;

use kairos_trace::write::SessionConfig;
use kairos_trace::{Session, tp};
use std::path::Path;
use std::time::Duration;

const CHILD_DIR: &str = "KAIROS_TRACE_TEST_WRITE_ERROR_CHILD";
/// In 512-byte blocks: 20,992 bytes, five 4 KiB packets and an eighth of one; the
/// metadata (about 14 KB) fits.
const FILE_BLOCKS: u32 = 41;
const EVENTS: u64 = 10_000;

fn run_child(dir: &Path) {
    let config = SessionConfig {
        flush_interval: Duration::from_secs(3600),
        ..SessionConfig::default()
    };
    let session = Session::start_with(dir, config).expect("child starts a session");
    for seq in 0..EVENTS {
        tp::rcl_publish(0x7, 0x100 + seq, seq);
    }
    let flushed = session.flush();
    let stopped = session.stop();
    println!("\nflush: {flushed:?}\nstop: {stopped:?}");
}

#[test]
fn a_failed_write_leaves_the_trace_readable_up_to_it() {
    if let Some(dir) = std::env::var_os(CHILD_DIR) {
        run_child(Path::new(&dir));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let child_out = write_support::run_child_under(
        &format!("trap '' XFSZ; ulimit -f {FILE_BLOCKS}"),
        "a_failed_write_leaves_the_trace_readable_up_to_it",
        CHILD_DIR,
        dir.path(),
    );
    assert!(
        child_out.contains("stop: Err(") && child_out.contains("cannot write packets"),
        "the child's writes hit the limit and stop said so:\n{child_out}"
    );
    let reading = write_support::read(dir.path());
    assert!(
        reading.success,
        "babeltrace2 rejects the trace after a failed write:\n{}",
        reading.stderr
    );
    assert!(
        !reading.events.is_empty(),
        "the packets before the failure are read"
    );
}
