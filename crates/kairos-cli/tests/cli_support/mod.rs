//! Helpers shared by the CLI integration tests.
#![allow(dead_code)]

use std::process::{Command, Output};

pub fn kairos() -> Command {
    Command::new(env!("CARGO_BIN_EXE_kairos"))
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
