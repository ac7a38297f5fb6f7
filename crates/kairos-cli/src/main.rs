//! `kairos`: demo scenarios, benchmarks and trace analysis.
//!
//! A thin binary over the library crates: each subcommand lives in its own module and
//! prints a human summary, or JSON with `--json`.

mod bag;
mod bridge;
mod internal;
mod launch;
mod param;
mod pkg;
mod ros;
mod security;
mod tf;
mod trace_cmd;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "kairos",
    version,
    about = "A robot runtime that is never early and never hangs"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Replay the incidents kairos exists to prevent; with no scenario, run them all.
    Demo(kairos_demo::DemoArgs),
    /// Timing benchmarks, each measured side by side with a baseline.
    #[command(subcommand)]
    Bench(kairos_bench::BenchCmd),
    /// Read and analyze CTF traces (kairos, ROS 2, ROS 1).
    #[command(subcommand)]
    Trace(trace_cmd::TraceCmd),
    /// Run a Zenoh router (rmw_zenoh's default: tcp/[::]:7447) for processes to meet at.
    Router(ros::RouterArgs),
    /// Nodes across processes (Zenoh, rmw_zenoh wire format).
    #[command(subcommand)]
    Node(ros::NodeCmd),
    /// Topics across processes: list, info, echo, hz, pub.
    #[command(subcommand)]
    Topic(ros::TopicCmd),
    /// Services across processes: list, call.
    #[command(subcommand)]
    Service(ros::ServiceCmd),
    /// Actions across processes: list, info, send_goal.
    #[command(subcommand)]
    Action(ros::ActionCmd),
    /// Managed (lifecycle) nodes across processes: nodes, get, set, list.
    #[command(subcommand)]
    Lifecycle(ros::LifecycleCmd),
    /// Node parameters across processes: list, get, set.
    #[command(subcommand)]
    Param(param::ParamCmd),
    /// Bags in rosbag2's format (MCAP, sqlite3): record, info, echo.
    #[command(subcommand)]
    Bag(bag::BagCmd),
    /// Serve the running system to visualization tools: foxglove (WebSocket).
    #[command(subcommand)]
    Bridge(bridge::BridgeCmd),
    /// Frames across processes: echo, frames, static.
    #[command(subcommand)]
    Tf(tf::TfCmd),
    /// Start a system of processes from a ROS 2 launch file (YAML, XML); Ctrl-C stops it on time.
    Launch(launch::LaunchArgs),
    /// Installed packages (ament's index under AMENT_PREFIX_PATH): list, prefix, executables, install.
    #[command(subcommand)]
    Pkg(pkg::PkgCmd),
    /// Run an executable of an installed package, as `ros2 run PKG EXE`.
    Run(pkg::RunArgs),
    /// SROS2 security on Zenoh: keystores, enclaves, policies, configurations.
    #[command(subcommand)]
    Security(security::SecurityCmd),
    /// Child processes of demos and tests.
    #[command(subcommand, hide = true)]
    Internal(internal::InternalCmd),
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    // KAIROS_TRACE=<dir> traces any run of the binary from start to exit.
    let _session = match kairos::trace::init_from_env() {
        Ok(session) => session,
        Err(err) => {
            eprintln!("kairos: error: cannot start tracing from KAIROS_TRACE: {err}");
            return std::process::ExitCode::from(2);
        }
    };
    let result = match cli.command {
        Command::Demo(args) => kairos_demo::run(args),
        Command::Bench(cmd) => kairos_bench::run(cmd),
        Command::Trace(cmd) => trace_cmd::run(cmd),
        Command::Internal(cmd) => internal::run(cmd),
        Command::Router(args) => ros::router(args),
        Command::Node(cmd) => ros::node(cmd),
        Command::Topic(cmd) => ros::topic(cmd),
        Command::Service(cmd) => ros::service(cmd),
        Command::Action(cmd) => ros::action(cmd),
        Command::Lifecycle(cmd) => ros::lifecycle(cmd),
        Command::Param(cmd) => param::run(cmd),
        Command::Launch(args) => launch::run(args),
        Command::Pkg(cmd) => pkg::run(cmd),
        Command::Run(args) => pkg::run_executable(args),
        Command::Bag(cmd) => bag::run(cmd),
        Command::Tf(cmd) => tf::run(cmd),
        Command::Bridge(cmd) => bridge::run(cmd),
        Command::Security(cmd) => security::run(cmd),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("kairos: error: {}", error_chain(&err));
            std::process::ExitCode::from(2)
        }
    }
}

/// The error and its causes, joined by `: ` as anyhow's `{:#}` does, leaving out a cause
/// whose sentence the message before it already holds (kairos errors print their
/// cause and also return it as `source()`).
fn error_chain(err: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in err.chain() {
        let line = cause.to_string();
        if text.is_empty() {
            text = line;
        } else if !text.contains(&line) {
            text.push_str(": ");
            text.push_str(&line);
        }
    }
    text
}
