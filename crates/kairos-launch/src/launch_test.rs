//! Launch tests, as ROS 2's `launch_test FILE` runs them: a Python file whose
//! `generate_test_description()` is launched on this launcher while its `unittest` tests
//! run, some during the launch and some after it (see the Python side,
//! `kairos.launch_testing`).
//!
//! What this promises:
//! - A launch test ends. The launch keeps its bounded stop; the tests that run during it
//!   wait for `ReadyToTest` within their timeout; [`TestOptions::timeout`] bounds the
//!   whole run (its launch is then stopped as Ctrl-C stops it); the post-shutdown tests
//!   get [`TestOptions::post_shutdown_timeout`] once the launch has ended, after which the
//!   driver is killed and the run fails saying so.
//! - The exit status says how the tests went ([`status`]): a test failed, the launch ended
//!   before its tests, or the driver had to be killed is a failure; a file that cannot be
//!   a launch test is reported with its file and line and starts nothing.
//! - A parametrized description is one launch per set of values, one after the other,
//!   each with its own stop.

use crate::driver::{Driver, Request};
use crate::supervise;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The Python program that runs a launch test, as `python3 -m MODULE ...`.
pub const TEST_DRIVER_MODULE: &str = "kairos.launch_testing.driver";

/// The least time the post-shutdown tests get, even when the run's timeout is near: what
/// reporting takes.
const REPORT_GRACE: Duration = Duration::from_secs(2);

/// A launch test's exit status.
pub mod status {
    /// Every test passed.
    pub const PASSED: u8 = 0;
    /// A test failed or errored, the launch ended before its tests, or the run was cut
    /// short (its timeout, Ctrl-C, a driver that did not end).
    pub const FAILED: u8 = 1;
    /// The file cannot be a launch test (no `generate_test_description()`, no
    /// `ReadyToTest`, an error in it); nothing was started.
    pub const BAD_TEST: u8 = 2;
}

/// How a launch test runs.
#[derive(Debug, Clone)]
pub struct TestOptions {
    /// The launch's stop and its processes' environment.
    pub launch: supervise::Options,
    /// The whole run's bound (every launch of a parametrized test).
    pub timeout: Option<Duration>,
    /// How long the post-shutdown tests may take once a launch has ended.
    pub post_shutdown_timeout: Duration,
    /// How long the file's evaluation may take.
    pub evaluation_timeout: Duration,
    /// Where to write a JUnit XML report.
    pub junit_xml: Option<PathBuf>,
    /// The Python interpreter.
    pub python: PathBuf,
    /// Added to the interpreter's module path, if given.
    pub python_path: Option<PathBuf>,
}

/// Runs the launch test `file` with the launch arguments `args`; returns a [`status`].
/// The tests' report goes to standard error, the launch's output to standard output.
pub fn run(file: &Path, args: &[(String, String)], options: &TestOptions) -> u8 {
    let started = Instant::now();
    let deadline = options.timeout.map(|t| started + t);
    let mut runs = 1;
    let mut run = 0;
    let mut failed = false;
    while run < runs {
        let mut driver_options: Vec<OsString> = vec!["--run".into(), run.to_string().into()];
        driver_options.extend(crate::driver::log_dir_option(&options.launch.log_dir));
        if let Some(path) = &options.junit_xml {
            driver_options.push("--junit-xml".into());
            driver_options.push(path.into());
        }
        let (mut driver, first) = match Driver::start_module(
            TEST_DRIVER_MODULE,
            &driver_options,
            file,
            args,
            &options.python,
            options.python_path.as_deref(),
            options.evaluation_timeout,
        ) {
            Ok(started) => started,
            Err(err) => {
                eprintln!("kairos launch-test: {err}\nkairos launch-test: nothing was started");
                return status::BAD_TEST;
            }
        };
        if let Some(count) = first.iter().find_map(|r| match r {
            Request::Runs { count } => Some(*count),
            _ => None,
        }) {
            runs = count;
            eprintln!(
                "kairos launch-test: launch {} of {runs} of {}",
                run + 1,
                file.display()
            );
        }
        let mut launch = options.launch.clone();
        launch.deadline = deadline;
        supervise::drive(&mut driver, first, &launch);
        let grace = match deadline {
            Some(d) => options
                .post_shutdown_timeout
                .min(d.saturating_duration_since(Instant::now()))
                .max(REPORT_GRACE),
            None => options.post_shutdown_timeout,
        };
        match driver.finish_within(grace).map(|s| s.code()) {
            Some(Some(0)) => {}
            Some(Some(2)) if run == 0 => return status::BAD_TEST,
            Some(Some(_)) => failed = true,
            Some(None) => {
                eprintln!("kairos launch-test: the test driver was ended by a signal");
                failed = true;
            }
            None => {
                eprintln!(
                    "kairos launch-test: the post-shutdown tests did not end within {:.1} s: \
                     the test driver was killed",
                    grace.as_secs_f64()
                );
                failed = true;
            }
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            if run + 1 < runs {
                eprintln!(
                    "kairos launch-test: the run reached its timeout; {} launches not run",
                    runs - run - 1
                );
            }
            return status::FAILED;
        }
        run += 1;
    }
    if failed {
        status::FAILED
    } else {
        status::PASSED
    }
}
