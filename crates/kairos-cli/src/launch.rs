//! `kairos launch FILE [name:=value ...]`, `kairos launch PKG FILE ...` and `kairos
//! launch-test FILE ...`: the command-line side of `kairos-launch` (the arguments,
//! `--print`, the router and the log folder); reading, supervising, stopping and running
//! launch tests are the library's.

use anyhow::Context as _;
use kairos_launch::driver::{Driver, Request};
use kairos_launch::package::PackageIndex;
use kairos_launch::router::ensure_router;
use kairos_launch::{description, invocation, supervise};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// How long a Python launch file's first evaluation may take before the launch fails.
const EVALUATION_TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Debug, clap::Args)]
pub struct LaunchArgs {
    /// A ROS 2 launch file (Python, XML or YAML), or a package whose share folder holds the
    /// launch file named next (as `ros2 launch PKG FILE`).
    file: PathBuf,
    /// Launch arguments, `name:=value` (after the file's name in the package form).
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
    /// Print the processes as JSON lines (for a Python launch file's driver, which starts
    /// the processes of an XML or YAML file it includes), and exit.
    #[arg(long, hide = true)]
    print_json: bool,
    /// Serve a driver that started this launcher (kairos for Python's in-process
    /// `LaunchService`): its requests on standard input, the notices to this file (a pipe,
    /// `/dev/fd/N`); FILE only names the launch.
    #[arg(long, hide = true)]
    serve_driver: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct LaunchTestArgs {
    /// A launch test: a Python file with generate_test_description() and unittest tests
    /// (as ROS 2's `launch_test FILE`), or a package whose share folder holds the file named next.
    file: PathBuf,
    /// Launch arguments, `name:=value` (tests get them as `test_args`).
    args: Vec<String>,
    /// Seconds the whole run may take (every launch of a parametrized test); past them
    /// the launch is stopped and the run fails.
    #[arg(long)]
    timeout: Option<f64>,
    /// Seconds the post-shutdown tests may take once the launch has ended.
    #[arg(long, default_value_t = 60.0)]
    post_shutdown_timeout: f64,
    /// Write a JUnit XML report of the tests here.
    #[arg(long)]
    junit_xml: Option<PathBuf>,
    /// Seconds after SIGINT before a process still alive gets SIGTERM.
    #[arg(long, default_value_t = 5.0)]
    sigterm_timeout: f64,
    /// Seconds after SIGTERM before a process still alive gets SIGKILL.
    #[arg(long, default_value_t = 5.0)]
    sigkill_timeout: f64,
    /// Never start a router, even if none is reachable.
    #[arg(long)]
    no_router: bool,
    /// Where `output: log` files go [default: $ROS_LOG_DIR, or ~/.ros/log, /kairos-launch-PID].
    #[arg(long)]
    log_dir: Option<PathBuf>,
}

/// `kairos launch-test FILE [name:=value ...]`: see `kairos_launch::launch_test`.
pub fn run_test(args: LaunchTestArgs) -> anyhow::Result<ExitCode> {
    // A bad option is said before anything else is looked at.
    let launch = supervise_options(
        args.sigterm_timeout,
        args.sigkill_timeout,
        None,
        args.log_dir.clone(),
    )?;
    let timeout = args
        .timeout
        .map(|t| kairos_tools::seconds("--timeout", t))
        .transpose()?;
    let post_shutdown_timeout =
        kairos_tools::seconds("--post-shutdown-timeout", args.post_shutdown_timeout)?;
    let (file, launch_args) = file_and_arguments(&args.file, &args.args)?;
    let _router = if args.no_router {
        None
    } else {
        ensure_router()?
    };
    let options = kairos_launch::launch_test::TestOptions {
        launch,
        timeout,
        post_shutdown_timeout,
        evaluation_timeout: EVALUATION_TIMEOUT,
        junit_xml: args.junit_xml.clone(),
        python: PathBuf::from("python3"),
        python_path: None,
    };
    let status = kairos_launch::launch_test::run(&file, &launch_args, &options);
    Ok(ExitCode::from(status))
}

/// How a launch stops and where its processes write, from the command line's options.
fn supervise_options(
    sigterm_timeout: f64,
    sigkill_timeout: f64,
    trace: Option<PathBuf>,
    log_dir: Option<PathBuf>,
) -> anyhow::Result<supervise::Options> {
    Ok(supervise::Options {
        sigterm_timeout: kairos_tools::seconds("--sigterm-timeout", sigterm_timeout)?,
        sigkill_timeout: kairos_tools::seconds("--sigkill-timeout", sigkill_timeout)?,
        trace,
        log_dir: log_dir.unwrap_or_else(invocation::default_log_dir),
        env: process_env(),
        deadline: None,
    })
}

/// What every launched process gets: the Zenoh transport unless the environment picks one.
fn process_env() -> Vec<(String, String)> {
    let mut env = Vec::new();
    if std::env::var_os("KAIROS_TRANSPORT").is_none() {
        env.push(("KAIROS_TRANSPORT".to_owned(), "zenoh".to_owned()));
    }
    env
}

pub fn run(args: LaunchArgs) -> anyhow::Result<ExitCode> {
    // A bad option is said before anything else is looked at.
    let options = supervise_options(
        args.sigterm_timeout,
        args.sigkill_timeout,
        args.trace.clone(),
        args.log_dir.clone(),
    )?;
    if let Some(notices) = &args.serve_driver {
        let notices = std::fs::OpenOptions::new()
            .write(true)
            .open(notices)
            .with_context(|| format!("--serve-driver {}", notices.display()))?;
        let (driver, first) =
            match Driver::serve(&args.file, std::io::stdin(), notices, EVALUATION_TIMEOUT) {
                Ok(served) => served,
                Err(err) => {
                    eprintln!("kairos launch: {err}\nkairos launch: nothing was started");
                    return Ok(ExitCode::from(supervise::status::BAD_LAUNCH));
                }
            };
        let _router = if args.no_router {
            None
        } else {
            ensure_router()?
        };
        return Ok(ExitCode::from(supervise::run_driven(
            driver, first, &options,
        )));
    }
    let (file, launch_args) = file_and_arguments(&args.file, &args.args)?;
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    let python = description::Format::of(&file, &text) == description::Format::Python;
    let (processes, driven) = if python {
        match Driver::start(
            &file,
            &launch_args,
            Path::new("python3"),
            None,
            &options.log_dir,
            EVALUATION_TIMEOUT,
        ) {
            Ok((driver, first)) => (Vec::new(), Some((driver, first))),
            Err(err) => {
                eprintln!("kairos launch: {err}\nkairos launch: nothing was started");
                return Ok(ExitCode::from(supervise::status::BAD_LAUNCH));
            }
        }
    } else {
        match description::load(&file, &launch_args) {
            Ok(processes) => (processes, None),
            Err(err) => {
                eprintln!("kairos launch: {err}\nkairos launch: nothing was started");
                return Ok(ExitCode::from(supervise::status::BAD_LAUNCH));
            }
        }
    };
    if args.print_json {
        for p in &processes {
            println!("{}", invocation::process_json(p));
        }
        return Ok(ExitCode::SUCCESS);
    }
    if args.print {
        let first = driven
            .iter()
            .flat_map(|(_, first)| first)
            .filter_map(|r| match r {
                Request::Start { spec, .. } => Some(spec),
                _ => None,
            });
        for p in processes.iter().chain(first) {
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
    let status = match driven {
        Some((driver, first)) => supervise::run_driven(driver, first, &options),
        None => supervise::run(processes, &options),
    };
    Ok(ExitCode::from(status))
}

/// The launch file and its arguments (`FILE args...` or `PKG FILE args...`).
fn file_and_arguments(
    first: &Path,
    args: &[String],
) -> anyhow::Result<(PathBuf, Vec<(String, String)>)> {
    Ok(invocation::file_and_arguments(
        first,
        args,
        &PackageIndex::from_env(),
    )?)
}
