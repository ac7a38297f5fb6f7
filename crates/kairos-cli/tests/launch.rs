//! `kairos launch`: a system of real processes (the `talker` and `listener` examples,
//! `kairos topic echo /rosout`, a zenoh-ros2-sdk peer, shell processes that misbehave)
//! started from one ROS 2 YAML launch file on a router of the test's own, and stopped
//! within its deadlines however its processes behave.
//!
//! One file for one subject, however many tests it holds: each file under `tests/` is a
//! binary of its own, and each binary links zenoh again into every CI build.

mod zenoh_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};
use zenoh_support::{KAIROS, Lines, Router, Running, assert_ok, finish, spawn, stdout_lines};

const LIMIT: Duration = Duration::from_secs(60);

/// The example programs, built once (the workspace build of scripts/test has them).
fn examples() -> PathBuf {
    let dir = Path::new(KAIROS)
        .parent()
        .expect("target dir")
        .join("examples");
    let built = ["talker", "listener"].iter().all(|e| dir.join(e).is_file());
    if !built {
        let mut build = kairos_testkit::process::cargo();
        build.args([
            "build",
            "-p",
            "kairos-cli",
            "--example",
            "talker",
            "--example",
            "listener",
        ]);
        if dir
            .parent()
            .and_then(|p| p.file_name())
            .is_some_and(|n| n == "release")
        {
            build.arg("--release");
        }
        let status = build.status().expect("run cargo build");
        assert!(
            status.success(),
            "building the talker and listener examples failed"
        );
    }
    dir
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write a launch test file");
    path
}

/// A package's sources in a temporary folder: `src/`, with an empty `src/launch/`.
fn package_source() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("launch")).unwrap();
    (dir, src)
}

/// Marks `path` executable (a Python node with its `#!` line, as colcon installs one).
fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .expect("chmod +x a test program");
}

/// `kairos pkg install PACKAGE --prefix PREFIX --exe ... --share ...`, checked.
fn install_package(prefix: &Path, package: &str, executables: &[PathBuf], shared: &[PathBuf]) {
    let mut cmd = zenoh_support::kairos();
    cmd.args(["pkg", "install", package, "--prefix"])
        .arg(prefix);
    for exe in executables {
        cmd.arg("--exe").arg(exe);
    }
    for item in shared {
        cmd.arg("--share").arg(item);
    }
    assert_ok("kairos pkg install", &finish(spawn(&mut cmd), LIMIT));
}

fn launch(router: Option<&Router>, file: &Path, extra: &[&str]) -> Command {
    let mut cmd = match router {
        Some(router) => router.kairos(),
        None => zenoh_support::kairos(),
    };
    cmd.arg("launch").arg(file).args(extra);
    cmd
}

/// Sends `signal` to `pid`.
fn signal(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -{signal} {pid} failed");
}

/// The first line read so far that contains `text`, or the next one to come.
fn seen_or_wait(lines: &mut Lines, text: &str) -> String {
    match lines.seen.iter().find(|l| l.contains(text)) {
        Some(line) => line.clone(),
        None => lines.wait_for(text, LIMIT),
    }
}

/// Waits until the kernel has stopped `pid` (state `T` in `/proc/PID/stat`): `kill
/// -STOP` only queues the signal, which the process takes when it next runs. The kernel
/// tells only a parent of a child's stop (`waitid(WSTOPPED)`), and `sleep-1` is the
/// launcher's child, so this polls its state; the poll decides nothing about time (it
/// ends when the state is reached; `LIMIT` only bounds a broken run).
fn wait_until_stopped(pid: u32) {
    let deadline = Instant::now() + LIMIT;
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next());
        if state == Some("T") {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{pid} not stopped within {LIMIT:?} of SIGSTOP (state {state:?})"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The pid the launcher announced for `label`: `[INFO] [label]: process started with pid [N]`.
fn pid_of(line: &str) -> u32 {
    line.rsplit('[')
        .next()
        .and_then(|rest| rest.trim_end_matches(']').parse().ok())
        .unwrap_or_else(|| panic!("no pid in {line:?}"))
}

const ROSOUT_PEER: &str = r#"
import os, sys, json
from zenoh_ros2_sdk import ROS2Subscriber
from zenoh_ros2_sdk.session import ZenohSession
from zenoh_ros2_sdk.utils import get_type_hash
PORT = int(os.environ["ROUTER_PORT"])
DEFS = json.loads(os.environ["MSG_DEFS"])
DEPS = dict(DEFS)
session = ZenohSession.get_instance("127.0.0.1", PORT)
for name, text in DEFS:
    session.register_message_type(text, name)
LOG = 'rcl_interfaces/msg/Log'
def on_log(m):
    print('rosout', m.name, m.msg, flush=True)
sub = ROS2Subscriber('/rosout', LOG, on_log, msg_definition=DEPS[LOG], type_hash=get_type_hash(LOG, DEPS[LOG], DEPS), node_name='py_rosout', router_port=PORT)
print('ready', flush=True)
sys.stdin.readline()  # until the test closes stdin (or kills this process)
"#;

fn log_definitions() -> String {
    zenoh_support::interface_definitions(&["builtin_interfaces/msg/Time", "rcl_interfaces/msg/Log"])
}

#[test]
fn a_system_starts_from_one_file_and_ctrl_c_stops_it_within_its_deadlines() {
    zenoh_support::require_zenoh_ros2_sdk("zenoh_ros2_sdk");
    let examples = examples();
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "params.yaml",
        "/**:\n  ros__parameters:\n    rate_hz: 20.0\n    prefix: from the file\n",
    );
    let file = write(
        dir.path(),
        "robot.launch.yaml",
        &format!(
            r#"launch:
- arg: {{name: ns, default: robot}}
- arg: {{name: kairos}}
- group:
  - push_ros_namespace: {{namespace: $(var ns)}}
  - node:
      exec: {talker}
      name: talker
      param: [{{from: $(dirname)/params.yaml}}]
      remap: [{{from: chatter, to: news}}]
  - node:
      exec: {listener}
      name: listener
      remap: [{{from: chatter, to: news}}]
- executable:
    cmd: $(var kairos) topic echo /rosout rcl_interfaces/msg/Log --json --timeout 60
    name: rosout_echo
- executable:
    cmd: sh -c "trap '' INT; echo ignoring SIGINT; exec sleep 1000"
- executable:
    cmd: sleep 1000
"#,
            talker = examples.join("talker").display(),
            listener = examples.join("listener").display(),
        ),
    );
    let mut launch_cmd = |router: &Router| {
        let mut cmd = router.kairos();
        cmd.arg("launch").arg(&file);
        cmd
    };
    the_robot_system_runs_and_stops_within_its_deadlines(dir.path(), &mut launch_cmd);
}

/// A package `kairos_demo` installed in ament's layout (under the returned folder's
/// `install`): the talker and listener examples as its executables, a parameter file and
/// the launch file `name` with `text` in its share folder.
fn demo_package(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
    let examples = examples();
    let (dir, src) = package_source();
    write(
        &src,
        "params.yaml",
        "/**:\n  ros__parameters:\n    rate_hz: 20.0\n    prefix: from the file\n",
    );
    write(&src.join("launch"), name, text);
    let prefix = dir.path().join("install");
    install_package(
        &prefix,
        "kairos_demo",
        &[examples.join("talker"), examples.join("listener")],
        &[src.join("launch"), src.join("params.yaml")],
    );
    (dir, prefix)
}

/// The same system as an XML launch file in an installed package (ament's layout, made
/// by `kairos pkg install`), started as `kairos launch PKG FILE`: its nodes found as the
/// package's executables, its parameter file with `$(find-pkg-share ...)`.
#[test]
fn the_same_system_as_an_xml_file_of_a_package_stops_the_same_way() {
    zenoh_support::require_zenoh_ros2_sdk("zenoh_ros2_sdk");
    let (dir, prefix) = demo_package(
        "robot.launch.xml",
        r#"<launch>
  <arg name="ns" default="robot"/>
  <arg name="kairos"/>
  <group>
    <push_ros_namespace namespace="$(var ns)"/>
    <node pkg="kairos_demo" exec="talker" name="talker">
      <param from="$(find-pkg-share kairos_demo)/params.yaml"/>
      <remap from="chatter" to="news"/>
    </node>
    <node pkg="kairos_demo" exec="listener" name="listener">
      <remap from="chatter" to="news"/>
    </node>
  </group>
  <executable cmd="$(var kairos) topic echo /rosout rcl_interfaces/msg/Log --json --timeout 60" name="rosout_echo"/>
  <executable cmd="sh -c &quot;trap '' INT; echo ignoring SIGINT; exec sleep 1000&quot;"/>
  <executable cmd="sleep 1000"/>
</launch>
"#,
    );
    let mut launch_cmd = |router: &Router| {
        let mut cmd = router.kairos();
        cmd.env("AMENT_PREFIX_PATH", &prefix)
            .args(["launch", "kairos_demo", "robot.launch.xml"]);
        cmd
    };
    the_robot_system_runs_and_stops_within_its_deadlines(dir.path(), &mut launch_cmd);
}

/// The same system as a Python launch file of an installed package (ROS 2's `launch` and
/// `launch_ros` APIs, read by kairos's), started as `kairos launch PKG FILE`: the stop,
/// its bound and its report are the launcher's, whatever the format.
#[test]
fn the_same_system_as_a_python_file_of_a_package_stops_the_same_way() {
    zenoh_support::require_zenoh_ros2_sdk("zenoh_ros2_sdk");
    let (dir, prefix) = demo_package(
        "robot.launch.py",
        r#"
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, ExecuteProcess, GroupAction
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node, PushRosNamespace
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    params = PathJoinSubstitution([FindPackageShare('kairos_demo'), 'params.yaml'])
    return LaunchDescription([
        DeclareLaunchArgument('ns', default_value='robot'),
        DeclareLaunchArgument('kairos'),
        GroupAction([
            PushRosNamespace(LaunchConfiguration('ns')),
            Node(package='kairos_demo', executable='talker', name='talker',
                 parameters=[params], remappings=[('chatter', 'news')], output='screen'),
            Node(package='kairos_demo', executable='listener', name='listener',
                 remappings=[('chatter', 'news')], output='screen'),
        ]),
        ExecuteProcess(
            cmd=[LaunchConfiguration('kairos'), 'topic', 'echo', '/rosout',
                 'rcl_interfaces/msg/Log', '--json', '--timeout', '60'],
            name='rosout_echo', output='screen'),
        ExecuteProcess(cmd=['sh', '-c', "trap '' INT; echo ignoring SIGINT; exec sleep 1000"],
                       output='screen'),
        ExecuteProcess(cmd=['sleep', '1000'], output='screen'),
    ])
"#,
    );
    let python = zenoh_support::kairos_python_path();
    let mut launch_cmd = |router: &Router| {
        let mut cmd = router.kairos();
        cmd.env("AMENT_PREFIX_PATH", &prefix)
            .env("PYTHONPATH", &python)
            .args(["launch", "kairos_demo", "robot.launch.py"]);
        cmd
    };
    the_robot_system_runs_and_stops_within_its_deadlines(dir.path(), &mut launch_cmd);
}

/// An rclpy program installed as a package's executable (a `#!...python3` script, as
/// colcon installs Python nodes) runs as it is under `kairos.run` when a Python launch
/// file starts it as a `Node`, with its namespace and global parameter; Ctrl-C stops it.
#[test]
fn an_rclpy_node_of_a_package_runs_as_it_is_from_a_python_launch_file() {
    let (dir, src) = package_source();
    let node = write(
        &src,
        "greeter.py",
        r#"#!/usr/bin/env python3
import rclpy
from rclpy.node import Node
from std_msgs.msg import String


def main():
    rclpy.init()
    node = Node('greeter')
    node.declare_parameter('greeting', 'hi')
    publisher = node.create_publisher(String, 'chatter', 10)
    count = [0]

    def tick():
        count[0] += 1
        text = f"{node.get_parameter('greeting').value} {count[0]}"
        publisher.publish(String(data=text))
        print(f'{text} in {node.get_namespace()}', flush=True)

    node.create_timer(0.05, tick)
    try:
        rclpy.spin(node)
    except KeyboardInterrupt:
        pass
    rclpy.try_shutdown()


if __name__ == '__main__':
    main()
"#,
    );
    make_executable(&node);
    write(
        &src.join("launch"),
        "greet.launch.py",
        r#"
from launch import LaunchDescription
from launch.actions import GroupAction
from launch_ros.actions import Node, PushRosNamespace, SetParameter


def generate_launch_description():
    return LaunchDescription([GroupAction([
        PushRosNamespace('bot'),
        SetParameter('greeting', 'hello'),
        Node(package='greeters', executable='greeter.py', output='screen'),
    ])])
"#,
    );
    let prefix = dir.path().join("install");
    install_package(
        &prefix,
        "greeters",
        std::slice::from_ref(&node),
        &[src.join("launch")],
    );
    let mut launcher = spawn(
        zenoh_support::kairos()
            .env("AMENT_PREFIX_PATH", &prefix)
            .env("PYTHONPATH", zenoh_support::kairos_python_path())
            .args(["launch", "greeters", "greet.launch.py", "--no-router"]),
    );
    let mut lines = stdout_lines(&mut launcher);
    let said = lines.wait_for("hello 2 in /bot", LIMIT);
    assert!(said.starts_with("[greeter.py-1] "), "{said}");
    signal(launcher.0.id(), "INT");
    let out = finish(launcher, LIMIT);
    while lines.next_within(Duration::from_secs(5)).is_some() {}
    let report = lines.seen.join("\n");
    assert_eq!(out.status.code(), Some(0), "{report}");
    assert!(
        report.contains("greeter.py-1") && report.contains("stopped on SIGINT"),
        "{report}"
    );
}

/// A talker component: an rclpy node class, as a package registers it.
const TALKER_COMPONENT: &str = r#"
import os
from rclpy.node import Node
from std_msgs.msg import String


class Talker(Node):
    def __init__(self):
        super().__init__('talker')
        self.declare_parameter('greeting', 'hello')
        self.publisher = self.create_publisher(String, 'chatter', 10)
        self.count = 0
        self.create_timer(0.05, self.tick)

    def tick(self):
        self.count += 1
        greeting = self.get_parameter('greeting').value
        self.publisher.publish(String(data=f'{greeting} {self.count} from pid {os.getpid()}'))
"#;

/// A listener component that says which node heard what, in which process.
const LISTENER_COMPONENT: &str = r#"
import os
from rclpy.node import Node
from std_msgs.msg import String


class Listener(Node):
    def __init__(self):
        super().__init__('listener')
        self.create_subscription(String, 'chatter', self.heard, 10)

    def heard(self, message):
        print(f'{self.get_fully_qualified_name()} in pid {os.getpid()} heard: {message.data}',
              flush=True)
"#;

/// A package `composed` installed in ament's layout (under the returned folder's
/// `install`): the talker and listener components registered with `kairos pkg install
/// --component`, a C++ plugin registered beside them (as a ROS 2 package would have one),
/// and the launch file `name` with `text` in its share folder.
fn composed_package(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
    let (dir, src) = package_source();
    let talker = write(&src, "talker_component.py", TALKER_COMPONENT);
    let listener = write(&src, "listener_component.py", LISTENER_COMPONENT);
    write(&src.join("launch"), name, text);
    let prefix = dir.path().join("install");
    let mut install = zenoh_support::kairos();
    install
        .args(["pkg", "install", "composed", "--prefix"])
        .arg(&prefix)
        .arg("--share")
        .arg(src.join("launch"))
        .arg("--component")
        .arg(format!("composed::Talker={}", talker.display()))
        .arg("--component")
        .arg(format!("composed::Listener={}", listener.display()));
    assert_ok("kairos pkg install", &finish(spawn(&mut install), LIMIT));
    let index = prefix.join("share/ament_index/resource_index/rclcpp_components/composed");
    let mut registered = std::fs::read_to_string(&index).unwrap();
    registered.push_str("composed::Camera;lib/libcamera_component.so\n");
    std::fs::write(&index, registered).unwrap();
    (dir, prefix)
}

/// Starts `kairos launch composed FILE` on `router` and waits until the container's
/// `/robot/listener` and `/robot/late` hear `/robot/front` in the container's own
/// process; the container's pid.
fn composed_system_runs(router: &Router, prefix: &Path, file: &str) -> (Running, Lines, u32) {
    let mut launcher = spawn(
        router
            .kairos()
            .env("AMENT_PREFIX_PATH", prefix)
            .env("PYTHONPATH", zenoh_support::kairos_python_path())
            .args(["launch", "composed", file]),
    );
    let mut lines = stdout_lines(&mut launcher);
    let late = lines.wait_for("/robot/late in pid", LIMIT);
    let listener = seen_or_wait(&mut lines, "/robot/listener in pid");
    let started = seen_or_wait(&mut lines, "process started with pid");
    let container = pid_of(&started);
    for line in [&late, &listener] {
        assert!(
            line.contains(&format!("in pid {container} heard: hey "))
                && line.ends_with(&format!("from pid {container}")),
            "every node in the container's process ({container}): {line}"
        );
    }
    let loaded = seen_or_wait(&mut lines, "loaded /robot/late");
    assert!(loaded.contains("into /robot/robot_container"), "{loaded}");
    (launcher, lines, container)
}

/// Composable nodes from a Python launch file: rclcpp_components' container is kairos's,
/// the package's registered Python components (`kairos pkg install --component`) are
/// made in it, named as the file says, and hear each other in that one process;
/// `LoadComposableNodes` adds one more to the running container, and a component that
/// cannot be composed (a C++ plugin) is refused with the reason while the rest runs on.
#[test]
fn composable_nodes_of_a_package_run_in_one_container() {
    let (_dir, prefix) = composed_package(
        "composed.launch.py",
        r#"
from launch import LaunchDescription
from launch.actions import TimerAction
from launch_ros.actions import ComposableNodeContainer, LoadComposableNodes
from launch_ros.descriptions import ComposableNode


def generate_launch_description():
    container = ComposableNodeContainer(
        name='robot_container', namespace='robot', package='rclcpp_components',
        executable='component_container', output='screen',
        composable_node_descriptions=[
            ComposableNode(package='composed', plugin='composed::Talker', name='front',
                           namespace='robot', parameters=[{'greeting': 'hey'}], remappings=[('chatter', 'news')],
                           extra_arguments=[{'use_intra_process_comms': True}]),
            ComposableNode(package='composed', plugin='composed::Listener',
                           namespace='robot', remappings=[('chatter', 'news')]),
        ])
    late = LoadComposableNodes(target_container=container, composable_node_descriptions=[
        ComposableNode(package='composed', plugin='composed::Listener', name='late',
                       namespace='robot', remappings=[('chatter', 'news')]),
    ])
    cpp = LoadComposableNodes(target_container='/robot/robot_container',
                              composable_node_descriptions=[
        ComposableNode(package='composed', plugin='composed::Camera'),
    ])
    return LaunchDescription([container, TimerAction(period=0.5, actions=[late, cpp])])
"#,
    );
    let router = Router::start(KAIROS);
    let (launcher, mut lines, container) =
        composed_system_runs(&router, &prefix, "composed.launch.py");
    let died = seen_or_wait(&mut lines, "exit code 1");
    assert!(died.contains("[load_composable_nodes-3]"), "{died}");

    // `kairos component`, as `ros2 component`, on the running container.
    let component = |args: &[&str]| {
        let mut cmd = router.kairos();
        cmd.env("AMENT_PREFIX_PATH", &prefix)
            .arg("component")
            .args(args);
        finish(spawn(&mut cmd), LIMIT)
    };
    let types = component(&["types"]);
    assert_ok("kairos component types", &types);
    assert_eq!(
        String::from_utf8_lossy(&types.stdout),
        "composed\n  composed::Talker\n  composed::Listener\n  composed::Camera\n"
    );
    let loaded = component(&[
        "load",
        "/robot/robot_container",
        "composed",
        "composed::Talker",
        "-n",
        "side",
        "--node-namespace",
        "/robot",
        "-p",
        "greeting:=yo",
        "-r",
        "chatter:=news",
    ]);
    assert_ok("kairos component load", &loaded);
    assert_eq!(
        String::from_utf8_lossy(&loaded.stdout).trim(),
        "Loaded component 4 into '/robot/robot_container' container node as '/robot/side'"
    );
    seen_or_wait(&mut lines, &format!("in pid {container} heard: yo "));
    // The ids of the first three loads depend on which loader the container heard first
    // (the container's own, or the timer's): read them from the listing.
    let list = || {
        let listed = component(&[
            "list",
            "--spin-time",
            "30",
            "--wait-for",
            "/robot/robot_container/_container/list_nodes",
        ]);
        assert_ok("kairos component list", &listed);
        let text = String::from_utf8_lossy(&listed.stdout).into_owned();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("/robot/robot_container"), "{text}");
        lines
            .map(|l| {
                let (id, name) = l.trim().split_once("  ").expect("ID  NAME");
                (name.trim().to_owned(), id.to_owned())
            })
            .collect::<std::collections::BTreeMap<String, String>>()
    };
    let loaded = list();
    let names: Vec<&str> = loaded.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "/robot/front",
            "/robot/late",
            "/robot/listener",
            "/robot/side"
        ]
    );
    let unloaded = component(&["unload", "/robot/robot_container", &loaded["/robot/front"]]);
    assert_ok("kairos component unload", &unloaded);
    assert_eq!(
        String::from_utf8_lossy(&unloaded.stdout).trim(),
        format!(
            "Unloaded component {} from '/robot/robot_container' container node",
            loaded["/robot/front"]
        )
    );
    let left: Vec<String> = list().into_keys().collect();
    assert_eq!(left, ["/robot/late", "/robot/listener", "/robot/side"]);
    let refused = component(&[
        "load",
        "/robot/robot_container",
        "composed",
        "composed::Lidar",
    ]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&refused.stderr)
            .contains("registers no component 'composed::Lidar'"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    signal(launcher.0.id(), "INT");
    let out = finish(launcher, LIMIT);
    while lines.next_within(Duration::from_secs(5)).is_some() {}
    let report = lines.seen.join("\n");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        report.contains("component_container-1") && report.contains("stopped on SIGINT"),
        "{report}\n{stderr}"
    );
    let refused = stderr
        .lines()
        .find(|l| l.contains("cannot load composed::Camera"))
        .unwrap_or_else(|| panic!("the refusal is not on stderr: {stderr}"));
    assert!(refused.contains("is not a Python file"), "{refused}");
}

/// The same composed system as XML and as YAML launch files (`node_container` with its
/// `composable_node`s, `load_composable_node`): the same container, names, parameters
/// and remappings, one process; then Ctrl-C stops it.
#[test]
fn composable_nodes_in_xml_and_yaml_files_mean_what_the_python_file_means() {
    let xml = r#"<launch>
  <node_container pkg="rclcpp_components" exec="component_container_mt" name="robot_container"
                  namespace="robot" output="screen">
    <composable_node pkg="composed" plugin="composed::Talker" name="front" namespace="robot">
      <param name="greeting" value="hey"/>
      <remap from="chatter" to="news"/>
      <extra_arg name="use_intra_process_comms" value="true"/>
    </composable_node>
    <composable_node pkg="composed" plugin="composed::Listener" namespace="robot">
      <remap from="chatter" to="news"/>
    </composable_node>
  </node_container>
  <load_composable_node target="/robot/robot_container">
    <composable_node pkg="composed" plugin="composed::Listener" name="late" namespace="robot">
      <remap from="chatter" to="news"/>
    </composable_node>
  </load_composable_node>
</launch>
"#;
    let yaml = r#"launch:
- node_container:
    pkg: rclcpp_components
    exec: component_container
    name: robot_container
    namespace: robot
    output: screen
    composable_node:
    - pkg: composed
      plugin: composed::Talker
      name: front
      namespace: robot
      param: [{name: greeting, value: hey}]
      remap: [{from: chatter, to: news}]
      extra_arg: [{name: use_intra_process_comms, value: true}]
    - pkg: composed
      plugin: composed::Listener
      namespace: robot
      remap: [{from: chatter, to: news}]
- group:
  - push_ros_namespace: {namespace: robot}
  - load_composable_node:
      target: robot_container
      composable_node:
      - {pkg: composed, plugin: composed::Listener, name: late, remap: [{from: chatter, to: news}]}
"#;
    let router = Router::start(KAIROS);
    for (name, text) in [("composed.launch.xml", xml), ("composed.launch.yaml", yaml)] {
        let (_dir, prefix) = composed_package(name, text);
        let (launcher, mut lines, _) = composed_system_runs(&router, &prefix, name);
        signal(launcher.0.id(), "INT");
        let out = finish(launcher, LIMIT);
        while lines.next_within(Duration::from_secs(5)).is_some() {}
        let report = lines.seen.join("\n");
        assert_eq!(out.status.code(), Some(0), "{name}:\n{report}");
        assert!(report.contains("stopped on SIGINT"), "{name}:\n{report}");
    }
}

/// A managed node written with rclpy's lifecycle API.
const LIFECYCLE_TALKER: &str = r#"#!/usr/bin/env python3
import rclpy
from rclpy.lifecycle import Node, TransitionCallbackReturn
from std_msgs.msg import String


class LifecycleTalker(Node):
    def __init__(self):
        super().__init__('lc_talker')
        self.count = 0

    def on_configure(self, state):
        self.publisher = self.create_lifecycle_publisher(String, 'lifecycle_chatter', 10)
        self.create_timer(0.05, self.tick)
        print(f'{self.get_fully_qualified_name()} configured', flush=True)
        return TransitionCallbackReturn.SUCCESS

    def on_activate(self, state):
        print(f'{self.get_fully_qualified_name()} activated', flush=True)
        return super().on_activate(state)

    def tick(self):
        self.count += 1
        self.publisher.publish(String(data=f'lifecycle {self.count}'))


def main():
    rclpy.init()
    node = LifecycleTalker()
    try:
        rclpy.spin(node)
    except KeyboardInterrupt:
        pass
    rclpy.try_shutdown()


if __name__ == '__main__':
    main()
"#;

/// A package `managed` installed in ament's layout (under the returned folder's
/// `install`): the rclpy managed talker as its executable `lc_talker.py`, and the launch
/// file `name` with `text` in its share folder.
fn managed_package(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
    let (dir, src) = package_source();
    let node = write(&src, "lc_talker.py", LIFECYCLE_TALKER);
    make_executable(&node);
    write(&src.join("launch"), name, text);
    let prefix = dir.path().join("install");
    install_package(&prefix, "managed", &[node], &[src.join("launch")]);
    (dir, prefix)
}

/// `kairos launch managed FILE` on `router`, the package installed under `prefix`; the
/// launcher and its output's lines.
fn launch_managed(router: &Router, prefix: &Path, file: &str) -> (Running, Lines) {
    let mut launcher = spawn(
        router
            .kairos()
            .env("AMENT_PREFIX_PATH", prefix)
            .env("PYTHONPATH", zenoh_support::kairos_python_path())
            .args(["launch", "managed", file]),
    );
    let lines = stdout_lines(&mut launcher);
    (launcher, lines)
}

/// Ctrl-C to `launcher`, which must then end cleanly (exit 0), its output read to the end.
fn interrupt_for_a_clean_exit(launcher: Running, mut lines: Lines, what: &str) {
    signal(launcher.0.id(), "INT");
    let out = finish(launcher, LIMIT);
    while lines.next_within(Duration::from_secs(5)).is_some() {}
    assert_eq!(
        out.status.code(),
        Some(0),
        "{what}:\n{}\n{}",
        lines.seen.join("\n"),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Managed nodes from a Python launch file, as ROS 2's lifecycle demo drives them: a
/// `ChangeState` event configures one, an `OnStateTransition` handler activates it when
/// it reaches `inactive`, another hears it become `active`; `autostart=True` configures
/// and activates the other without a word from the file.
#[test]
fn a_python_launch_file_drives_managed_nodes_through_their_transitions() {
    let (_dir, prefix) = managed_package(
        "managed.launch.py",
        r#"
from launch import LaunchDescription
from launch.actions import EmitEvent, LogInfo, RegisterEventHandler
from launch.events import matches_action
from launch_ros.actions import LifecycleNode
from launch_ros.event_handlers import OnStateTransition
from launch_ros.events.lifecycle import ChangeState
from lifecycle_msgs.msg import Transition


def generate_launch_description():
    talker = LifecycleNode(package='managed', executable='lc_talker.py', name='lc_talker',
                           namespace='', output='screen')
    auto = LifecycleNode(package='managed', executable='lc_talker.py', name='auto_talker',
                         namespace='robot', autostart=True, output='screen')
    return LaunchDescription([
        RegisterEventHandler(OnStateTransition(
            target_lifecycle_node=talker, goal_state='inactive', entities=[
                LogInfo(msg='lc_talker is inactive: activating it'),
                EmitEvent(event=ChangeState(lifecycle_node_matcher=matches_action(talker),
                                            transition_id=Transition.TRANSITION_ACTIVATE)),
            ])),
        RegisterEventHandler(OnStateTransition(
            target_lifecycle_node=talker, start_state='activating', goal_state='active',
            entities=[LogInfo(msg='lc_talker is active')])),
        RegisterEventHandler(OnStateTransition(
            target_lifecycle_node=auto, goal_state='active',
            entities=[LogInfo(msg='auto_talker is active')])),
        talker,
        auto,
        EmitEvent(event=ChangeState(lifecycle_node_matcher=matches_action(talker),
                                    transition_id=Transition.TRANSITION_CONFIGURE)),
    ])
"#,
    );
    let router = Router::start(KAIROS);
    let (launcher, mut lines) = launch_managed(&router, &prefix, "managed.launch.py");
    lines.wait_for("[launch.user]: lc_talker is active", LIMIT);
    seen_or_wait(&mut lines, "[launch.user]: auto_talker is active");
    seen_or_wait(&mut lines, "/lc_talker activated");
    seen_or_wait(&mut lines, "/robot/auto_talker activated");
    let said: Vec<&str> = lines
        .seen
        .iter()
        .filter_map(|l| {
            l.split_once("] ").map(|(_, text)| text).filter(|t| {
                t.contains("lc_talker ") || t.contains("configured") || t.contains("activated")
            })
        })
        .collect();
    let position = |text: &str| {
        said.iter()
            .position(|l| l.contains(text))
            .unwrap_or_else(|| panic!("no {text:?} in {said:#?}"))
    };
    // Order holds within one stream (the driver's lines; each node's own lines), not
    // across them: the launcher reads each process's output on a thread of its own. The
    // node is activated only by the handler of its arrival in `inactive`, so its
    // `activated` line proves that handler ran first.
    assert!(position("lc_talker is inactive: activating it") < position("lc_talker is active"));
    assert!(position("/lc_talker configured") < position("/lc_talker activated"));
    assert!(position("/robot/auto_talker configured") < position("/robot/auto_talker activated"));
    interrupt_for_a_clean_exit(launcher, lines, "managed.launch.py");
}

/// `LifecycleTransition`, launch_ros' way to take managed nodes through a list of
/// transitions: each node is asked for `activate` only once it is `inactive`, by name,
/// with or without the leading `/`.
#[test]
fn a_lifecycle_transition_action_takes_each_node_through_its_list() {
    let (_dir, prefix) = managed_package(
        "managed.launch.py",
        r#"
from launch import LaunchDescription
from launch.actions import LogInfo, RegisterEventHandler
from launch_ros.actions import LifecycleNode, LifecycleTransition
from launch_ros.event_handlers import OnStateTransition
from lifecycle_msgs.msg import Transition


def generate_launch_description():
    first = LifecycleNode(package='managed', executable='lc_talker.py', name='first',
                          namespace='', output='screen')
    second = LifecycleNode(package='managed', executable='lc_talker.py', name='second',
                           namespace='robot', output='screen')
    return LaunchDescription([
        first,
        second,
        RegisterEventHandler(OnStateTransition(
            target_lifecycle_node=first, goal_state='active',
            entities=[LogInfo(msg='first is active')])),
        RegisterEventHandler(OnStateTransition(
            target_lifecycle_node=second, goal_state='active',
            entities=[LogInfo(msg='second is active')])),
        LifecycleTransition(
            lifecycle_node_names=['first', '/robot/second'],
            transition_ids=[Transition.TRANSITION_CONFIGURE, '3']),
    ])
"#,
    );
    let router = Router::start(KAIROS);
    let (launcher, mut lines) = launch_managed(&router, &prefix, "managed.launch.py");
    lines.wait_for("[launch.user]: first is active", LIMIT);
    seen_or_wait(&mut lines, "[launch.user]: second is active");
    seen_or_wait(&mut lines, "/first activated");
    seen_or_wait(&mut lines, "/robot/second activated");
    let at = |text: &str| {
        lines
            .seen
            .iter()
            .position(|l| l.ends_with(text))
            .unwrap_or_else(|| panic!("no {text:?} in {:#?}", lines.seen))
    };
    assert!(at("/first configured") < at("/first activated"));
    assert!(at("/robot/second configured") < at("/robot/second activated"));
    interrupt_for_a_clean_exit(launcher, lines, "managed.launch.py");
}

/// `lifecycle_node` with `autostart: true` in a YAML file (and `<lifecycle_node
/// autostart="true">` in XML): the managed node is configured, then activated, by the
/// launch, with nothing else written.
#[test]
fn an_xml_or_yaml_lifecycle_node_with_autostart_comes_up_active() {
    let yaml = "launch:\n- lifecycle_node: {pkg: managed, exec: lc_talker.py, name: auto_talker, namespace: robot, autostart: true, output: screen}\n";
    let xml = "<launch>\n  <lifecycle_node pkg=\"managed\" exec=\"lc_talker.py\" name=\"auto_talker\" namespace=\"robot\" autostart=\"true\" output=\"screen\"/>\n</launch>\n";
    let router = Router::start(KAIROS);
    for (name, text) in [("managed.launch.yaml", yaml), ("managed.launch.xml", xml)] {
        let (_dir, prefix) = managed_package(name, text);
        let (launcher, mut lines) = launch_managed(&router, &prefix, name);
        lines.wait_for("/robot/auto_talker configured", LIMIT);
        seen_or_wait(&mut lines, "/robot/auto_talker activated");
        seen_or_wait(&mut lines, "[autostart-1]: process has finished cleanly");
        interrupt_for_a_clean_exit(launcher, lines, name);
    }
}
/// launch_ros' timers on ROS time in a Python launch file: one on the launch's own ROS
/// node's clock fires; on simulated time with no `/clock` at all, another never comes due,
/// and the launch's stop ends it: the launcher exits at once, cleanly.
#[test]
fn a_python_launch_file_s_ros_timers_fire_on_ros_time_and_end_with_the_launch() {
    let dir = tempfile::tempdir().unwrap();
    let timers = |sim: &str, period: &str| {
        format!(
            r#"
from launch import LaunchDescription
from launch.actions import LogInfo, RegisterEventHandler, Shutdown, TimerAction
from launch.event_handlers import OnShutdown
from launch_ros.actions import ROSTimer, SetUseSimTime


def generate_launch_description():
    return LaunchDescription([
        SetUseSimTime({sim}),
        ROSTimer(period={period}, actions=[LogInfo(msg='ros timer fired')]),
        TimerAction(period=1.0, actions=[Shutdown(reason='enough')]),
        RegisterEventHandler(OnShutdown(on_shutdown=[LogInfo(msg='on shutdown')])),
    ])
"#
        )
    };
    let router = Router::start(KAIROS);
    for (name, sim, period, fired) in [
        ("ros_time.launch.py", "False", "0.2", true),
        ("sim_time.launch.py", "True", "1000000.0", false),
    ] {
        let file = write(dir.path(), name, &timers(sim, period));
        let out = finish(
            spawn(
                launch(Some(&router), &file, &[])
                    .env("PYTHONPATH", zenoh_support::kairos_python_path()),
            ),
            LIMIT,
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let said: Vec<&str> = stdout
            .lines()
            .filter_map(|l| l.strip_prefix("[INFO] [launch.user]: "))
            .collect();
        let expected: &[&str] = if fired {
            &["ros timer fired", "on shutdown"]
        } else {
            &["on shutdown"]
        };
        assert_eq!(said, expected, "{name}:\n{stdout}\n{stderr}");
        assert!(!stderr.contains("did not end"), "{name}:\n{stderr}");
        assert_eq!(out.status.code(), Some(0), "{name}:\n{stdout}\n{stderr}");
    }
}

/// A Python launch file's event handlers run as the processes start, print and exit; a
/// timer, an emitted shutdown and the OnShutdown handler; in order, each once.
#[test]
fn a_python_launch_file_s_event_handlers_drive_the_launch() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "events.launch.py",
        r#"
from launch import LaunchDescription
from launch.actions import (EmitEvent, ExecuteProcess, LogInfo, OpaqueFunction,
                            RegisterEventHandler, TimerAction)
from launch.event_handlers import OnProcessExit, OnProcessIO, OnProcessStart, OnShutdown
from launch.events import Shutdown
from launch.substitutions import LaunchConfiguration, PythonExpression


def generate_launch_description():
    first = ExecuteProcess(cmd=['sh', '-c', 'echo token-1; exit 3'], name='first',
                           output='screen')
    second = ExecuteProcess(cmd=['sleep', '0.2'], output='screen')
    heard = []

    def on_stdout(event):
        heard.append(event.text.decode().strip())
        return [LogInfo(msg='heard ' + heard[-1])]

    def after_first(event, context):
        return [LogInfo(msg=f'first exited with {event.returncode}'), second]

    return LaunchDescription([
        LogInfo(msg=['twice 21 is ', PythonExpression(['2 * ', '21'])]),
        RegisterEventHandler(OnProcessIO(target_action=first, on_stdout=on_stdout)),
        RegisterEventHandler(OnProcessStart(target_action=first,
                                            on_start=[LogInfo(msg='first started')])),
        RegisterEventHandler(OnProcessExit(target_action=first, on_exit=after_first)),
        RegisterEventHandler(OnProcessExit(target_action=second, on_exit=[
            TimerAction(period=0.2, actions=[
                OpaqueFunction(function=lambda context: [LogInfo(msg='timer fired')]),
                EmitEvent(event=Shutdown(reason='all done'))])])),
        RegisterEventHandler(OnShutdown(on_shutdown=[LogInfo(msg='on shutdown')])),
        first,
    ])
"#,
    );
    let out = finish(
        spawn(
            launch(None, &file, &["--no-router"])
                .env("PYTHONPATH", zenoh_support::kairos_python_path()),
        ),
        LIMIT,
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let said: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("[INFO] [launch.user]: "))
        .collect();
    assert_eq!(
        said,
        [
            "twice 21 is 42",
            "first started",
            "heard token-1",
            "first exited with 3",
            "timer fired",
            "on shutdown",
        ],
        "{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("the launch file asked to shut down (all done)"),
        "{stdout}"
    );
    assert!(stdout.contains("[first-1] token-1"), "{stdout}");
    assert!(
        stdout.contains("[INFO] [sleep-1]: process started"),
        "{stdout}"
    );
    // first exited with 3 by itself: the launch reports the failure.
    assert_eq!(out.status.code(), Some(3), "{stdout}\n{stderr}");
}

/// A timer that a stop does not cancel (`cancel_on_shutdown=False`) keeps a stopping launch
/// for its driver, but never past the stop's bound: an hour's timer ends with the stop.
#[test]
fn a_timer_kept_through_the_stop_cannot_hold_the_stop_past_its_bound() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "kept.launch.py",
        r#"
from launch import LaunchDescription
from launch.actions import ExecuteProcess, LogInfo, Shutdown, TimerAction


def generate_launch_description():
    return LaunchDescription([
        ExecuteProcess(cmd=['sleep', '3600']),
        TimerAction(period=0.2, actions=[Shutdown(reason='asked')]),
        TimerAction(period=3600.0, actions=[LogInfo(msg='an hour later')],
                    cancel_on_shutdown=False),
    ])
"#,
    );
    let started = Instant::now();
    let out = finish(
        spawn(
            launch(
                None,
                &file,
                &[
                    "--no-router",
                    "--sigterm-timeout",
                    "1",
                    "--sigkill-timeout",
                    "1",
                ],
            )
            .env("PYTHONPATH", zenoh_support::kairos_python_path()),
        ),
        LIMIT,
    );
    let took = started.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("(asked): stopping every process"),
        "{stdout}"
    );
    assert!(!stdout.contains("an hour later"), "{stdout}");
    assert!(
        took < LIMIT,
        "the stop (bound 2 s) waited for the hour's timer: {took:?}"
    );
}

/// A Python launch file that cannot be launched names its line (the traceback's frame in
/// the file, or where the failing action was made), exits 2 and starts nothing.
#[test]
fn a_bad_python_launch_file_names_its_line_and_starts_nothing() {
    let cases = [
        (
            "from launch import LaunchDescription\nfrom launch.actions import ExecuteProcess, DeclareLaunchArgument\n\ndef generate_launch_description():\n    return LaunchDescription([\n        ExecuteProcess(cmd=['sleep', '100']),\n        DeclareLaunchArgument('needed'),\n    ])\n",
            ":7: Required launch argument 'needed' was not provided (it has no default): pass needed:=VALUE",
        ),
        (
            "from launch import LaunchDescription\nfrom launch.actions import ExecuteProcess\n\ndef generate_launch_description():\n    return LaunchDescription([\n        ExecuteProcess(cmd=['sleep', '100'], colour='red'),\n    ])\n",
            ":6: TypeError: ExecuteProcess() got an unexpected keyword argument 'colour'",
        ),
        (
            "from launch import LaunchDescription\nfrom launch_ros.actions import Node\n\ndef generate_launch_description():\n    return LaunchDescription([\n        Node(package='kairos_no_such_pkg', executable='x'),\n    ])\n",
            ":6: package 'kairos_no_such_pkg' not found in AMENT_PREFIX_PATH",
        ),
        ("import launch\n", "has no generate_launch_description()"),
    ];
    let python = zenoh_support::kairos_python_path();
    for (text, expected) in cases {
        let dir = tempfile::tempdir().unwrap();
        let file = write(dir.path(), "bad.launch.py", text);
        let out = finish(
            spawn(
                launch(None, &file, &["--no-router"])
                    .env("PYTHONPATH", &python)
                    .env("AMENT_PREFIX_PATH", dir.path()),
            ),
            LIMIT,
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(2), "{text}\n{stderr}");
        assert!(
            stderr.contains(expected) && stderr.contains("bad.launch.py"),
            "for\n{text}\nexpected '{expected}' in:\n{stderr}"
        );
        assert!(stderr.contains("nothing was started"), "{stderr}");
        assert!(
            !stdout.contains("process started"),
            "started something: {stdout}"
        );
    }
}

/// Starts the robot system (`launch_cmd` on a router of its own, given `kairos:=` and the
/// stop timeouts), checks that it runs, stops it with Ctrl-C and checks the stop report.
fn the_robot_system_runs_and_stops_within_its_deadlines(
    dir: &Path,
    launch_cmd: &mut dyn FnMut(&Router) -> Command,
) {
    let trace = dir.join("trace");
    let router = Router::start(KAIROS);
    let mut peer = spawn(
        router
            .python(ROSOUT_PEER)
            .env("MSG_DEFS", log_definitions())
            .stdin(std::process::Stdio::piped()),
    );
    let mut peer_lines = stdout_lines(&mut peer);
    peer_lines.wait_for("ready", LIMIT);

    let mut launcher = spawn(launch_cmd(&router).args([
        &format!("kairos:={KAIROS}"),
        // 10 s for the nodes to end on SIGINT (each closes a Zenoh session and writes
        // its trace, which a loaded machine may take seconds over); sh-1 ignores SIGINT
        // and sleep-1 is frozen, so the stop still runs through SIGTERM and SIGKILL.
        "--sigterm-timeout",
        "10",
        "--sigkill-timeout",
        "1",
        "--trace",
        &trace.display().to_string(),
    ]));
    let mut lines = stdout_lines(&mut launcher);
    lines.wait_for("using the router at", LIMIT);
    // The remap and the parameter file reached the nodes, across processes.
    lines.wait_for("[listener-1] heard: from the file", LIMIT);
    // Log lines reached /rosout: kairos's own echo and a ROS 2 peer both read them.
    lines.wait_for("robot.talker", LIMIT);
    peer_lines.wait_for("rosout robot.talker publishing 'from the file", LIMIT);
    // What the stop report says of sh-1 and sleep-1 holds only once each is in the state
    // the test gave it, whatever the load: sh-1 has set its trap (it says so after), and
    // sleep-1 has been stopped by the kernel, not just sent SIGSTOP. A stop signal still
    // pending when the launcher's SIGINT arrives is taken after it (lower numbers first),
    // and sleep-1 would die of SIGINT.
    seen_or_wait(&mut lines, "[sh-1] ignoring SIGINT");
    let frozen = pid_of(&seen_or_wait(
        &mut lines,
        "[INFO] [sleep-1]: process started with pid",
    ));
    signal(frozen, "STOP");
    wait_until_stopped(frozen);

    let stop = Instant::now();
    signal(launcher.0.id(), "INT");
    let out = finish(launcher, LIMIT);
    let took = stop.elapsed();
    // The rest of what it printed (the reader thread ends with the stream).
    while lines.next_within(Duration::from_secs(5)).is_some() {}
    let report = lines.seen.join("\n");
    // 10 s to SIGTERM, 1 s more to SIGKILL: the stop ends soon after, whatever the
    // processes do; a hang would run to the test's own limit.
    assert!(
        took < Duration::from_secs(17),
        "the stop took {took:?}:\n{report}"
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "SIGTERM and SIGKILL were needed:\n{report}"
    );
    for expected in [
        "stop report (Ctrl-C; SIGINT at 0 s, SIGTERM at 10.0 s, SIGKILL at 11.0 s)",
        "talker-1                 pid",
    ] {
        assert!(report.contains(expected), "no '{expected}' in:\n{report}");
    }
    let row = |label: &str| {
        report
            .lines()
            .find(|l| l.trim_start().starts_with(label) && l.contains(" pid "))
            .unwrap_or_else(|| panic!("no stop report row for {label}:\n{report}"))
            .to_owned()
    };
    assert!(row("talker-1").contains("stopped on SIGINT"), "{report}");
    assert!(row("listener-1").contains("stopped on SIGINT"), "{report}");
    assert!(row("sh-1").contains("ended by SIGTERM"), "{report}");
    assert!(row("sleep-1").contains("killed by SIGKILL"), "{report}");
    assert!(
        report.contains("stopped by a signal (SIGSTOP/SIGTSTP)"),
        "the report says why sleep-1 could not stop:\n{report}"
    );
    assert!(
        report.contains("it said: ignoring SIGINT"),
        "the report quotes what sh-1 said last:\n{report}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("[talker-1] kairos: clean shutdown"),
        "the talker printed its own shutdown report:\n{stderr}"
    );
    assert!(
        row("rosout_echo-1").contains("stopped on SIGINT"),
        "Ctrl-C ends topic echo:\n{report}"
    );
    // Nothing the launcher started outlives it.
    let alive = Command::new("kill")
        .args(["-0", &frozen.to_string()])
        .stderr(std::process::Stdio::null())
        .status()
        .expect("run kill");
    assert!(!alive.success(), "sleep-1 ({frozen}) outlived the launcher");
    // --trace: every kairos process traced into one folder, read as one system.
    let summary = assert_ok(
        "kairos trace summary",
        &finish(
            spawn(
                zenoh_support::kairos()
                    .args(["trace", "summary"])
                    .arg(&trace),
            ),
            LIMIT,
        ),
    );
    for expected in ["/robot/talker", "/robot/listener", "/robot/news"] {
        assert!(
            summary.contains(expected),
            "no {expected} in the trace:\n{summary}"
        );
    }
    // Each log line on the timeline, with the callback that wrote it.
    let log = assert_ok(
        "kairos trace log",
        &finish(
            spawn(zenoh_support::kairos().args(["trace", "log"]).arg(&trace)),
            LIMIT,
        ),
    );
    let published = log
        .lines()
        .find(|l| l.contains("[INFO] [robot.talker]: publishing 'from the file"))
        .unwrap_or_else(|| panic!("no talker line in the trace's log:\n{log}"));
    assert!(
        published.contains("(in /robot/talker timer"),
        "the line is not placed in the talker's timer callback: {published}"
    );
}

#[test]
fn a_required_process_that_exits_stops_the_system() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "required.launch.yaml",
        r#"launch:
- executable:
    cmd: sh -c "echo working; sleep 0.3; exit 3"
    on_exit: shutdown
- executable:
    cmd: sleep 1000
"#,
    );
    let out = finish(
        spawn(&mut launch(
            None,
            &file,
            &["--no-router", "--sigterm-timeout", "5"],
        )),
        LIMIT,
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "a process failed:\n{stdout}");
    let sleep_row = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("sleep-1") && l.contains(" pid "))
        .unwrap_or_else(|| panic!("no stop report row for sleep-1:\n{stdout}"));
    assert!(
        sleep_row.contains("stopped on SIGINT"),
        "sleep stops on the first signal, not on the SIGTERM 5 s later:\n{stdout}"
    );
    assert!(
        stdout.contains("sh-1 exited (on_exit: shutdown)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("had ended by itself (exit code 3)"),
        "{stdout}"
    );
    assert!(stdout.contains("[sh-1] working"), "{stdout}");
}

#[test]
fn a_respawned_process_comes_back_until_the_stop() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "respawn.launch.yaml",
        r#"launch:
- executable:
    cmd: sh -c "echo run"
    respawn: true
    respawn_delay: 0.1
"#,
    );
    let mut launcher = spawn(&mut launch(None, &file, &["--no-router"]));
    let mut lines = stdout_lines(&mut launcher);
    lines.wait_for_count("[sh-1 (restart 3)] run", 1, LIMIT);
    signal(launcher.0.id(), "INT");
    let out = finish(launcher, LIMIT);
    assert_eq!(out.status.code(), Some(0), "{}", lines.seen.join("\n"));
}

/// Runs `kairos launch` on `text` (with `files` beside it) and returns its output.
fn bad_launch(text: &str, files: &[(&str, &str)], args: &[&str]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    for (name, body) in files {
        write(dir.path(), name, body);
    }
    let file = write(dir.path(), "bad.launch.yaml", text);
    let mut cmd = launch(None, &file, args);
    cmd.arg("--no-router");
    finish(spawn(&mut cmd), LIMIT)
}

/// A file that composes nodes where `python3` cannot import kairos for Python (here a
/// `kairos` package on `PYTHONPATH` that fails to import) says so at the container's
/// line, and starts nothing.
#[test]
fn composing_nodes_without_kairos_for_python_starts_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("kairos")).unwrap();
    write(
        &dir.path().join("kairos"),
        "__init__.py",
        "raise ImportError('kairos for Python is not installed here')\n",
    );
    let file = write(
        dir.path(),
        "bad.launch.yaml",
        "launch:\n- executable: {cmd: sleep 100}\n- node_container:\n    pkg: rclcpp_components\n    exec: component_container\n    name: c\n",
    );
    let mut cmd = launch(None, &file, &["--no-router"]);
    cmd.env("PYTHONPATH", dir.path());
    let out = finish(spawn(&mut cmd), LIMIT);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("bad.launch.yaml:4: ")
            && stderr.contains("cannot import kairos for Python")
            && stderr.contains("kairos for Python is not installed here")
            && stderr.contains("nothing was started"),
        "{stderr}"
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("process started"));
}

#[test]
fn a_bad_launch_file_names_file_and_line_and_starts_nothing() {
    /// A launch file, the files beside it, and what its error must say.
    type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a str);
    let cases: [Case; 10] = [
        (
            "launch:\n- executable: {cmd: sleep 1\n",
            &[],
            ":3: not YAML",
        ),
        (
            "launch:\n- executable:\n    cmd: sleep 1\n    colour: red\n",
            &[],
            ":4: 'executable' has no key 'colour'",
        ),
        (
            "launch:\n- executable:\n    cmd: sleep $(var secs)\n",
            &[],
            ":3: cmd: $(var secs): no launch argument or let named 'secs'",
        ),
        (
            "launch:\n- arg: {name: secs}\n",
            &[],
            ":2: launch argument 'secs' has no default: pass secs:=VALUE",
        ),
        (
            "launch:\n- node: {exec: kairos_no_such_program_1}\n",
            &[],
            ":2: executable 'kairos_no_such_program_1' not found",
        ),
        (
            "launch:\n- node:\n    exec: sleep\n    param: [{from: $(dirname)/p.yaml}]\n",
            &[("p.yaml", "/**:\n  ros__parameters:\n    rate: [1, two]\n")],
            ":3: the node's ROS arguments: parameter file",
        ),
        (
            "launch:\n- launcher: {}\n",
            &[],
            ":2: unknown entity 'launcher'",
        ),
        (
            "launch:\n- load_composable_node:\n    target: c\n    composable_node:\n    - {pkg: p, plugin: p::T, colour: red}\n",
            &[],
            ":5: 'composable_node' has no key 'colour'",
        ),
        (
            "launch:\n- load_composable_node:\n    target: c\n    composable_node:\n    - {pkg: p, plugin: p::T, param: [{from: $(dirname)/p.yaml}]}\n",
            &[("p.yaml", "/**:\n  ros__parameters:\n    rate: [1, two]\n")],
            ":5: the composable node's ROS arguments: parameter file",
        ),
        (
            "launch:\n- include: {file: $(dirname)/bad.launch.yaml}\n",
            &[],
            "includes nest deeper than",
        ),
    ];
    for (text, files, expected) in cases {
        let out = bad_launch(text, files, &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(2), "{text}\n{stderr}");
        assert!(
            stderr.contains(expected),
            "for\n{text}\nexpected '{expected}' in:\n{stderr}"
        );
        assert!(
            stderr.contains("bad.launch.yaml:"),
            "the error names the file: {stderr}"
        );
        assert!(stderr.contains("nothing was started"), "{stderr}");
        assert!(
            !stdout.contains("process started"),
            "started something: {stdout}"
        );
    }
}

#[test]
fn print_shows_each_process_with_its_ros_arguments() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "inner.launch.yaml",
        "launch:\n- arg: {name: who}\n- node: {exec: sleep, name: $(var who), namespace: inner}\n",
    );
    let file = write(
        dir.path(),
        "outer.launch.yaml",
        r#"launch:
- arg: {name: rate, default: '5'}
- arg: {name: quiet, default: 'true'}
- group:
    namespace: robot
    children:
    - node:
        exec: sleep
        name: driver
        param: [{name: rate, value: $(var rate)}, {name: frame, value: '7'}]
        remap: [{from: scan, to: /sensors/scan}]
        args: 1000
    - include:
        file: inner.launch.yaml
        arg: [{name: who, value: helper}]
    - node: {exec: sleep, name: skipped, if: 'false'}
    - node: {exec: sleep, name: also_skipped, unless: $(var quiet)}
"#,
    );
    let out = finish(
        spawn(&mut launch(None, &file, &["rate:=10", "--print"])),
        LIMIT,
    );
    let stdout = assert_ok("kairos launch --print", &out);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert!(lines[0].starts_with("sleep-1: "), "{stdout}");
    assert!(
        lines[0].ends_with(
            "sleep 1000 --ros-args -r '__node:=driver' -r '__ns:=/robot' -p 'rate:=10' -p \"frame:='7'\" -r 'scan:=/sensors/scan'"
        ),
        "{stdout}"
    );
    assert!(
        lines[1].ends_with("sleep --ros-args -r '__node:=helper' -r '__ns:=/robot/inner'"),
        "{stdout}"
    );
}

#[test]
fn an_xml_file_means_what_the_same_yaml_file_means() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "inner.launch.xml",
        r#"<launch><arg name="who"/><node exec="sleep" name="$(var who)" namespace="inner"/></launch>"#,
    );
    let file = write(
        dir.path(),
        "outer.launch.xml",
        r#"<launch>
  <arg name="rate" default="5"/>
  <arg name="quiet" default="true"><choice value="true"/><choice value="false"/></arg>
  <group namespace="robot">
    <node exec="sleep" name="driver" args="1000">
      <param name="rate" value="$(var rate)"/>
      <param name="frame" value="7"/>
      <remap from="scan" to="/sensors/scan"/>
    </node>
    <include file="inner.launch.xml"><arg name="who" value="helper"/></include>
    <node exec="sleep" name="skipped" if="false"/>
    <node exec="sleep" name="also_skipped" unless="$(var quiet)"/>
  </group>
</launch>
"#,
    );
    let out = finish(
        spawn(&mut launch(None, &file, &["rate:=10", "--print"])),
        LIMIT,
    );
    let stdout = assert_ok("kairos launch --print (XML)", &out);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    // As in the YAML file, except that XML has no quoted '7': the value is guessed, as
    // ROS 2's XML frontend guesses it.
    assert!(
        lines[0].ends_with(
            "sleep 1000 --ros-args -r '__node:=driver' -r '__ns:=/robot' -p 'rate:=10' -p 'frame:=7' -r 'scan:=/sensors/scan'"
        ),
        "{stdout}"
    );
    assert!(
        lines[1].ends_with("sleep --ros-args -r '__node:=helper' -r '__ns:=/robot/inner'"),
        "{stdout}"
    );
    let out = finish(
        spawn(&mut launch(None, &file, &["quiet:=maybe", "--print"])),
        LIMIT,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "outer.launch.xml:3: launch argument 'quiet' is 'maybe', not one of true, false"
        ),
        "{stderr}"
    );
}

#[test]
fn a_bad_xml_launch_file_names_file_and_line_and_starts_nothing() {
    let cases = [
        (
            "<launch>\n<executable cmd='sleep 1'>\n</launch>\n",
            ":3: not an XML launch file",
        ),
        (
            "<launch>\n  <executable cmd='sleep 1' colour='red'/>\n</launch>\n",
            ":2: 'executable' has no key 'colour'",
        ),
        (
            "<launch>\n\n  <node pkg='kairos_no_such_pkg' exec='x'/>\n</launch>\n",
            ":3: package 'kairos_no_such_pkg' not found in AMENT_PREFIX_PATH",
        ),
        (
            "<launch>\n  <executable cmd='sleep $(eval \"1 +\")'/>\n</launch>\n",
            ":2: cmd: $(eval 1 +): SyntaxError",
        ),
        (
            "<robot/>\n",
            ":1: not an XML launch file: the root element is <robot>",
        ),
    ];
    for (text, expected) in cases {
        let dir = tempfile::tempdir().unwrap();
        let file = write(dir.path(), "bad.launch.xml", text);
        let out = finish(
            spawn(launch(None, &file, &["--no-router"]).env("AMENT_PREFIX_PATH", dir.path())),
            LIMIT,
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{text}\n{stderr}");
        assert!(
            stderr.contains(&format!("bad.launch.xml{expected}")),
            "for\n{text}\nexpected 'bad.launch.xml{expected}' in:\n{stderr}"
        );
        assert!(stderr.contains("nothing was started"), "{stderr}");
    }
}

/// `kairos run PKG EXE` runs the package's executable as the program itself: its
/// arguments as given, its exit status; a misspelt name lists what the package has.
#[test]
fn run_starts_a_package_s_executable_as_ros2_run_does() {
    let dir = tempfile::tempdir().unwrap();
    let script = write(
        dir.path(),
        "show_args",
        "#!/bin/sh\necho \"args: $*\"\nexit 7\n",
    );
    make_executable(&script);
    let prefix = dir.path().join("install");
    install_package(&prefix, "tools", std::slice::from_ref(&script), &[]);
    let kairos = || {
        let mut cmd = zenoh_support::kairos();
        cmd.env("AMENT_PREFIX_PATH", &prefix);
        cmd
    };
    let out = finish(
        spawn(kairos().args([
            "run",
            "tools",
            "show_args",
            "a b",
            "--ros-args",
            "-r",
            "__node:=x",
        ])),
        LIMIT,
    );
    assert_eq!(out.status.code(), Some(7));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "args: a b --ros-args -r __node:=x\n"
    );
    let listed = assert_ok(
        "kairos pkg executables",
        &finish(spawn(kairos().args(["pkg", "executables", "tools"])), LIMIT),
    );
    assert_eq!(listed, "tools show_args\n");
    let out = finish(spawn(kairos().args(["run", "tools", "show"])), LIMIT);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("package 'tools' has no executable 'show' (it has: show_args)"),
        "{stderr}"
    );
    let out = finish(spawn(kairos().args(["run", "tool", "show_args"])), LIMIT);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("did you mean tools?"), "{stderr}");
}
