//! ROS 2 actions across processes, on a router of each test's own: `kairos action
//! list|info|send_goal` against a kairos server, and kairos with `zenoh-ros2-sdk` (a Python
//! implementation of rmw_zenoh's format no one here wrote), both ways:
//! - a Python client sends a Fibonacci goal to a kairos `ActionServer`, follows its
//!   feedback, gets its result, and has another goal canceled;
//! - a kairos `ActionClient` sends a goal to a Python server made of the SDK's service
//!   servers and publisher, and gets its feedback and result.
//!
//! Python encodes and decodes every message from the definitions rosidl derives for the
//! action (given as text), and computes the hashes of the messages (feedback, status) and
//! of `action_msgs/srv/CancelGoal` with its own implementation of rosidl's algorithm; the
//! test checks them against kairos's. The SDK names a service's request `pkg/srv/...`
//! whatever its kind, so the hashes of the two action services (`_SendGoal`,
//! `_GetResult`) are handed to it from kairos.

mod zenoh_support;

use kairos::exec::Executor;
use kairos::graph::{Context, Message, Node, ServiceType};
use kairos_action::{ActionClient, ActionServer, GoalStatus};
use kairos_msgs::example_interfaces::action::{
    Fibonacci, FibonacciFeedbackMessage, FibonacciGetResult, FibonacciGoal, FibonacciSendGoal,
};
use kairos_testkit::zenoh_session::loopback_config;
use kairos_zenoh::ZenohTransport;
use kairos_zenoh::graph_key::EntityKind;
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration as StdDuration, Instant};
use zenoh_support::{KAIROS, Router, spawn, stdout_lines};

const LIMIT: StdDuration = StdDuration::from_secs(60);

/// A kairos graph carried by its own session, connected to `router` only.
fn graph(router: &Router) -> (Context, Arc<ZenohTransport>) {
    let mut config = loopback_config("peer", Some(router.port), 0);
    config
        .insert_json5("scouting/multicast/enabled", "false")
        .unwrap();
    let transport = ZenohTransport::open_with(config, 0).expect("open a session");
    let context = Context::new();
    transport.install(&context).expect("install the transport");
    (context, transport)
}

/// Python's side: definitions, hashes it computes, and a bounded wait.
fn prelude() -> String {
    let interfaces = concat!(env!("CARGO_MANIFEST_DIR"), "/../kairos-msgs/interfaces");
    format!(
        r#"
import os, sys, time, json, threading
sys.stderr = sys.stdout  # Python's errors reach the test's report
import numpy as np
from zenoh_ros2_sdk import ROS2Publisher, ROS2Subscriber
from zenoh_ros2_sdk.service_client import ROS2ServiceClient
from zenoh_ros2_sdk.service_server import ROS2ServiceServer
from zenoh_ros2_sdk.session import ZenohSession
from zenoh_ros2_sdk.utils import get_type_hash, compute_service_type_hash
PORT = int(os.environ["ROUTER_PORT"])
ROOT = {interfaces:?}
def read(path):
    return open(ROOT + "/" + path).read()
A = "example_interfaces/action/Fibonacci"
DEFS = {{
    "builtin_interfaces/msg/Time": read("builtin_interfaces/msg/Time.msg"),
    "unique_identifier_msgs/msg/UUID": read("unique_identifier_msgs/msg/UUID.msg"),
    "action_msgs/msg/GoalInfo": read("action_msgs/msg/GoalInfo.msg"),
    "action_msgs/msg/GoalStatus": read("action_msgs/msg/GoalStatus.msg"),
    "action_msgs/msg/GoalStatusArray": read("action_msgs/msg/GoalStatusArray.msg"),
    A + "_Goal": "int32 order\n",
    A + "_Result": "int32[] sequence\n",
    A + "_Feedback": "int32[] sequence\n",
    A + "_FeedbackMessage": "unique_identifier_msgs/UUID goal_id\nexample_interfaces/action/Fibonacci_Feedback feedback\n",
}}
SEND_GOAL = ("unique_identifier_msgs/UUID goal_id\nexample_interfaces/action/Fibonacci_Goal goal\n",
             "bool accepted\nbuiltin_interfaces/Time stamp\n")
GET_RESULT = ("unique_identifier_msgs/UUID goal_id\n",
              "int8 status\nexample_interfaces/action/Fibonacci_Result result\n")
# The SDK resolves a bare type in a .srv against the service's own namespace: qualified.
CANCEL = read("action_msgs/srv/CancelGoal.srv").replace("GoalInfo goal_info", "action_msgs/GoalInfo goal_info").replace("GoalInfo[]", "action_msgs/GoalInfo[]").split("---\n")
session = ZenohSession.get_instance("127.0.0.1", PORT)
for name, text in DEFS.items():
    session.register_message_type(text, name)
T = session.store.types
for name in (A + "_FeedbackMessage", "action_msgs/msg/GoalStatusArray"):
    print("hash", name, get_type_hash(name, DEFS[name], DEFS), flush=True)
CANCEL_HASH = compute_service_type_hash("action_msgs/srv/CancelGoal", request_definition=CANCEL[0], response_definition=CANCEL[1], dependencies=DEFS)
print("hash action_msgs/srv/CancelGoal", CANCEL_HASH, flush=True)
"#
    )
}

/// Python computed the same message hashes as kairos, from the same definitions.
fn check_hashes(lines: &[String]) {
    for (name, hash) in [
        (
            "example_interfaces/action/Fibonacci_FeedbackMessage",
            FibonacciFeedbackMessage::type_hash().to_string(),
        ),
        (
            "action_msgs/msg/GoalStatusArray",
            kairos_msgs::action_msgs::msg::GoalStatusArray::type_hash().to_string(),
        ),
        (
            "action_msgs/srv/CancelGoal",
            kairos_msgs::action_msgs::srv::CancelGoal::type_hash().to_string(),
        ),
    ] {
        let line = format!("hash {name} {hash}");
        assert!(
            lines.contains(&line),
            "Python's hash of {name} is not kairos's {hash}:\n{}",
            lines.join("\n")
        );
    }
}

fn spin(node: &Node) -> (Executor, std::thread::JoinHandle<()>) {
    let executor = Executor::multi_threaded(2).unwrap();
    executor.add_node(node).unwrap();
    let spinning = executor.clone();
    (
        executor,
        std::thread::spawn(move || spinning.spin().unwrap()),
    )
}

/// The Fibonacci server of the tests (`kairos_testkit::fibonacci`): negative orders
/// rejected; a long goal (order > 20) runs until canceled.
fn fibonacci_server(node: &Node) -> ActionServer<Fibonacci> {
    kairos_testkit::fibonacci::server(node, "fibonacci", LIMIT)
}

#[test]
fn kairos_action_lists_shows_and_drives_an_action() {
    let router = Router::start(KAIROS);
    let (context, _transport) = graph(&router);
    let node = Node::new_in(&context, "fibonacci_server", "/robot").unwrap();
    let _server = fibonacci_server(&node);
    let (executor, spinner) = spin(&node);
    let run = |args: &[&str]| {
        let out = zenoh_support::finish(spawn(router.kairos().args(args)), LIMIT);
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, list) = run(&[
        "action",
        "list",
        "-t",
        "--spin-time",
        "30",
        "--wait-for",
        "/robot/fibonacci/_action/send_goal",
    ]);
    assert_eq!(code, Some(0));
    assert_eq!(
        list,
        "/robot/fibonacci [example_interfaces/action/Fibonacci]\n"
    );
    // Each command is a new process that meets the graph anew: it waits for the server.
    let (code, info) = run(&[
        "action",
        "info",
        "/robot/fibonacci",
        "--spin-time",
        "30",
        "--wait-for",
        "/robot/fibonacci/_action/send_goal",
    ]);
    assert_eq!(code, Some(0), "{info}");
    assert!(
        info.contains("Action servers: 1\n    /robot/fibonacci_server"),
        "{info}"
    );
    let (code, sent) = run(&[
        "action",
        "send_goal",
        "/robot/fibonacci",
        "example_interfaces/action/Fibonacci",
        "{order: 4}",
        "--feedback",
    ]);
    assert_eq!(code, Some(0), "{sent}");
    for line in [
        "Goal accepted with ID: ",
        "Feedback:\n    sequence: [0,1,1,2,3]",
        "Result:\n    sequence: [0,1,1,2,3]",
        "Goal finished with status: SUCCEEDED",
    ] {
        assert!(sent.contains(line), "no {line:?} in:\n{sent}");
    }
    let (code, rejected) = run(&[
        "action",
        "send_goal",
        "/robot/fibonacci",
        "example_interfaces/action/Fibonacci",
        "{order: -1}",
    ]);
    assert_eq!(code, Some(2), "a rejected goal is an error: {rejected}");
    assert!(executor.shutdown(LIMIT).is_clean());
    spinner.join().unwrap();
}

#[test]
fn ctrl_c_during_kairos_action_send_goal_cancels_the_goal() {
    let router = Router::start(KAIROS);
    let (context, _transport) = graph(&router);
    let node = Node::new_in(&context, "fibonacci_server", "/").unwrap();
    let _server = fibonacci_server(&node);
    let (executor, spinner) = spin(&node);
    // Order 30 runs until it is canceled.
    let mut sender = spawn(router.kairos().args([
        "action",
        "send_goal",
        "/fibonacci",
        "example_interfaces/action/Fibonacci",
        "{order: 30}",
        "--timeout",
        "60",
    ]));
    let mut lines = stdout_lines(&mut sender);
    lines.wait_for("Goal accepted with ID: ", LIMIT);
    let interrupted = Instant::now();
    let status = std::process::Command::new("kill")
        .args(["-INT", &sender.0.id().to_string()])
        .status()
        .expect("kill(1)");
    assert!(status.success());
    let out = zenoh_support::finish(sender, LIMIT);
    let took = interrupted.elapsed();
    let stdout = lines.rest(LIMIT).join("\n");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("Canceling goal..."), "{stderr}");
    assert!(
        stdout.contains("Goal finished with status: CANCELED"),
        "the server canceled the goal and the command says so:\n{stdout}\n{stderr}"
    );
    assert_eq!(out.status.code(), Some(1), "a canceled goal is no success");
    // A goal the Ctrl-C did not cancel runs on until the command's own 60 s timeout and
    // ends with another status; how soon the cancel lands is a benchmark's business.
    assert!(took < LIMIT, "Ctrl-C took {took:?} to cancel the goal");
    assert!(executor.shutdown(LIMIT).is_clean());
    spinner.join().unwrap();
}

#[test]
fn a_python_client_drives_a_kairos_action_server() {
    zenoh_support::require_zenoh_ros2_sdk("zenoh_ros2_sdk, numpy");
    let router = Router::start(KAIROS);
    let (context, transport) = graph(&router);
    let node = Node::new_in(&context, "fibonacci_server", "/").unwrap();
    let _server = fibonacci_server(&node);
    let (executor, spinner) = spin(&node);
    let script = format!(
        r#"{prelude}
got = []
last_feedback = threading.Event()
def on_feedback(m):
    got.append([int(x) for x in m.feedback.sequence])
    if got[-1] == [0, 1, 1, 2, 3, 5, 8]:
        last_feedback.set()
sub = ROS2Subscriber('/fibonacci/_action/feedback', A + '_FeedbackMessage', on_feedback, msg_definition=DEFS[A + '_FeedbackMessage'], type_hash=get_type_hash(A + '_FeedbackMessage', DEFS[A + '_FeedbackMessage'], DEFS), node_name='py_feedback', router_port=PORT)
send = ROS2ServiceClient('/fibonacci/_action/send_goal', A + '_SendGoal', request_definition=SEND_GOAL[0], response_definition=SEND_GOAL[1], node_name='py_client', router_port=PORT, type_hash=os.environ['SEND_GOAL_HASH'], timeout=30.0)
result = ROS2ServiceClient('/fibonacci/_action/get_result', A + '_GetResult', request_definition=GET_RESULT[0], response_definition=GET_RESULT[1], node_name='py_result', router_port=PORT, type_hash=os.environ['GET_RESULT_HASH'], timeout=30.0)
cancel = ROS2ServiceClient('/fibonacci/_action/cancel_goal', 'action_msgs/srv/CancelGoal', request_definition=CANCEL[0], response_definition=CANCEL[1], node_name='py_cancel', router_port=PORT, type_hash=CANCEL_HASH, timeout=30.0)
print('subscribed', flush=True)
sys.stdin.readline()
UUID = T['unique_identifier_msgs/msg/UUID']; Goal = T[A + '_Goal']
gid = np.arange(1, 17, dtype=np.uint8)
r = send.call(goal_id=UUID(uuid=gid), goal=Goal(order=6))
print('accepted', r.accepted, flush=True)
r = result.call(goal_id=UUID(uuid=gid))
print('result', r.status, json.dumps([int(x) for x in r.result.sequence]), flush=True)
assert last_feedback.wait(30), got
print('feedback', len(got), flush=True)
long_id = np.arange(101, 117, dtype=np.uint8)
r = send.call(goal_id=UUID(uuid=long_id), goal=Goal(order=40))
Info = T['action_msgs/msg/GoalInfo']; Time = T['builtin_interfaces/msg/Time']
c = cancel.call(goal_info=Info(goal_id=UUID(uuid=long_id), stamp=Time(sec=0, nanosec=0)))
print('cancel', c.return_code, len(c.goals_canceling), flush=True)
r = result.call(goal_id=UUID(uuid=long_id))
print('canceled', r.status, len(r.result.sequence) < 41, flush=True)
for e in (sub, send, result, cancel):
    e.close()
"#,
        prelude = prelude()
    );
    let mut python = spawn(
        router
            .python(&script)
            .env("SEND_GOAL_HASH", FibonacciSendGoal::type_hash().to_string())
            .env(
                "GET_RESULT_HASH",
                FibonacciGetResult::type_hash().to_string(),
            )
            .stdin(std::process::Stdio::piped()),
    );
    let mut lines = stdout_lines(&mut python);
    lines.wait_for("subscribed", LIMIT);
    // Goals are sent once the server sees Python's feedback subscription (feedback is
    // volatile: what is published before discovery reaches no one, as in ROS 2).
    let ours = transport.session().zid().to_string();
    let seen = transport
        .graph()
        .wait_until(Instant::now() + LIMIT, |tokens| {
            tokens.iter().any(|t| {
                t.kind == EntityKind::Subscription
                    && t.node.zid != ours
                    && t.endpoint
                        .as_ref()
                        .is_some_and(|e| e.name == "/fibonacci/_action/feedback")
            })
        });
    assert!(seen, "Python's feedback subscription never appeared");
    let stdin = python.0.stdin.as_mut().expect("python stdin");
    stdin.write_all(b"go\n").unwrap();
    stdin.flush().unwrap();
    lines.wait_for("canceled", LIMIT);
    let seen = lines.seen.clone();
    check_hashes(&seen);
    let has = |line: &str| seen.iter().any(|l| l == line);
    assert!(has("accepted True"), "{seen:?}");
    assert!(
        has("result 4 [0, 1, 1, 2, 3, 5, 8]"),
        "succeeded (4): {seen:?}"
    );
    // Order 6: [0, 1], [0, 1, 1], ... [0, 1, 1, 2, 3, 5, 8].
    assert!(has("feedback 6"), "every feedback of the goal: {seen:?}");
    assert!(has("cancel 0 1"), "the goal was canceling: {seen:?}");
    assert!(
        has("canceled 5 True"),
        "canceled (5) with a partial result: {seen:?}"
    );
    assert!(executor.shutdown(LIMIT).is_clean());
    spinner.join().unwrap();
}

#[test]
fn a_kairos_client_drives_a_python_action_server() {
    zenoh_support::require_zenoh_ros2_sdk("zenoh_ros2_sdk, numpy");
    let router = Router::start(KAIROS);
    let script = format!(
        r#"{prelude}
results = {{}}
done = threading.Condition()
feedback = ROS2Publisher('/fibonacci/_action/feedback', A + '_FeedbackMessage', msg_definition=DEFS[A + '_FeedbackMessage'], type_hash=get_type_hash(A + '_FeedbackMessage', DEFS[A + '_FeedbackMessage'], DEFS), node_name='py_fib_server', router_port=PORT)
UUID = T['unique_identifier_msgs/msg/UUID']; Time = T['builtin_interfaces/msg/Time']
FeedbackMessage = T[A + '_FeedbackMessage']; Feedback = T[A + '_Feedback']; Result = T[A + '_Result']
SendResp = send_resp = None
def run(gid, order):
    try:
        work(gid, order)
    except Exception as e:
        print('server error', repr(e), flush=True)
def work(gid, order):
    seq = [0, 1]
    while len(seq) <= order:
        seq.append(seq[-1] + seq[-2])
        feedback.publish(goal_id=UUID(uuid=gid), feedback=Feedback(sequence=np.array(seq, dtype=np.int32)))
    with done:
        results[bytes(gid)] = seq
        done.notify_all()
def on_send(req):
    threading.Thread(target=run, args=(np.array(req.goal_id.uuid, dtype=np.uint8), int(req.goal.order)), daemon=True).start()
    return send_server.response_msg_class(accepted=True, stamp=Time(sec=int(time.time()), nanosec=0))
def on_result(req):
    key = bytes(np.array(req.goal_id.uuid, dtype=np.uint8))
    with done:
        done.wait_for(lambda: key in results, timeout=30)
    seq = results.get(key)
    status = 4 if seq is not None else 6
    return result_server.response_msg_class(status=status, result=Result(sequence=np.array(seq or [], dtype=np.int32)))
def on_cancel(req):
    return cancel_server.response_msg_class(return_code=1, goals_canceling=[])
send_server = ROS2ServiceServer('/fibonacci/_action/send_goal', A + '_SendGoal', callback=on_send, request_definition=SEND_GOAL[0], response_definition=SEND_GOAL[1], node_name='py_fib_server', router_port=PORT, type_hash=os.environ['SEND_GOAL_HASH'])
result_server = ROS2ServiceServer('/fibonacci/_action/get_result', A + '_GetResult', callback=on_result, request_definition=GET_RESULT[0], response_definition=GET_RESULT[1], node_name='py_fib_server', router_port=PORT, type_hash=os.environ['GET_RESULT_HASH'])
cancel_server = ROS2ServiceServer('/fibonacci/_action/cancel_goal', 'action_msgs/srv/CancelGoal', callback=on_cancel, request_definition=CANCEL[0], response_definition=CANCEL[1], node_name='py_fib_server', router_port=PORT, type_hash=CANCEL_HASH)
print('serving', flush=True)
sys.stdin.read()
"#,
        prelude = prelude()
    );
    let mut python = spawn(
        router
            .python(&script)
            .env("SEND_GOAL_HASH", FibonacciSendGoal::type_hash().to_string())
            .env(
                "GET_RESULT_HASH",
                FibonacciGetResult::type_hash().to_string(),
            )
            .stdin(std::process::Stdio::piped()),
    );
    let mut lines = stdout_lines(&mut python);
    lines.wait_for("serving", LIMIT);
    check_hashes(&lines.seen);

    let (context, _transport) = graph(&router);
    let node = Node::new_in(&context, "fibonacci_client", "/").unwrap();
    let client = ActionClient::<Fibonacci>::new(&node, "fibonacci").unwrap();
    let (executor, spinner) = spin(&node);
    assert!(
        client.wait_for_server(LIMIT),
        "the Python server never appeared"
    );
    let (tx, rx) = std::sync::mpsc::channel();
    let goal = client
        .send_goal_with_feedback(
            FibonacciGoal { order: 5 },
            move |f| {
                let _ = tx.send(f.sequence);
            },
            LIMIT,
        )
        .unwrap();
    let outcome = goal.get_result(LIMIT).unwrap();
    assert_eq!(
        (outcome.status, outcome.result.sequence.as_slice()),
        (GoalStatus::Succeeded, [0, 1, 1, 2, 3, 5].as_slice()),
        "Python said: {:?}",
        lines.seen_now()
    );
    let mut last = Vec::new();
    while last != [0, 1, 1, 2, 3, 5] {
        last = rx
            .recv_timeout(LIMIT)
            .expect("Python's feedback never arrived");
    }
    // The Python server refuses cancels: the kairos client says so.
    let long = client.send_goal(FibonacciGoal { order: 3 }, LIMIT).unwrap();
    let err = long.cancel(LIMIT).unwrap_err();
    assert!(
        err.to_string().contains("rejected the cancel request"),
        "{err}"
    );
    assert!(executor.shutdown(LIMIT).is_clean());
    spinner.join().unwrap();
    drop(python);
}

/// Goals are traced at both ends and joined by their id across processes: a kairos server
/// traced in this process, `kairos action send_goal` traced in its own (`KAIROS_TRACE`),
/// and `kairos trace goals` showing each goal's life from both sides, in causal order.
#[test]
fn a_goal_is_traced_at_both_ends_and_joined_across_processes() {
    let router = Router::start(KAIROS);
    let (context, _transport) = graph(&router);
    let dir = tempfile::tempdir().unwrap();
    // Only this test traces in this process, and only its own action is looked at: the
    // other tests of this file may add events of their own to the trace.
    let session = kairos::trace::Session::start(dir.path().join("server")).unwrap();
    let node = Node::new_in(&context, "fibonacci_server", "/traced").unwrap();
    let _server = fibonacci_server(&node);
    let (executor, spinner) = spin(&node);
    let send = |order: &str| {
        let mut command = router.kairos();
        command
            .env("KAIROS_TRACE", dir.path().join("client"))
            .args([
                "action",
                "send_goal",
                "/traced/fibonacci",
                "example_interfaces/action/Fibonacci",
                order,
                "--feedback",
            ]);
        let out = zenoh_support::finish(spawn(&mut command), LIMIT);
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, sent) = send("{order: 5}");
    assert_eq!(code, Some(0), "{sent}");
    let (code, rejected) = send("{order: -1}");
    assert_eq!(code, Some(2), "{rejected}");
    assert!(executor.shutdown(LIMIT).is_clean());
    spinner.join().unwrap();
    session.stop().unwrap();

    let bt = kairos_testkit::babeltrace2_clean(&[], dir.path());
    assert!(bt.contains("kairos:action_server_init"), "{bt}");
    assert!(bt.contains("kairos:action_client_init"), "{bt}");
    let trace = |args: &[&str]| {
        let out = zenoh_support::finish(
            spawn(
                zenoh_support::kairos()
                    .arg("trace")
                    .args(args)
                    .arg(dir.path()),
            ),
            LIMIT,
        );
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "kairos trace {args:?}: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
    };
    let report: serde_json::Value = serde_json::from_str(&trace(&["goals", "--json"])).unwrap();
    let action = report["actions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["action"] == "/traced/fibonacci")
        .unwrap_or_else(|| panic!("no /traced/fibonacci in {report:#}"));
    let goals = action["goals"].as_array().unwrap();
    assert_eq!(goals.len(), 2, "{action:#}");
    let done = &goals[0];
    assert_eq!(done["outcome"], "succeeded", "{done:#}");
    assert!(
        done["server"]
            .as_str()
            .unwrap()
            .starts_with("/traced/fibonacci_server"),
        "{done:#}"
    );
    assert!(done["client"].is_string(), "{done:#}");
    // Order 5: the server publishes [0,1], [0,1,1], ... [0,1,1,2,3,5]; all reach the client.
    assert_eq!(done["feedback_published"], 5, "{done:#}");
    assert_eq!(done["feedback_received"], 5, "{done:#}");
    for figure in ["accept_ns", "run_ns", "result_after_end_ns", "total_ns"] {
        assert!(done[figure].as_i64().unwrap() >= 0, "{figure}: {done:#}");
    }
    // The steps of both processes, in the trace's (one host's) time: causal order holds.
    let step_at = |side: &str, event: &str| {
        done["steps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["side"] == side && s["event"] == event)
            .unwrap_or_else(|| panic!("no {side} {event} in {done:#}"))["at_ns"]
            .as_i64()
            .unwrap()
    };
    assert!(step_at("client", "sent") < step_at("server", "accepted"));
    assert!(step_at("server", "accepted") < step_at("client", "accepted"));
    assert!(step_at("server", "accepted") < step_at("server", "succeeded"));
    assert!(step_at("server", "succeeded") < step_at("client", "result"));
    let refused = &goals[1];
    assert_eq!(refused["outcome"], "rejected", "{refused:#}");
    let sides: Vec<&str> = refused["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["side"].as_str().unwrap())
        .collect();
    assert_eq!(sides, ["client", "server", "client"], "{refused:#}");

    let id = done["id"].as_str().unwrap();
    let text = trace(&["goals", "--goal", &id[..8]]);
    assert!(text.contains(&format!("goal {id} (succeeded)")), "{text}");
    assert!(text.contains("server /traced/fibonacci_server"), "{text}");

    let json = dir.path().join("perfetto.json");
    trace(&["export", "--perfetto", json.to_str().unwrap()]);
    let exported: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let spans = exported["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "goal" && e["ph"] == "b" && e["args"]["goal_id"] == id)
        .count();
    assert_eq!(spans, 2, "one span at the client, one at the server");
    let html = dir.path().join("report.html");
    trace(&["report", "--html", html.to_str().unwrap()]);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<section id=\"goals\">"), "goals section");
    assert!(page.contains(id), "the goal is listed");
    assert!(page.contains("class=\"goal\""), "and drawn on the timeline");
}
