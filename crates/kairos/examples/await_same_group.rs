//! An async timer awaits a service of its own node (issue 12, item 1).
//!
//! As in rclpy, an async callback holds its callback group until its future completes, so
//! awaiting a service that sits in that same mutually exclusive group (every node's
//! default) could never be answered: kairos says so at once with `WouldDeadlock` instead
//! of hanging. Putting the service in a group of its own makes the same await work, and a
//! callback left suspended at an `.await` is named by the shutdown report.
//!
//! `cargo run --release --example await_same_group` (the test `exec_promises` runs it too).

use kairos::exec::{Executor, GroupKind};
use kairos::graph::{CallError, Client, Context, Node};
use kairos::time::{CancelToken, Clock, Duration};
use std::sync::Arc;
use std::sync::mpsc;

/// What the example found.
#[derive(Debug)]
pub struct Outcome {
    /// The await to a service in the callback's own group: a `WouldDeadlock` error.
    pub same_group: Result<i64, CallError>,
    /// The same await with the service in a group of its own: the sum.
    pub own_group: Result<i64, CallError>,
    /// The shutdown report of an executor whose async callback sleeps for an hour.
    pub report: kairos::exec::ShutdownReport,
}

/// Awaits `add(2, 3)` from an async timer of `node`, on a 2-worker executor; the result.
fn await_once(node: &Node, client: Client<fn((i64, i64)) -> i64>) -> Result<i64, CallError> {
    let exec = Executor::multi_threaded(2).expect("2 workers");
    exec.add_node(node).expect("node added");
    let (tx, rx) = mpsc::sync_channel(1);
    let client = Arc::new(client);
    let _timer = node
        .create_timer_async(Duration::from_millis(1), move |_| {
            let (client, tx) = (client.clone(), tx.clone());
            async move {
                let _ = tx.try_send(client.call_async((2, 3)).await);
            }
        })
        .expect("timer created");
    let spin = exec.spin_thread().expect("spinning");
    // Bounded: before the fix this await hung silently for ever.
    let result = rx
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("the awaited call neither completed nor failed within 10 s");
    drop(spin);
    exec.shutdown(Duration::from_secs(5));
    result
}

pub fn run() -> Outcome {
    // 1. The service in the node's default group, which the async timer holds.
    let node = Node::new_in(&Context::new(), "same_group", "/").expect("node");
    node.set_clock(Clock::steady());
    let _service = node
        .create_service("add", |(a, b): (i64, i64)| a + b)
        .expect("service");
    let same_group = await_once(&node, node.create_client("add").expect("client"));

    // 2. The fix: the service in a group of its own.
    let node = Node::new_in(&Context::new(), "own_group", "/").expect("node");
    node.set_clock(Clock::steady());
    let services = node.create_callback_group("services", GroupKind::MutuallyExclusive);
    let _service = node
        .with_group(&services)
        .expect("our group")
        .create_service("add", |(a, b): (i64, i64)| a + b)
        .expect("service");
    let own_group = await_once(&node, node.create_client("add").expect("client"));

    // 3. A callback suspended at an `.await` at shutdown is reported, not called clean.
    let node = Node::new_in(&Context::new(), "sleeper", "/").expect("node");
    node.set_clock(Clock::steady());
    let exec = Executor::single_threaded();
    exec.add_node(&node).expect("node added");
    let (tx, rx) = mpsc::sync_channel(1);
    let _timer = node
        .create_timer_async(Duration::from_millis(1), move |_| {
            let tx = tx.clone();
            async move {
                let _ = tx.try_send(());
                let hour =
                    Clock::steady().sleep_for_async(Duration::from_secs(3600), &CancelToken::new());
                let _ = hour.await;
            }
        })
        .expect("timer created");
    let spin = exec.spin_thread().expect("spinning");
    rx.recv_timeout(std::time::Duration::from_secs(10))
        .expect("the sleeper started");
    drop(spin);
    let report = exec.shutdown(Duration::from_secs(1));
    Outcome {
        same_group,
        own_group,
        report,
    }
}

#[allow(dead_code)] // Also compiled into the `exec_promises` test, which calls `run`.
fn main() {
    let outcome = run();
    match &outcome.same_group {
        Err(err) => println!("service in the awaiting callback's group: {err}"),
        Ok(sum) => println!("service in the awaiting callback's group answered {sum} (unexpected)"),
    }
    match &outcome.own_group {
        Ok(sum) => println!("service in a group of its own: Ok({sum})"),
        Err(err) => println!("service in a group of its own: {err} (unexpected)"),
    }
    println!(
        "shutdown with a callback asleep at an .await: {}",
        outcome.report
    );
}
