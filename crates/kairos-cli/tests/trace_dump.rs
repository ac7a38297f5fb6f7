//! Differential test: `kairos trace dump` against `babeltrace2 --clock-seconds
//! --no-delta` on every real trace in ../shared/traces, event for event (names,
//! timestamps, every field value, as text).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn traces_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces")
}

fn kairos(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kairos"))
        .args(args)
        .output()
        .expect("run kairos")
}

fn babeltrace(trace: &Path) -> Output {
    kairos_testkit::babeltrace2_output(&["--clock-seconds", "--no-delta"], trace)
}

/// Lines ordered by timestamp, and by text among equal timestamps: the two tools may
/// order simultaneous events of different streams differently.
fn canonical(stdout: &[u8]) -> Vec<String> {
    let mut lines: Vec<String> = String::from_utf8_lossy(stdout)
        .lines()
        .map(str::to_string)
        .collect();
    lines.sort_by(|a, b| {
        let ts = |l: &str| l.split(']').next().unwrap_or("").to_string();
        ts(a).cmp(&ts(b)).then_with(|| a.cmp(b))
    });
    lines
}

fn assert_same(trace: &str, ours: &[String], theirs: &[String]) {
    if let Some(i) = (0..ours.len().min(theirs.len())).find(|&i| ours[i] != theirs[i]) {
        panic!(
            "{trace}: event {i} differs\n kairos:      {}\n babeltrace2: {}",
            ours[i], theirs[i]
        );
    }
    assert_eq!(ours.len(), theirs.len(), "{trace}: event counts differ");
}

#[test]
fn dump_agrees_with_babeltrace2_on_every_real_trace() {
    let mut checked = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(traces_dir())
        .expect("../shared/traces holds the real traces")
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let theirs = babeltrace(&dir);
        if !theirs.status.success() {
            // Compared separately, up to where babeltrace2 stops.
            continue;
        }
        let ours = kairos(&["trace", "dump", dir.to_str().unwrap()]);
        assert!(
            ours.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&ours.stderr)
        );
        let (ours, theirs) = (canonical(&ours.stdout), canonical(&theirs.stdout));
        assert!(!theirs.is_empty(), "{name}: babeltrace2 printed no event");
        assert_same(&name, &ours, &theirs);
        checked.push(name);
    }
    for expected in ["ros1-pub-sub-1", "ros1-pub-sub-10", "ros2-sync-one-to-one"] {
        assert!(
            checked.iter().any(|c| c == expected),
            "{expected} was not compared: {checked:?}"
        );
    }
}

#[test]
fn on_ctf_hello_lost_dump_agrees_until_babeltrace2_stops_then_reports_and_goes_on() {
    let dir = traces_dir().join("ctf-hello-lost");
    let theirs = babeltrace(&dir);
    assert!(
        !theirs.status.success(),
        "babeltrace2 is expected to give up on this trace"
    );
    let theirs: Vec<String> = String::from_utf8_lossy(&theirs.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    let out = kairos(&["trace", "dump", dir.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ours: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    assert!(!theirs.is_empty());
    assert_same("ctf-hello-lost (prefix)", &ours[..theirs.len()], &theirs);
    assert!(
        ours.len() > theirs.len() * 100,
        "kairos kept reading: {} events",
        ours.len()
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("the tracer discarded"), "{stderr}");
    // The timestamp where babeltrace2 stops is reported as going backwards.
    assert!(
        stderr.contains(
            "timestamp goes backwards: the packet at byte 4096 begins at 1376592664.828645723"
        ),
        "{stderr}"
    );
}

#[test]
fn a_folder_without_a_trace_is_a_clear_error() {
    let dir = std::env::temp_dir().join(format!("kairos-no-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = kairos(&["trace", "dump", dir.to_str().unwrap()]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no CTF trace here"), "{stderr}");
}

#[test]
fn dump_agrees_with_babeltrace2_on_a_trace_kairos_writes() {
    let dir = std::env::temp_dir().join(format!("kairos-dump-written-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let demo = kairos(&[
        "demo",
        "sim-clock-stall",
        "--quick",
        "--trace",
        dir.to_str().unwrap(),
    ]);
    assert!(
        demo.status.success(),
        "{}",
        String::from_utf8_lossy(&demo.stderr)
    );
    let theirs = babeltrace(&dir);
    let ours = kairos(&["trace", "dump", dir.to_str().unwrap()]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        theirs.status.success(),
        "{}",
        String::from_utf8_lossy(&theirs.stderr)
    );
    assert!(
        ours.status.success(),
        "{}",
        String::from_utf8_lossy(&ours.stderr)
    );
    let (ours, theirs) = (canonical(&ours.stdout), canonical(&theirs.stdout));
    assert!(
        theirs.len() > 1000,
        "the demo traced {} events",
        theirs.len()
    );
    assert_same("kairos demo trace", &ours, &theirs);
}
