//! Child processes in tests: killed when dropped, their output read line by line with a
//! deadline on every wait, or whole with a deadline on the child.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A child process killed when dropped.
#[derive(Debug)]
pub struct Running(pub Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
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
#[derive(Debug)]
pub struct Lines {
    rx: mpsc::Receiver<String>,
    /// Every line read so far.
    pub seen: Vec<String>,
}

impl Lines {
    /// Reads `stream` (a child's stdout or stderr) on a thread of its own, to its end:
    /// once the `Lines` are dropped, the thread still reads and discards, so a child whose
    /// output nobody looks at any more never blocks on a full pipe.
    pub fn of(stream: impl std::io::Read + Send + 'static) -> Self {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stream).split(b'\n') {
                let Ok(line) = line else { break };
                let line = String::from_utf8_lossy(&line);
                let _ = tx.send(line.trim_end_matches('\r').to_owned());
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

    /// Every line read so far, and those printed since that are already here (for a
    /// failure's report; never waits).
    pub fn seen_now(&mut self) -> &[String] {
        while let Ok(line) = self.rx.try_recv() {
            self.seen.push(line);
        }
        &self.seen
    }

    /// Every line read so far and every line to the end of the stream (the child exited
    /// and its last line is read), waiting at most `timeout` for the end. After the child
    /// exits, the reading thread may not have handed over its last lines yet: a test that
    /// looks for them uses this, not [`seen_now`](Self::seen_now).
    pub fn rest(&mut self, timeout: Duration) -> &[String] {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(line) => self.seen.push(line),
                Err(_) => return &self.seen,
            }
        }
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

/// Stderr of a run that failed saying each of `says`; panics with both streams otherwise.
pub fn assert_fails(what: &str, out: &Output, says: &[&str]) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let missing: Vec<&&str> = says.iter().filter(|s| !stderr.contains(**s)).collect();
    assert!(
        !out.status.success() && missing.is_empty(),
        "{what} was to fail saying {missing:?}; it ended with {}\nstdout:\n{}\nstderr:\n{stderr}",
        out.status,
        String::from_utf8_lossy(&out.stdout)
    );
    stderr
}

/// `cargo`, as the running test's build used it, for a test that builds something (an
/// example) before running it. Without the variables `cargo test` gives a test binary
/// (`CARGO_MANIFEST_DIR`, `CARGO_PKG_*`, ...): a build script that reads one (ring's does)
/// would see it changed and rebuild itself and all that depends on it, zenoh included.
pub fn cargo() -> Command {
    let mut cargo = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        let given_by_cargo_test = [
            "CARGO_MANIFEST_",
            "CARGO_PKG_",
            "CARGO_CRATE_",
            "CARGO_BIN_",
        ]
        .iter()
        .any(|prefix| name.starts_with(prefix))
            || name == "CARGO_PRIMARY_PACKAGE"
            || name == "CARGO_TARGET_TMPDIR";
        if given_by_cargo_test {
            cargo.env_remove(&*name);
        }
    }
    cargo
}
