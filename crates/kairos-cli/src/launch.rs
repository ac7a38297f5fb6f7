//! `kairos launch FILE [name:=value ...]`: the command-line side of `kairos-launch` (the
//! arguments, `--print`, the router and the log folder); reading, supervising and stopping
//! are the library's.

use anyhow::{Context as _, anyhow, bail};
use kairos_launch::router::ensure_router;
use kairos_launch::{description, supervise};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Debug, clap::Args)]
pub struct LaunchArgs {
    /// A ROS 2 YAML launch file (`launch:` with arg, let, node, executable, group, include).
    file: PathBuf,
    /// Launch arguments, `name:=value`.
    args: Vec<String>,
    /// Seconds after SIGINT before a process still alive gets SIGTERM.
    #[arg(long, default_value_t = 5.0)]
    sigterm_timeout: f64,
    /// Seconds after SIGTERM before a process still alive gets SIGKILL.
    #[arg(long, default_value_t = 5.0)]
    sigkill_timeout: f64,
    /// Trace every process into this folder (`KAIROS_TRACE`), for `kairos trace`.
    #[arg(long)]
    trace: Option<PathBuf>,
    /// Never start a router, even if none is reachable.
    #[arg(long)]
    no_router: bool,
    /// Where `output: log` files go [default: $ROS_LOG_DIR, or ~/.ros/log, /kairos-launch-PID].
    #[arg(long)]
    log_dir: Option<PathBuf>,
    /// Print the processes the file starts, with their command lines, and exit.
    #[arg(long)]
    print: bool,
}

fn seconds(flag: &str, s: f64) -> anyhow::Result<Duration> {
    Duration::try_from_secs_f64(s).map_err(|_| anyhow!("{flag} {s}: give a number of seconds ≥ 0"))
}

pub fn run(args: LaunchArgs) -> anyhow::Result<ExitCode> {
    let sigterm_timeout = seconds("--sigterm-timeout", args.sigterm_timeout)?;
    let sigkill_timeout = seconds("--sigkill-timeout", args.sigkill_timeout)?;
    let mut launch_args = Vec::new();
    for arg in &args.args {
        let Some((name, value)) = arg.split_once(":=") else {
            bail!("launch argument '{arg}': write name:=value");
        };
        launch_args.push((name.to_owned(), value.to_owned()));
    }
    let processes = match description::load(&args.file, &launch_args) {
        Ok(processes) => processes,
        Err(err) => {
            eprintln!("kairos launch: {err}\nkairos launch: nothing was started");
            return Ok(ExitCode::from(supervise::status::BAD_LAUNCH));
        }
    };
    if args.print {
        for p in &processes {
            let words: Vec<String> = std::iter::once(p.program.display().to_string())
                .chain(p.args.iter().cloned())
                .collect();
            let line = shlex::try_join(words.iter().map(String::as_str))
                .unwrap_or_else(|_| words.join(" "));
            println!("{}: {line}", p.label);
        }
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(trace) = &args.trace {
        std::fs::create_dir_all(trace)
            .with_context(|| format!("cannot create the trace folder {}", trace.display()))?;
    }
    let _router = if args.no_router {
        None
    } else {
        ensure_router()?
    };
    let mut env = Vec::new();
    if std::env::var_os("KAIROS_TRANSPORT").is_none() {
        env.push(("KAIROS_TRANSPORT".to_owned(), "zenoh".to_owned()));
    }
    let options = supervise::Options {
        sigterm_timeout,
        sigkill_timeout,
        trace: args.trace.clone(),
        log_dir: args.log_dir.clone().unwrap_or_else(default_log_dir),
        env,
    };
    Ok(ExitCode::from(supervise::run(processes, &options)))
}

fn default_log_dir() -> PathBuf {
    let base = std::env::var_os("ROS_LOG_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("ROS_HOME").map(|h| PathBuf::from(h).join("log")))
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".ros").join("log")))
        .unwrap_or_else(std::env::temp_dir);
    base.join(format!("kairos-launch-{}", std::process::id()))
}
