//! The progress bar of long reads: drawn on stderr when stderr is a terminal (a pty
//! from `script`, util-linux), never when it is not. The one-second delay is set to 0
//! so a short trace shows it.

use std::path::Path;
use std::process::Command;

fn trace() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces/ros2-sync-one-to-one")
        .to_string_lossy()
        .into_owned()
}

#[test]
fn the_bar_shows_on_a_terminal() {
    let cmd = format!(
        "KAIROS_PROGRESS_AFTER_MS=0 {} trace summary {} > /dev/null",
        env!("CARGO_BIN_EXE_kairos"),
        trace()
    );
    let out = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .output()
        .unwrap_or_else(|e| panic!("`script` is needed ({e}): apt-get install util-linux"));
    let tty = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{tty}");
    assert!(
        tty.contains("reading"),
        "no progress bar on the terminal: {tty:?}"
    );
    assert!(tty.contains("65536 events"), "{tty:?}");
}

#[test]
fn the_bar_stays_off_when_stderr_is_not_a_terminal() {
    let out = Command::new(env!("CARGO_BIN_EXE_kairos"))
        .env("KAIROS_PROGRESS_AFTER_MS", "0")
        .args(["trace", "summary", &trace()])
        .output()
        .unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("reading"), "{stderr}");
}
