//! `kairos bench ...`: timing benchmarks. Each measures kairos beside a baseline in the same
//! run, because on a shared machine the ratio is what holds, not the absolute figure.

mod read;

use clap::Subcommand;
use std::process::ExitCode;

#[derive(Debug, Subcommand)]
pub enum BenchCmd {
    /// Trace read speed and peak memory: `kairos trace summary` against babeltrace2.
    Read(read::Args),
}

pub fn run(cmd: BenchCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        BenchCmd::Read(args) => read::run(args),
    }
}
