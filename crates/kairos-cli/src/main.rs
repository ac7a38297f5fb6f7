//! `kairos`: a thin binary over the library crates. It parses the command line and
//! dispatches: the demos to `kairos-demo`, the benchmarks to `kairos-bench`, the graph
//! tools (`router`, `node`, `topic`, `service`, `action`, `lifecycle`, `param`, `tf`) to
//! `kairos-tools`; the modules here are the commands that front a library of their own
//! (`bag`, `bridge`, `launch`, `pkg`, `security`, `trace`). Each prints a human summary,
//! or JSON with `--json`.

mod bag;
mod bridge;
mod internal;
mod launch;
mod pkg;
mod security;
mod shared_args;
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
    Router(kairos_tools::RouterArgs),
    /// Nodes across processes (Zenoh, rmw_zenoh wire format).
    #[command(subcommand)]
    Node(kairos_tools::NodeCmd),
    /// Topics across processes: list, info, echo, hz, pub.
    #[command(subcommand)]
    Topic(kairos_tools::TopicCmd),
    /// Services across processes: list, call.
    #[command(subcommand)]
    Service(kairos_tools::ServiceCmd),
    /// Actions across processes: list, info, send_goal.
    #[command(subcommand)]
    Action(kairos_tools::ActionCmd),
    /// Managed (lifecycle) nodes across processes: nodes, get, set, list.
    #[command(subcommand)]
    Lifecycle(kairos_tools::LifecycleCmd),
    /// Composable nodes across processes: types, list, load, unload.
    #[command(subcommand)]
    Component(kairos_tools::ComponentCmd),
    /// Node parameters across processes: list, get, set.
    #[command(subcommand)]
    Param(kairos_tools::param::ParamCmd),
    /// Bags in rosbag2's format (MCAP, sqlite3): record, info, echo.
    #[command(subcommand)]
    Bag(bag::BagCmd),
    /// Serve the running system to visualization tools: foxglove (WebSocket).
    #[command(subcommand)]
    Bridge(bridge::BridgeCmd),
    /// Frames across processes: echo, frames, static.
    #[command(subcommand)]
    Tf(kairos_tools::tf::TfCmd),
    /// Start a system of processes from a ROS 2 launch file (Python, XML, YAML); Ctrl-C stops it on time.
    Launch(launch::LaunchArgs),
    /// Run a launch test (a Python file with generate_test_description()), as ROS 2's `launch_test`.
    LaunchTest(launch::LaunchTestArgs),
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
        Command::Router(args) => kairos_tools::router(args),
        Command::Node(cmd) => kairos_tools::node(cmd),
        Command::Topic(cmd) => kairos_tools::topic(cmd),
        Command::Service(cmd) => kairos_tools::service(cmd),
        Command::Action(cmd) => kairos_tools::action(cmd),
        Command::Lifecycle(cmd) => kairos_tools::lifecycle(cmd),
        Command::Component(cmd) => kairos_tools::component(cmd),
        Command::Param(cmd) => kairos_tools::param::run(cmd),
        Command::Launch(args) => launch::run(args),
        Command::LaunchTest(args) => launch::run_test(args),
        Command::Pkg(cmd) => pkg::run(cmd),
        Command::Run(args) => pkg::run_executable(args),
        Command::Bag(cmd) => bag::run(cmd),
        Command::Tf(cmd) => kairos_tools::tf::run(cmd),
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
