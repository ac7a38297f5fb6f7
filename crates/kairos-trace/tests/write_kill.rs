//! A traced process killed with SIGKILL leaves a trace that babeltrace2 reads, holding
//! every event up to the last periodic flush.
//!
//! The test runs its own binary again as the traced child (selected by an environment
//! variable), so the child is a real separate process with a real session.

mod write_support;

use kairos_trace::write::SessionConfig;
use kairos_trace::{Session, tp};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

const CHILD_DIR: &str = "KAIROS_TRACE_TEST_KILL_CHILD";
/// Set in the child that floods its session.
const CHILD_FLOODS: &str = "KAIROS_TRACE_TEST_KILL_FLOOD";
const FIRST_BATCH: u64 = 500;

/// The flooding child: traces as fast as it can, so the writer thread is always busy
/// encoding and writing when the kill comes.
fn run_flooding_child(dir: &Path) -> ! {
    let config = SessionConfig {
        buffer_events: 256 * 1024,
        flush_interval: Duration::from_millis(1),
        ..SessionConfig::default()
    };
    let session = Session::start_with(dir, config).expect("child starts a session");
    println!("\ntracing");
    let give_up = Instant::now() + Duration::from_secs(120);
    let mut seq = 0;
    while Instant::now() < give_up {
        for _ in 0..1_000 {
            tp::rcl_publish(0x7, 0x100 + seq, seq);
            seq += 1;
        }
    }
    drop(session);
    std::process::exit(0)
}

/// The child: traces a first batch, says so, then keeps tracing until it is killed.
fn run_child(dir: &Path) -> ! {
    let config = SessionConfig {
        flush_interval: Duration::from_millis(20),
        ..SessionConfig::default()
    };
    let session = Session::start_with(dir, config).expect("child starts a session");
    for seq in 0..FIRST_BATCH {
        tp::rcl_publish(0x7, 0x100 + seq, seq);
    }
    // On its own line: the test harness has already printed "test ... " without one.
    println!("\ntraced {FIRST_BATCH}");
    // Bounded, so an orphaned child cannot outlive a broken test for long.
    let give_up = Instant::now() + Duration::from_secs(120);
    let mut seq = FIRST_BATCH;
    while Instant::now() < give_up {
        tp::rcl_publish(0x7, 0x100 + seq, seq);
        seq += 1;
        std::thread::sleep(Duration::from_micros(200));
    }
    drop(session);
    std::process::exit(0)
}

/// Runs this test binary's test `name` as a child tracing into `dir`.
fn spawn_child(name: &str, dir: &Path, flood: bool) -> KillOnDrop {
    let mut command = kairos_testkit::rerun_self(name);
    command
        .arg("--test-threads=1")
        .env(CHILD_DIR, dir)
        .stdout(Stdio::piped());
    if flood {
        command.env(CHILD_FLOODS, "1");
    }
    KillOnDrop(command.spawn().unwrap())
}

/// Kills the child when the test ends, passed or failed.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        // Already dead after a passing test: nothing to do then.
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_killed_process_leaves_a_readable_trace_up_to_the_last_flush() {
    if let Some(dir) = std::env::var_os(CHILD_DIR) {
        run_child(Path::new(&dir));
    }
    let dir = tempfile::tempdir().unwrap();
    let mut child = spawn_child(
        "a_killed_process_leaves_a_readable_trace_up_to_the_last_flush",
        dir.path(),
        false,
    );
    let mut lines = BufReader::new(child.0.stdout.take().unwrap()).lines();
    let ready = lines.find_map(|line| line.ok().filter(|l| l.starts_with("traced")));
    assert_eq!(
        ready.as_deref(),
        Some("traced 500"),
        "the child did not start"
    );

    // Only the periodic flush can make the first batch readable: the child never flushes.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let reading = write_support::read(dir.path());
        if reading.success && reading.events.len() as u64 > FIRST_BATCH {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no periodic flush within 30 s: {} events, {}",
            reading.events.len(),
            reading.stderr
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.0.kill().unwrap(); // SIGKILL: no destructor, no final flush
    let status = child.0.wait().unwrap();
    assert!(!status.success(), "the child was killed");

    let events = write_support::read_clean(dir.path());
    let seqs: Vec<u64> = events.iter().map(|e| e.u64("seq")).collect();
    assert!(seqs.len() as u64 > FIRST_BATCH);
    assert_eq!(
        seqs,
        (0..seqs.len() as u64).collect::<Vec<_>>(),
        "every event up to the last flush, none missing"
    );
}

#[test]
fn a_kill_during_writes_leaves_whole_packets() {
    if let Some(dir) = std::env::var_os(CHILD_DIR) {
        if std::env::var_os(CHILD_FLOODS).is_some() {
            run_flooding_child(Path::new(&dir));
        }
        return; // spawned for the other test of this binary
    }
    // Kill at different moments of the writer's work.
    for delay_ms in [0, 3, 11, 23, 37] {
        let dir = tempfile::tempdir().unwrap();
        let mut child = spawn_child(
            "a_kill_during_writes_leaves_whole_packets",
            dir.path(),
            true,
        );
        let mut lines = BufReader::new(child.0.stdout.take().unwrap()).lines();
        let ready = lines.find_map(|line| line.ok().filter(|l| l == "tracing"));
        assert!(ready.is_some(), "the child did not start");
        std::thread::sleep(Duration::from_millis(delay_ms));
        child.0.kill().unwrap();
        child.0.wait().unwrap();

        let reading = write_support::read(dir.path());
        let unexpected: Vec<&str> = reading
            .stderr
            .lines()
            .filter(|line| {
                !line.trim().is_empty() && !line.starts_with("WARNING: Tracer discarded")
            })
            .collect();
        assert!(
            reading.success && unexpected.is_empty(),
            "killed after {delay_ms} ms, babeltrace2 says:\n{}",
            reading.stderr
        );
        let seqs: Vec<u64> = reading.events.iter().map(|e| e.u64("seq")).collect();
        assert!(seqs.is_sorted_by(|a, b| a < b), "events in emit order");
        if let Some(last) = seqs.last() {
            assert!(
                seqs.len() as u64 + reading.discarded() > *last,
                "every missing event is counted as discarded"
            );
        }
    }
}
