//! A launch file that runs code (a Python launch file): the process that runs it, and the
//! protocol between that process and the supervisor.
//!
//! The driver (`python3 -m kairos.launch.driver FILE`) evaluates the file with kairos's
//! implementation of ROS 2's `launch` and `launch_ros` Python APIs and asks the
//! supervisor for what it needs, one JSON object per line on its standard output
//! ([`Request`]); the supervisor tells it what happened, one JSON object per line on its
//! standard input ([`Notice`]). A launch run from Python code (ROS 2's `LaunchService`)
//! turns it round: the Python process is the driver and started this launcher
//! ([`Driver::serve`]); the protocol and the promises are the same.
//!
//! What this promises:
//! - The supervisor owns the processes, their signals and the stop; the driver only
//!   asks. A launch file's event handler, however slow, stuck or failing, cannot delay a
//!   stop beyond its bound: the driver is told of the stop, requests after it are
//!   refused, and the driver is killed [`DRIVER_GRACE`] after the last process ended.
//! - Nothing starts until the file's first evaluation is complete: an error in it (with
//!   the file and line the traceback names) starts nothing, as with YAML and XML files.

use crate::description::{LaunchError, Output, ProcessSpec, seconds};
use serde::Deserialize;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;
use wait_timeout::ChildExt;

/// How long the driver may take to exit once the launch has ended, before it is killed.
pub const DRIVER_GRACE: Duration = Duration::from_secs(2);

/// What the driver asks of the supervisor.
#[derive(Debug, Clone)]
pub enum Request {
    /// Start a process; `id` names it in the notices about it.
    Start {
        /// The driver's name for the process.
        id: u64,
        /// The process.
        spec: ProcessSpec,
        /// Whether the driver wants its output lines (an `OnProcessIO` handler).
        io: bool,
    },
    /// Stop the launch (`EmitEvent(Shutdown())`).
    Shutdown {
        /// Why, for the stop report.
        reason: String,
    },
    /// Signal one process (`EmitEvent(SignalProcess(...))`).
    Signal {
        /// The process.
        id: u64,
        /// The signal's number.
        signal: i32,
    },
    /// Print a line of the launch's own (`LogInfo`).
    Log {
        /// The line.
        text: String,
    },
    /// Whether the driver has work of its own pending (timers), and how many notices it
    /// has handled: the launch does not end while it is busy or has notices to handle
    /// (an exit's handler may start another process), even with no process running.
    Busy {
        /// Timers pending.
        busy: bool,
        /// Notices handled so far.
        seen: u64,
    },
    /// The first evaluation is complete; the requests before this one are the launch.
    Ready,
    /// The file is a launch test whose description is parametrized: it is `count`
    /// launches, this driver being one of them (see [`crate::launch_test`]).
    Runs {
        /// How many launches the file is.
        count: usize,
    },
    /// The file cannot be launched (before [`Request::Ready`]), or an event handler failed.
    Error(LaunchError),
}

/// What the supervisor tells the driver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// A process started.
    Started {
        /// The driver's name for it.
        id: u64,
        /// Its process id.
        pid: u32,
        /// Its label in the launch's output (`talker-1`), ROS 2's process name.
        label: String,
    },
    /// A process ended: its exit code, or the signal that ended it.
    Exited {
        /// The driver's name for it.
        id: u64,
        /// Its exit code, if it exited.
        code: Option<i32>,
        /// The signal that ended it, if one did.
        signal: Option<i32>,
    },
    /// A line a process printed (for a process started with `io`).
    Io {
        /// The driver's name for it.
        id: u64,
        /// Whether it was on standard error.
        stderr: bool,
        /// The line.
        text: String,
    },
    /// The launch is stopping.
    Shutdown {
        /// Why.
        reason: String,
    },
}

impl Notice {
    fn to_json(&self) -> String {
        let value = match self {
            Notice::Started { id, pid, label } => {
                serde_json::json!({"ev": "started", "id": id, "pid": pid, "label": label})
            }
            Notice::Exited { id, code, signal } => {
                serde_json::json!({"ev": "exited", "id": id, "code": code, "signal": signal})
            }
            Notice::Io { id, stderr, text } => serde_json::json!({
                "ev": "io", "id": id, "stream": if *stderr { "stderr" } else { "stdout" }, "text": text
            }),
            Notice::Shutdown { reason } => serde_json::json!({"ev": "shutdown", "reason": reason}),
        };
        value.to_string()
    }
}

/// One line of the driver, as it writes it.
#[derive(Debug, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
enum Line {
    Start {
        id: u64,
        name: String,
        cmd: Vec<String>,
        #[serde(default)]
        env: Vec<(String, String)>,
        #[serde(default)]
        cwd: Option<PathBuf>,
        #[serde(default)]
        output: Option<String>,
        #[serde(default)]
        respawn: bool,
        #[serde(default)]
        respawn_delay: f64,
        #[serde(default)]
        respawn_max_retries: Option<u32>,
        #[serde(default)]
        env_only: bool,
        #[serde(default)]
        required: bool,
        #[serde(default)]
        origin: String,
        #[serde(default)]
        io: bool,
        #[serde(default)]
        sigterm_timeout: Option<f64>,
        #[serde(default)]
        sigkill_timeout: Option<f64>,
        #[serde(default)]
        emulate_tty: bool,
    },
    Shutdown {
        reason: String,
    },
    Signal {
        id: u64,
        signal: i32,
    },
    Log {
        text: String,
    },
    Busy {
        busy: bool,
        seen: u64,
    },
    Ready,
    Runs {
        count: usize,
    },
    Error {
        file: PathBuf,
        line: usize,
        what: String,
    },
}

fn request(line: &str, file: &Path) -> Request {
    let parsed: Line = match serde_json::from_str(line) {
        Ok(parsed) => parsed,
        Err(e) => {
            return Request::Error(LaunchError {
                file: file.to_path_buf(),
                line: 0,
                what: format!("the launch driver said something kairos cannot read ({e}): {line}"),
            });
        }
    };
    match parsed {
        Line::Start {
            id,
            name,
            cmd,
            env,
            cwd,
            output,
            respawn,
            respawn_delay,
            respawn_max_retries,
            env_only,
            required,
            origin,
            io,
            sigterm_timeout,
            sigkill_timeout,
            emulate_tty,
        } => {
            let Some((program, args)) = cmd.split_first() else {
                return Request::Error(LaunchError {
                    file: file.to_path_buf(),
                    line: 0,
                    what: format!("{origin}: a process with an empty command"),
                });
            };
            let output = match output.as_deref() {
                Some("log") => Output::Log,
                Some("both") => Output::Both,
                _ => Output::Screen,
            };
            let times = (|| {
                let optional = |key, value: Option<f64>| value.map(|v| seconds(key, v)).transpose();
                Ok::<_, String>((
                    seconds("respawn_delay", respawn_delay)?,
                    optional("sigterm_timeout", sigterm_timeout)?,
                    optional("sigkill_timeout", sigkill_timeout)?,
                ))
            })();
            let (respawn_delay, sigterm_timeout, sigkill_timeout) = match times {
                Ok(times) => times,
                Err(why) => {
                    return Request::Error(LaunchError {
                        file: file.to_path_buf(),
                        line: 0,
                        what: format!("{origin}: {why}"),
                    });
                }
            };
            Request::Start {
                id,
                spec: ProcessSpec {
                    label: name,
                    program: PathBuf::from(program),
                    args: args.to_vec(),
                    env,
                    env_only,
                    cwd,
                    output,
                    respawn,
                    respawn_delay,
                    respawn_max_retries,
                    required,
                    origin,
                    sigterm_timeout,
                    sigkill_timeout,
                    emulate_tty,
                },
                io,
            }
        }
        Line::Shutdown { reason } => Request::Shutdown { reason },
        Line::Signal { id, signal } => Request::Signal { id, signal },
        Line::Log { text } => Request::Log { text },
        Line::Busy { busy, seen } => Request::Busy { busy, seen },
        Line::Ready => Request::Ready,
        Line::Runs { count } => Request::Runs { count },
        Line::Error { file, line, what } => Request::Error(LaunchError { file, line, what }),
    }
}

/// How many notices may wait for a driver that does not read them.
pub const NOTICE_QUEUE: usize = 4096;

/// The thread that writes notices to the driver's input, one JSON line each; it ends (and
/// closes the input) when the sender is dropped or the driver stops reading for good.
fn writer(mut stdin: Box<dyn Write + Send>) -> mpsc::SyncSender<Notice> {
    let (tx, rx) = mpsc::sync_channel::<Notice>(NOTICE_QUEUE);
    std::thread::spawn(move || {
        for notice in rx {
            if writeln!(stdin, "{}", notice.to_json()).is_err() {
                return;
            }
        }
    });
    tx
}

/// The driver of one launch file: a process of this launcher's, or the process that
/// started this launcher (an in-process `LaunchService`, see [`Driver::serve`]).
#[derive(Debug)]
pub struct Driver {
    /// The driver's process, when this launcher started it.
    child: Option<Child>,
    /// To the thread that writes notices to the driver's input; dropped to close it.
    notices: Option<mpsc::SyncSender<Notice>>,
    requests: mpsc::Receiver<Request>,
    file: PathBuf,
}

/// The Python program that drives a launch file, run as `python3 -m MODULE FILE`.
pub const DRIVER_MODULE: &str = "kairos.launch.driver";

/// The driver's option naming the launch's log folder (`launch.logging`'s folder).
pub fn log_dir_option(log_dir: &Path) -> Vec<std::ffi::OsString> {
    vec!["--log-dir".into(), log_dir.into()]
}

impl Driver {
    /// Starts the driver of `file` with the launch arguments `args`, and reads its first
    /// evaluation: the requests up to [`Request::Ready`], or the error that means
    /// nothing starts. `python` is the interpreter (`python3`), with `python_path` added
    /// to its module path if given. The file's `launch.logging` writes in `log_dir`, the
    /// launch's log folder, beside its processes' `output: log` files.
    pub fn start(
        file: &Path,
        args: &[(String, String)],
        python: &Path,
        python_path: Option<&Path>,
        log_dir: &Path,
        timeout: Duration,
    ) -> Result<(Driver, Vec<Request>), LaunchError> {
        let options = log_dir_option(log_dir);
        Driver::start_module(
            DRIVER_MODULE,
            &options,
            file,
            args,
            python,
            python_path,
            timeout,
        )
    }

    /// As [`Driver::start`], with the driver `python3 -m MODULE [OPTIONS] FILE [name:=value
    /// ...]` (a launch test's driver, [`crate::launch_test::TEST_DRIVER_MODULE`]).
    pub fn start_module(
        module: &str,
        options: &[std::ffi::OsString],
        file: &Path,
        args: &[(String, String)],
        python: &Path,
        python_path: Option<&Path>,
        timeout: Duration,
    ) -> Result<(Driver, Vec<Request>), LaunchError> {
        let file = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
        let error = |line: usize, what: String| LaunchError {
            file: file.clone(),
            line,
            what,
        };
        let mut command = Command::new(python);
        command
            .args(["-m", module])
            .args(options)
            .arg(&file)
            .args(args.iter().map(|(k, v)| format!("{k}:={v}")))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            // A group of its own: the terminal's Ctrl-C is the launcher's to handle, and
            // the driver hears of it as a notice.
            .process_group(0);
        // An XML or YAML file the Python file includes is read by this launcher's reader.
        if let Ok(exe) = std::env::current_exe() {
            command.env("KAIROS_BIN", exe);
        }
        if let Some(path) = python_path {
            let mut paths = vec![path.to_path_buf()];
            if let Some(old) = std::env::var_os("PYTHONPATH") {
                paths.extend(std::env::split_paths(&old));
            }
            if let Ok(joined) = std::env::join_paths(paths) {
                command.env("PYTHONPATH", joined);
            }
        }
        let mut child = command.spawn().map_err(|e| {
            error(
                0,
                format!(
                    "cannot run {} for a Python launch file: {e} (install Python 3)",
                    python.display()
                ),
            )
        })?;
        let stdout = child.stdout.take().expect("piped stdout");
        let stdin = child
            .stdin
            .take()
            .map(|s| Box::new(s) as Box<dyn Write + Send>);
        Driver::connect(Some(child), stdout, stdin, file, timeout)
    }

    /// The driver of a launch whose Python side started this launcher (ROS 2's
    /// `LaunchService` in the caller's process): its requests come on `requests` (this
    /// launcher's standard input), the notices go to `notices`; `file` names the launch in
    /// messages. Reads the first evaluation as [`Driver::start`] does.
    pub fn serve(
        file: &Path,
        requests: impl std::io::Read + Send + 'static,
        notices: impl Write + Send + 'static,
        timeout: Duration,
    ) -> Result<(Driver, Vec<Request>), LaunchError> {
        Driver::connect(
            None,
            requests,
            Some(Box::new(notices)),
            file.to_path_buf(),
            timeout,
        )
    }

    fn connect(
        child: Option<Child>,
        requests: impl std::io::Read + Send + 'static,
        notices: Option<Box<dyn Write + Send>>,
        file: PathBuf,
        timeout: Duration,
    ) -> Result<(Driver, Vec<Request>), LaunchError> {
        let error = |line: usize, what: String| LaunchError {
            file: file.clone(),
            line,
            what,
        };
        let (tx, rx) = mpsc::channel();
        let reader_file = file.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(requests).lines() {
                let Ok(line) = line else { break };
                if line.trim().is_empty() {
                    continue;
                }
                if tx.send(request(&line, &reader_file)).is_err() {
                    break;
                }
            }
        });
        let mut driver = Driver {
            child,
            notices: notices.map(writer),
            requests: rx,
            file: file.clone(),
        };
        let mut first = Vec::new();
        loop {
            match driver.requests.recv_timeout(timeout) {
                Ok(Request::Ready) => return Ok((driver, first)),
                Ok(Request::Error(e)) => {
                    driver.finish();
                    return Err(e);
                }
                Ok(request) => first.push(request),
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    driver.finish();
                    return Err(error(
                        0,
                        format!(
                            "the launch file was not evaluated within {} s (is \
                             generate_launch_description() waiting for something?)",
                            timeout.as_secs()
                        ),
                    ));
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    let status = driver.child.as_mut().and_then(|c| c.wait().ok());
                    let hint = match status.and_then(|s| s.code()) {
                        Some(1) => {
                            " (if it says \"No module named 'kairos'\": install kairos for \
                             Python, `pip install ./crates/kairos-py`)"
                        }
                        _ => "",
                    };
                    return Err(error(
                        0,
                        format!(
                            "the Python launch driver ended before the file was read \
                             ({status:?}); its error is printed above{hint}",
                            status = status.map(|s| s.to_string()).unwrap_or_default()
                        ),
                    ));
                }
            }
        }
    }

    /// Moves the driver's further requests into `sink` (on a thread of its own), as
    /// `wrap` turns them into the supervisor's events.
    pub fn forward<E: Send + 'static>(
        &mut self,
        sink: mpsc::Sender<E>,
        wrap: impl Fn(Option<Request>) -> E + Send + 'static,
    ) {
        let (_, dead) = mpsc::channel();
        let requests = std::mem::replace(&mut self.requests, dead);
        std::thread::spawn(move || {
            for request in requests {
                if sink.send(wrap(Some(request))).is_err() {
                    return;
                }
            }
            // The driver closed its output: it has ended.
            let _ = sink.send(wrap(None));
        });
    }

    /// Tells the driver `notice`, never waiting: a driver that does not read its input
    /// (stuck in a handler) loses notices past [`NOTICE_QUEUE`], and one that has ended
    /// is not told.
    /// Whether it was sent.
    pub fn notify(&self, notice: Notice) -> bool {
        self.notices
            .as_ref()
            .is_some_and(|notices| notices.try_send(notice).is_ok())
    }

    /// The launch file.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// Ends the driver: closes its input (its signal to exit), gives it [`DRIVER_GRACE`],
    /// then kills it.
    pub fn finish(&mut self) {
        self.finish_within(DRIVER_GRACE);
    }

    /// Ends the driver as [`Driver::finish`] does, giving it `grace` to exit by itself;
    /// returns how it exited, `None` when it had to be killed.
    /// A driver that started this launcher is not this launcher's to end: its notices
    /// end, and `None` says no status was waited for.
    pub fn finish_within(&mut self, grace: Duration) -> Option<std::process::ExitStatus> {
        self.notices.take();
        let child = self.child.as_mut()?;
        match child.wait_timeout(grace) {
            Ok(Some(status)) => Some(status),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                None
            }
        }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let running = self
            .child
            .as_mut()
            .is_some_and(|c| matches!(c.try_wait(), Ok(None)));
        if running {
            self.finish();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start(extra: &str) -> Request {
        let line = format!(
            r#"{{"op": "start", "id": 1, "name": "talker", "cmd": ["talker"], "origin": "a.launch.py:3"{extra}}}"#
        );
        request(&line, Path::new("a.launch.py"))
    }

    #[test]
    fn a_process_s_own_times_reach_its_spec() {
        let Request::Start { spec, .. } = start(
            r#", "respawn_delay": 0.5, "sigterm_timeout": 0.2, "sigkill_timeout": 1, "emulate_tty": true"#,
        ) else {
            panic!("a start request");
        };
        assert_eq!(spec.respawn_delay, Duration::from_millis(500));
        assert_eq!(spec.sigterm_timeout, Some(Duration::from_millis(200)));
        assert_eq!(spec.sigkill_timeout, Some(Duration::from_secs(1)));
        assert!(spec.emulate_tty);
    }

    #[test]
    fn a_time_no_clock_could_take_is_an_error_naming_where() {
        for extra in [
            r#", "sigterm_timeout": 1e300"#,
            r#", "sigkill_timeout": -1"#,
            r#", "respawn_delay": 1e300"#,
        ] {
            let Request::Error(err) = start(extra) else {
                panic!("{extra}: an error, not a start");
            };
            assert!(
                err.what.starts_with("a.launch.py:3: ") && err.what.contains("is not seconds"),
                "{extra}: {}",
                err.what
            );
        }
    }
}
