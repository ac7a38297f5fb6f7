//! `kairos launch FILE [name:=value ...]`: a system of processes started from one ROS 2
//! YAML launch file, and stopped on time.
//!
//! The file is read whole first ([`description`]): arguments, substitutions, groups and
//! includes are resolved, every executable is found and every node's ROS arguments
//! (remaps, parameters, parameter files) are checked with the reader the node will use.
//! Any error names the file and line, and nothing starts. Then a Zenoh router is started
//! if none is reachable where the processes will look for one, the processes start in
//! file order, and [`supervise`] runs and stops them: Ctrl-C, or the exit of a process
//! marked `on_exit: shutdown`, stops all within `--sigterm-timeout + --sigkill-timeout`,
//! with a stop report. The exit status is one of [`supervise::status`].

mod description;
mod substitute;
mod supervise;
mod yaml;

use crate::demo::processes::LocalRouter;
use anyhow::{Context as _, anyhow, bail};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
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

/// The router the processes will connect to: the first `tcp/HOST:PORT` of
/// `connect/endpoints` in `ZENOH_CONFIG_OVERRIDE`, or rmw_zenoh's default
/// `127.0.0.1:7447`.
fn router_endpoint() -> String {
    let from_override = std::env::var("ZENOH_CONFIG_OVERRIDE")
        .ok()
        .and_then(|text| {
            let rest = &text[text.find("connect/endpoints")?..];
            let start = rest.find("tcp/")? + 4;
            let end = rest[start..].find(['"', '\'', ',', ']'])? + start;
            Some(rest[start..end].to_owned())
        });
    from_override.unwrap_or_else(|| "127.0.0.1:7447".to_owned())
}

/// Starts a `kairos router` on the endpoint when nothing listens there and it is on this
/// host; the router lives as long as the returned handle.
fn ensure_router() -> anyhow::Result<Option<LocalRouter>> {
    let endpoint = router_endpoint();
    let addrs: Vec<SocketAddr> = endpoint
        .to_socket_addrs()
        .with_context(|| format!("the router endpoint {endpoint} is not an address"))?
        .collect();
    let reachable = addrs
        .iter()
        .any(|a| TcpStream::connect_timeout(a, Duration::from_millis(300)).is_ok());
    if reachable {
        println!("[INFO] [launch]: using the router at {endpoint}");
        return Ok(None);
    }
    if !addrs
        .iter()
        .any(|a| a.ip().is_loopback() || a.ip().is_unspecified())
    {
        bail!(
            "no router answers at {endpoint}, and it is not on this host: start one there \
             (kairos router) or point ZENOH_CONFIG_OVERRIDE at one"
        );
    }
    let exe = std::env::current_exe().context("cannot find the kairos binary")?;
    let router =
        LocalRouter::start_listening(&exe, &format!("tcp/{endpoint}"), Duration::from_secs(30))?;
    println!("[INFO] [launch]: no router answered at {endpoint}; started kairos router there");
    Ok(Some(router))
}
