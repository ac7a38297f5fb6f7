//! `kairos internal ...`: processes the demos and tests start as children. Hidden from help.

use clap::Subcommand;
use kairos::time::{CancelToken, Clock, Duration, Timer};
use std::process::ExitCode;

#[derive(Debug, Subcommand)]
pub enum InternalCmd {
    /// The clock-jump demo's child, run under libfaketime.
    ClockJumpChild,
    /// Sleeps on the system and steady clocks and runs a timer on each, so a test can
    /// check under strace which clock the kernel is asked to wait on.
    WaitOnClocks,
    /// One node of `kairos demo pipeline --processes`, in a process of its own.
    PipelineNode {
        /// source, filter, planner or printer.
        role: String,
    },
    /// The simulator of `kairos demo sim-clock-stall --processes`: publishes /clock.
    SimClockSimulator {
        /// Exit with status 1 after this many seconds, as a crashing simulator does
        /// (`--launch`); without it, run until killed.
        #[arg(long)]
        die_after: Option<f64>,
        /// Start counting `--die-after` once these nodes (fully qualified, comma-separated)
        /// are in the graph, or after 30 s without them.
        #[arg(long, value_delimiter = ',')]
        after_nodes: Vec<String>,
    },
    /// The kairos sensor of `kairos demo sim-clock-stall --launch`.
    SimClockLaunchSensor,
    /// The naive planner of `kairos demo sim-clock-stall --launch`.
    SimClockPlanner,
    /// A sensor of `kairos demo sim-clock-stall --processes`, on simulation time.
    SimClockSensor {
        /// wait, fallback_to_steady or fail.
        policy: String,
    },
    /// The naive sensor of `kairos demo sim-clock-stall --processes`.
    SimClockNaive,
    /// One of the two processes whose callbacks call each other's service
    /// (`kairos_zenoh::shared_waits`); see `demo/call_cycle.rs`.
    CallCycle {
        /// a or b.
        role: String,
        /// chain (A's timer -> B's service -> A's service), race (both timers at
        /// once) or hang (B's service never answers).
        #[arg(long, default_value = "chain")]
        mode: String,
        /// In race mode, print `holding` once the timer holds its group and call when a
        /// line comes on standard input, so whoever starts both can make them call at once.
        #[arg(long)]
        go_on_stdin: bool,
    },
    /// A use_sim_time node whose timer follows /clock from another process.
    SimClockFollower {
        /// Exit after this many ticks.
        #[arg(long, default_value_t = 5)]
        ticks: u64,
    },
}

pub fn run(cmd: InternalCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        InternalCmd::ClockJumpChild => kairos_demo::clock_jump::child_main()?,
        InternalCmd::WaitOnClocks => wait_on_clocks()?,
        InternalCmd::CallCycle {
            role,
            mode,
            go_on_stdin,
        } => kairos_demo::call_cycle::child_main(&role, &mode, go_on_stdin)?,
        InternalCmd::PipelineNode { role } => kairos_demo::pipeline_processes::node_main(&role)?,
        InternalCmd::SimClockSimulator {
            die_after: None, ..
        } => kairos_demo::sim_clock_stall_processes::simulator_main()?,
        InternalCmd::SimClockSimulator {
            die_after: Some(secs),
            after_nodes,
        } => kairos_demo::sim_clock_stall_launch::simulator_main(secs, &after_nodes)?,
        InternalCmd::SimClockLaunchSensor => kairos_demo::sim_clock_stall_launch::sensor_main()?,
        InternalCmd::SimClockPlanner => kairos_demo::sim_clock_stall_launch::planner_main()?,
        InternalCmd::SimClockSensor { policy } => {
            kairos_demo::sim_clock_stall_processes::sensor_main(&policy)?
        }
        InternalCmd::SimClockNaive => kairos_demo::sim_clock_stall_processes::naive_main()?,
        InternalCmd::SimClockFollower { ticks } => {
            kairos_demo::sim_clock_stall_processes::follower_main(ticks)?
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn wait_on_clocks() -> anyhow::Result<()> {
    let token = CancelToken::new();
    let ms = Duration::from_millis;
    Clock::system().sleep_for(ms(20), &token)?;
    Clock::steady().sleep_for(ms(20), &token)?;
    let system_deadline = Clock::system().now() + ms(20);
    futures::executor::block_on(Clock::system().sleep_until_async(system_deadline, &token))?;
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    for clock in [Clock::system(), Clock::steady()] {
        let (token, done) = (token.clone(), done_tx.clone());
        std::thread::spawn(move || {
            let run = || -> anyhow::Result<()> {
                let timer = Timer::new(clock, ms(10))?;
                for _ in 0..5 {
                    timer.wait(&token)?;
                }
                Ok(())
            };
            let _ = done.send(run());
        });
    }
    for _ in 0..2 {
        done_rx.recv_timeout(std::time::Duration::from_secs(30))??;
    }
    println!("waited on system and steady clocks");
    Ok(())
}
