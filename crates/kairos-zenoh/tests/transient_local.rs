//! Transient-local history across processes (two graphs, each with its own zenoh session,
//! meeting at a router on loopback): a late subscription gets the last `depth` messages of
//! each publisher's cache, in order, exactly once, whatever races the history queries
//! (live samples, heartbeats, publishers that appear later). Random depths, publishers,
//! publish counts and join times; the seed is printed and `KAIROS_SEED` replays it.

use kairos::exec::Executor;
use kairos::graph::{Context, Node, Publisher, Qos};
use kairos_testkit::router::free_loopback_port as free_port;
use kairos_testkit::zenoh_session::router_session as router;
use kairos_zenoh::ZenohTransport;
use kairos_zenoh::msg::StringMsg;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(30);

/// A graph carried by a session as kairos configures one (timestamps on, which the
/// publishers' caches use), a peer of the router on `port`.
fn graph(port: u16) -> (Context, Arc<ZenohTransport>) {
    let config = kairos_zenoh::config::session_config().unwrap();
    let config = kairos_testkit::zenoh_session::peer_of_router(config, port);
    let transport = ZenohTransport::open_with(config, 0).expect("open a session");
    let context = Context::new();
    transport.install(&context).expect("install the transport");
    (context, transport)
}

/// What the late subscription got, per publisher: the sequence numbers, in arrival order.
type Got = Arc<Mutex<BTreeMap<usize, Vec<u64>>>>;

fn parse(text: &str) -> (usize, u64) {
    let (publisher, seq) = text.split_once(' ').expect("'publisher seq'");
    (publisher.parse().unwrap(), seq.parse().unwrap())
}

/// A publisher of the round's topic and what it published.
struct Sent {
    publisher: Publisher<StringMsg>,
    depth: usize,
    published: u64,
}

impl Sent {
    fn publish(&mut self, index: usize) {
        self.published += 1;
        self.publisher.publish(StringMsg {
            data: format!("{index} {}", self.published),
        });
    }

    /// Its last `depth` sequence numbers, as a joiner of depth `joiner` gets them.
    fn kept(&self, joiner: usize) -> Vec<u64> {
        let keep = self.depth.min(joiner) as u64;
        (self.published.saturating_sub(keep) + 1..=self.published).collect()
    }
}

/// Waits until `done` holds of what was got, or [`WAIT`] passes.
fn wait_for(got: &Got, done: impl Fn(&BTreeMap<usize, Vec<u64>>) -> bool) -> bool {
    let end = Instant::now() + WAIT;
    while Instant::now() < end {
        if done(&got.lock().unwrap()) {
            return true;
        }
        std::thread::park_timeout(Duration::from_millis(5));
    }
    done(&got.lock().unwrap())
}

#[test]
fn a_late_joiner_in_another_process_gets_each_caches_last_depth_in_order_exactly_once() {
    let mut rng = kairos_testkit::random::seeded();
    let port = free_port();
    let _router = router(port);
    let (a, _ta) = graph(port);
    let (b, _tb) = graph(port);
    let talker = Node::new_in(&a, "talker", "/").unwrap();
    let listener = Node::new_in(&b, "listener", "/").unwrap();
    let executor = Executor::single_threaded();
    executor.add_node(&listener).unwrap();
    let spinning = executor.spin_thread().unwrap();
    for round in 0..6 {
        let topic = format!("/kept_{round}");
        // Publishers, each with its depth, that publish before the joiner comes.
        let mut sent: Vec<Sent> = (0..rng.usize(1..=3))
            .map(|_| {
                let depth = rng.usize(1..=6);
                let qos = Qos::keep_last(depth).transient_local();
                Sent {
                    publisher: talker.create_publisher(&topic, qos).unwrap(),
                    depth,
                    published: 0,
                }
            })
            .collect();
        for (index, publisher) in sent.iter_mut().enumerate() {
            for _ in 0..rng.usize(0..=8) {
                publisher.publish(index);
            }
        }
        let joiner_depth = rng.usize(1..=8);
        let got: Got = Arc::default();
        let _joiner = {
            let got = got.clone();
            listener
                .create_subscription(
                    &topic,
                    Qos::keep_last(joiner_depth).transient_local(),
                    move |m: Arc<StringMsg>| {
                        let (publisher, seq) = parse(&m.data);
                        got.lock().unwrap().entry(publisher).or_default().push(seq);
                    },
                )
                .unwrap()
        };
        let history: BTreeMap<usize, Vec<u64>> = sent
            .iter()
            .enumerate()
            .map(|(index, s)| (index, s.kept(joiner_depth)))
            .filter(|(_, kept)| !kept.is_empty())
            .collect();
        let total: usize = history.values().map(Vec::len).sum();
        let context = format!(
            "round {round}: joiner depth {joiner_depth}, publishers {:?}",
            sent.iter()
                .map(|s| (s.depth, s.published))
                .collect::<Vec<_>>()
        );
        if total <= joiner_depth {
            assert!(
                wait_for(&got, |got| *got == history),
                "{context}: got {:?}, expected {history:?}",
                got.lock().unwrap()
            );
        } else {
            // More than the joiner's queue holds arrives at once: the oldest are dropped,
            // counted; what is delivered is in order per publisher.
            let stats = || _joiner.stats();
            let end = Instant::now() + WAIT;
            while stats().delivered + stats().dropped < total as u64 && Instant::now() < end {
                std::thread::park_timeout(Duration::from_millis(5));
            }
            let stats = stats();
            assert_eq!(stats.delivered + stats.dropped, total as u64, "{context}");
            for (publisher, seqs) in got.lock().unwrap().iter() {
                let kept = &history[publisher];
                assert!(
                    seqs.windows(2).all(|w| w[0] < w[1]) && seqs.iter().all(|s| kept.contains(s)),
                    "{context}: publisher {publisher} gave {seqs:?} of {kept:?}"
                );
            }
        }

        // A publisher that appears after the joiner: its whole cache arrives (live or
        // from the cache, once each).
        let mut expected = got.lock().unwrap().clone();
        if rng.bool() {
            let depth = rng.usize(1..=6);
            let qos = Qos::keep_last(depth).transient_local();
            let mut late = Sent {
                publisher: talker.create_publisher(&topic, qos).unwrap(),
                depth,
                published: 0,
            };
            let index = sent.len();
            for _ in 0..rng.usize(1..=depth.min(joiner_depth)) {
                late.publish(index);
            }
            let all: Vec<u64> = (1..=late.published).collect();
            let arrived = |got: &BTreeMap<usize, Vec<u64>>| got.get(&index) == Some(&all);
            assert!(
                wait_for(&got, arrived),
                "{context}: a late publisher of depth {depth} sent {all:?}, got {:?}",
                got.lock().unwrap()
            );
            expected.insert(index, all);
            sent.push(late);
        }
        // Then one live message from each, one at a time: after everything the cache
        // gave, once.
        for (index, publisher) in sent.iter_mut().enumerate() {
            publisher.publish(index);
            let seqs = expected.entry(index).or_default();
            seqs.push(publisher.published);
            let last = publisher.published;
            let arrived = |got: &BTreeMap<usize, Vec<u64>>| {
                got.get(&index).and_then(|g| g.last()) == Some(&last)
            };
            assert!(
                wait_for(&got, arrived),
                "{context}: live message {last} of publisher {index}: {:?}",
                got.lock().unwrap()
            );
        }
        if total <= joiner_depth {
            assert_eq!(*got.lock().unwrap(), expected, "{context}");
        }
        for (publisher, seqs) in got.lock().unwrap().iter() {
            assert!(
                seqs.windows(2).all(|w| w[0] < w[1]),
                "{context}: publisher {publisher} gave {seqs:?}: once each, in order"
            );
        }
    }
    spinning.stop().unwrap();
}

/// A transient-local publisher's token is announced only once its cache answers (as
/// rmw_zenoh orders it): a late joiner that asks the cache the moment it sees the token
/// finds it. The observer here is a liveliness subscriber of the publisher's own session,
/// which zenoh calls while the token is being declared, so it sees the order itself, not a
/// race: in its callback it asks zenoh whether a queryable of the cache exists yet.
#[test]
fn a_publishers_token_comes_after_its_cache_exists() {
    let port = free_port();
    let _router = router(port);
    let (a, ta) = graph(port);
    let talker = Node::new_in(&a, "talker", "/").unwrap();
    let session = ta.session().clone();
    // (token key, whether a queryable answered for the cache when the token was seen)
    let seen: Arc<Mutex<Vec<(String, bool)>>> = Arc::default();
    let _observer = {
        let seen = seen.clone();
        let session = session.clone();
        use zenoh::Wait;
        ta.session()
            .liveliness()
            .declare_subscriber("@ros2_lv/**")
            .callback(move |sample| {
                let token = sample.key_expr().to_string();
                if sample.kind() != zenoh::sample::SampleKind::Put || !token.contains("/MP/") {
                    return;
                }
                let querier = session
                    .declare_querier("*/cached/**/@adv/pub/**")
                    .wait()
                    .expect("declare a querier");
                let cache = querier.matching_status().wait().unwrap().matching();
                seen.lock().unwrap().push((token, cache));
            })
            .wait()
            .unwrap()
    };
    let _publisher = talker
        .create_publisher::<StringMsg>("/cached", Qos::keep_last(5).transient_local())
        .unwrap();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen.len(),
        1,
        "the publisher's token, seen once, at its declaration: {seen:?}"
    );
    assert!(
        seen[0].1,
        "the token {} was announced before its cache's queryable",
        seen[0].0
    );
}
