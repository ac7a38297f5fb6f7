//! How one process of a launch runs, as ROS 2's launch files say it: `cwd`,
//! `launch-prefix`, `shell`, `emulate_tty` (its output and errors are terminals), and its
//! own `sigterm_timeout` in a stop, in YAML, XML and Python launch files alike.
//!
//! One file for one subject (each file under `tests/` is a binary of its own).

mod zenoh_support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use zenoh_support::{finish, spawn, stdout_lines};

const LIMIT: Duration = Duration::from_secs(60);

fn launch(file: &Path, extra: &[&str]) -> Command {
    let mut cmd = zenoh_support::kairos();
    cmd.arg("launch")
        .arg(file)
        .args(["--no-router"])
        .args(extra)
        .env("PYTHONPATH", zenoh_support::kairos_python_path());
    cmd
}

/// What each form of the same launch must print: the folder, the terminals, the prefix,
/// the shell's pipe, and a pipe where no terminal was asked for.
fn check_ran_as_asked(file: &Path, folder: &Path) {
    let out = finish(spawn(&mut launch(file, &[])), LIMIT);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let folder = folder.canonicalize().unwrap();
    for line in [
        format!("[tty-1] {}", folder.display()),
        "[tty-1] out-tty".into(),
        "[tty-1] prefixed=yes".into(),
        "[pipe-1] out-pipe".into(),
        "[shell-1] FORTY-TWO".into(),
    ] {
        assert!(
            stdout.lines().any(|l| l == line),
            "{}: no line {line:?}:\n{stdout}\n{stderr}",
            file.display()
        );
    }
    assert!(
        stderr.lines().any(|l| l == "[tty-1] err-tty"),
        "{}: the errors of an emulate_tty process go to a terminal too:\n{stderr}",
        file.display()
    );
}

/// Writes a Python launch file at `path` whose description holds `actions` (the text of
/// `ExecuteProcess(...)` items), and returns the path.
fn python_launch(path: &Path, actions: &str) -> PathBuf {
    std::fs::write(
        path,
        format!(
            "from launch import LaunchDescription\nfrom launch.actions import ExecuteProcess\n\n\n\
             def generate_launch_description():\n    return LaunchDescription([{actions}\n    ])\n"
        ),
    )
    .unwrap();
    path.to_path_buf()
}

const TTY_CMD: &str = r#"pwd; [ -t 1 ] && echo out-tty; [ -t 2 ] && echo err-tty >&2; echo prefixed=$KAIROS_PREFIXED"#;
const PIPE_CMD: &str = r#"[ -t 1 ] || echo out-pipe"#;

#[test]
fn cwd_prefix_shell_and_terminals_in_yaml_xml_and_python() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("work folder");
    std::fs::create_dir(&folder).unwrap();
    let yaml = dir.path().join("options.launch.yaml");
    std::fs::write(
        &yaml,
        format!(
            r#"launch:
- executable:
    cmd: sh -c '{TTY_CMD}'
    name: tty
    cwd: {folder}
    emulate_tty: true
    launch-prefix: env KAIROS_PREFIXED=yes
- executable:
    cmd: sh -c '{PIPE_CMD}'
    name: pipe
- executable:
    cmd: echo forty-two | tr a-z A-Z
    name: shell
    shell: true
"#,
            folder = folder.display()
        ),
    )
    .unwrap();
    check_ran_as_asked(&yaml, &folder);

    let xml = dir.path().join("options.launch.xml");
    let attribute = |text: &str| {
        text.replace('&', "&amp;")
            .replace('"', "&quot;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    std::fs::write(
        &xml,
        format!(
            r#"<launch>
  <executable cmd="sh -c '{tty}'" name="tty" cwd="{folder}" emulate_tty="true" launch-prefix="env KAIROS_PREFIXED=yes"/>
  <executable cmd="sh -c '{pipe}'" name="pipe"/>
  <executable cmd="echo forty-two | tr a-z A-Z" name="shell" shell="true"/>
</launch>
"#,
            tty = attribute(TTY_CMD),
            pipe = attribute(PIPE_CMD),
            folder = attribute(&folder.display().to_string())
        ),
    )
    .unwrap();
    check_ran_as_asked(&xml, &folder);

    let python = python_launch(
        &dir.path().join("options.launch.py"),
        &format!(
            r#"
        ExecuteProcess(cmd=['sh', '-c', {tty:?}], name='tty', cwd={folder:?},
                       emulate_tty=True, prefix='env KAIROS_PREFIXED=yes', output='screen'),
        ExecuteProcess(cmd=['sh', '-c', {pipe:?}], name='pipe', output='screen'),
        ExecuteProcess(cmd=['echo forty-two | tr a-z A-Z'], name='shell', shell=True,
                       output='screen'),"#,
            tty = TTY_CMD,
            pipe = PIPE_CMD,
            folder = folder.display().to_string()
        ),
    );
    check_ran_as_asked(&python, &folder);
}

/// A process that ignores SIGINT gets SIGTERM after its own `sigterm_timeout`, not the
/// launch's (600 s here, far past the test's limit): the stop report says which.
#[test]
fn a_process_s_own_sigterm_timeout_ends_its_stop() {
    let dir = tempfile::tempdir().unwrap();
    let stubborn = r#"trap '' INT; echo ignoring SIGINT; exec sleep 1000"#;
    let yaml = dir.path().join("stubborn.launch.yaml");
    std::fs::write(
        &yaml,
        format!(
            "launch:\n- executable:\n    cmd: sh -c \"{stubborn}\"\n    name: stubborn\n    sigterm_timeout: 0.2\n"
        ),
    )
    .unwrap();
    let python = python_launch(
        &dir.path().join("stubborn.launch.py"),
        &format!(
            r#"
        ExecuteProcess(cmd=['sh', '-c', {stubborn:?}], name='stubborn', output='screen',
                       sigterm_timeout='0.2'),"#
        ),
    );
    for file in [&yaml, &python] {
        let mut launcher = spawn(&mut launch(file, &["--sigterm-timeout", "600"]));
        let mut lines = stdout_lines(&mut launcher);
        lines.wait_for("[stubborn-1] ignoring SIGINT", LIMIT);
        let pid = launcher.0.id();
        let status = Command::new("kill")
            .args(["-INT", &pid.to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let row = lines.wait_for("did not stop on SIGINT", LIMIT);
        finish(launcher, LIMIT);
        assert!(
            row.trim_start().starts_with("stubborn-1")
                && row.contains("did not stop on SIGINT within 0.2 s; ended by SIGTERM"),
            "{}: {row}\n{}",
            file.display(),
            lines.seen.join("\n")
        );
    }
}

#[test]
fn a_bad_process_option_names_file_and_line_and_starts_nothing() {
    let dir = tempfile::tempdir().unwrap();
    for (text, says) in [
        (
            "    sigterm_timeout: soon\n",
            "sigterm_timeout 'soon' is not a number of seconds",
        ),
        // Past any clock: refused, never added to one.
        (
            "    sigkill_timeout: 1e300\n",
            "sigkill_timeout '1e300' is not seconds from 0 to",
        ),
        (
            "    respawn_delay: 1e300\n",
            "respawn_delay '1e300' is not seconds from 0 to",
        ),
        (
            "    respawn_max_retries: many\n",
            "respawn_max_retries 'many' is not a whole number",
        ),
        ("    launch-prefix: no-such-debugger\n", "launch-prefix: "),
    ] {
        let file = dir.path().join("bad.launch.yaml");
        std::fs::write(
            &file,
            format!("launch:\n- executable:\n    cmd: sleep 1000\n{text}"),
        )
        .unwrap();
        let out = finish(spawn(&mut launch(&file, &[])), LIMIT);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("bad.launch.yaml:3: "), "{stderr}");
        assert!(stderr.contains(says), "{says:?} in:\n{stderr}");
        assert!(stderr.contains("nothing was started"), "{stderr}");
    }
}
