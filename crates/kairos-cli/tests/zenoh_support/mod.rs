//! Helpers for tests that run kairos processes on Zenoh: a `kairos router` of the test's
//! own on a free loopback port, children killed when dropped, bounded waits for their
//! output, line by line or whole.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub fn kairos() -> Command {
    Command::new(env!("CARGO_BIN_EXE_kairos"))
}

/// A child process killed when dropped.
pub struct Running(pub Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A router on a free loopback port, and the environment that points processes at it.
pub struct Router {
    _process: Running,
    pub port: u16,
}

impl Router {
    pub fn start() -> Self {
        // The OS picks a free port; the router binds it right after.
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free loopback port")
            .port();
        Self::start_on(port)
    }

    /// A router on `port` (a restart on the port a killed router held).
    pub fn start_on(port: u16) -> Self {
        let mut child = kairos()
            .args(["router", "--listen", &format!("tcp/127.0.0.1:{port}")])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start kairos router");
        let mut lines = Lines::of(child.stdout.take().expect("router stdout"));
        let process = Running(child);
        let line = lines.next_within(Duration::from_secs(30));
        assert!(
            line.as_ref().is_some_and(|l| l.contains("running")),
            "kairos router did not start within 30 s: {line:?}"
        );
        Self {
            _process: process,
            port,
        }
    }

    /// A kairos command connected to this router only.
    pub fn kairos(&self) -> Command {
        let mut cmd = kairos();
        cmd.env("ZENOH_CONFIG_OVERRIDE", self.override_env())
            .env_remove("ROS_DOMAIN_ID")
            .env_remove("KAIROS_TRACE");
        cmd
    }

    /// `python3 -c script`, told this router's port in `ROUTER_PORT`.
    pub fn python(&self, script: &str) -> Command {
        let mut cmd = Command::new("python3");
        cmd.args(["-c", script])
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

/// Starts `cmd` with stdout and stderr piped.
pub fn spawn(cmd: &mut Command) -> Running {
    Running(
        cmd.stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start process"),
    )
}

/// The lines a child prints, read on a thread of their own.
pub struct Lines {
    rx: mpsc::Receiver<String>,
    pub seen: Vec<String>,
}

impl Lines {
    pub fn of(stream: impl std::io::Read + Send + 'static) -> Self {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stream).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Self {
            rx,
            seen: Vec::new(),
        }
    }

    /// The next line, or None at the end of the stream or after `timeout`.
    pub fn next_within(&mut self, timeout: Duration) -> Option<String> {
        let line = self.rx.recv_timeout(timeout).ok()?;
        self.seen.push(line.clone());
        Some(line)
    }

    /// Reads lines until `want` of them equal `line`, ignoring others; panics after
    /// `timeout` saying how many came.
    pub fn wait_for_count(&mut self, line: &str, want: usize, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        let mut seen = 0;
        while seen < want {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.next_within(left) {
                Some(l) if l == line => seen += 1,
                Some(_) => {}
                None => panic!("saw {seen} of {want} lines {line:?} within {timeout:?}"),
            }
        }
    }

    /// Reads lines until one contains `text`; panics after `timeout` saying what came.
    pub fn wait_for(&mut self, text: &str, timeout: Duration) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.next_within(left) {
                Some(line) if line.contains(text) => return line,
                Some(_) => continue,
                None => panic!(
                    "no line with '{text}' within {timeout:?}; lines so far:\n{}",
                    self.seen.join("\n")
                ),
            }
        }
    }
}

/// Takes the stdout of `child` as lines.
pub fn stdout_lines(child: &mut Running) -> Lines {
    Lines::of(child.0.stdout.take().expect("piped stdout"))
}

/// Waits for `child` at most `timeout`; kills it if it runs longer.
pub fn finish(mut child: Running, timeout: Duration) -> Output {
    let pid = child.0.id();
    let (tx, rx) = mpsc::channel();
    let killer = std::thread::spawn(move || {
        if rx.recv_timeout(timeout).is_err() {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        }
    });
    let stdout = child.0.stdout.take();
    let stderr = child.0.stderr.take();
    let err_reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        if let Some(mut s) = stderr {
            let _ = std::io::Read::read_to_end(&mut s, &mut out);
        }
        out
    });
    let mut out = Vec::new();
    if let Some(mut s) = stdout {
        let _ = std::io::Read::read_to_end(&mut s, &mut out);
    }
    let status = child.0.wait().expect("wait for child");
    let _ = tx.send(());
    let _ = killer.join();
    let stderr = err_reader.join().unwrap_or_default();
    Output {
        status,
        stdout: out,
        stderr,
    }
}

/// Stdout of a successful run; panics with both streams otherwise.
pub fn assert_ok(what: &str, out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{what} failed with {}\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}
