//! What the tests that run kairos processes on Zenoh take from kairos-testkit: a `kairos
//! router` of the test's own on a free loopback port, children killed when dropped,
//! bounded waits for their output.
#![allow(dead_code, unused_imports)]

pub use kairos_testkit::process::{
    Lines, Running, assert_fails, assert_ok, finish, spawn, stdout_lines,
};
pub use kairos_testkit::router::Router;
use std::process::Command;

/// The kairos binary under test.
pub const KAIROS: &str = env!("CARGO_BIN_EXE_kairos");

pub fn kairos() -> Command {
    Command::new(KAIROS)
}

/// `cmd` (a kairos command) as `kairos topic echo /chatter std_msgs/msg/String --json
/// --timeout 120`, then `extra` arguments (`--count N`).
pub fn echo_chatter<'a>(cmd: &'a mut Command, extra: &[&str]) -> &'a mut Command {
    cmd.args([
        "topic",
        "echo",
        "/chatter",
        "std_msgs/msg/String",
        "--json",
        "--timeout",
        "120",
    ])
    .args(extra)
}

/// Fails the test, saying what to install, unless `python3 -c "import {modules}"` works
/// (zenoh-ros2-sdk, the independent ROS 2 peer of the interop tests; scripts/test
/// installs it).
pub fn require_zenoh_ros2_sdk(modules: &str) {
    let found = Command::new("python3")
        .args(["-c", &format!("import {modules}")])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "the Python package zenoh-ros2-sdk is required: pip install zenoh-ros2-sdk==0.1.8 (scripts/test does this)"
    );
}

/// The interface definitions Python needs for `types`, dependencies first, as a JSON list
/// of [type, text]: the very files kairos-msgs generates its types from.
pub fn interface_definitions(types: &[&str]) -> String {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../kairos-msgs/interfaces");
    let list: Vec<(String, String)> = types
        .iter()
        .map(|t| {
            let path = format!("{root}/{t}.msg");
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
            (t.to_string(), text)
        })
        .collect();
    serde_json::to_string(&list).expect("JSON")
}

/// `bounded_wait(pred, seconds)` for the Python peers' scripts: true once `pred()` is,
/// false when `seconds` passed first.
pub const PY_BOUNDED_WAIT: &str = r#"
import time
def bounded_wait(pred, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.05)
    return pred()
"#;

/// Asks `kairos topic info TOPIC [extra] --spin-time 1` through `router` until `done`
/// holds for its output or `within` passed; returns the last output.
pub fn topic_info_until(
    router: &Router,
    topic: &str,
    extra: &[&str],
    within: std::time::Duration,
    done: impl Fn(&str) -> bool,
) -> String {
    let deadline = std::time::Instant::now() + within;
    loop {
        let out = router
            .kairos()
            .args(["topic", "info", topic])
            .args(extra)
            .args(["--spin-time", "1"])
            .output()
            .expect("kairos topic info");
        let text = assert_ok("kairos topic info", &out);
        if done(&text) || std::time::Instant::now() > deadline {
            return text;
        }
    }
}

/// The start of a zenoh-ros2-sdk script: a session to the test's router (`ROUTER_PORT`),
/// the definitions of `MSG_DEFS` (see [`interface_definitions`]) registered, their classes
/// in `T`, `DEPS` by name. Scripts that wait add [`PY_BOUNDED_WAIT`].
pub const PY_SDK_PRELUDE: &str = r#"
import os, sys, time, json
from zenoh_ros2_sdk import ROS2Publisher, ROS2Subscriber, get_topic_info
from zenoh_ros2_sdk.session import ZenohSession
from zenoh_ros2_sdk.utils import get_type_hash
from zenoh_ros2_sdk.qos import QosProfile, QosDurability
PORT = int(os.environ["ROUTER_PORT"])
DEFS = json.loads(os.environ["MSG_DEFS"])
DEPS = dict(DEFS)
session = ZenohSession.get_instance("127.0.0.1", PORT)
for name, text in DEFS:
    session.register_message_type(text, name)
T = session.store.types
"#;

/// A folder for `PYTHONPATH` that holds kairos for Python as this checkout has it: its
/// Python sources and the extension cargo built (`lib_kairos.so`, which the workspace
/// build of scripts/test makes). Made once per test binary, in a temporary folder.
pub fn kairos_python_path() -> std::path::PathBuf {
    use std::path::{Path, PathBuf};
    use std::sync::OnceLock;
    static STAGE: OnceLock<PathBuf> = OnceLock::new();
    STAGE
        .get_or_init(|| {
            let release = Path::new(KAIROS).parent().expect("target dir");
            let extension = release.join("lib_kairos.so");
            assert!(
                extension.is_file(),
                "{} is missing: build kairos for Python with `cargo build --release -p kairos-py` \
                 (scripts/test builds it)",
                extension.display()
            );
            let stage = tempfile::Builder::new()
                .prefix("kairos-py-stage-")
                .tempdir()
                .expect("a staging folder")
                .keep();
            let sources = Path::new(env!("CARGO_MANIFEST_DIR")).join("../kairos-py/python/kairos");
            copy_tree(&sources, &stage.join("kairos"));
            std::os::unix::fs::symlink(&extension, stage.join("kairos/_kairos.abi3.so"))
                .expect("link the extension");
            stage
        })
        .clone()
}

fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).expect("create a staging folder");
    for entry in std::fs::read_dir(from).expect("read kairos-py's sources") {
        let entry = entry.expect("a source entry");
        let path = entry.path();
        if path.is_dir() {
            if entry.file_name() != "__pycache__" {
                copy_tree(&path, &to.join(entry.file_name()));
            }
        } else {
            std::fs::copy(&path, to.join(entry.file_name())).expect("copy a source file");
        }
    }
}
