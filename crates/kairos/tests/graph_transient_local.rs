//! Transient-local history in one process: a late subscription gets the last `depth`
//! messages of each publisher, in publish order, as rclcpp gives them; a dropped
//! publisher's history goes with it. Checked against a model over random depths,
//! publishers, publishes, drops and join times (seed printed; `KAIROS_SEED` replays it).

use kairos::exec::Executor;
use kairos::graph::{Context, Node, Publisher, Qos, Subscription};
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::Arc;

/// A message: its publisher's index and its sequence number.
fn value(publisher: usize, seq: u64) -> u64 {
    (publisher as u64) << 32 | seq
}

/// What the test expects a publisher to keep.
struct Model {
    depth: usize,
    /// (publish order, value), oldest first.
    kept: VecDeque<(u64, u64)>,
}

struct Joiner {
    sub: Subscription<u64>,
    seen: Arc<Mutex<Vec<u64>>>,
}

#[test]
fn a_late_joiner_gets_each_publishers_last_depth_in_order_against_a_model() {
    let mut rng = kairos_testkit::random::seeded();
    for round in 0..200 {
        let ctx = Context::new();
        let node = Node::new_in(&ctx, "history", "/").unwrap();
        let executor = Executor::single_threaded();
        executor.add_node(&node).unwrap();
        let mut publishers: Vec<Option<(Publisher<u64>, Model, u64)>> = Vec::new();
        let mut order = 0u64;
        for _ in 0..rng.usize(1..40) {
            match rng.usize(0..10) {
                0..=1 if publishers.len() < 4 => {
                    let depth = rng.usize(1..8);
                    let publisher = node
                        .create_publisher::<u64>("/kept", Qos::keep_last(depth).transient_local())
                        .unwrap();
                    let model = Model {
                        depth,
                        kept: VecDeque::new(),
                    };
                    publishers.push(Some((publisher, model, 0)));
                }
                2 if !publishers.is_empty() => {
                    let at = rng.usize(..publishers.len());
                    publishers[at] = None;
                }
                3..=4 => {
                    let depth = rng.usize(1..12);
                    let expected = late_joiner_gets(&publishers, depth);
                    let joiner = join(&node, depth);
                    while executor.spin_some().unwrap() > 0 {}
                    let stats = joiner.sub.stats();
                    let seen = joiner.seen.lock().clone();
                    let dropped = expected.len().saturating_sub(depth);
                    assert_eq!(
                        seen,
                        expected[dropped..],
                        "round {round}: a joiner of depth {depth}"
                    );
                    assert_eq!(stats.dropped, dropped as u64, "round {round}: {stats:?}");
                }
                _ => {
                    let live: Vec<usize> = (0..publishers.len())
                        .filter(|&i| publishers[i].is_some())
                        .collect();
                    if live.is_empty() {
                        continue;
                    }
                    let at = live[rng.usize(..live.len())];
                    let (publisher, model, seq) = publishers[at].as_mut().unwrap();
                    *seq += 1;
                    publisher.publish(value(at, *seq));
                    if model.kept.len() == model.depth {
                        model.kept.pop_front();
                    }
                    model.kept.push_back((order, value(at, *seq)));
                    order += 1;
                }
            }
        }
    }
}

/// The model: the last `depth` of each live publisher, merged in publish order.
fn late_joiner_gets(publishers: &[Option<(Publisher<u64>, Model, u64)>], depth: usize) -> Vec<u64> {
    let mut all: Vec<(u64, u64)> = publishers
        .iter()
        .flatten()
        .flat_map(|(_, model, _)| {
            let skip = model.kept.len().saturating_sub(depth);
            model.kept.iter().skip(skip).copied()
        })
        .collect();
    all.sort_unstable();
    all.into_iter().map(|(_, value)| value).collect()
}

fn join(node: &Node, depth: usize) -> Joiner {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sub = {
        let seen = seen.clone();
        node.create_subscription(
            "/kept",
            Qos::keep_last(depth).transient_local(),
            move |m: &u64| seen.lock().push(*m),
        )
        .unwrap()
    };
    Joiner { sub, seen }
}

/// The case a ROS 2 demo shows (QoS lifespan demo, history 10): five messages, then a
/// subscription in the same process gets all five, oldest first.
#[test]
fn a_late_joiner_in_the_same_process_gets_the_whole_history_not_only_the_last() {
    let node = Node::new_in(&Context::new(), "talker", "/").unwrap();
    let qos = Qos::keep_last(10).transient_local();
    let publisher = node.create_publisher::<u64>("/kept", qos).unwrap();
    for i in 0..5 {
        publisher.publish(i);
    }
    let joiner = join(&node, 10);
    let executor = Executor::single_threaded();
    executor.add_node(&node).unwrap();
    while executor.spin_some().unwrap() > 0 {}
    assert_eq!(*joiner.seen.lock(), [0, 1, 2, 3, 4]);
    drop(publisher);
    let after = join(&node, 10);
    while executor.spin_some().unwrap() > 0 {}
    assert!(
        after.seen.lock().is_empty(),
        "a dropped publisher's history goes with it"
    );
}
