//! A `kairos router` of a test's own on a free loopback port, and the environment that
//! points kairos processes (and zenoh-ros2-sdk scripts) at it and nowhere else.

use crate::process::{Lines, Running};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Put before every script of [`Router::python`]: an uncaught exception (not Ctrl-C, whose
/// default exit stays) prints its traceback and exits with status 1 at once.
const EXIT_ON_EXCEPTION: &str = "\
import os as _os, sys as _sys, traceback as _traceback
def _exit_at_once(kind, value, trace):
    if issubclass(kind, KeyboardInterrupt):
        return _sys.__excepthook__(kind, value, trace)
    _traceback.print_exception(kind, value, trace)
    _sys.stdout.flush()
    _sys.stderr.flush()
    _os._exit(1)
_sys.excepthook = _exit_at_once
";

/// A loopback port no one listens on now (the OS's pick); bind it soon.
pub fn free_loopback_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}

/// A router on a free loopback port, and the environment that points processes at it.
#[derive(Debug)]
pub struct Router {
    _process: Running,
    /// The loopback port it listens on.
    pub port: u16,
    exe: PathBuf,
}

impl Router {
    /// `exe router` on a free loopback port (`exe` is a kairos binary, in a test
    /// `env!("CARGO_BIN_EXE_kairos")`). A port found free can be taken before the router
    /// binds it (another test's connection gets it as its ephemeral port): a router that
    /// exits before it runs is started again on another free port, up to 20 times.
    pub fn start(exe: impl AsRef<Path>) -> Self {
        let mut last = String::new();
        for _ in 0..20 {
            match Self::try_start_on(exe.as_ref(), free_loopback_port()) {
                Ok(router) => return router,
                Err(e) => last = e,
            }
        }
        panic!("kairos router could not bind a loopback port in 20 tries: {last}");
    }

    /// A router on `port` (a restart on the port a killed router held).
    pub fn start_on(exe: impl AsRef<Path>, port: u16) -> Self {
        Self::try_start_on(exe.as_ref(), port).unwrap_or_else(|e| panic!("{e}"))
    }

    /// A router on `port`, or why it did not run: it exited first (the port was taken)
    /// or printed nothing within 30 s.
    fn try_start_on(exe: &Path, port: u16) -> Result<Self, String> {
        let exe = exe.to_path_buf();
        let mut child = Command::new(&exe)
            .args(["router", "--listen", &format!("tcp/127.0.0.1:{port}")])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start kairos router");
        let mut lines = Lines::of(child.stdout.take().expect("router stdout"));
        let mut process = Running(child);
        let line = lines.next_within(Duration::from_secs(30));
        if line.as_ref().is_some_and(|l| l.contains("running")) {
            return Ok(Self {
                _process: process,
                port,
                exe,
            });
        }
        let status = process.0.try_wait().ok().flatten();
        Err(format!(
            "kairos router on port {port} did not start within 30 s: first line {line:?}, exit {status:?}"
        ))
    }

    /// A kairos command connected to this router only.
    pub fn kairos(&self) -> Command {
        let mut cmd = Command::new(&self.exe);
        cmd.env("ZENOH_CONFIG_OVERRIDE", self.override_env())
            .env_remove("ROS_DOMAIN_ID")
            .env_remove("KAIROS_TRACE");
        cmd
    }

    /// `python3 -c script`, told this router's port in `ROUTER_PORT`. An exception the
    /// script does not catch ends the process at once, its traceback printed: at a normal
    /// exit a failed script would wait for its zenoh session's threads until the test's
    /// bound killed it (90 s of a failing test spent waiting).
    pub fn python(&self, script: &str) -> Command {
        let mut cmd = Command::new("python3");
        cmd.args(["-c", &format!("{EXIT_ON_EXCEPTION}{script}")])
            .env("ROUTER_PORT", self.port.to_string())
            .env_remove("ROS_DOMAIN_ID");
        cmd
    }

    /// `ZENOH_CONFIG_OVERRIDE` that connects a session to this router only.
    pub fn override_env(&self) -> String {
        format!(
            "connect/endpoints=[\"tcp/127.0.0.1:{}\"];listen/endpoints=[\"tcp/127.0.0.1:0\"]",
            self.port
        )
    }
}
