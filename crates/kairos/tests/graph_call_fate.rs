//! What becomes of a request whose await fails with `WouldDeadlock`: the error says
//! whether the server has it, and where kairos knows before sending that the await can
//! never complete (an async callback holding the service's group), the request is not
//! sent at all, so a service that acts does not act for a caller told it failed.

use kairos::exec::{DeadlockReason, Executor};
use kairos::graph::{CallError, Client, Context, Node};
use kairos::time::{Clock, Duration};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, mpsc};

const LIMIT: std::time::Duration = std::time::Duration::from_secs(30);

/// A client of the counting service.
type ActClient = Client<fn(i64) -> i64>;

/// A node whose default group holds both a service that counts its calls and the async
/// timer that calls it, on `exec`.
struct SelfCaller {
    node: Node,
    served: Arc<AtomicU64>,
    client: Arc<ActClient>,
    exec: Executor,
}

fn self_caller(name: &str) -> SelfCaller {
    let node = Node::new_in(&Context::new(), name, "/").unwrap();
    node.set_clock(Clock::steady());
    let served = Arc::new(AtomicU64::new(0));
    let counted = served.clone();
    let service = node
        .create_service("act", move |x: i64| {
            counted.fetch_add(1, Ordering::SeqCst);
            x
        })
        .unwrap();
    std::mem::forget(service);
    let client: Arc<ActClient> = Arc::new(node.create_client("act").unwrap());
    let exec = Executor::multi_threaded(2).unwrap();
    exec.add_node(&node).unwrap();
    SelfCaller {
        node,
        served,
        client,
        exec,
    }
}

/// Waits until `done` holds, at most [`LIMIT`].
fn wait_until(done: impl Fn() -> bool) {
    let end = std::time::Instant::now() + LIMIT;
    while !done() && std::time::Instant::now() < end {
        std::thread::park_timeout(std::time::Duration::from_millis(5));
    }
}

fn would_deadlock(result: Result<i64, CallError>) -> kairos::exec::WouldDeadlock {
    match result {
        Err(CallError::WouldDeadlock(err)) => err,
        other => panic!("expected WouldDeadlock, got {other:?}"),
    }
}

#[test]
fn an_await_known_impossible_when_called_fails_with_its_request_never_sent() {
    let s = self_caller("holds_its_service");
    let (tx, rx) = mpsc::sync_channel(1);
    let client = s.client.clone();
    let _timer = s
        .node
        .create_timer_async(Duration::from_millis(1), move |_| {
            let (client, tx) = (client.clone(), tx.clone());
            async move {
                let _ = tx.try_send(client.call_async(7).await);
            }
        })
        .unwrap();
    let spin = s.exec.spin_thread().unwrap();
    let err = would_deadlock(rx.recv_timeout(LIMIT).expect("the await failed at once"));
    // Wait for a second failed await: the first one's request, had it been sent, would
    // have been served by now (the timer released the group in between).
    let _ = rx.recv_timeout(LIMIT).expect("the timer ran again");
    drop(spin);
    s.exec.shutdown(Duration::from_secs(5));
    assert_eq!(err.reason, DeadlockReason::GroupHeld, "{err}");
    assert_eq!(err.request_sent(), Some(false), "{err}");
    assert!(
        err.to_string().contains("The request was not sent"),
        "{err}"
    );
    assert_eq!(
        s.served.load(Ordering::SeqCst),
        0,
        "the server never saw it"
    );
    assert_eq!(s.client.late_responses(), 0);
}

#[test]
fn a_held_request_is_sent_by_a_done_callback_and_by_a_future_dropped_unawaited() {
    let s = self_caller("fire_and_forget");
    let (tx, rx) = mpsc::sync_channel(4);
    let client = s.client.clone();
    let fired = Arc::new(AtomicU64::new(0));
    let _timer = {
        let fired = fired.clone();
        s.node
            .create_timer_async(Duration::from_millis(1), move |_| {
                let (client, tx) = (client.clone(), tx.clone());
                let first = fired.fetch_add(1, Ordering::SeqCst) == 0;
                async move {
                    if !first {
                        return;
                    }
                    // A done callback runs in the client's group once this task ends.
                    client.call_async(1).on_done(move |result| {
                        let _ = tx.try_send(result);
                    });
                    // Made and dropped: sent all the same, its response counted late.
                    drop(client.call_async(2));
                }
            })
            .unwrap()
    };
    let spin = s.exec.spin_thread().unwrap();
    let answered = rx.recv_timeout(LIMIT).expect("the done callback ran");
    assert!(matches!(answered, Ok(1)), "{answered:?}");
    wait_until(|| s.served.load(Ordering::SeqCst) >= 2);
    drop(spin);
    s.exec.shutdown(Duration::from_secs(5));
    assert_eq!(
        s.served.load(Ordering::SeqCst),
        2,
        "both requests were served"
    );
}

#[test]
fn an_await_found_impossible_after_sending_says_the_request_was_sent() {
    let s = self_caller("sent_first");
    let (tx, rx) = mpsc::sync_channel(1);
    let client = s.client.clone();
    let fired = Arc::new(AtomicU64::new(0));
    let _timer = s
        .node
        .create_timer_async(Duration::from_millis(1), move |_| {
            let (client, tx) = (client.clone(), tx.clone());
            let first = fired.fetch_add(1, Ordering::SeqCst) == 0;
            async move {
                if !first {
                    return;
                }
                // Made on a thread that runs no callback, so nothing held it: it left at
                // once. Awaited here, where the service's group is held by this task.
                let response = std::thread::scope(|scope| {
                    scope.spawn(|| client.call_async(5)).join().unwrap()
                });
                let _ = tx.try_send(response.await);
            }
        })
        .unwrap();
    let spin = s.exec.spin_thread().unwrap();
    let err = would_deadlock(rx.recv_timeout(LIMIT).expect("the await failed at once"));
    assert_eq!(err.request_sent(), Some(true), "{err}");
    let message = err.to_string();
    assert!(
        message.contains("already sent") && message.contains("late_responses"),
        "{message}"
    );
    // The server still runs it, as the error said, and its response is counted late.
    wait_until(|| s.client.late_responses() > 0);
    drop(spin);
    s.exec.shutdown(Duration::from_secs(5));
    assert_eq!(s.served.load(Ordering::SeqCst), 1);
    assert_eq!(s.client.late_responses(), 1);
}
