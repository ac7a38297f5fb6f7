//! A canceled goal's life is in the trace, as babeltrace2 reads it: each `kairos:goal`
//! names the server or client by its handle (declared by `kairos:action_*_init`), the
//! goal by its UUID, the step and the status after it, in the order the steps happened.

use kairos::exec::Executor;
use kairos::graph::{Context, Node};
use kairos_action::{
    ActionClient, ActionServer, CancelResponse, GoalResponse, GoalStatus, ServerGoalHandle,
};
use kairos_msgs::example_interfaces::action::{Fibonacci, FibonacciGoal, FibonacciResult};
use std::time::{Duration as StdDuration, Instant};

const LIMIT: StdDuration = StdDuration::from_secs(30);

#[test]
fn a_canceled_goal_is_traced_step_by_step_at_both_ends() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace");
    let session = kairos::trace::Session::start(&trace).unwrap();
    let context = Context::new();
    let server_node = Node::new_in(&context, "server", "/").unwrap();
    let client_node = Node::new_in(&context, "client", "/").unwrap();
    let _server = ActionServer::<Fibonacci>::new(
        &server_node,
        "fibonacci",
        |_, _| GoalResponse::AcceptAndExecute,
        |_, _| CancelResponse::Accept,
        |handle: ServerGoalHandle<Fibonacci>| {
            std::thread::spawn(move || {
                let give_up = Instant::now() + LIMIT;
                while !handle.is_canceling() && Instant::now() < give_up {
                    std::thread::yield_now();
                }
                handle.canceled(FibonacciResult::default()).unwrap();
            });
        },
    )
    .unwrap();
    let client = ActionClient::<Fibonacci>::new(&client_node, "fibonacci").unwrap();
    let executor = Executor::multi_threaded(2).unwrap();
    executor.add_node(&server_node).unwrap();
    executor.add_node(&client_node).unwrap();
    let spinning = executor.clone();
    let spinner = std::thread::spawn(move || spinning.spin());
    let goal = client
        .send_goal(FibonacciGoal { order: 1000 }, LIMIT)
        .unwrap();
    goal.cancel(LIMIT).unwrap();
    let outcome = goal.get_result(LIMIT).unwrap();
    assert_eq!(outcome.status, GoalStatus::Canceled);
    assert!(executor.shutdown(LIMIT).is_clean());
    spinner.join().unwrap().unwrap();
    session.stop().unwrap();

    let text = kairos_testkit::babeltrace2_clean(&[], &trace);
    let handle_of = |init: &str, field: &str| {
        let line = text
            .lines()
            .find(|l| l.contains(init))
            .unwrap_or_else(|| panic!("no {init} in {text}"));
        assert!(line.contains("action_name = \"/fibonacci\""), "{line}");
        let start = line.find(&format!("{field} = ")).unwrap() + field.len() + 3;
        line[start..].split([',', ' ']).next().unwrap().to_owned()
    };
    let server = handle_of("kairos:action_server_init", "server_handle");
    let client = handle_of("kairos:action_client_init", "client_handle");
    let id = goal.id().to_string();
    let steps: Vec<String> = text
        .lines()
        .filter(|l| l.contains(" kairos:goal: "))
        .map(|l| {
            assert!(l.contains(&format!("goal_id = \"{id}\"")), "{l}");
            let side = if l.contains(&format!("handle = {server},")) {
                "server"
            } else if l.contains(&format!("handle = {client},")) {
                "client"
            } else {
                panic!("a step of no declared handle: {l}")
            };
            let event = l
                .split("event = \"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap();
            let status = l
                .split("status = ")
                .nth(1)
                .unwrap()
                .split([' ', '}'])
                .next()
                .unwrap();
            format!("{side} {event} {status}")
        })
        .collect();
    let position = |step: &str| {
        steps
            .iter()
            .position(|s| s.starts_with(step))
            .unwrap_or_else(|| panic!("no `{step}` in {steps:#?}"))
    };
    let order = [
        "client sent 0",
        "server accepted 2",
        "client accepted 1",
        // The status the client knows then: accepted, or executing if the status topic
        // told it.
        "client cancel_sent ",
        "server canceling 3",
        "client canceling 3",
    ];
    for pair in order.windows(2) {
        assert!(
            position(pair[0]) < position(pair[1]),
            "{pair:?} in {steps:#?}"
        );
    }
    assert!(position("server canceled 5") < position("client result 5"));
    assert_eq!(steps.len(), 8, "{steps:#?}");
}
