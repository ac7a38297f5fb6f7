//! What a node sees of its graph, and the waits for it to change: entities appear when
//! made and go when dropped, a wait ends when its condition holds, at its deadline (never
//! before) or at shutdown, and graph-change callbacks run on the executor.

use kairos::exec::Executor;
use kairos::graph::{Context, EntityKind, GraphError, Node, Qos};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, mpsc};
use std::time::{Duration, Instant};

const LONG: Duration = Duration::from_secs(30);

#[test]
fn every_entity_is_in_the_graph_while_it_lives() {
    let context = Context::new();
    let talker = Node::new_in(&context, "talker", "/robot").unwrap();
    let listener = Node::new_in(&context, "listener", "/").unwrap();
    let chatter = talker
        .create_publisher::<String>("chatter", Qos::keep_last(7))
        .unwrap();
    let heard = listener
        .create_subscription("/robot/chatter", Qos::keep_last(10), |_: &String| {})
        .unwrap();
    let service = talker
        .create_service("add", |(a, b): (i64, i64)| a + b)
        .unwrap();
    let client = listener
        .create_client::<fn((i64, i64)) -> i64>("/robot/add")
        .unwrap();

    let graph = listener.graph();
    assert_eq!(graph.node_names(), ["/listener", "/robot/talker"]);
    assert_eq!(graph.count(EntityKind::Publisher, "/robot/chatter"), 1);
    assert_eq!(graph.count(EntityKind::Subscription, "/robot/chatter"), 1);
    assert_eq!(graph.count(EntityKind::Service, "/robot/add"), 1);
    assert_eq!(graph.count(EntityKind::Client, "/robot/add"), 1);
    let topics = graph.topic_names_and_types();
    assert_eq!(topics.keys().collect::<Vec<_>>(), ["/robot/chatter"]);
    assert_eq!(topics["/robot/chatter"], [std::any::type_name::<String>()]);
    let publisher = graph.endpoints(EntityKind::Publisher, "/robot/chatter")[0];
    assert_eq!(publisher.node_fully_qualified_name(), "/robot/talker");
    assert_eq!(publisher.qos, Some(Qos::keep_last(7)));
    assert!(publisher.local);
    let by_node = graph
        .names_and_types_by_node(EntityKind::Service, "/robot", "talker")
        .unwrap();
    assert_eq!(by_node.keys().collect::<Vec<_>>(), ["/robot/add"]);
    assert!(
        graph
            .names_and_types_by_node(EntityKind::Service, "/", "nobody")
            .is_none(),
        "a node not in the graph has no entities, not an empty list"
    );

    drop((chatter, heard, service, client));
    let graph = listener.graph();
    assert!(graph.topic_names_and_types().is_empty());
    assert!(graph.service_names_and_types().is_empty());
    drop(talker);
    assert_eq!(listener.graph().node_names(), ["/listener"]);
}

#[test]
fn contexts_do_not_see_each_other_and_runtime_nodes_are_hidden() {
    let here = Node::new_in(&Context::new(), "here", "/").unwrap();
    let _there = Node::new_in(&Context::new(), "there", "/").unwrap();
    let _runtime = Node::new_in(here.context(), "_kairos_helper", "/").unwrap();
    assert_eq!(here.graph().node_names(), ["/here"]);
}

#[test]
fn a_wait_for_a_node_ends_when_the_node_appears() {
    let context = Context::new();
    let watcher = Node::new_in(&context, "watcher", "/").unwrap();
    let ready = Arc::new(Barrier::new(2));
    let maker = {
        let (context, ready) = (context.clone(), ready.clone());
        std::thread::spawn(move || {
            ready.wait();
            Node::new_in(&context, "late", "/robot").unwrap()
        })
    };
    ready.wait();
    let started = Instant::now();
    assert!(watcher.wait_for_node("/robot/late", LONG).unwrap());
    assert!(started.elapsed() < LONG);
    let _late = maker.join().unwrap();
    // A name without its leading '/' is taken from the root, as rclpy does.
    assert!(watcher.wait_for_node("robot/late", Duration::ZERO).unwrap());
}

#[test]
fn a_wait_for_a_node_that_never_comes_ends_at_its_deadline_and_not_before() {
    let node = Node::new_in(&Context::new(), "watcher", "/").unwrap();
    for timeout in [
        Duration::ZERO,
        Duration::from_millis(1),
        Duration::from_millis(30),
    ] {
        let started = Instant::now();
        assert!(!node.wait_for_node("/nobody", timeout).unwrap());
        assert!(
            started.elapsed() >= timeout,
            "returned early for {timeout:?}"
        );
    }
    // Other entities coming and going wake the wait; it goes on waiting.
    let started = Instant::now();
    let churn = {
        let node = node.clone();
        std::thread::spawn(move || {
            for i in 0..20 {
                let _p = node
                    .create_publisher::<u32>(&format!("churn{i}"), Qos::keep_last(1))
                    .unwrap();
            }
        })
    };
    assert!(
        !node
            .wait_for_node("/nobody", Duration::from_millis(50))
            .unwrap()
    );
    assert!(started.elapsed() >= Duration::from_millis(50));
    churn.join().unwrap();
}

#[test]
fn a_name_no_node_can_have_fails_at_once() {
    let node = Node::new_in(&Context::new(), "watcher", "/").unwrap();
    for bad in ["/robot/9lives", "/ro bot/x", "/robot/", "//x"] {
        let started = Instant::now();
        let result = node.wait_for_node(bad, LONG * 2);
        assert!(
            matches!(result, Err(GraphError::InvalidName(_))),
            "{bad}: {result:?}"
        );
        assert!(
            started.elapsed() < LONG,
            "{bad}: waited {:?}",
            started.elapsed()
        );
    }
}

#[test]
fn a_callback_waiting_for_the_graph_ends_when_its_executor_shuts_down() {
    let node = Node::new_in(&Context::new(), "watcher", "/").unwrap();
    let executor = Executor::multi_threaded(2).unwrap();
    executor.add_node(&node).unwrap();
    let (started, started_rx) = mpsc::channel();
    let (done, done_rx) = mpsc::channel();
    let waiter = node.clone();
    let _guard = node.create_guard_condition("wait", move || {
        started.send(()).unwrap();
        // No deadline: only the executor's shutdown ends it.
        let found = waiter.wait_for_node("/nobody", kairos::time::Duration::MAX);
        done.send(found).unwrap();
    });
    _guard.trigger();
    let spinner = executor.spin_thread().unwrap();
    started_rx.recv_timeout(LONG).unwrap();
    let report = executor.shutdown(Duration::from_secs(10));
    assert!(!done_rx.recv_timeout(LONG).unwrap().unwrap());
    assert!(report.is_clean(), "{report}");
    drop(spinner);
}

#[test]
fn graph_change_callbacks_run_on_the_executor_after_each_change() {
    let context = Context::new();
    let node = Node::new_in(&context, "watcher", "/").unwrap();
    let executor = Executor::single_threaded();
    executor.add_node(&node).unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = calls.clone();
    let watcher = node.on_graph_change(move || {
        seen.fetch_add(1, Ordering::SeqCst);
    });
    executor.spin_some().unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 0, "no change yet");

    let other = Node::new_in(&context, "other", "/").unwrap();
    let burst: Vec<_> = (0..5)
        .map(|i| {
            other
                .create_publisher::<u32>(&format!("t{i}"), Qos::keep_last(1))
                .unwrap()
        })
        .collect();
    executor.spin_some().unwrap();
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "six changes before the executor ran make one call"
    );

    drop(burst);
    executor.spin_some().unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 2);

    drop(watcher);
    drop(other);
    executor.spin_some().unwrap();
    assert_eq!(
        calls.load(Ordering::SeqCst),
        2,
        "a dropped watcher is not called"
    );
}
