//! `kairos bench ...`: timing benchmarks. Each measures kairos beside a baseline in the same
//! run, because on a shared machine the ratio is what holds, not the absolute figure.

mod dispatch;
mod pubsub;
mod read;
pub mod timer;
pub mod trace;
mod zenoh;

use clap::Subcommand;
use std::process::ExitCode;

#[derive(Debug, Subcommand)]
pub enum BenchCmd {
    /// Trace read speed and peak memory: `kairos trace summary` against babeltrace2.
    Read(read::Args),
    /// 1 kHz periodic wake-up lateness: kairos Timer, std sleep loop, tokio interval, cyclictest.
    Timer(timer::Args),
    /// Cost of one trace event, kairos on and off, beside the `tracing` crate.
    Trace(trace::Args),
    /// Intra-process publish -> callback latency and throughput, beside crossbeam-channel.
    Pubsub(pubsub::Args),
    /// Callbacks per second a single-threaded executor dispatches when all are ready.
    Dispatch(dispatch::Args),
    /// Publish -> callback between two processes: kairos over Zenoh beside raw Zenoh.
    Zenoh(zenoh::Args),
}

pub fn run(cmd: BenchCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        BenchCmd::Read(args) => read::run(args),
        BenchCmd::Timer(args) => timer::run(args),
        BenchCmd::Trace(args) => trace::run(args),
        BenchCmd::Pubsub(args) => pubsub::run(args),
        BenchCmd::Dispatch(args) => dispatch::run(args),
        BenchCmd::Zenoh(args) => zenoh::run(args),
    }
}
