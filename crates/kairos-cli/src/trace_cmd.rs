//! `kairos trace ...`: reading and analyzing CTF traces.
//!
//! Not built yet: the trace-analysis issue fills this module.

use clap::Subcommand;
use std::process::ExitCode;

#[derive(Debug, Subcommand)]
pub enum TraceCmd {}

pub fn run(cmd: TraceCmd) -> anyhow::Result<ExitCode> {
    match cmd {}
}
