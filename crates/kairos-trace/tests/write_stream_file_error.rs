//! One stream file that cannot be created loses only its own stream's events: the writer
//! keeps writing the threads whose stream files are open.
//!
//! One stream file per live thread means one open file per traced thread: a process with
//! many threads (or many sockets) reaches its open-file limit, and creating the newest
//! thread's file fails with `EMFILE`.
//!
//! The child runs under `ulimit -n` so that the limit is reached by a few dozen threads.

mod write_support;

use kairos_trace::write::SessionConfig;
use kairos_trace::{Session, tp};
use std::path::Path;
use std::sync::Barrier;
use std::time::Duration;

const CHILD_DIR: &str = "KAIROS_TRACE_TEST_STREAM_FILE_ERROR_CHILD";
/// Open files allowed in the child: the test harness needs a dozen or so.
const OPEN_FILES: u32 = 40;
/// Threads alive at once in the child's second phase: more than the limit leaves.
const CROWD: usize = 60;
/// The publisher of the first thread, traced before and after the crowd.
const STEADY: u64 = 0xA;

fn run_child(dir: &Path) {
    let config = SessionConfig {
        flush_interval: Duration::from_secs(3600),
        ..SessionConfig::default()
    };
    let session = Session::start_with(dir, config).expect("child starts a session");
    let (go_tx, go_rx) = crossbeam_channel::bounded::<()>(0);
    let (done_tx, done_rx) = crossbeam_channel::bounded::<()>(0);
    std::thread::scope(|scope| {
        scope.spawn(move || {
            tp::rcl_publish(STEADY, 0x1, 0);
            done_tx.send(()).unwrap();
            go_rx.recv().unwrap();
            tp::rcl_publish(STEADY, 0x2, 1);
            done_tx.send(()).unwrap();
        });
        done_rx.recv().unwrap();
        session
            .flush()
            .expect("the steady thread's stream is written");
        // A crowd of threads, all alive at once, each tracing one event.
        let all_traced = Barrier::new(CROWD + 1);
        std::thread::scope(|crowd| {
            for n in 0..CROWD {
                let all_traced = &all_traced;
                crowd.spawn(move || {
                    tp::rcl_publish(0x100 + n as u64, 0x1, 0);
                    all_traced.wait();
                    all_traced.wait();
                });
            }
            all_traced.wait();
            let flushed = session.flush();
            println!("\ncrowd flush: {flushed:?}");
            all_traced.wait();
        });
        go_tx.send(()).unwrap();
        done_rx.recv().unwrap();
    });
    let stopped = session.stop();
    println!("\nstop: {stopped:?}");
}

#[test]
fn one_stream_file_that_cannot_be_created_does_not_stop_the_others() {
    if let Some(dir) = std::env::var_os(CHILD_DIR) {
        run_child(Path::new(&dir));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let child_out = write_support::run_child_under(
        &format!("ulimit -n {OPEN_FILES}"),
        "one_stream_file_that_cannot_be_created_does_not_stop_the_others",
        CHILD_DIR,
        dir.path(),
    );
    assert!(
        child_out.contains("crowd flush: Err(")
            && child_out.contains("cannot create the stream file"),
        "the crowd reached the open-file limit:\n{child_out}"
    );
    let reading = write_support::read(dir.path());
    assert!(reading.success, "{}", reading.stderr);
    let steady: Vec<u64> = reading
        .events
        .iter()
        .filter(|e| e.u64("publisher_handle") == STEADY)
        .map(|e| e.u64("seq"))
        .collect();
    assert_eq!(
        steady,
        [0, 1],
        "the steady thread's stream file is open: its event after the crowd is written\n\
         child: {child_out}"
    );
}
