//! A `kairos router` of a test's own on a free loopback port, and the environment that
//! points kairos processes (and zenoh-ros2-sdk scripts) at it and nowhere else.

use crate::process::{Lines, Running};
use std::collections::BTreeSet;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
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

/// A loopback port no one listens on now, for a router or session a test starts next.
///
/// The port comes from outside the kernel's ephemeral range
/// (`/proc/sys/net/ipv4/ip_local_port_range`), so no connection's local port and no
/// `bind(0)` of any process can take it between this pick and the bind: with the OS's own
/// pick (`bind(0)`), a port released here was free for every other test's next connection
/// too, and a router whose configuration already named it failed to start. Never the same
/// port twice in one process; the OS's pick when the range leaves no room outside it.
pub fn free_loopback_port() -> u16 {
    static GIVEN: Mutex<BTreeSet<u16>> = Mutex::new(BTreeSet::new());
    let mut given = GIVEN
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let (low, high) = ephemeral_range();
    let outside = if low >= NON_EPHEMERAL_FLOOR + 1024 {
        NON_EPHEMERAL_FLOOR.max(low.saturating_sub(NON_EPHEMERAL_SPAN))..low
    } else {
        high.saturating_add(1)..u16::MAX
    };
    if outside.len() >= 1024 {
        let mut rng = fastrand::Rng::new();
        for _ in 0..1000 {
            let port = rng.u16(outside.clone());
            if !given.contains(&port) && TcpListener::bind(("127.0.0.1", port)).is_ok() {
                given.insert(port);
                return port;
            }
        }
    }
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port();
    given.insert(port);
    port
}

/// Ports below this are left to services that expect their well-known numbers.
const NON_EPHEMERAL_FLOOR: u16 = 10_000;
/// How many ports just below the ephemeral range the tests pick from.
const NON_EPHEMERAL_SPAN: u16 = 12_000;

/// The kernel's range of ephemeral ports (Linux's default where it cannot be read).
fn ephemeral_range() -> (u16, u16) {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|text| {
            let mut bounds = text.split_whitespace().map(|n| n.parse::<u16>().ok());
            Some((bounds.next()??, bounds.next()??))
        })
        .unwrap_or((32768, 60999))
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
    /// `env!("CARGO_BIN_EXE_kairos")`). A port found free can still be taken before the
    /// router binds it (by a process that picks ports another way): a router that exits
    /// before it runs is started again on another free port, up to 20 times.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_come_from_outside_the_ephemeral_range_and_never_twice() {
        let (low, high) = ephemeral_range();
        let ports: Vec<u16> = (0..300).map(|_| free_loopback_port()).collect();
        let distinct: BTreeSet<u16> = ports.iter().copied().collect();
        assert_eq!(distinct.len(), ports.len(), "a port given twice: {ports:?}");
        let inside: Vec<u16> = ports
            .into_iter()
            .filter(|p| (low..=high).contains(p))
            .collect();
        assert!(
            inside.is_empty(),
            "ports inside the ephemeral range {low}-{high}: {inside:?}"
        );
    }
}
