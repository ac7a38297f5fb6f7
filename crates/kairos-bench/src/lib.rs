//! `kairos bench ...`: timing benchmarks. Each measures kairos beside a baseline in the same
//! run, because on a shared machine the ratio is what holds, not the absolute figure.
//!
//! The third-party contenders (tokio's interval in `timer`, the `tracing` crate in
//! `trace`) are built only with the `baselines` feature (`kairos-cli`'s `baselines`
//! forwards to it), so that the installed binary carries no dependency that only a
//! benchmark needs. The std, crossbeam, raw-Zenoh, babeltrace2 and cyclictest baselines
//! are always there.
//!
//! The `kairos` binary parses [`BenchCmd`] and calls [`run`]; each benchmark prints a
//! table, or JSON with `--json`, and the figures in BENCHMARKS.md come from these
//! programs with the commands written there.

mod dispatch;
mod pubsub;
mod read;
mod record;
pub mod stats;
pub mod timer;
pub mod trace;
mod zenoh;

use clap::Subcommand;
use std::process::ExitCode;

/// What a bench prints in place of a third-party contender this binary was built without.
pub const BASELINES_NOT_BUILT: &str =
    "not built; measure it with `cargo run --release --features baselines -- bench ...`";

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
    /// Recording another process's messages into a bag, beside the mcap crate alone.
    Record(record::Args),
}

/// A directory of its own for one measurement's files, removed when dropped.
#[derive(Debug)]
pub struct ScratchDir(std::path::PathBuf);

impl ScratchDir {
    pub fn new(what: &str) -> anyhow::Result<Self> {
        use std::sync::atomic::{AtomicU32, Ordering};
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("kairos-bench-{what}-{}-{n}", std::process::id()));
        std::fs::create_dir(&path)
            .map_err(|e| anyhow::anyhow!("create the scratch directory {}: {e}", path.display()))?;
        Ok(Self(path))
    }

    pub fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn run(cmd: BenchCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        BenchCmd::Read(args) => read::run(args),
        BenchCmd::Timer(args) => timer::run(args),
        BenchCmd::Trace(args) => trace::run(args),
        BenchCmd::Pubsub(args) => pubsub::run(args),
        BenchCmd::Dispatch(args) => dispatch::run(args),
        BenchCmd::Zenoh(args) => zenoh::run(args),
        BenchCmd::Record(args) => record::run(args),
    }
}
