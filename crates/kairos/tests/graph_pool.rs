//! A topic reuses the boxes of messages its callbacks are done with (`graph::pool`): a
//! message someone still holds is never overwritten, every value is dropped exactly once,
//! and the accounting `received = delivered + dropped + queued` is unchanged.

use kairos::exec::Executor;
use kairos::graph::{Context, Node, Payload, Qos};
use kairos::time::Duration;
use parking_lot::Mutex;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

fn node(ctx: &Context, name: &str) -> Node {
    Node::new_in(ctx, name, "/pool").unwrap()
}

/// A message that counts how often values of its kind were dropped.
#[derive(Debug)]
struct Counted {
    id: u64,
    payload: Vec<u64>,
    drops: Arc<AtomicUsize>,
}

/// It lives in this process only.
impl Payload for Counted {}

impl Counted {
    fn new(id: u64, drops: &Arc<AtomicUsize>) -> Self {
        Counted {
            id,
            payload: vec![id; 4],
            drops: drops.clone(),
        }
    }

    fn intact(&self, id: u64) -> bool {
        self.id == id && self.payload == vec![id; 4]
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn a_message_a_callback_keeps_is_never_reused_for_a_later_one() {
    let ctx = Context::new();
    let n = node(&ctx, "keeper");
    let drops = Arc::new(AtomicUsize::new(0));
    let kept = Arc::new(Mutex::new(Vec::new()));
    let _sub = {
        let kept = kept.clone();
        n.create_subscription("kept", Qos::keep_last(8), move |m: Arc<Counted>| {
            // Keep every other message; let the rest go back to the pool.
            if m.id % 2 == 0 {
                kept.lock().push(m);
            }
        })
        .unwrap()
    };
    let publisher = n
        .create_publisher::<Counted>("kept", Qos::keep_last(8))
        .unwrap();
    let exec = Executor::single_threaded();
    exec.add_node(&n).unwrap();
    for id in 0..200 {
        publisher.publish(Counted::new(id, &drops));
        exec.spin_all(Duration::from_secs(5)).unwrap();
    }
    let kept = kept.lock();
    assert_eq!(kept.len(), 100);
    for (i, message) in kept.iter().enumerate() {
        assert!(
            message.intact(2 * i as u64),
            "kept message {i} was overwritten: {message:?}"
        );
    }
    assert_eq!(
        drops.load(Ordering::SeqCst),
        100,
        "the odd ones were dropped"
    );
}

#[test]
fn a_message_the_publisher_still_holds_is_never_reused() {
    let ctx = Context::new();
    let n = node(&ctx, "holder");
    let drops = Arc::new(AtomicUsize::new(0));
    let _sub = n
        .create_subscription("held", Qos::keep_last(4), |_: &Counted| {})
        .unwrap();
    let publisher = n
        .create_publisher::<Counted>("held", Qos::keep_last(4))
        .unwrap();
    let exec = Executor::single_threaded();
    exec.add_node(&n).unwrap();
    let held = Arc::new(Counted::new(7, &drops));
    publisher.publish_arc(held.clone());
    exec.spin_all(Duration::from_secs(5)).unwrap();
    for id in 100..150 {
        publisher.publish(Counted::new(id, &drops));
        exec.spin_all(Duration::from_secs(5)).unwrap();
    }
    assert!(held.intact(7), "the held message was overwritten: {held:?}");
    assert_eq!(drops.load(Ordering::SeqCst), 50);
}

#[test]
fn every_value_is_dropped_exactly_once_and_the_accounting_holds() {
    let ctx = Context::new();
    let n = node(&ctx, "counter");
    let drops = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let subs: Vec<_> = (0..2)
        .map(|_| {
            let seen = seen.clone();
            n.create_subscription("counted", Qos::keep_last(4), move |m: &Counted| {
                assert!(m.intact(m.id), "a callback saw a torn message: {m:?}");
                seen.lock().push(m.id);
            })
            .unwrap()
        })
        .collect();
    let publisher = n
        .create_publisher::<Counted>("counted", Qos::keep_last(4))
        .unwrap();
    let exec = Executor::single_threaded();
    exec.add_node(&n).unwrap();
    // 50 with nobody spinning: both queues keep the last 4, the rest are evicted.
    for id in 0..50 {
        publisher.publish(Counted::new(id, &drops));
    }
    assert_eq!(
        drops.load(Ordering::SeqCst),
        46,
        "evicted values drop at once"
    );
    exec.spin_all(Duration::from_secs(5)).unwrap();
    assert_eq!(drops.load(Ordering::SeqCst), 50);
    // Then 200 more, through recycled boxes, spinning as they come.
    for id in 50..250 {
        publisher.publish(Counted::new(id, &drops));
        if id % 3 == 0 {
            exec.spin_all(Duration::from_secs(5)).unwrap();
        }
    }
    exec.spin_all(Duration::from_secs(5)).unwrap();
    assert_eq!(drops.load(Ordering::SeqCst), 250);
    for sub in &subs {
        let stats = sub.stats();
        assert_eq!(stats.received, 250);
        assert_eq!(stats.queued, 0);
        assert_eq!(
            stats.received,
            stats.delivered + stats.dropped + stats.queued
        );
    }
    let seen = seen.lock();
    let delivered: u64 = subs.iter().map(|s| s.stats().delivered).sum();
    assert_eq!(seen.len() as u64, delivered);
    drop(seen);
    drop(subs);
    drop(publisher);
    drop(n);
    drop(ctx);
    assert_eq!(
        drops.load(Ordering::SeqCst),
        250,
        "no value dropped twice, even when the pool goes"
    );
}

#[test]
fn messages_cross_threads_through_recycled_boxes_intact() {
    // The publisher on this thread, the callback on the executor's: boxes go back and
    // forth through the pool while values are checked on every callback.
    let ctx = Context::new();
    let n = node(&ctx, "crosser");
    let drops = Arc::new(AtomicUsize::new(0));
    let torn = Arc::new(AtomicUsize::new(0));
    let delivered = Arc::new(AtomicUsize::new(0));
    let sub = {
        let (torn, delivered) = (torn.clone(), delivered.clone());
        n.create_subscription("cross", Qos::keep_all(100_000), move |m: &Counted| {
            if !m.intact(m.id) {
                torn.fetch_add(1, Ordering::SeqCst);
            }
            delivered.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap()
    };
    let publisher = n
        .create_publisher::<Counted>("cross", Qos::keep_all(100_000))
        .unwrap();
    let exec = Executor::single_threaded();
    exec.add_node(&n).unwrap();
    let spinner = {
        let exec = exec.clone();
        std::thread::spawn(move || exec.spin())
    };
    const N: usize = 20_000;
    for id in 0..N as u64 {
        publisher.publish(Counted::new(id, &drops));
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while delivered.load(Ordering::SeqCst) < N && std::time::Instant::now() < deadline {
        std::thread::yield_now();
    }
    let report = exec.shutdown(Duration::from_secs(30));
    assert!(report.is_clean(), "{report}");
    spinner.join().unwrap().unwrap();
    assert_eq!(delivered.load(Ordering::SeqCst), N, "all delivered in 60 s");
    assert_eq!(torn.load(Ordering::SeqCst), 0);
    assert_eq!(drops.load(Ordering::SeqCst), N);
    assert_eq!(sub.stats().delivered, N as u64);
}
