//! `kairos trace ...`: reading and analyzing CTF traces (kairos, ROS 2, ROS 1).
//!
//! Every subcommand takes a trace folder (or a folder of traces, such as an LTTng
//! session). Problems the reader meets but reads past (discarded events, timestamps
//! going backwards, a damaged stream) go to stderr as they happen; a damaged stream also
//! makes the exit status 1, because the output is then incomplete.

mod dump;

use clap::Subcommand;
use std::process::ExitCode;

#[derive(Debug, Subcommand)]
pub enum TraceCmd {
    /// Print every event, one line each, as `babeltrace2 --clock-seconds --no-delta` does.
    Dump(dump::Args),
}

pub fn run(cmd: TraceCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        TraceCmd::Dump(args) => dump::run(args),
    }
}
