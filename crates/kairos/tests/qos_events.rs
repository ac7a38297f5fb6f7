//! QoS events in one process: each fires when its contract breaks, never before its time,
//! and stays silent while the contract holds; callbacks run on the executor with the
//! totals and the change since the last call.
//!
//! Deadlines and leases are timed on the monotonic clock, so these tests run on real
//! time: a firing test waits with a generous bound (10 s) for what is due in tens of
//! milliseconds; a silence test keeps well inside its contract (messages every few ms
//! against a contract of seconds), so a busy machine cannot make it fire.

use kairos::exec::Executor;
use kairos::graph::{
    Context, DeadlineMissed, IncompatibleQos, Liveliness, LivelinessChanged, LivelinessLost,
    Matched, Node, Qos, QosPolicy,
};
use kairos::time::Duration;
use parking_lot::Mutex;
use std::sync::Arc;
use std::time::Instant;

const PATIENCE: std::time::Duration = std::time::Duration::from_secs(10);

/// Spins until `done` holds or [`PATIENCE`] passes; whether it held.
fn spin_until(executor: &Executor, mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < PATIENCE {
        if done() {
            return true;
        }
        executor.spin_once(Duration::from_millis(5)).unwrap();
    }
    done()
}

/// Spins for `span` of real time.
fn spin_for(executor: &Executor, span: std::time::Duration) {
    let start = Instant::now();
    while start.elapsed() < span {
        executor.spin_once(Duration::from_millis(5)).unwrap();
    }
}

/// Each status a callback was given, with when.
type Seen<S> = Arc<Mutex<Vec<(Instant, S)>>>;

fn recorder<S: Send + 'static>() -> (Seen<S>, impl Fn(S) + Send + Sync) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    (seen, move |status| {
        sink.lock().push((Instant::now(), status))
    })
}

fn setup() -> (Node, Executor) {
    let node = Node::new_in(&Context::new(), "watcher", "/").unwrap();
    let executor = Executor::single_threaded();
    executor.add_node(&node).unwrap();
    (node, executor)
}

#[test]
fn a_deadline_is_missed_on_both_sides_when_messages_stop_and_never_early() {
    let (node, executor) = setup();
    let period = Duration::from_millis(40);
    let qos = Qos::keep_last(5).with_deadline(period);
    let publisher = node.create_publisher::<u32>("scan", qos).unwrap();
    let subscription = node.create_subscription("scan", qos, |_: &u32| {}).unwrap();
    let (requested, on_requested) = recorder::<DeadlineMissed>();
    let (offered, on_offered) = recorder::<DeadlineMissed>();
    let _r = subscription.on_deadline_missed(on_requested);
    let _o = publisher.on_deadline_missed(on_offered);

    let published = Instant::now();
    publisher.publish(1);
    assert!(
        spin_until(&executor, || !requested.lock().is_empty()
            && !offered.lock().is_empty()),
        "no deadline missed within {PATIENCE:?} of a {period} deadline"
    );
    for (at, status) in requested.lock().iter().chain(offered.lock().iter()) {
        assert!(
            at.duration_since(published) >= period.to_std().unwrap(),
            "a deadline reported {:?} after the last message, before its {period}",
            at.duration_since(published)
        );
        assert!(status.total_count_change >= 1);
    }
    // Each period without a message is one more miss, never counted early: whenever `n`
    // misses are counted, at least `n` periods have passed since the message (the count is
    // read first, the clock after it, so the clock is never behind the count).
    let mut counted = 0;
    let reached = spin_until(&executor, || {
        counted = subscription.qos_events().requested_deadline_missed;
        let quiet = published.elapsed();
        assert!(
            quiet >= period.to_std().unwrap() * counted as u32,
            "{counted} misses counted {quiet:?} after the last message, periods of {period}"
        );
        counted >= 5
    });
    assert!(
        reached,
        "{counted} misses within {PATIENCE:?} of 40 ms periods"
    );
    let events = subscription.qos_events();
    assert!(
        spin_until(&executor, || requested.lock().last().unwrap().1.total_count
            >= events.requested_deadline_missed),
        "the callback is told every miss the subscription counted"
    );
    let calls = requested.lock();
    let last = calls.last().unwrap().1;
    assert_eq!(
        calls.iter().map(|(_, s)| s.total_count_change).sum::<u64>(),
        last.total_count,
        "the changes add up to the total: nothing lost by coalescing"
    );
    assert!(publisher.qos_events().offered_deadline_missed >= 1);
}

#[test]
fn no_deadline_is_missed_while_messages_come_in_time_or_before_the_first() {
    let (node, executor) = setup();
    let qos = Qos::keep_last(5).with_deadline(Duration::from_secs(2));
    let publisher = node.create_publisher::<u32>("scan", qos).unwrap();
    let subscription = node.create_subscription("scan", qos, |_: &u32| {}).unwrap();
    let quiet_qos = Qos::keep_last(5).with_deadline(Duration::from_millis(10));
    let nobody_publishes = node
        .create_subscription("silent", quiet_qos, |_: &u32| {})
        .unwrap();
    let (requested, on_requested) = recorder::<DeadlineMissed>();
    let _r = subscription.on_deadline_missed(on_requested);
    for i in 0..30 {
        publisher.publish(i);
        spin_for(&executor, std::time::Duration::from_millis(5));
    }
    assert!(requested.lock().is_empty(), "{:?}", requested.lock());
    assert_eq!(subscription.qos_events().requested_deadline_missed, 0);
    assert_eq!(publisher.qos_events().offered_deadline_missed, 0);
    assert_eq!(
        nobody_publishes.qos_events().requested_deadline_missed,
        0,
        "a deadline starts with the first message"
    );
    assert_eq!(subscription.stats().delivered, 30);
}

#[test]
fn a_manual_publisher_that_goes_quiet_loses_its_liveliness_once_and_regains_it() {
    let (node, executor) = setup();
    let lease = Duration::from_millis(40);
    let publisher_qos = Qos::keep_last(5).with_liveliness(Liveliness::ManualByTopic, Some(lease));
    let subscription_qos = Qos::keep_last(5)
        .with_liveliness(Liveliness::ManualByTopic, Some(Duration::from_millis(80)));
    let subscription = node
        .create_subscription("heartbeat", subscription_qos, |_: &u32| {})
        .unwrap();
    let (changed, on_changed) = recorder::<LivelinessChanged>();
    let _c = subscription.on_liveliness_changed(on_changed);
    let created = Instant::now();
    let publisher = node
        .create_publisher::<u32>("heartbeat", publisher_qos)
        .unwrap();
    let (lost, on_lost) = recorder::<LivelinessLost>();
    let _l = publisher.on_liveliness_lost(on_lost);

    assert!(spin_until(&executor, || !lost.lock().is_empty()));
    let (at, status) = lost.lock()[0];
    assert!(
        at.duration_since(created) >= lease.to_std().unwrap(),
        "lost before its lease"
    );
    assert_eq!(status.total_count, 1);
    assert!(spin_until(&executor, || changed
        .lock()
        .last()
        .is_some_and(|(_, s)| s.not_alive_count == 1)));
    let gone = changed.lock().last().unwrap().1;
    assert_eq!((gone.alive_count, gone.not_alive_count), (0, 1));
    assert!(!publisher.qos_events().alive);

    // Staying quiet for many more leases is still one loss: it counts transitions.
    spin_for(&executor, std::time::Duration::from_millis(200));
    assert_eq!(publisher.qos_events().liveliness_lost, 1);

    publisher.assert_liveliness();
    assert!(spin_until(&executor, || changed
        .lock()
        .last()
        .is_some_and(|(_, s)| s.alive_count == 1)));
    let back = changed.lock().last().unwrap().1;
    assert_eq!((back.alive_count, back.not_alive_count), (1, 0));
    assert_eq!(
        (back.alive_count_change, back.not_alive_count_change),
        (1, -1)
    );
    assert!(publisher.qos_events().alive);
}

#[test]
fn a_publisher_that_publishes_within_its_lease_stays_alive_and_automatic_ones_always_do() {
    let (node, executor) = setup();
    let manual =
        Qos::keep_last(5).with_liveliness(Liveliness::ManualByTopic, Some(Duration::from_secs(2)));
    let publisher = node.create_publisher::<u32>("heartbeat", manual).unwrap();
    let automatic = node
        .create_publisher::<u32>("status", Qos::keep_last(5))
        .unwrap();
    let (lost, on_lost) = recorder::<LivelinessLost>();
    let _l = publisher.on_liveliness_lost(on_lost);
    for i in 0..30 {
        if i % 2 == 0 {
            publisher.publish(i);
        } else {
            publisher.assert_liveliness();
        }
        spin_for(&executor, std::time::Duration::from_millis(5));
    }
    assert!(lost.lock().is_empty());
    assert!(publisher.qos_events().alive);
    assert_eq!(automatic.qos_events().liveliness_lost, 0);
    assert!(automatic.qos_events().alive);
}

#[test]
fn a_subscription_counts_its_alive_publishers_as_they_come_and_go() {
    let (node, executor) = setup();
    let subscription = node
        .create_subscription("status", Qos::keep_last(5), |_: &u32| {})
        .unwrap();
    let (changed, on_changed) = recorder::<LivelinessChanged>();
    let _c = subscription.on_liveliness_changed(on_changed);
    let other = Node::new_in(node.context(), "talker", "/").unwrap();
    let first = other
        .create_publisher::<u32>("status", Qos::keep_last(5))
        .unwrap();
    let second = other
        .create_publisher::<u32>("status", Qos::keep_last(5))
        .unwrap();
    assert_eq!(subscription.qos_events().alive_count, 2);
    assert!(spin_until(&executor, || !changed.lock().is_empty()));
    let seen = changed.lock().last().unwrap().1;
    assert_eq!((seen.alive_count, seen.alive_count_change), (2, 2));
    drop(first);
    drop(second);
    assert!(spin_until(&executor, || changed
        .lock()
        .last()
        .is_some_and(|(_, s)| s.alive_count == 0)));
    let seen = changed.lock().last().unwrap().1;
    assert_eq!((seen.not_alive_count, seen.alive_count_change), (0, -2));
}

#[test]
fn incompatible_qos_is_reported_on_both_sides_and_messages_still_flow() {
    let (node, executor) = setup();
    let delivered = Arc::new(Mutex::new(0));
    let count = delivered.clone();
    let reliable = node
        .create_subscription("scan", Qos::keep_last(5), move |_: &u32| *count.lock() += 1)
        .unwrap();
    let (requested, on_requested) = recorder::<IncompatibleQos>();
    let _r = reliable.on_incompatible_qos(on_requested);
    let best_effort = node
        .create_publisher::<u32>("scan", Qos::keep_last(5).best_effort())
        .unwrap();
    let (offered, on_offered) = recorder::<IncompatibleQos>();
    let _o = best_effort.on_incompatible_qos(on_offered);
    best_effort.publish(7);
    assert!(spin_until(&executor, || !requested.lock().is_empty()
        && !offered.lock().is_empty()
        && *delivered.lock() == 1));
    for status in [requested.lock()[0].1, offered.lock()[0].1] {
        assert_eq!(status.total_count, 1);
        assert_eq!(status.last_policy, Some(QosPolicy::Reliability));
    }
    assert_eq!(reliable.qos_events().incompatible_now, 1);
    drop(best_effort);
    assert_eq!(reliable.qos_events().incompatible_now, 0);
    assert_eq!(
        reliable.qos_events().requested_incompatible_qos,
        1,
        "a total"
    );
}

#[test]
fn compatible_endpoints_report_nothing() {
    let (node, executor) = setup();
    let best_effort = node
        .create_subscription("scan", Qos::keep_last(5).best_effort(), |_: &u32| {})
        .unwrap();
    let (requested, on_requested) = recorder::<IncompatibleQos>();
    let _r = best_effort.on_incompatible_qos(on_requested);
    let offers_more = Qos::keep_last(5)
        .transient_local()
        .with_deadline(Duration::from_millis(500))
        .with_liveliness(Liveliness::ManualByTopic, Some(Duration::from_secs(5)));
    let publisher = node.create_publisher::<u32>("scan", offers_more).unwrap();
    let asks_less = Qos::keep_last(5).with_deadline(Duration::from_secs(1));
    let _also = node
        .create_subscription("scan", asks_less, |_: &u32| {})
        .unwrap();
    publisher.publish(1);
    spin_for(&executor, std::time::Duration::from_millis(50));
    assert!(requested.lock().is_empty());
    assert_eq!(publisher.qos_events().offered_incompatible_qos, 0);
}

#[test]
fn each_rule_of_ros_2_qos_compatibility_names_its_policy() {
    let base = Qos::keep_last(5);
    let ms = Duration::from_millis;
    let cases = [
        (base.best_effort(), base, Some(QosPolicy::Reliability)),
        (base, base.best_effort(), None),
        (base, base.transient_local(), Some(QosPolicy::Durability)),
        (base.transient_local(), base, None),
        (base, base.with_deadline(ms(10)), Some(QosPolicy::Deadline)),
        (
            base.with_deadline(ms(20)),
            base.with_deadline(ms(10)),
            Some(QosPolicy::Deadline),
        ),
        (base.with_deadline(ms(10)), base.with_deadline(ms(10)), None),
        (base.with_deadline(ms(10)), base, None),
        (
            base,
            base.with_liveliness(Liveliness::ManualByTopic, None),
            Some(QosPolicy::Liveliness),
        ),
        (
            base.with_liveliness(Liveliness::Automatic, Some(ms(20))),
            base.with_liveliness(Liveliness::Automatic, Some(ms(10))),
            Some(QosPolicy::Liveliness),
        ),
        (
            base.with_liveliness(Liveliness::ManualByTopic, Some(ms(10))),
            base.with_liveliness(Liveliness::Automatic, Some(ms(10))),
            None,
        ),
        (base.with_lifespan(ms(1)), base, None),
    ];
    for (publisher, subscription, expected) in cases {
        let got = Qos::check_compatible(&publisher, &subscription).map_err(|e| e.policy);
        assert_eq!(got.err(), expected, "{publisher:?} -> {subscription:?}");
    }
}

#[test]
fn a_message_past_its_lifespan_is_dropped_and_counted_and_fresh_ones_are_delivered() {
    let (node, executor) = setup();
    let delivered = Arc::new(Mutex::new(Vec::new()));
    let sink = delivered.clone();
    let subscription = node
        .create_subscription("scan", Qos::keep_last(10), move |m: &u32| {
            sink.lock().push(*m)
        })
        .unwrap();
    let short = node
        .create_publisher::<u32>(
            "scan",
            Qos::keep_last(10).with_lifespan(Duration::from_millis(20)),
        )
        .unwrap();
    let long = node
        .create_publisher::<u32>(
            "scan",
            Qos::keep_last(10).with_lifespan(Duration::from_secs(60)),
        )
        .unwrap();
    for i in 0..3 {
        short.publish(i);
    }
    long.publish(100);
    // Past the short lifespan: waiting for time to pass is the point here.
    std::thread::sleep(std::time::Duration::from_millis(40));
    while executor.spin_some().unwrap() > 0 {}
    assert_eq!(*delivered.lock(), [100]);
    let stats = subscription.stats();
    assert_eq!(
        (stats.received, stats.delivered, stats.expired, stats.queued),
        (4, 1, 3, 0)
    );
    assert_eq!(subscription.qos_events().message_expired, 3);
}

#[test]
fn a_qos_with_a_duration_that_is_not_one_is_refused_with_a_reason() {
    let node = Node::new_in(&Context::new(), "n", "/").unwrap();
    let zero = Qos::keep_last(1).with_deadline(Duration::from_nanos(0));
    let err = node
        .create_publisher::<u32>("scan", zero)
        .expect_err("a zero deadline");
    assert!(err.to_string().contains("deadline"), "{err}");
    let negative = Qos::keep_last(1).with_lifespan(Duration::from_millis(-1));
    assert!(
        node.create_subscription("scan", negative, |_: &u32| {})
            .is_err()
    );
}

#[test]
fn matched_counts_compatible_peers_as_they_come_and_go_and_the_changes_add_up() {
    let (node, executor) = setup();
    let context = node.context().clone();
    let subscription = node
        .create_subscription("scan", Qos::keep_last(5), |_: &u32| {})
        .unwrap();
    let (seen, on_matched) = recorder::<Matched>();
    let _m = subscription.on_subscription_matched(on_matched);
    let lidar = Node::new_in(&context, "lidar", "/").unwrap();
    let radar = Node::new_in(&context, "radar", "/").unwrap();
    executor.add_node(&lidar).unwrap();
    let first = lidar
        .create_publisher::<u32>("scan", Qos::keep_last(5))
        .unwrap();
    let (offered, on_offered) = recorder::<Matched>();
    let _p = first.on_publication_matched(on_offered);
    let second = radar
        .create_publisher::<u32>("scan", Qos::keep_last(5))
        .unwrap();
    // Offers less than the subscription asks: incompatible, so not matched.
    let _weak = radar
        .create_publisher::<u32>("scan", Qos::keep_last(5).best_effort())
        .unwrap();
    let events = subscription.qos_events();
    assert_eq!((events.matched_now, events.matched_total), (2, 2));
    assert_eq!(first.qos_events().matched_now, 1);
    drop(second);
    let events = subscription.qos_events();
    assert_eq!((events.matched_now, events.matched_total), (1, 2));
    assert!(spin_until(&executor, || seen.lock().last().is_some_and(
        |(_, s)| s.current_count == 1 && s.total_count == 2
    )));
    let told = seen.lock().clone();
    let total: u64 = told.iter().map(|(_, s)| s.total_count_change).sum();
    let current: i64 = told.iter().map(|(_, s)| s.current_count_change).sum();
    assert_eq!((total, current), (2, 1), "{told:?}");
    assert!(spin_until(&executor, || !offered.lock().is_empty()));
    assert_eq!(
        offered.lock()[0].1,
        Matched {
            total_count: 1,
            total_count_change: 1,
            current_count: 1,
            current_count_change: 1
        }
    );
}

#[test]
fn endpoints_of_other_topics_or_alone_match_nothing() {
    let (node, executor) = setup();
    let subscription = node
        .create_subscription("scan", Qos::keep_last(5), |_: &u32| {})
        .unwrap();
    let (seen, on_matched) = recorder::<Matched>();
    let _m = subscription.on_subscription_matched(on_matched);
    let other = node
        .create_publisher::<u32>("odom", Qos::keep_last(5))
        .unwrap();
    let _also = node
        .create_subscription("scan", Qos::keep_last(5), |_: &u32| {})
        .unwrap();
    spin_for(&executor, std::time::Duration::from_millis(50));
    assert!(seen.lock().is_empty(), "{:?}", seen.lock());
    assert_eq!(subscription.qos_events().matched_total, 0);
    assert_eq!(other.qos_events().matched_total, 0);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Publishers made and dropped at random, on random nodes, compatible or not: the
    /// subscription's matched and incompatible counts are exactly what happened, and the
    /// changes its callback is told add up to them.
    #[test]
    fn matched_and_incompatible_counts_follow_any_sequence_of_publishers(
        steps in proptest::collection::vec((0u8..4, 0usize..3, proptest::bool::ANY), 1..40)
    ) {
        let (node, executor) = setup();
        let context = node.context().clone();
        let nodes: Vec<Node> = (0..3)
            .map(|i| Node::new_in(&context, &format!("n{i}"), "/").unwrap())
            .collect();
        let subscription = node
            .create_subscription("scan", Qos::keep_last(5), |_: &u32| {})
            .unwrap();
        let (seen, on_matched) = recorder::<Matched>();
        let _m = subscription.on_subscription_matched(on_matched);
        let mut live: Vec<(bool, kairos::graph::Publisher<u32>)> = Vec::new();
        let (mut compatible_made, mut incompatible_made) = (0, 0);
        for (action, on, compatible) in steps {
            if action == 0 && !live.is_empty() {
                drop(live.remove(on % live.len()));
                continue;
            }
            let qos = if compatible { Qos::keep_last(5) } else { Qos::keep_last(5).best_effort() };
            live.push((compatible, nodes[on].create_publisher::<u32>("scan", qos).unwrap()));
            if compatible { compatible_made += 1 } else { incompatible_made += 1 }
        }
        let now = live.iter().filter(|(c, _)| *c).count() as u64;
        let events = subscription.qos_events();
        proptest::prop_assert_eq!((events.matched_total, events.matched_now), (compatible_made, now));
        proptest::prop_assert_eq!(events.requested_incompatible_qos, incompatible_made);
        proptest::prop_assert_eq!(events.incompatible_now, live.len() as u64 - now);
        if compatible_made > 0 {
            proptest::prop_assert!(spin_until(&executor, || seen
                .lock()
                .last()
                .is_some_and(|(_, s)| s.total_count == compatible_made && s.current_count == now)));
            let told = seen.lock().clone();
            let total: u64 = told.iter().map(|(_, s)| s.total_count_change).sum();
            let current: i64 = told.iter().map(|(_, s)| s.current_count_change).sum();
            proptest::prop_assert_eq!((total, current), (compatible_made, now as i64));
        }
    }
}
