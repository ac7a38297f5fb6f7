//! `--ros-args` on a real program's command line (`examples/ros_args.rs`), read by the
//! process-wide context as rcl reads it: names, namespaces, remaps, `-p` values and a
//! parameter file applied to the node; bad arguments end the program with an error that
//! says what to write.

use std::path::PathBuf;
use std::process::{Command, Output};

/// The example program, next to this test binary: `cargo test` builds it, and a test run
/// on its own builds it here (with the same profile, in the same target directory).
fn program() -> PathBuf {
    static BUILT: std::sync::Once = std::sync::Once::new();
    let deps = std::env::current_exe().expect("test binary");
    let dir = deps.parent().and_then(|d| d.parent()).expect("target dir");
    let exe = dir.join("examples").join("ros_args");
    BUILT.call_once(|| {
        if exe.exists() {
            return;
        }
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut build = Command::new(cargo);
        build.args(["build", "-p", "kairos", "--example", "ros_args"]);
        if dir.file_name().is_some_and(|n| n == "release") {
            build.arg("--release");
        }
        let target = dir.parent().expect("target dir");
        let status = build
            .env("CARGO_TARGET_DIR", target)
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building examples/ros_args.rs failed");
    });
    exe
}

fn run(args: &[&str]) -> (Output, String) {
    let out = Command::new(program())
        .args(args)
        .output()
        .expect("the example runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    (out, stdout)
}

#[test]
fn remaps_parameters_and_a_parameter_file_reach_the_node() {
    let dir = tempfile::tempdir().unwrap();
    let params = dir.path().join("params.yaml");
    std::fs::write(
        &params,
        "/**:\n  ros__parameters:\n    use_sim_time: true\n    frame: odom\n\
         /robot/speaker:\n  ros__parameters:\n    rate: 20.0\n    limits:\n      speed: 1.5\n",
    )
    .unwrap();
    let (out, stdout) = run(&[
        "positional",
        "--ros-args",
        "-r",
        "__ns:=/robot",
        "-r",
        "talker:__node:=speaker",
        "-r",
        "chatter:=news",
        "--params-file",
        params.to_str().unwrap(),
        "-p",
        "rate:=2.5",
        "--",
        "more",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for line in [
        "node /robot/speaker",
        "topic /robot/news",
        "service /robot/speaker/reset",
        "param frame = String(\"odom\")",
        // The file names this node, -p every node: the node's own section wins.
        "param rate = Double(20.0)",
        "param limits.speed = Double(1.5)",
        "param use_sim_time = Bool(true)",
        "clock sim",
    ] {
        assert!(
            stdout.lines().any(|l| l == line),
            "no '{line}' in:\n{stdout}"
        );
    }
}

#[test]
fn without_ros_arguments_the_node_is_as_the_code_says() {
    let (out, stdout) = run(&["--not-ros"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("node /talker\n"), "{stdout}");
    assert!(stdout.contains("topic /chatter\n"), "{stdout}");
    assert!(stdout.contains("param rate = Double(1.0)\n"), "{stdout}");
}

#[test]
fn bad_ros_arguments_stop_the_program_with_what_to_write() {
    let dir = tempfile::tempdir().unwrap();
    let wrong_type = dir.path().join("wrong.yaml");
    std::fs::write(&wrong_type, "talker:\n  ros__parameters:\n    rate: fast\n").unwrap();
    let broken = dir.path().join("broken.yaml");
    std::fs::write(&broken, "talker:\n  ros__parameters: [\n").unwrap();
    for (args, says) in [
        (
            vec!["--ros-args", "--remapp", "a:=b"],
            "unknown ROS argument '--remapp'",
        ),
        (vec!["--ros-args", "-p"], "needs a value"),
        (vec!["--ros-args", "-r", "chatter=news"], "FROM:=TO"),
        (
            vec!["--ros-args", "--params-file", wrong_type.to_str().unwrap()],
            "parameter 'rate' is declared a double, but the ROS arguments",
        ),
        (
            vec!["--ros-args", "--params-file", broken.to_str().unwrap()],
            "line",
        ),
    ] {
        let (out, _) = run(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains(says),
            "{args:?} must say '{says}', said: {stderr}"
        );
    }
}

#[test]
fn an_argument_that_is_not_utf8_is_no_panic() {
    use std::os::unix::ffi::OsStrExt;
    let odd = std::ffi::OsStr::from_bytes(b"caf\xe9");
    let out = Command::new(program())
        .arg(odd)
        .args(["--ros-args", "-r", "__ns:=/robot"])
        .output()
        .expect("the example runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("node /robot/talker\n"), "{stdout}");
}
