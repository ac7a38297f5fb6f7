//! Topics, QoS accounting, transient-local latching and bad input.

use kairos::exec::Executor;
use kairos::graph::{Context, GraphError, NameKind, Node, Qos, QosError};
use kairos::time::Duration;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

fn node(ctx: &Context, name: &str) -> Node {
    Node::new_in(ctx, name, "/robot").unwrap()
}

#[test]
fn messages_reach_every_subscription_without_copies() {
    let ctx = Context::new();
    let talker = node(&ctx, "talker");
    let listener = node(&ctx, "listener");
    let publisher = talker
        .create_publisher::<String>("chatter", Qos::default())
        .unwrap();
    assert_eq!(publisher.topic(), "/robot/chatter");
    let seen = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let subs: Vec<_> = (0..2)
        .map(|_| {
            let seen = seen.clone();
            listener
                .create_subscription("/robot/chatter", Qos::default(), move |m: Arc<String>| {
                    seen.lock().push(m)
                })
                .unwrap()
        })
        .collect();
    let exec = Executor::single_threaded();
    exec.add_node(&listener).unwrap();
    let message = Arc::new("hello".to_owned());
    assert_eq!(publisher.publish_arc(message.clone()), 2);
    exec.spin_all(Duration::from_secs(5)).unwrap();
    let seen = seen.lock();
    assert_eq!(seen.len(), 2);
    assert!(
        seen.iter().all(|m| Arc::ptr_eq(m, &message)),
        "every subscriber got the same allocation"
    );
    assert_eq!(subs[0].stats().delivered, 1);
}

#[test]
fn published_equals_delivered_plus_dropped_under_overload() {
    let ctx = Context::new();
    let talker = node(&ctx, "talker");
    let listener = node(&ctx, "listener");
    let publishers: Vec<_> = (0..2)
        .map(|_| {
            talker
                .create_publisher::<u64>("load", Qos::keep_last(8))
                .unwrap()
        })
        .collect();
    let calls = Arc::new(AtomicU64::new(0));
    let subs: Vec<_> = [Qos::keep_last(1), Qos::keep_last(16), Qos::keep_all(64)]
        .into_iter()
        .map(|qos| {
            let calls = calls.clone();
            listener
                .create_subscription("load", qos, move |_: Arc<u64>| {
                    calls.fetch_add(1, Ordering::Relaxed);
                })
                .unwrap()
        })
        .collect();
    let exec = Executor::multi_threaded(2).unwrap();
    exec.add_node(&listener).unwrap();
    let spinner = {
        let exec = exec.clone();
        std::thread::spawn(move || exec.spin())
    };
    const PER_PUBLISHER: u64 = 20_000;
    std::thread::scope(|scope| {
        for publisher in &publishers {
            scope.spawn(move || {
                for i in 0..PER_PUBLISHER {
                    publisher.publish(i);
                }
            });
        }
    });
    let published: u64 = publishers.iter().map(|p| p.published()).sum();
    assert_eq!(published, 2 * PER_PUBLISHER);
    // Let the executor drain what is queued, then stop it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while subs.iter().any(|s| s.stats().queued > 0) {
        assert!(
            std::time::Instant::now() < deadline,
            "the executor did not drain the queues"
        );
        std::thread::yield_now();
    }
    assert!(exec.shutdown(Duration::from_secs(30)).is_clean());
    spinner.join().unwrap().unwrap();
    let mut delivered_total = 0;
    for sub in &subs {
        let stats = sub.stats();
        assert_eq!(stats.received, published, "{stats:?}");
        assert_eq!(stats.delivered + stats.dropped, published, "{stats:?}");
        delivered_total += stats.delivered;
    }
    assert!(
        subs[0].stats().dropped > 0,
        "keep-last(1) under overload drops (and counts)"
    );
    assert_eq!(
        calls.load(Ordering::Relaxed),
        delivered_total,
        "every delivered message reached its callback"
    );
}

#[test]
fn a_full_queue_drops_the_oldest_message() {
    let ctx = Context::new();
    let n = node(&ctx, "n");
    let publisher = n.create_publisher::<u32>("t", Qos::default()).unwrap();
    let got = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let sub = {
        let got = got.clone();
        n.create_subscription("t", Qos::keep_last(3), move |m: Arc<u32>| {
            got.lock().push(*m)
        })
        .unwrap()
    };
    for i in 0..10 {
        publisher.publish(i);
    }
    let exec = Executor::single_threaded();
    exec.add_node(&n).unwrap();
    exec.spin_all(Duration::from_secs(5)).unwrap();
    assert_eq!(*got.lock(), vec![7, 8, 9]);
    let stats = sub.stats();
    assert_eq!(
        (stats.received, stats.delivered, stats.dropped, stats.queued),
        (10, 3, 7, 0)
    );
}

#[test]
fn a_late_transient_local_subscription_gets_the_last_message() {
    let ctx = Context::new();
    let n = node(&ctx, "n");
    let map_pub = n
        .create_publisher::<u64>("/map", Qos::keep_last(1).transient_local())
        .unwrap();
    map_pub.publish(1);
    map_pub.publish(2);
    let late = n
        .create_subscription(
            "/map",
            Qos::keep_last(1).transient_local(),
            |_: Arc<u64>| {},
        )
        .unwrap();
    let volatile = n
        .create_subscription("/map", Qos::keep_last(1), |_: Arc<u64>| {})
        .unwrap();
    assert_eq!(late.stats().received, 1);
    assert_eq!(volatile.stats().received, 0);
}

#[test]
fn dropping_a_subscription_unsubscribes() {
    let ctx = Context::new();
    let n = node(&ctx, "n");
    let publisher = n.create_publisher::<u8>("t", Qos::default()).unwrap();
    let sub = n
        .create_subscription("t", Qos::default(), |_: Arc<u8>| {})
        .unwrap();
    assert_eq!(publisher.subscription_count(), 1);
    drop(sub);
    assert_eq!(publisher.subscription_count(), 0);
    assert_eq!(publisher.publish(1), 0);
}

#[test]
fn bad_input_is_a_typed_error_with_an_actionable_message() {
    let ctx = Context::new();
    let n = node(&ctx, "n");
    let err = n
        .create_publisher::<u32>("bad name", Qos::default())
        .unwrap_err();
    assert!(
        matches!(&err, GraphError::InvalidName(e) if e.kind == NameKind::Topic),
        "{err}"
    );
    assert!(Node::new_in(&ctx, "9lives", "/").is_err());
    assert!(Node::new_in(&ctx, "ok", "/bad//ns").is_err());

    let _typed = n.create_publisher::<u32>("typed", Qos::default()).unwrap();
    let err = n
        .create_subscription("typed", Qos::default(), |_: Arc<String>| {})
        .unwrap_err();
    match &err {
        GraphError::TypeMismatch {
            topic,
            existing,
            requested,
        } => {
            assert_eq!(topic, "/robot/typed");
            assert_eq!(*existing, "u32");
            assert!(requested.contains("String"));
        }
        other => panic!("expected TypeMismatch, got {other}"),
    }
    assert!(matches!(
        n.create_publisher::<u32>("t", Qos::keep_last(0)),
        Err(GraphError::InvalidQos(QosError::ZeroDepth))
    ));
    assert!(matches!(
        n.create_timer(Duration::ZERO, |_| {}),
        Err(GraphError::Time(_))
    ));
    assert!(matches!(
        n.create_timer(Duration::from_millis(-5), |_| {}),
        Err(GraphError::Time(_))
    ));

    let _service = n.create_service("srv", |x: u8| x).unwrap();
    assert!(matches!(
        n.create_client::<fn(u16) -> u8>("srv"),
        Err(GraphError::ServiceTypeMismatch { .. })
    ));

    let other = node(&ctx, "other");
    let foreign = other.create_callback_group("theirs", kairos::exec::GroupKind::Reentrant);
    assert!(matches!(
        n.with_group(&foreign),
        Err(GraphError::ForeignGroup { .. })
    ));
}

#[test]
fn several_servers_share_a_name_and_each_request_reaches_one() {
    let ctx = Context::new();
    let (first, second) = (node(&ctx, "driver"), node(&ctx, "driver"));
    let served = Arc::new([AtomicU64::new(0), AtomicU64::new(0)]);
    let serve = |node: &Node, which: usize, offset: u8| {
        let served = served.clone();
        node.create_service("reset", move |x: u8| {
            served[which].fetch_add(1, Ordering::Relaxed);
            x + offset
        })
        .unwrap()
    };
    let oldest = serve(&first, 0, 1);
    let _younger = serve(&second, 1, 100);
    assert_eq!(
        first
            .graph()
            .count(kairos::graph::EntityKind::Service, "/robot/reset"),
        2,
        "both servers are in the graph, as in ROS 2"
    );
    let exec = Executor::multi_threaded(2).unwrap();
    exec.add_node(&first).unwrap();
    exec.add_node(&second).unwrap();
    let spinner = {
        let exec = exec.clone();
        std::thread::spawn(move || exec.spin())
    };
    let caller = node(&ctx, "caller");
    let client = caller.create_client::<fn(u8) -> u8>("reset").unwrap();
    let timeout = Duration::from_secs(30);
    for _ in 0..3 {
        assert_eq!(
            client.call(1, timeout).unwrap(),
            2,
            "the oldest server answers"
        );
    }
    assert_eq!(
        [0, 1].map(|i| served[i].load(Ordering::Relaxed)),
        [3, 0],
        "each request ran one callback"
    );
    drop(oldest);
    assert_eq!(
        client.call(1, timeout).unwrap(),
        101,
        "then the next oldest"
    );
    assert_eq!([0, 1].map(|i| served[i].load(Ordering::Relaxed)), [3, 1]);
    exec.shutdown(Duration::from_secs(5));
    spinner.join().unwrap().unwrap();
}
