//! `kairos trace ...`: reading and analyzing CTF traces (kairos, ROS 2, ROS 1).
//!
//! Every subcommand takes a trace folder (or a folder of traces, such as an LTTng
//! session). Problems the reader meets but reads past (discarded events, timestamps
//! going backwards, a damaged stream) go to stderr; a damaged stream also makes `dump`
//! exit with status 1, because its output is then incomplete.

mod analysis;
mod dump;
mod load;

use clap::Subcommand;
use std::process::ExitCode;

#[derive(Debug, Subcommand)]
pub enum TraceCmd {
    /// Print every event, one line each, as `babeltrace2 --clock-seconds --no-delta` does.
    Dump(dump::Args),
    /// Processes, nodes, topics with publishers and subscribers, event counts, time span.
    Summary(analysis::Args),
    /// Per callback: count and duration mean/p50/p99/max.
    Callbacks(analysis::Args),
    /// Per timer: period, actual period, lateness, missed periods.
    Timers(analysis::Args),
    /// Per publisher and subscription queue: depth over time, maximum, drops.
    Queues(analysis::Args),
    /// The lines nodes logged, in time order, each with the callback that wrote it.
    Log(analysis::LogArgs),
    /// Follow one message through queues, transport and callbacks to the graph's end.
    Flow(analysis::FlowArgs),
    /// Every action goal: how it ended, acceptance, run time, feedback, result delay.
    Goals(analysis::GoalsArgs),
    /// End-to-end latency of every path from a source to a sink callback, per stage.
    Chains(analysis::Args),
    /// Write a Chrome/Perfetto trace JSON with callbacks and message flow arrows.
    Export(analysis::ExportArgs),
    /// Write a self-contained HTML page: summary, timeline, latency histograms.
    Report(analysis::ReportArgs),
}

pub fn run(cmd: TraceCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        TraceCmd::Dump(args) => dump::run(args),
        TraceCmd::Summary(args) => analysis::summary(args),
        TraceCmd::Callbacks(args) => analysis::callbacks(args),
        TraceCmd::Timers(args) => analysis::timers(args),
        TraceCmd::Queues(args) => analysis::queues(args),
        TraceCmd::Log(args) => analysis::log(args),
        TraceCmd::Flow(args) => analysis::flow(args),
        TraceCmd::Goals(args) => analysis::goals(args),
        TraceCmd::Chains(args) => analysis::chains(args),
        TraceCmd::Export(args) => analysis::export(args),
        TraceCmd::Report(args) => analysis::report(args),
    }
}
