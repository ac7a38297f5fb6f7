//! `kairos bench read` runs end to end on a small tiling: both readers see the same
//! number of events and the figures are printed (no threshold: it is a benchmark).

use std::path::Path;
use std::process::Command;

#[test]
fn bench_read_prints_both_readers_side_by_side() {
    let trace =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/ros2-sync-one-to-one");
    let out = Command::new(env!("CARGO_BIN_EXE_kairos"))
        .args(["bench", "read", "--events", "150000"])
        .arg(&trace)
        .output()
        .expect("run kairos bench read");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("tiled 2x in time = 198676 events, 16 streams"),
        "{stdout}"
    );
    assert!(stdout.contains("kairos trace summary"), "{stdout}");
    assert!(stdout.contains("babeltrace2 > /dev/null"), "{stdout}");
    assert!(stdout.contains("as fast as babeltrace2"), "{stdout}");
}
