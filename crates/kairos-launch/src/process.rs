//! Child processes for the launcher and the multi-process demos: children that are killed
//! when dropped whatever happened, signals, and bounded waits for the lines they print.
//! Nothing here waits without a deadline.

use anyhow::{Context as _, bail};
use std::io::{BufRead, BufReader};
use std::process::Child;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A child process killed when dropped, whatever happened.
#[derive(Debug)]
pub struct Running(pub Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Sends `signal` to a child: SIGINT to stop it as a user does, SIGKILL to stop it with no
/// goodbye on the wire.
pub fn signal(child: &Child, signal: i32) {
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: kill(2) with a pid of our own child and a valid signal number has no
        // memory effects; an error (the child already exited) is ignored.
        unsafe {
            libc::kill(pid, signal);
        }
    }
}

/// Lines a child prints on stdout, read on a thread of their own.
pub fn lines_of(child: &mut Child) -> anyhow::Result<mpsc::Receiver<String>> {
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
pub fn expect_line(
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
