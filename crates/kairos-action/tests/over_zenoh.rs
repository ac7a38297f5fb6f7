//! An action between two graphs, each with its own Zenoh session, meeting at a router on a
//! loopback port of this test's own: goals, feedback, results and cancels cross in
//! rmw_zenoh's format, and a server that leaves fails its pending result at once.

use kairos::exec::Executor;
use kairos::graph::{CallError, Context, Node};
use kairos_action::{
    ActionClient, ActionError, ActionServer, CancelResponse, GoalResponse, GoalStatus,
    ServerGoalHandle,
};
use kairos_msgs::example_interfaces::action::{
    Fibonacci, FibonacciFeedback, FibonacciGoal, FibonacciResult,
};
use kairos_testkit::zenoh_session::{loopback_config, router_on_free_port};
use kairos_zenoh::ZenohTransport;
use std::sync::{Arc, mpsc};
use std::time::{Duration as StdDuration, Instant};

const LIMIT: StdDuration = StdDuration::from_secs(30);

/// A graph carried by a session of its own, connected to the router at `port`.
fn graph(port: u16) -> (Context, Arc<ZenohTransport>) {
    let mut config = loopback_config("peer", Some(port), 0);
    config
        .insert_json5("scouting/multicast/enabled", "false")
        .unwrap();
    let transport = ZenohTransport::open_with(config, 0).expect("open a session");
    let context = Context::new();
    transport.install(&context).expect("install the transport");
    (context, transport)
}

fn spun(node: &Node) -> (Executor, std::thread::JoinHandle<()>) {
    let executor = Executor::multi_threaded(2).unwrap();
    executor.add_node(node).unwrap();
    let spinning = executor.clone();
    let thread = std::thread::spawn(move || spinning.spin().unwrap());
    (executor, thread)
}

#[test]
fn goals_feedback_results_and_cancels_cross_between_graphs() {
    let (_router, port) = router_on_free_port();
    let (server_graph, _server_transport) = graph(port);
    let (client_graph, _client_transport) = graph(port);
    let server_node = Node::new_in(&server_graph, "fib_server", "/robot").unwrap();
    let client_node = Node::new_in(&client_graph, "fib_client", "/robot").unwrap();
    let (cancel_seen_tx, cancel_seen_rx) = mpsc::channel::<()>();
    let cancel_seen_tx = std::sync::Mutex::new(cancel_seen_tx);
    let cancel_seen_rx = std::sync::Mutex::new(Some(cancel_seen_rx));
    let _server = ActionServer::<Fibonacci>::new(
        &server_node,
        "fibonacci",
        |_, _| GoalResponse::AcceptAndExecute,
        move |_, _| {
            let _ = cancel_seen_tx.lock().unwrap().send(());
            CancelResponse::Accept
        },
        move |handle: ServerGoalHandle<Fibonacci>| {
            let order = handle.goal().order;
            let cancel_seen = (order > 100).then(|| cancel_seen_rx.lock().unwrap().take());
            std::thread::spawn(move || {
                if let Some(Some(seen)) = cancel_seen {
                    // The long goal runs until it is canceled.
                    seen.recv_timeout(LIMIT).unwrap();
                    while !handle.is_canceling() {
                        std::thread::yield_now();
                    }
                    handle
                        .canceled(FibonacciResult { sequence: vec![0] })
                        .unwrap();
                    return;
                }
                let mut sequence = vec![0, 1];
                while sequence.len() <= order as usize {
                    let n = sequence.len();
                    sequence.push(sequence[n - 1] + sequence[n - 2]);
                    handle.publish_feedback(FibonacciFeedback {
                        sequence: sequence.clone(),
                    });
                }
                handle.succeed(FibonacciResult { sequence }).unwrap();
            });
        },
    )
    .unwrap();
    let (server_exec, server_thread) = spun(&server_node);
    let client = ActionClient::<Fibonacci>::new(&client_node, "fibonacci").unwrap();
    let (client_exec, client_thread) = spun(&client_node);
    assert!(client.wait_for_server(LIMIT), "the server never appeared");

    let (tx, rx) = mpsc::channel();
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
    assert_eq!(outcome.status, GoalStatus::Succeeded);
    assert_eq!(outcome.result.sequence, [0, 1, 1, 2, 3, 5]);
    // Feedback crosses too (reliable; the last one names the whole sequence).
    let give_up = Instant::now() + LIMIT;
    let mut last = Vec::new();
    while last != [0, 1, 1, 2, 3, 5] {
        last = rx
            .recv_timeout(give_up.saturating_duration_since(Instant::now()))
            .expect("the feedback never arrived");
    }

    let long = client
        .send_goal(FibonacciGoal { order: 1000 }, LIMIT)
        .unwrap();
    long.cancel(LIMIT).unwrap();
    let outcome = long.get_result(LIMIT).unwrap();
    assert_eq!(outcome.status, GoalStatus::Canceled);
    assert_eq!(outcome.result.sequence, [0]);

    for (exec, thread) in [(server_exec, server_thread), (client_exec, client_thread)] {
        assert!(exec.shutdown(LIMIT).is_clean());
        thread.join().unwrap();
    }
}

#[test]
fn a_server_that_leaves_fails_a_pending_result_at_once() {
    let (_router, port) = router_on_free_port();
    let (server_graph, server_transport) = graph(port);
    let (client_graph, _client_transport) = graph(port);
    let server_node = Node::new_in(&server_graph, "fib_server", "/").unwrap();
    let client_node = Node::new_in(&client_graph, "fib_client", "/").unwrap();
    // The server accepts and keeps every goal running.
    let (keep_tx, keep_rx) = mpsc::channel::<ServerGoalHandle<Fibonacci>>();
    let keep_tx = std::sync::Mutex::new(keep_tx);
    let server = ActionServer::<Fibonacci>::new(
        &server_node,
        "fibonacci",
        |_, _| GoalResponse::AcceptAndExecute,
        |_, _| CancelResponse::Reject,
        move |handle| {
            let _ = keep_tx.lock().unwrap().send(handle);
        },
    )
    .unwrap();
    let (server_exec, server_thread) = spun(&server_node);
    let client = ActionClient::<Fibonacci>::new(&client_node, "fibonacci").unwrap();
    let (client_exec, client_thread) = spun(&client_node);
    assert!(client.wait_for_server(LIMIT));
    let goal = client.send_goal(FibonacciGoal { order: 3 }, LIMIT).unwrap();
    let running = keep_rx.recv_timeout(LIMIT).unwrap();
    let waiter = std::thread::spawn(move || {
        let result = goal.get_result(StdDuration::from_secs(600));
        (result, Instant::now())
    });
    // The server's process goes away: its session closes, its services leave the graph.
    std::mem::forget(running);
    assert!(server_exec.shutdown(LIMIT).is_clean());
    server_thread.join().unwrap();
    drop(server);
    drop(server_node);
    server_transport
        .close(LIMIT)
        .expect("close the server's session");
    let closed = Instant::now();
    let (result, ended) = waiter.join().unwrap();
    let waited = ended.saturating_duration_since(closed);
    let err = result.unwrap_err();
    assert!(
        matches!(
            err,
            ActionError::Call {
                source: CallError::Transport { .. } | CallError::ServiceUnavailable { .. },
                ..
            }
        ),
        "{err:?}"
    );
    // At once, not at the call's 600 s timeout (bounded by the liveness limit).
    assert!(
        waited < LIMIT,
        "the pending result waited {waited:?} after its server had gone"
    );
    assert!(client_exec.shutdown(LIMIT).is_clean());
    client_thread.join().unwrap();
}
