//! Story 3 replayed: every blocking pattern that deadlocks in rclpy/rclcpp returns
//! `WouldDeadlock` here at once (well under 1 s), and every pattern that works there works.

use kairos::exec::{DeadlockReason, ExecError, Executor, GroupKind};
use kairos::graph::{CallError, Client, Context, Node};
use kairos::time::{Clock, Duration};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Instant;

/// The tests' adder: two numbers in, their sum out.
type Add = fn((i64, i64)) -> i64;

/// Generous: a correct wait fails in microseconds; a broken one would hit the call timeout.
/// Under Miri (scripts/test runs this file there) everything is about a hundred times
/// slower, and a service's panic, unwound and reported there, takes seconds of it.
const CALL_TIMEOUT: Duration = Duration::from_secs(if cfg!(miri) { 120 } else { 60 });

/// How soon an impossible wait must fail: well under [`CALL_TIMEOUT`], so a wait that
/// blocked until the timeout fails the test. Under Miri the bound scales with it (Miri
/// shares the machine with the fuzzers in scripts/test).
const FAIL_FAST: std::time::Duration =
    std::time::Duration::from_secs(if cfg!(miri) { 30 } else { 10 });

struct Setup {
    caller: Node,
    _server: Node,
    _service: kairos::graph::Service<(i64, i64), i64>,
}

fn setup(exec: &Executor) -> Setup {
    let ctx = Context::new();
    let server = Node::new_in(&ctx, "server", "/").unwrap();
    let caller = Node::new_in(&ctx, "caller", "/").unwrap();
    caller.set_clock(Clock::steady());
    let service = server
        .create_service("add", |(a, b): (i64, i64)| a + b)
        .unwrap();
    exec.add_node(&server).unwrap();
    exec.add_node(&caller).unwrap();
    Setup {
        caller,
        _server: server,
        _service: service,
    }
}

/// Runs `exec` until a first timer tick of `caller` has run `body`, and returns its result.
fn first_tick<R: Send + 'static>(
    exec: &Executor,
    caller: &Node,
    body: impl Fn() -> R + Send + Sync + 'static,
) -> (R, std::time::Duration) {
    let (tx, rx) = mpsc::channel();
    let tx = parking_lot::Mutex::new(tx);
    let done = AtomicBool::new(false);
    let stopper = exec.clone();
    let _timer = caller
        .create_timer(Duration::from_millis(1), move |_| {
            if done.swap(true, Ordering::AcqRel) {
                return;
            }
            let start = Instant::now();
            let result = body();
            let _ = tx.lock().send((result, start.elapsed()));
            stopper.cancel();
        })
        .unwrap();
    exec.spin().unwrap();
    rx.recv_timeout(std::time::Duration::from_secs(10))
        .expect("the timer callback ran")
}

fn assert_would_deadlock(
    result: Result<i64, CallError>,
    took: std::time::Duration,
    reason: DeadlockReason,
    group: &str,
) {
    match result {
        Err(CallError::WouldDeadlock(err)) => {
            assert_eq!(err.reason, reason, "{err}");
            assert!(
                err.group.contains(group),
                "group {:?} should name {group}: {err}",
                err.group
            );
            let message = err.to_string();
            assert!(
                message.contains("Fix:") && message.contains("await"),
                "the message says the fix: {message}"
            );
        }
        other => panic!("expected WouldDeadlock, got {other:?}"),
    }
    assert!(took < FAIL_FAST, "WouldDeadlock took {took:?}");
}

#[test]
fn a_call_in_timer_callback_default_group_single_threaded_would_deadlock() {
    let exec = Executor::single_threaded();
    let s = setup(&exec);
    let client: Client<fn((i64, i64)) -> i64> = s.caller.create_client("add").unwrap();
    let (result, took) = first_tick(&exec, &s.caller, move || client.call((2, 3), CALL_TIMEOUT));
    assert_would_deadlock(
        result,
        took,
        DeadlockReason::NoFreeWorker,
        "default group of node /caller",
    );
}

#[test]
fn a_call_to_a_service_in_the_held_group_would_deadlock_even_multi_threaded() {
    let exec = Executor::multi_threaded(2).unwrap();
    let ctx = Context::new();
    let node = Node::new_in(&ctx, "selfish", "/").unwrap();
    node.set_clock(Clock::steady());
    let _service = node.create_service("echo", |x: i64| x).unwrap();
    let client: Client<fn(i64) -> i64> = node.create_client("echo").unwrap();
    exec.add_node(&node).unwrap();
    let (result, took) = first_tick(&exec, &node, move || client.call(1, CALL_TIMEOUT));
    assert_would_deadlock(
        result,
        took,
        DeadlockReason::GroupHeld,
        "default group of node /selfish",
    );
}

#[test]
fn b_client_in_second_group_single_threaded_would_deadlock() {
    let exec = Executor::single_threaded();
    let s = setup(&exec);
    let group = s
        .caller
        .create_callback_group("clients", GroupKind::MutuallyExclusive);
    let client: Client<fn((i64, i64)) -> i64> = s
        .caller
        .with_group(&group)
        .unwrap()
        .create_client("add")
        .unwrap();
    let (result, took) = first_tick(&exec, &s.caller, move || client.call((2, 3), CALL_TIMEOUT));
    assert_would_deadlock(result, took, DeadlockReason::NoFreeWorker, "/caller");
}

#[test]
fn c_two_groups_on_a_multi_threaded_executor_complete() {
    let exec = Executor::multi_threaded(2).unwrap();
    let s = setup(&exec);
    let group = s
        .caller
        .create_callback_group("clients", GroupKind::MutuallyExclusive);
    let client: Client<fn((i64, i64)) -> i64> = s
        .caller
        .with_group(&group)
        .unwrap()
        .create_client("add")
        .unwrap();
    let (result, _) = first_tick(&exec, &s.caller, move || client.call((2, 3), CALL_TIMEOUT));
    assert_eq!(result.unwrap(), 5);
    assert!(exec.shutdown(CALL_TIMEOUT).is_clean());
}

#[test]
fn d_spin_until_future_complete_inside_a_callback_would_deadlock() {
    let exec = Executor::single_threaded();
    let s = setup(&exec);
    let client: Client<fn((i64, i64)) -> i64> = s.caller.create_client("add").unwrap();
    let inner = exec.clone();
    let (result, took) = first_tick(&exec, &s.caller, move || {
        inner.spin_until_future_complete(client.call_async((2, 3)), CALL_TIMEOUT)
    });
    match result {
        Err(ExecError::WouldDeadlock(err)) => {
            assert_eq!(err.reason, DeadlockReason::NestedSpin);
            assert!(err.group.contains("default group of node /caller"), "{err}");
        }
        other => panic!("expected WouldDeadlock, got {other:?}"),
    }
    assert!(took < FAIL_FAST);
    // The executor still works afterwards: the timer keeps firing (rclpy's "works once").
    let ticks = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counter = ticks.clone();
    let _again = s.caller.create_timer(Duration::from_millis(1), move |_| {
        counter.fetch_add(1, Ordering::Relaxed);
    });
    for _ in 0..3 {
        assert!(exec.spin_once(Duration::from_secs(5)).unwrap());
    }
    assert!(ticks.load(Ordering::Relaxed) >= 1);
}

#[test]
fn e_awaited_call_async_in_an_async_callback_single_threaded_completes() {
    let exec = Executor::single_threaded();
    let s = setup(&exec);
    let client: Arc<Client<Add>> = Arc::new(s.caller.create_client("add").unwrap());
    let (tx, rx) = mpsc::sync_channel(1);
    let done = Arc::new(AtomicBool::new(false));
    let stopper = exec.clone();
    let _timer = s
        .caller
        .create_timer_async(Duration::from_millis(1), move |_| {
            let (client, tx, done, stopper) =
                (client.clone(), tx.clone(), done.clone(), stopper.clone());
            async move {
                if done.swap(true, Ordering::AcqRel) {
                    return;
                }
                let result = client.call_async((2, 3)).await;
                let _ = tx.send(result);
                stopper.cancel();
            }
        })
        .unwrap();
    exec.spin().unwrap();
    assert_eq!(
        rx.recv_timeout(std::time::Duration::from_secs(10))
            .unwrap()
            .unwrap(),
        5
    );
}

#[test]
fn a_done_callback_runs_in_the_client_group_and_completes_single_threaded() {
    let exec = Executor::single_threaded();
    let s = setup(&exec);
    // The client outlives the timer callback that calls it (dropping a client abandons its calls).
    let client: Arc<Client<Add>> = Arc::new(s.caller.create_client("add").unwrap());
    let caller_client = client.clone();
    let (tx, rx) = mpsc::channel();
    let tx = parking_lot::Mutex::new(tx);
    let stopper = exec.clone();
    let (_, _) = first_tick(&exec, &s.caller, move || {
        let client = &caller_client;
        let tx = tx.lock().clone();
        let stopper = stopper.clone();
        client.call_async((20, 22)).on_done(move |result| {
            let _ = tx.send(result);
            stopper.cancel();
        });
    });
    exec.spin().unwrap();
    assert_eq!(
        rx.recv_timeout(std::time::Duration::from_secs(10))
            .unwrap()
            .unwrap(),
        42
    );
    drop(client);
}

#[test]
fn a_panicking_service_returns_an_error_and_the_executor_goes_on() {
    let ctx = Context::new();
    let exec = Executor::multi_threaded(2).unwrap();
    let server = Node::new_in(&ctx, "server", "/").unwrap();
    let _service = server
        .create_service("fragile", |x: i64| {
            if x < 0 {
                panic!("negative input {x}")
            } else {
                x * 2
            }
        })
        .unwrap();
    exec.add_node(&server).unwrap();
    let spinner = {
        let exec = exec.clone();
        std::thread::spawn(move || exec.spin())
    };
    let caller = Node::new_in(&ctx, "caller", "/").unwrap();
    let client: Client<fn(i64) -> i64> = caller.create_client("fragile").unwrap();
    let first = client.call_async(-1);
    let second = client.call_async(21);
    assert_eq!((first.sequence(), second.sequence()), (1, 2));
    match first.wait(CALL_TIMEOUT) {
        Err(CallError::ServicePanicked { seq, message, .. }) => {
            assert_eq!(seq, 1);
            assert!(message.contains("negative input -1"), "{message}");
        }
        other => panic!("expected ServicePanicked, got {other:?}"),
    }
    assert_eq!(second.wait(CALL_TIMEOUT).unwrap(), 42);
    assert!(exec.shutdown(CALL_TIMEOUT).is_clean());
    spinner.join().unwrap().unwrap();
}

#[test]
fn a_call_to_a_missing_service_fails_at_once() {
    let ctx = Context::new();
    let node = Node::new_in(&ctx, "lonely", "/").unwrap();
    let client: Client<fn(i64) -> i64> = node.create_client("nobody").unwrap();
    assert!(!client.service_is_ready());
    assert!(!client.wait_for_service(Duration::from_millis(20)));
    match client.call(1, CALL_TIMEOUT) {
        Err(CallError::ServiceUnavailable { service }) => assert_eq!(service, "/nobody"),
        other => panic!("expected ServiceUnavailable, got {other:?}"),
    }
}

#[test]
fn wait_for_service_returns_when_the_server_appears() {
    let ctx = Context::new();
    let node = Node::new_in(&ctx, "patient", "/").unwrap();
    let client: Client<fn(i64) -> i64> = node.create_client("late").unwrap();
    let server_node = Node::new_in(&ctx, "late_server", "/").unwrap();
    let (tx, rx) = mpsc::channel();
    let server = std::thread::spawn(move || {
        let service = server_node.create_service("late", |x: i64| x).unwrap();
        tx.send(()).unwrap();
        service
    });
    assert!(client.wait_for_service(Duration::from_secs(10)));
    rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
    drop(server.join().unwrap());
}

/// A chain of blocking calls across groups: a timer calls service `outer`, whose callback
/// calls service `inner`. Each blocked caller holds a worker, so with 2 workers the inner
/// call can never be served (WouldDeadlock at once); with 3 it completes.
/// Returns the outer response: the inner call's result, or its error message.
fn call_chain(workers: usize) -> Result<i64, String> {
    let exec = Executor::multi_threaded(workers).unwrap();
    let ctx = Context::new();
    let inner_node = Node::new_in(&ctx, "inner", "/").unwrap();
    let _inner = inner_node.create_service("inner", |x: i64| x + 1).unwrap();
    let outer_node = Node::new_in(&ctx, "outer", "/").unwrap();
    let inner_client: Client<fn(i64) -> i64> = outer_node.create_client("inner").unwrap();
    let _outer = outer_node
        .create_service("outer", move |x: i64| {
            match inner_client.call(x, CALL_TIMEOUT) {
                Ok(y) => Ok(y * 10),
                Err(err) => Err(err.to_string()),
            }
        })
        .unwrap();
    let caller = Node::new_in(&ctx, "chain_caller", "/").unwrap();
    caller.set_clock(Clock::steady());
    let outer_client: Client<fn(i64) -> Result<i64, String>> =
        caller.create_client("outer").unwrap();
    for node in [&inner_node, &outer_node, &caller] {
        exec.add_node(node).unwrap();
    }
    let (result, took) = first_tick(&exec, &caller, move || outer_client.call(4, CALL_TIMEOUT));
    assert!(took < FAIL_FAST, "took {took:?}");
    assert!(exec.shutdown(CALL_TIMEOUT).is_clean());
    result.expect("the outer service answered")
}

#[test]
fn a_call_chain_longer_than_the_workers_would_deadlock_and_fits_with_more_workers() {
    let message = call_chain(2).expect_err("2 workers: the inner call must report WouldDeadlock");
    assert!(
        message.contains("would deadlock") && message.contains("all 2 workers"),
        "{message}"
    );
    assert_eq!(call_chain(3), Ok(50));
}

#[test]
fn a_dropped_service_fails_pending_calls_and_frees_its_name() {
    let ctx = Context::new();
    let node = Node::new_in(&ctx, "fickle", "/").unwrap();
    let service = node.create_service("once", |x: i64| x).unwrap();
    let client: Client<fn(i64) -> i64> = node.create_client("once").unwrap();
    let pending = client.call_async(1);
    drop(service);
    match pending.wait(CALL_TIMEOUT) {
        Err(CallError::ServiceGone { seq: 1, .. }) => {}
        other => panic!("expected ServiceGone, got {other:?}"),
    }
    assert!(!client.service_is_ready());
    assert!(matches!(
        client.call(2, CALL_TIMEOUT),
        Err(CallError::ServiceUnavailable { .. })
    ));
    let _again = node.create_service("once", |x: i64| x * 2).unwrap();
    assert!(client.service_is_ready());
}
