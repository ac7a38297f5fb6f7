//! `kairos demo`: the incidents of `docs/stories.md` replayed, each beside a naive contender that
//! shows the bug is real on this machine, each ending in a one-line verdict.

use clap::{Args, ValueEnum};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// The scenario to run; every scenario, one after another, when omitted.
    pub scenario: Option<Scenario>,
    /// Print the result as JSON instead of a human summary.
    #[arg(long)]
    pub json: bool,
    /// Run faster with fewer samples (used by the test suite).
    #[arg(long)]
    pub quick: bool,
    /// Record a CTF trace of the run into this directory (read it with `babeltrace2 DIR`
    /// or `kairos trace summary DIR`).
    #[arg(long, value_name = "DIR")]
    pub trace: Option<PathBuf>,
    /// Where the pipeline scenario keeps its trace, HTML report and Perfetto file
    /// (`DIR/pipeline`, replaced by the next run).
    #[arg(long, value_name = "DIR", default_value = "kairos-demo")]
    pub out: PathBuf,
    /// Run the pipeline on simulation time, stepped as fast as it goes, twice, and
    /// compare the two traces (`DIR/pipeline-sim`).
    #[arg(long)]
    pub sim: bool,
    /// Run the pipeline as four processes on the Zenoh transport, traced into one folder
    /// (`DIR/pipeline-processes`); run sim-clock-stall with the simulator and the sensors
    /// in processes of their own.
    #[arg(long, conflicts_with = "sim")]
    pub processes: bool,
    /// Run sim-clock-stall as a system under `kairos launch`: the simulator dies, the
    /// launcher stops everything on time and names the process stuck on its clock.
    #[arg(long, conflicts_with_all = ["sim", "processes"])]
    pub launch: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Scenario {
    /// Story 5: a four-node pipeline, traced, and the analyzer says where the time went.
    Pipeline,
    /// Story 2: `delay(1)` that returned early, against kairos's sleep.
    DelayRace,
    /// Story 4: a wall-clock step under running timers (needs libfaketime).
    ClockJump,
    /// Story 1: a simulator clock that stops while a sensor thread sleeps on it.
    SimClockStall,
    /// Story 3: a service called from a callback, five ways, under a watchdog.
    Deadlock,
}

impl Scenario {
    const ALL: &'static [Scenario] = &[
        Scenario::Pipeline,
        Scenario::SimClockStall,
        Scenario::Deadlock,
        Scenario::DelayRace,
        Scenario::ClockJump,
    ];

    /// The incident it replays and the promise at stake, in one line.
    fn story(self) -> &'static str {
        match self {
            Scenario::Pipeline => {
                "story 5, where did each message spend its time? every stage is traced and explained"
            }
            Scenario::SimClockStall => {
                "story 1, a simulator clock that froze shutdown: every blocking call has a way out"
            }
            Scenario::Deadlock => {
                "story 3, a callback that deadlocked its executor: impossible waits fail fast"
            }
            Scenario::DelayRace => "story 2, a delay that returned early: never early",
            Scenario::ClockJump => {
                "story 4, a timer stopped by an NTP step: the kernel only waits on the monotonic clock"
            }
        }
    }

    fn name(self) -> &'static str {
        match self {
            Scenario::DelayRace => "delay-race",
            Scenario::ClockJump => "clock-jump",
            Scenario::SimClockStall => "sim-clock-stall",
            Scenario::Pipeline => "pipeline",
            Scenario::Deadlock => "deadlock",
        }
    }
}

/// What one scenario found: whether kairos kept its promise, a one-line verdict, the human
/// report and the machine-readable one.
#[derive(Debug)]
pub struct Outcome {
    pub passed: bool,
    pub verdict: String,
    pub report: String,
    pub json: Value,
}

pub fn run(args: DemoArgs) -> anyhow::Result<ExitCode> {
    let scenarios = match args.scenario {
        Some(s) => vec![s],
        None => Scenario::ALL.to_vec(),
    };
    let mut all_passed = true;
    let mut jsons = Vec::new();
    let mut verdicts = Vec::new();
    for scenario in scenarios.iter().copied() {
        if !args.json {
            println!("== {}: {} ==", scenario.name(), scenario.story());
        }
        let outcome = match run_one(scenario, &args) {
            Ok(outcome) => outcome,
            // Running every scenario, one that this machine lacks a tool for is skipped
            // with what to install; asked for by name, it is an error.
            Err(error) if args.scenario.is_none() => match error.downcast::<Unavailable>() {
                Ok(unavailable) => {
                    if args.json {
                        jsons.push((
                            scenario.name(),
                            json!({ "skipped": unavailable.to_string() }),
                        ));
                    } else {
                        println!("SKIP {}: {unavailable}\n", scenario.name());
                        verdicts.push(format!("SKIP {:<16} {unavailable}", scenario.name()));
                    }
                    continue;
                }
                Err(error) => return Err(error),
            },
            Err(error) => return Err(error),
        };
        all_passed &= outcome.passed;
        if args.json {
            jsons.push((scenario.name(), outcome.json));
        } else {
            println!("{}", outcome.report);
            let mark = if outcome.passed { "PASS" } else { "FAIL" };
            println!("{mark} {}: {}\n", scenario.name(), outcome.verdict);
            verdicts.push(format!(
                "{mark} {:<16} {}",
                scenario.name(),
                outcome.verdict
            ));
        }
    }
    if !args.json && verdicts.len() > 1 {
        println!("== in short ==");
        for verdict in &verdicts {
            println!("{verdict}");
        }
        println!(
            "\nnext: `demo pipeline --processes` runs the pipeline as four processes on Zenoh, \
             followed across the boundaries; `demo pipeline --sim` on simulation time (a minute \
             of robot time in a fraction of a second, traced identically twice); \
             `demo <scenario> --json` for scripts"
        );
    }
    if args.json {
        let value = if jsons.len() == 1 {
            jsons.pop().map(|(_, v)| v).unwrap_or(Value::Null)
        } else {
            Value::Object(jsons.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
        };
        println!("{}", serde_json::to_string_pretty(&value)?);
    }
    Ok(if all_passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Runs one scenario, traced into `--trace DIR/<scenario>` when asked.
fn run_one(scenario: Scenario, args: &DemoArgs) -> anyhow::Result<Outcome> {
    // With --trace DIR, each scenario is traced into DIR/<scenario>; babeltrace2 and
    // `kairos trace` read the folder recursively.
    let trace_dir = args.trace.as_ref().map(|dir| dir.join(scenario.name()));
    if scenario == Scenario::Pipeline {
        // The pipeline records (and then analyzes) its own trace.
        if args.sim {
            return pipeline_sim::run(args.quick, &args.out);
        }
        if args.processes {
            return pipeline_processes::run(args.quick, &args.out);
        }
        return pipeline::run(args.quick, trace_dir.as_deref(), &args.out);
    }
    if scenario == Scenario::SimClockStall && args.processes {
        return sim_clock_stall_processes::run(args.quick);
    }
    if scenario == Scenario::SimClockStall && args.launch {
        return sim_clock_stall_launch::run(args.quick);
    }
    let session = match &trace_dir {
        Some(dir) => Some(start_session(dir)?),
        None => None,
    };
    let outcome = match scenario {
        Scenario::DelayRace => delay_race::run(args.quick),
        Scenario::ClockJump => clock_jump::run(args.quick),
        Scenario::SimClockStall => sim_clock_stall::run(args.quick),
        Scenario::Deadlock => deadlock::run(args.quick),
        Scenario::Pipeline => unreachable!("handled above"),
    };
    if let (Some(session), Some(dir)) = (session, &trace_dir) {
        let stats = session.stop()?;
        eprintln!(
            "trace: {} events ({} discarded) in {} streams written to {}",
            stats.events_written,
            stats.events_discarded,
            stats.streams,
            dir.display()
        );
    }
    outcome
}

/// A scenario this machine cannot run for want of a system package: what is missing and
/// the command that installs it.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct Unavailable(#[from] pub clock_jump::LibfaketimeMissing);

/// Starts a trace session for one scenario, with a clear error when the process is
/// already traced through `KAIROS_TRACE` (one session per process).
pub fn start_session(dir: &std::path::Path) -> anyhow::Result<kairos::trace::Session> {
    if kairos::trace::tp::enabled() {
        anyhow::bail!(
            "this process is already traced (KAIROS_TRACE is set): unset KAIROS_TRACE to let \
             the demo record its own trace, or drop --trace"
        );
    }
    Ok(kairos::trace::Session::start(dir)?)
}

pub mod call_cycle;
pub mod clock_jump;
pub mod deadlock;
pub mod delay_race;
pub mod pipeline;
pub mod pipeline_processes;
pub mod pipeline_sim;
pub mod sim_clock_stall;
pub mod sim_clock_stall_launch;
pub mod sim_clock_stall_processes;

/// Where a scenario may write scratch files.
pub fn scratch_dir(name: &str) -> anyhow::Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("kairos-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}
