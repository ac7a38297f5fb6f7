//! Async services (`Node::create_service_async`): the executor polls the callback's future
//! and answers with what it gives, holding the group meanwhile. The promises hold as for a
//! plain service: a blocking call that could never complete is `WouldDeadlock` at once, a
//! panic is `ServicePanicked`, and a shutdown while the service is suspended fails the
//! call instead of leaving it waiting.

use kairos::exec::{DeadlockReason, Executor};
use kairos::graph::{CallError, Client, Context, Node, Service};
use kairos::time::{CancelToken, Clock, Duration};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Instant;

/// Generous: a correct call answers in milliseconds; a broken one hits this.
const CALL_TIMEOUT: Duration = Duration::from_secs(20);

/// How long the async services below sleep before they answer.
const NAP: Duration = Duration::from_millis(20);

fn spin_in_thread(exec: &Executor) -> JoinHandle<()> {
    let exec = exec.clone();
    std::thread::spawn(move || exec.spin().expect("spin"))
}

fn stop(exec: &Executor, spinner: JoinHandle<()>) {
    let report = exec.shutdown(CALL_TIMEOUT);
    assert!(report.is_clean(), "{report:?}");
    spinner.join().unwrap();
}

/// A service that doubles its request after sleeping `NAP` on the steady clock.
fn doubling_service(node: &Node, name: &str) -> Service<i64, i64> {
    node.create_service_async(name, |x: i64| async move {
        Clock::steady()
            .sleep_for_async(NAP, &CancelToken::new())
            .await
            .expect("the nap completes");
        2 * x
    })
    .unwrap()
}

#[test]
fn an_async_service_awaiting_a_sleep_answers_a_blocking_call_after_the_sleep() {
    let ctx = Context::new();
    let server = Node::new_in(&ctx, "server", "/").unwrap();
    let _service = doubling_service(&server, "double");
    let exec = Executor::single_threaded();
    exec.add_node(&server).unwrap();
    let spinner = spin_in_thread(&exec);

    let caller = Node::new_in(&ctx, "caller", "/").unwrap();
    let client: Client<fn(i64) -> i64> = caller.create_client("double").unwrap();
    for x in [21, -4] {
        let start = Instant::now();
        assert_eq!(client.call(x, CALL_TIMEOUT).unwrap(), 2 * x);
        // It answered after its await, not at the call.
        assert!(start.elapsed() >= NAP.to_std().unwrap());
    }
    assert_eq!(_service.handled(), 2);
    stop(&exec, spinner);
}

#[test]
fn an_async_service_awaiting_another_service_answers_a_caller_on_another_executor() {
    let ctx = Context::new();
    let server = Node::new_in(&ctx, "server", "/").unwrap();
    let _add = server
        .create_service("add", |(a, b): (i64, i64)| a + b)
        .unwrap();
    let front = Node::new_in(&ctx, "front", "/").unwrap();
    let add: Client<fn((i64, i64)) -> i64> = front.create_client("add").unwrap();
    // Both services on one single-threaded executor: while `sum3` is suspended on its
    // await, the worker is free to run `add` (in another node's group).
    let _sum3 = front
        .create_service_async("sum3", move |(a, b, c): (i64, i64, i64)| {
            let first = add.call_async((a, b));
            let add = add.clone();
            async move {
                let ab = first.await.expect("add answers");
                add.call_async((ab, c)).await.expect("add answers again")
            }
        })
        .unwrap();
    let services = Executor::single_threaded();
    services.add_node(&server).unwrap();
    services.add_node(&front).unwrap();
    let services_spinner = spin_in_thread(&services);

    // The caller: a timer callback on its own executor makes a blocking call.
    let caller = Node::new_in(&ctx, "caller", "/").unwrap();
    caller.set_clock(Clock::steady());
    let client = caller
        .create_client::<fn((i64, i64, i64)) -> i64>("sum3")
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let tx = parking_lot::Mutex::new(tx);
    let once = AtomicBool::new(false);
    let _timer = caller
        .create_timer(Duration::from_millis(1), move |_| {
            if !once.swap(true, Ordering::AcqRel) {
                let _ = tx.lock().send(client.call((1, 2, 3), CALL_TIMEOUT));
            }
        })
        .unwrap();
    let callers = Executor::single_threaded();
    callers.add_node(&caller).unwrap();
    let callers_spinner = spin_in_thread(&callers);

    let answer = rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("the timer made its call");
    assert_eq!(answer.unwrap(), 6);
    stop(&callers, callers_spinner);
    stop(&services, services_spinner);
}

#[test]
fn a_blocking_call_into_an_async_service_of_the_held_group_would_deadlock_at_once() {
    let ctx = Context::new();
    let node = Node::new_in(&ctx, "selfish", "/").unwrap();
    node.set_clock(Clock::steady());
    let _service = doubling_service(&node, "double");
    let client: Client<fn(i64) -> i64> = node.create_client("double").unwrap();
    let (tx, rx) = mpsc::channel();
    let tx = parking_lot::Mutex::new(tx);
    let once = AtomicBool::new(false);
    let _timer = node
        .create_timer(Duration::from_millis(1), move |_| {
            if !once.swap(true, Ordering::AcqRel) {
                let start = Instant::now();
                let result = client.call(1, CALL_TIMEOUT);
                let _ = tx.lock().send((result, start.elapsed()));
            }
        })
        .unwrap();
    // Two workers: one is free, but the service is in the group the timer holds.
    let exec = Executor::multi_threaded(2).unwrap();
    exec.add_node(&node).unwrap();
    let spinner = spin_in_thread(&exec);
    let (result, took) = rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("the timer made its call");
    match result {
        Err(CallError::WouldDeadlock(err)) => {
            assert_eq!(err.reason, DeadlockReason::GroupHeld, "{err}");
            assert!(err.group.contains("/selfish"), "{err}");
            assert!(err.to_string().contains("Fix:"), "{err}");
        }
        other => panic!("expected WouldDeadlock, got {other:?}"),
    }
    // Far under the call's timeout, which a blocked wait would wait out.
    assert!(
        took < CALL_TIMEOUT.to_std().unwrap() / 2,
        "WouldDeadlock took {took:?}"
    );
    stop(&exec, spinner);
}

#[test]
fn a_panicking_async_service_answers_service_panicked_and_keeps_serving() {
    let ctx = Context::new();
    let server = Node::new_in(&ctx, "server", "/").unwrap();
    let _service = server
        .create_service_async("fragile", |x: i64| {
            assert!(x != 0, "zero before the future was made");
            async move {
                Clock::steady()
                    .sleep_for_async(NAP, &CancelToken::new())
                    .await
                    .expect("the nap completes");
                assert!(x > 0, "negative after an await");
                x
            }
        })
        .unwrap();
    let exec = Executor::single_threaded();
    exec.add_node(&server).unwrap();
    let spinner = spin_in_thread(&exec);
    let client: Client<fn(i64) -> i64> = server.create_client("fragile").unwrap();

    for (x, said) in [(-1, "negative after an await"), (0, "zero before")] {
        match client.call(x, CALL_TIMEOUT) {
            Err(CallError::ServicePanicked {
                service, message, ..
            }) => {
                assert_eq!(service, "/fragile");
                assert!(message.contains(said), "{message}");
            }
            other => panic!("expected ServicePanicked, got {other:?}"),
        }
    }
    // The group was released: the next request is served.
    assert_eq!(client.call(7, CALL_TIMEOUT).unwrap(), 7);
    assert_eq!(_service.handled(), 3);
    stop(&exec, spinner);
}

#[test]
fn a_shutdown_while_the_async_service_is_suspended_fails_the_call() {
    let ctx = Context::new();
    let server = Node::new_in(&ctx, "server", "/").unwrap();
    let (started_tx, started) = mpsc::channel();
    let started_tx = parking_lot::Mutex::new(started_tx);
    let _service = server
        .create_service_async("slow", move |x: i64| {
            let started_tx = started_tx.lock().clone();
            async move {
                // Polled: the executor holds it as a live task now.
                let _ = started_tx.send(());
                // Not tied to the executor's shutdown: only dropping the future ends it.
                let _ = Clock::steady()
                    .sleep_for_async(Duration::from_secs(3600), &CancelToken::new())
                    .await;
                x
            }
        })
        .unwrap();
    let exec = Executor::single_threaded();
    exec.add_node(&server).unwrap();
    let spinner = spin_in_thread(&exec);

    let client: Client<fn(i64) -> i64> = server.create_client("slow").unwrap();
    let caller = std::thread::spawn(move || {
        let start = Instant::now();
        (client.call(1, CALL_TIMEOUT), start.elapsed())
    });
    started
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("the service started");
    let report = exec.shutdown(CALL_TIMEOUT);
    assert_eq!(report.live_tasks, 1, "{report:?}");
    spinner.join().unwrap();

    let (result, took) = caller.join().unwrap();
    match result {
        Err(CallError::ExecutorShutDown { service, seq: _ }) => assert_eq!(service, "/slow"),
        other => panic!("expected ExecutorShutDown, got {other:?}"),
    }
    assert!(
        took < CALL_TIMEOUT.to_std().unwrap(),
        "the call waited for its timeout"
    );
}
