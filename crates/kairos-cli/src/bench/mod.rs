//! `kairos bench ...`: timing benchmarks. Each measures kairos beside a baseline in the same
//! run, because on a shared machine the ratio is what holds, not the absolute figure.

use clap::Subcommand;
use std::process::ExitCode;

pub mod trace;

#[derive(Debug, Subcommand)]
pub enum BenchCmd {
    /// Cost of one trace event, kairos on and off, beside the `tracing` crate.
    Trace(trace::Args),
}

pub fn run(cmd: BenchCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        BenchCmd::Trace(args) => trace::run(args),
    }
}
