//! `kairos bench ...`: timing benchmarks. Each measures kairos beside a baseline in the same
//! run, because on a shared machine the ratio is what holds, not the absolute figure.

use clap::Subcommand;
use std::process::ExitCode;

#[derive(Debug, Subcommand)]
pub enum BenchCmd {}

pub fn run(cmd: BenchCmd) -> anyhow::Result<ExitCode> {
    match cmd {}
}
