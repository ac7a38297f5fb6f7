//! What the tests that run kairos processes on Zenoh take from kairos-testkit: a `kairos
//! router` of the test's own on a free loopback port, children killed when dropped,
//! bounded waits for their output.
#![allow(dead_code, unused_imports)]

pub use kairos_testkit::process::{Lines, Running, assert_ok, finish, spawn, stdout_lines};
pub use kairos_testkit::router::Router;
use std::process::Command;

/// The kairos binary under test.
pub const KAIROS: &str = env!("CARGO_BIN_EXE_kairos");

pub fn kairos() -> Command {
    Command::new(KAIROS)
}
