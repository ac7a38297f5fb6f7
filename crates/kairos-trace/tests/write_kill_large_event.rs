//! A process killed while the writer appends packets of large events leaves a readable
//! trace.
//!
//! Packets are page-sized so that a SIGKILL, which Linux delivers between the pages of a
//! `write`, leaves whole packets. An event larger than a page (a long callback `symbol`,
//! a long topic or node name list in a `shutdown_report`) would need a packet of several
//! pages, which a kill could cut; instead its strings are cut to fit one page.
//!
//! The child traces such events continuously so that the writer is almost always writing
//! them; the test kills it a few times and fails if any trace is unreadable.

use kairos_trace::write::SessionConfig;
use kairos_trace::{Session, tp};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

const CHILD_DIR: &str = "KAIROS_TRACE_TEST_KILL_LARGE_CHILD";
const KILLS: usize = 10;

fn run_child(dir: &Path) -> ! {
    let config = SessionConfig {
        buffer_events: 1024,
        flush_interval: Duration::from_millis(1),
        ..SessionConfig::default()
    };
    let session = Session::start_with(dir, config).expect("child starts a session");
    // Sixteen pages: a generic callback's demangled name can be this long.
    let symbol = "kairos::exec::Callback<".repeat(16 * 4096 / 23);
    println!("\ntracing");
    let give_up = Instant::now() + Duration::from_secs(60);
    let mut callback = 0;
    while Instant::now() < give_up {
        tp::rclcpp_callback_register(callback, &symbol);
        callback += 1;
    }
    drop(session);
    std::process::exit(0)
}

#[test]
fn a_kill_during_a_large_event_leaves_a_readable_trace() {
    if let Some(dir) = std::env::var_os(CHILD_DIR) {
        run_child(Path::new(&dir));
    }
    for attempt in 0..KILLS {
        let dir = tempfile::tempdir().unwrap();
        let mut child =
            kairos_testkit::rerun_self("a_kill_during_a_large_event_leaves_a_readable_trace")
                .env(CHILD_DIR, dir.path())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let started = lines.any(|line| line.is_ok_and(|l| l == "tracing"));
        std::thread::sleep(Duration::from_millis(50));
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(started, "the child did not start");
        // Decoded, not printed: babeltrace2's text output of long strings is slow.
        let output = kairos_testkit::babeltrace2_output(&["--output-format=dummy"], dir.path());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success() && stderr.is_empty(),
            "kill {attempt}: babeltrace2 rejects the trace:\n{}",
            stderr.lines().take(3).collect::<Vec<_>>().join("\n")
        );
    }
}
