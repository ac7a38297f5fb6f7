//! `kairos bench read` runs end to end, on a tiled trace (many streams), on a tiled
//! LTTng kernel trace (packetized metadata) and on a generated one-stream-per-CPU trace:
//! every reader sees the same number of events and the figures are printed (no
//! threshold: it is a benchmark). The generated trace reads in babeltrace2 exactly as
//! in kairos.

use std::path::Path;
use std::process::Command;

fn bench(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_kairos"))
        .args(["bench", "read"])
        .args(args)
        .output()
        .expect("run kairos bench read");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for row in [
        "kairos trace summary",
        "kairos trace chains",
        "babeltrace2 -o dummy",
        "as fast as babeltrace2",
    ] {
        assert!(stdout.contains(row), "{stdout}");
    }
    stdout
}

fn traces() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces")
}

#[test]
fn bench_read_prints_both_readers_side_by_side() {
    let trace = traces().join("ros2-sync-one-to-one");
    let stdout = bench(&["--events", "150000", trace.to_str().unwrap()]);
    assert!(
        stdout.contains("tiled 2x in time = 198676 events, 16 streams"),
        "{stdout}"
    );
}

#[test]
fn bench_read_tiles_a_kernel_trace_with_packetized_metadata() {
    let trace = traces().join("ros1-pub-sub-1/kernel");
    let stdout = bench(&["--events", "20000", trace.to_str().unwrap()]);
    assert!(stdout.contains("tiled"), "{stdout}");
}

#[test]
fn a_generated_one_stream_per_cpu_trace_reads_as_babeltrace2_reads_it() {
    let dir = std::env::temp_dir().join(format!("kairos-kernel-like-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = bench(&[
        "--kernel-like",
        "--events",
        "30000",
        "--cpus",
        "3",
        "--keep",
        dir.to_str().unwrap(),
    ]);
    assert!(
        stdout.contains("one stream per CPU = 30000 events, 3 streams"),
        "{stdout}"
    );
    let ours = Command::new(env!("CARGO_BIN_EXE_kairos"))
        .args(["trace", "dump"])
        .arg(&dir)
        .output()
        .unwrap();
    let theirs = kairos_testkit::babeltrace2_output(&["--clock-seconds", "--no-delta"], &dir);
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(ours.status.success() && theirs.status.success());
    let (ours, theirs) = (
        String::from_utf8_lossy(&ours.stdout),
        String::from_utf8_lossy(&theirs.stdout),
    );
    assert_eq!(ours.lines().count(), 30000);
    for (a, b) in ours.lines().zip(theirs.lines()) {
        assert_eq!(a, b);
    }
    assert_eq!(ours.lines().count(), theirs.lines().count());
    // Every event class of the generator, including the extended header's one.
    for name in [
        "sched_switch",
        "irq_handler_entry",
        "rcu_utilization",
        "lttng_statedump_process_state",
    ] {
        assert!(ours.contains(name), "no {name}");
    }
}
