//! What the kairos workspace's tests share, in one place: one install check for the real
//! tools the tests run (its failure says what to install), the real `babeltrace2`, a test
//! binary re-run as a child process (optionally under shell limits or libfaketime), CPU
//! load beside a timing test, child processes with bounded waits ([`process`]), a `kairos
//! router` on a free loopback port ([`router`]), a seeded generator for randomized tests
//! that prints its seed ([`random`]), with the `zenoh` feature, zenoh sessions on
//! loopback only (`zenoh_session`) and, with the `action` feature, the Fibonacci action
//! server the action tests drive (`fibonacci`).
//!
//! A dev-dependency only: nothing here is part of kairos's API.
//!
//! ```
//! // In a test: this binary's test `name` again, in a child process.
//! let child = kairos_testkit::rerun_self("a_test_name");
//! assert!(child.get_args().any(|arg| arg == "--exact"));
//! ```

#![warn(missing_docs)]
#![forbid(unsafe_code)]

#[cfg(feature = "action")]
pub mod fibonacci;
pub mod process;
pub mod random;
pub mod router;
#[cfg(feature = "zenoh")]
pub mod zenoh_session;

use std::path::Path;
use std::process::{Command, Output};
use std::sync::OnceLock;

/// Fails the test, saying what to install, when `tool` is not on `PATH`: a test that needs
/// a tool never skips.
///
/// # Panics
///
/// When `tool` is missing: "`tool` is required by this test: install it with
/// `apt-get install <package>` (scripts/test does this as root)".
pub fn require_tool(tool: &str, package: &str) {
    assert_found(tool, package, found(tool));
}

fn found(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn assert_found(tool: &str, package: &str, found: bool) {
    assert!(
        found,
        "`{tool}` is required by this test: install it with `apt-get install {package}` \
         (scripts/test does this as root)"
    );
}

/// `babeltrace2 <options> <trace>`, ready to run.
///
/// # Panics
///
/// When babeltrace2 is not installed, as [`require_tool`] does.
pub fn babeltrace2(options: &[&str], trace: &Path) -> Command {
    static FOUND: OnceLock<bool> = OnceLock::new();
    assert_found(
        "babeltrace2",
        "babeltrace2",
        *FOUND.get_or_init(|| found("babeltrace2")),
    );
    let mut command = Command::new("babeltrace2");
    command.args(options).arg(trace);
    command
}

/// What `babeltrace2 <options> <trace>` printed and how it exited, whatever that was.
///
/// # Panics
///
/// When babeltrace2 is missing (see [`babeltrace2`]).
pub fn babeltrace2_output(options: &[&str], trace: &Path) -> Output {
    babeltrace2(options, trace)
        .output()
        .unwrap_or_else(|err| panic!("babeltrace2 does not run: {err}"))
}

/// What `babeltrace2 <options> <trace>` printed, which must be a clean read: exit status
/// 0 and nothing on stderr (no warning).
///
/// # Panics
///
/// When babeltrace2 is missing, fails, or warns: the trace is then not one babeltrace2
/// reads cleanly, which is what the calling test checks.
pub fn babeltrace2_clean(options: &[&str], trace: &Path) -> String {
    let out = babeltrace2_output(options, trace);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "babeltrace2 {} failed ({}): {stderr}",
        trace.display(),
        out.status
    );
    assert!(
        stderr.is_empty(),
        "babeltrace2 {} warned: {stderr}",
        trace.display()
    );
    String::from_utf8(out.stdout).expect("babeltrace2 prints UTF-8")
}

/// This test binary, re-run as a child that runs only its test `name`
/// (`--exact <name> --nocapture`). The test tells it is the child by an environment
/// variable the caller sets on the returned command.
pub fn rerun_self(name: &str) -> Command {
    let mut command = Command::new(current_exe());
    command.args(["--exact", name, "--nocapture"]);
    command
}

/// Like [`rerun_self`], under the shell `limits` run first in the child's shell, e.g.
/// `"ulimit -n 64"` or `"trap '' XFSZ; ulimit -f 40"`: the limits apply to the child only,
/// never to the test that runs it.
pub fn rerun_self_under(limits: &str, name: &str) -> Command {
    let mut command = Command::new("/bin/sh");
    command
        .arg("-c")
        .arg(format!(
            "{limits} && exec \"$0\" --exact \"$1\" --nocapture"
        ))
        .arg(current_exe())
        .arg(name);
    command
}

fn current_exe() -> std::path::PathBuf {
    std::env::current_exe().expect("a test knows the path of its own binary")
}

/// Where Debian's `faketime` package installs the multi-threaded libfaketime.
pub const LIBFAKETIME: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1";

/// Like [`rerun_self`], with the child's wall clock (only: monotonic time stays real) under
/// libfaketime, offset by the seconds written in `offset_file` and re-read on every call,
/// so [`set_wall_offset`] steps it while the child runs.
///
/// # Panics
///
/// When libfaketime is not installed: "libfaketime missing: apt-get install faketime".
pub fn rerun_self_under_faketime(name: &str, offset_file: &Path) -> Command {
    assert!(
        Path::new(LIBFAKETIME).exists(),
        "libfaketime missing: apt-get install faketime (scripts/test does this as root)"
    );
    let mut command = rerun_self(name);
    command
        .env("LD_PRELOAD", LIBFAKETIME)
        .env("FAKETIME_TIMESTAMP_FILE", offset_file)
        .env("FAKETIME_NO_CACHE", "1")
        .env("FAKETIME_DONT_FAKE_MONOTONIC", "1");
    command
}

/// Steps the wall clock of a child started by [`rerun_self_under_faketime`] to `secs`
/// seconds from the real one: the file is replaced at once (written aside, then renamed),
/// so the child never reads half an offset.
pub fn set_wall_offset(offset_file: &Path, secs: i64) {
    let tmp = offset_file.with_extension("tmp");
    std::fs::write(&tmp, format!("{secs:+}\n")).expect("the offset file can be written");
    std::fs::rename(&tmp, offset_file).expect("the offset file can be replaced");
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHILD: &str = "KAIROS_TESTKIT_CHILD";

    #[test]
    fn the_child_runs_under_the_limits_and_the_parent_does_not() {
        let limits = std::fs::read_to_string("/proc/self/limits").unwrap();
        let open_files = limits
            .lines()
            .find(|line| line.starts_with("Max open files"))
            .unwrap()
            .to_owned();
        if std::env::var_os(CHILD).is_some() {
            println!("child: {open_files}");
            return;
        }
        assert!(!open_files.contains(" 64 "), "{open_files}");
        let out = rerun_self_under(
            "ulimit -n 64",
            "tests::the_child_runs_under_the_limits_and_the_parent_does_not",
        )
        .env(CHILD, "1")
        .output()
        .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{stdout}");
        let child = stdout
            .lines()
            .find(|line| line.starts_with("child: "))
            .unwrap_or_else(|| panic!("the child did not run the test: {stdout}"));
        assert!(
            child.split_whitespace().filter(|w| *w == "64").count() == 2,
            "{child}"
        );
    }

    #[test]
    fn babeltrace2_is_installed_or_the_test_says_what_to_install() {
        // A folder that holds no trace: babeltrace2 runs and refuses it.
        let out = babeltrace2_output(&[], Path::new(env!("CARGO_MANIFEST_DIR")));
        assert!(!out.status.success(), "{out:?}");
        assert!(!out.stderr.is_empty(), "{out:?}");
    }
}

/// Threads that keep CPUs busy until dropped: a test whose promise must hold on a loaded
/// machine (determinism, exact accounting) runs beside them.
///
/// ```
/// let load = kairos_testkit::CpuLoad::start(2);
/// // ... the test, with two busy threads beside it ...
/// drop(load);
/// ```
#[derive(Debug)]
pub struct CpuLoad {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl CpuLoad {
    /// Starts `threads` CPU-bound threads.
    pub fn start(threads: usize) -> CpuLoad {
        use std::sync::atomic::{AtomicBool, Ordering};
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let threads = (0..threads)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let mut x = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        x = std::hint::black_box(
                            x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1),
                        );
                    }
                })
            })
            .collect();
        CpuLoad { stop, threads }
    }
}

impl Drop for CpuLoad {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}
