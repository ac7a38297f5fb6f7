//! What the process-level tests share: building and running this crate's example
//! programs. (babeltrace2 and re-running a test binary are in `kairos-testkit`.)

#![allow(dead_code)] // Each test file uses the part it needs.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// How long an example may take to build (a fresh build on a loaded 2-core machine).
const BUILD_LIMIT: Duration = Duration::from_secs(600);

/// The path of example `name` of this crate, built now with the profile and target
/// directory of the running test (`cargo test` builds the examples too, but
/// `cargo test --test <file>` does not: building here keeps the binary current either way).
pub fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(Path::parent).unwrap(); // <target>/<profile>
    let target_dir = profile_dir.parent().unwrap();
    let mut build = kairos_testkit::process::cargo();
    build
        // `--workspace`, as scripts/test's `cargo test --workspace`: the same features,
        // hence the artifacts that run already built, and nothing to rebuild.
        .args([
            "build",
            "--quiet",
            "--workspace",
            "--example",
            name,
            "--manifest-path",
        ])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
        .arg("--target-dir")
        .arg(target_dir);
    if profile_dir.file_name().is_some_and(|p| p == "release") {
        build.arg("--release");
    }
    let build = build.spawn().expect("cargo runs");
    let output = finish_within(build, BUILD_LIMIT)
        .unwrap_or_else(|| panic!("building example {name} took over {BUILD_LIMIT:?}"));
    assert!(
        output.status.success(),
        "building example {name} failed: {}",
        output.status
    );
    profile_dir.join("examples").join(name)
}

/// Sends `signal` to `child` (e.g. `rustix::process::Signal::INT`, a Ctrl-C).
pub fn send_signal(child: &Child, signal: rustix::process::Signal) {
    let pid = rustix::process::Pid::from_raw(child.id() as i32).expect("a child has a pid");
    rustix::process::kill_process(pid, signal).expect("the signal is sent");
}

/// Waits for `child` to end, collecting the rest of its output, until `limit`; `None`
/// (and the child killed) if it is still running then.
pub fn finish_within(child: Child, limit: Duration) -> Option<Output> {
    let pid = rustix::process::Pid::from_raw(child.id() as i32).expect("a child has a pid");
    let (tx, rx) = mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(output) => Some(output.expect("the child's output is readable")),
        Err(_) => {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            let _ = waiter.join();
            None
        }
    }
}

/// Spawns `command` with piped output and reads its stdout until a line starting with
/// `prefix` (the child saying it is ready); panics if it ends first.
pub fn spawn_until_line(command: &mut Command, prefix: &str) -> (Child, Vec<String>) {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the example starts");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut lines = Vec::new();
    loop {
        let mut line = String::new();
        if stdout.read_line(&mut line).unwrap() == 0 {
            let _ = child.kill();
            panic!("the child ended before printing `{prefix}`; it printed {lines:?}");
        }
        let ready = line.starts_with(prefix);
        lines.push(line.trim_end().to_owned());
        if ready {
            break;
        }
    }
    // The rest of stdout is read after the child ends.
    child.stdout = Some(stdout.into_inner());
    (child, lines)
}
