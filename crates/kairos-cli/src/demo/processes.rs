//! What the multi-process demos share: a `kairos router` of their own on a free loopback
//! port, children that are killed when dropped whatever happened, and bounded waits for
//! the lines they print. Nothing here waits without a deadline.

use anyhow::{Context as _, bail};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A child process killed when dropped, whatever happened.
pub(crate) struct Running(pub(crate) Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Sends `signal` to a child: SIGINT to stop it as a user does, SIGKILL to stop it with no
/// goodbye on the wire.
pub(crate) fn signal(child: &Child, signal: i32) {
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: kill(2) with a pid of our own child and a valid signal number has no
        // memory effects; an error (the child already exited) is ignored.
        unsafe {
            libc::kill(pid, signal);
        }
    }
}

/// Lines a child prints on stdout, read on a thread of their own.
pub(crate) fn lines_of(child: &mut Child) -> anyhow::Result<mpsc::Receiver<String>> {
    let stdout = child.stdout.take().context("child has no stdout")?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    Ok(rx)
}

/// Waits for a line starting with `prefix`, at most `timeout`.
pub(crate) fn expect_line(
    rx: &mpsc::Receiver<String>,
    prefix: &str,
    timeout: Duration,
    who: &str,
) -> anyhow::Result<String> {
    let deadline = Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) if line.starts_with(prefix) => return Ok(line),
            Ok(_) => {}
            Err(_) => bail!("{who} did not say '{prefix}' within {timeout:?}"),
        }
    }
}

/// A `kairos router` on a free loopback port, stopped when dropped.
pub(crate) struct LocalRouter {
    _process: Running,
    port: u16,
}

impl LocalRouter {
    /// Starts `exe router` on a free loopback port and waits (at most `timeout`) until it
    /// says it runs.
    pub(crate) fn start(exe: &Path, timeout: Duration) -> anyhow::Result<Self> {
        // The OS picks a free port; the router binds it right after.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .context("no free loopback port for the router")?
            .port();
        Self::start_listening(exe, &format!("tcp/127.0.0.1:{port}"), timeout)
            .map(|router| Self { port, ..router })
    }

    /// Starts `exe router --listen endpoint` and waits (at most `timeout`) until it says
    /// it runs.
    pub(crate) fn start_listening(
        exe: &Path,
        endpoint: &str,
        timeout: Duration,
    ) -> anyhow::Result<Self> {
        let mut process = Running(
            Command::new(exe)
                .args(["router", "--listen", endpoint])
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .spawn()
                .context("cannot start kairos router")?,
        );
        let lines = lines_of(&mut process.0)?;
        expect_line(&lines, "kairos router", timeout, "the router")?;
        let port = endpoint
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        Ok(Self {
            _process: process,
            port,
        })
    }

    /// A kairos command on the Zenoh transport, connected to this router only.
    pub(crate) fn command(&self, exe: &Path) -> Command {
        let mut command = Command::new(exe);
        command
            .env("KAIROS_TRANSPORT", "zenoh")
            .env(
                "ZENOH_CONFIG_OVERRIDE",
                format!(
                    "connect/endpoints=[\"tcp/127.0.0.1:{}\"];listen/endpoints=[\"tcp/127.0.0.1:0\"]",
                    self.port
                ),
            )
            .env_remove("ROS_DOMAIN_ID");
        command
    }
}
