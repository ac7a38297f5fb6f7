//! Helpers shared by the CLI integration tests.
#![allow(dead_code)]

use std::process::{Command, Output};

pub fn kairos() -> Command {
    Command::new(env!("CARGO_BIN_EXE_kairos"))
}

/// Fails with an install hint when a tool the test needs is missing.
pub fn require_tool(tool: &str, package: &str) {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "`{tool}` is required by this test: install it with `apt-get install {package}` (scripts/test does this as root)"
    );
}

pub fn run_ok(cmd: &mut Command) -> Output {
    let out = cmd.output().expect("failed to start command");
    assert!(
        out.status.success(),
        "{cmd:?} failed with {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

pub fn json_of(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}):\n{}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}
