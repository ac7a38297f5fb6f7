//! The API accepts what ROS users write: `std::time::Duration` wherever a duration is
//! taken, a `Client` cloned into several callbacks, async closures that capture state,
//! subscription callbacks taking `&T`, and the trace session's types from `kairos::trace`.

use kairos::exec::Executor;
use kairos::graph::{Client, Context, Node, Qos};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

const LONG: std::time::Duration = std::time::Duration::from_secs(30);

struct Graph {
    caller: Node,
    _server: Node,
    _service: kairos::graph::Service<(i64, i64), i64>,
    executor: Executor,
}

fn graph() -> Graph {
    let context = Context::new();
    let server = Node::new_in(&context, "server", "/").unwrap();
    let service = server
        .create_service("add", |(a, b): (i64, i64)| a + b)
        .unwrap();
    let caller = Node::new_in(&context, "caller", "/").unwrap();
    let executor = Executor::single_threaded();
    executor.add_node(&server).unwrap();
    executor.add_node(&caller).unwrap();
    Graph {
        caller,
        _server: server,
        _service: service,
        executor,
    }
}

/// Spins until `rx` holds `n` values, within `LONG`.
fn spin_for<T>(executor: &Executor, rx: &mpsc::Receiver<T>, n: usize) -> Vec<T> {
    let start = std::time::Instant::now();
    let mut got = Vec::new();
    while got.len() < n {
        assert!(start.elapsed() < LONG, "no progress");
        executor
            .spin_once(std::time::Duration::from_millis(50))
            .unwrap();
        got.extend(rx.try_iter());
    }
    got
}

#[test]
fn an_async_closure_that_captures_a_client_is_a_timer_callback() {
    let g = graph();
    let client: Client<fn((i64, i64)) -> i64> = g.caller.create_client("add").unwrap();
    let (tx, rx) = mpsc::channel();
    // `client` and `tx` are used by reference inside the async body: an async closure, not
    // a closure that clones them into a fresh `async move` block on every tick.
    let _timer = g
        .caller
        .create_timer_async(std::time::Duration::from_millis(1), async move |tick| {
            let sum = client.call_async((tick.missed as i64, 2)).await;
            let _ = tx.send(sum.unwrap());
        })
        .unwrap();
    let sums = spin_for(&g.executor, &rx, 2);
    assert!(sums.iter().all(|&s| s >= 2), "{sums:?}");
}

#[test]
fn a_cloned_client_serves_several_callbacks_as_one_client() {
    let g = graph();
    let client: Client<fn((i64, i64)) -> i64> = g.caller.create_client("add").unwrap();
    let (tx, rx) = mpsc::channel();
    let publisher = g
        .caller
        .create_publisher::<i64>("numbers", Qos::keep_last(10))
        .unwrap();
    let mut subscriptions = Vec::new();
    for offset in [100, 200] {
        let (client, tx) = (client.clone(), tx.clone());
        subscriptions.push(
            g.caller
                .create_subscription("numbers", Qos::keep_last(10), move |n: &i64| {
                    let seq_and_sum = {
                        let response = client.call_async((*n, offset));
                        (response.sequence(), response)
                    };
                    let tx = tx.clone();
                    let (seq, response) = seq_and_sum;
                    response.on_done(move |sum| {
                        let _ = tx.send((seq, sum.unwrap()));
                    });
                })
                .unwrap(),
        );
    }
    drop(client); // The clones keep the client.
    publisher.publish(1);
    let mut got = spin_for(&g.executor, &rx, 2);
    got.sort();
    let seqs: Vec<u64> = got.iter().map(|&(seq, _)| seq).collect();
    let sums: Vec<i64> = got.iter().map(|&(_, sum)| sum).collect();
    assert_eq!(seqs, vec![1, 2], "one client, one sequence of requests");
    let mut sums = sums;
    sums.sort();
    assert_eq!(sums, vec![101, 201]);
}

#[test]
fn a_subscription_callback_may_take_the_message_by_reference() {
    let g = graph();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let _by_ref = {
        let seen = seen.clone();
        g.caller
            .create_subscription("words", Qos::keep_last(10), move |w: &String| {
                seen.lock().unwrap().push(format!("ref {w}"));
            })
            .unwrap()
    };
    let _by_arc = {
        let seen = seen.clone();
        g.caller
            .create_subscription("words", Qos::keep_last(10), move |w: Arc<String>| {
                seen.lock().unwrap().push(format!("arc {w}"));
            })
            .unwrap()
    };
    let publisher = g
        .caller
        .create_publisher::<String>("words", Qos::keep_last(10))
        .unwrap();
    publisher.publish("hello".to_owned());
    while g.executor.spin_some().unwrap() > 0 {}
    let mut seen = seen.lock().unwrap().clone();
    seen.sort();
    assert_eq!(seen, vec!["arc hello", "ref hello"]);
}

#[test]
fn std_durations_are_accepted_wherever_a_duration_is_taken() {
    let g = graph();
    let client: Client<fn((i64, i64)) -> i64> = g.caller.create_client("add").unwrap();
    assert!(client.wait_for_service(std::time::Duration::from_secs(1)));
    let (tx, rx) = mpsc::channel();
    let _timer = g
        .caller
        .create_timer(std::time::Duration::from_millis(1), move |_| {
            let _ = tx.send(());
        })
        .unwrap();
    assert!(
        g.executor
            .spin_once(std::time::Duration::from_secs(30))
            .unwrap()
    );
    rx.recv_timeout(LONG).unwrap();
    let report = g.executor.shutdown(std::time::Duration::from_secs(1));
    assert!(report.is_clean(), "{report}");
}

#[test]
fn the_trace_session_types_are_reachable_from_kairos_trace() {
    let config = kairos::trace::SessionConfig {
        flush_interval: std::time::Duration::from_millis(10),
        ..Default::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let session = kairos::trace::Session::start_with(dir.path().join("t"), config).unwrap();
    let again: Result<kairos::trace::Session, kairos::trace::Error> =
        kairos::trace::Session::start(dir.path().join("u"));
    assert!(matches!(
        again,
        Err(kairos::trace::Error::AlreadyActive { .. })
    ));
    let stats: kairos::trace::Stats = session.stop().unwrap();
    assert_eq!(stats.events_discarded, 0);
}

/// `on_done_spun`: a response that comes while the client's node is in no executor waits
/// for one (rclpy's futures); `on_done` runs at once then.
#[test]
fn a_spun_done_callback_waits_for_an_executor_to_take_the_response() {
    let context = Context::new();
    let server = Node::new_in(&context, "server", "/").unwrap();
    let _service = server
        .create_service("add", |(a, b): (i64, i64)| a + b)
        .unwrap();
    let server_executor = Executor::single_threaded();
    server_executor.add_node(&server).unwrap();
    let caller = Node::new_in(&context, "caller", "/").unwrap();
    let client = caller
        .create_client::<fn((i64, i64)) -> i64>("add")
        .unwrap();

    let (spun_tx, spun) = mpsc::channel();
    client.call_async((1, 2)).on_done_spun(move |r| {
        let _ = spun_tx.send(r.ok());
    });
    let (at_once_tx, at_once) = mpsc::channel();
    client.call_async((3, 4)).on_done(move |r| {
        let _ = at_once_tx.send(r.ok());
    });
    // In-process, serving a request delivers its response on the serving thread.
    for _ in 0..2 {
        assert!(
            server_executor.spin_once(LONG).unwrap(),
            "a request was not served"
        );
    }
    assert_eq!(
        at_once.try_recv(),
        Ok(Some(7)),
        "on_done ran when the response came"
    );
    assert!(
        spun.try_recv().is_err(),
        "no executor has taken the spun response yet"
    );
    assert_eq!(client.queued_responses(), 1);
    let executor = Executor::single_threaded();
    executor.add_node(&caller).unwrap();
    assert!(
        executor.spin_once(LONG).unwrap(),
        "the waiting response is work"
    );
    assert_eq!(spun.try_recv(), Ok(Some(3)));
}
