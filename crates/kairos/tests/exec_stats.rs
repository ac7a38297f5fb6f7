//! The executor's counters are exact: every callback started is counted once, whichever
//! spin ran it and on whichever worker thread, while spinning and after (each worker counts
//! its own callbacks without a shared read-modify-write and hands the count over when its
//! spin ends; see `exec/running.rs`).

mod exec_support;

use exec_support::{node, spin_in_background, wait_until};
use kairos::exec::{Executor, GroupKind};
use kairos::time::Duration;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// `guards` guard conditions on one node, in one reentrant group (so that the workers of a
/// multi-threaded executor run them at once), each counting its runs into `ran`; the ones
/// whose index is a multiple of `panic_every` panic after counting (0: none does).
fn counted(
    name: &str,
    guards: usize,
    panic_every: usize,
    ran: &Arc<AtomicU64>,
) -> (kairos::graph::Node, Vec<kairos::exec::GuardCondition>) {
    let node = node(name);
    let group = node.create_callback_group("counted", GroupKind::Reentrant);
    let in_group = node.with_group(&group).unwrap();
    let guards = (0..guards)
        .map(|i| {
            let ran = ran.clone();
            in_group.create_guard_condition(&format!("g{i}"), move || {
                ran.fetch_add(1, Ordering::Relaxed);
                if panic_every > 0 && i % panic_every == 0 {
                    panic!("guard {i} panics on purpose");
                }
            })
        })
        .collect();
    (node, guards)
}

#[test]
fn every_spin_kind_counts_each_callback_once() {
    let ran = Arc::new(AtomicU64::new(0));
    let (node, guards) = counted("stats_single", 10, 0, &ran);
    let exec = Executor::single_threaded();
    exec.add_node(&node).unwrap();
    exec.spin_all(Duration::from_secs(10)).unwrap();
    assert_eq!(exec.stats().callbacks, 0, "nothing was triggered yet");

    guards.iter().for_each(|g| g.trigger());
    assert!(exec.spin_once(Duration::from_secs(10)).unwrap());
    assert_eq!(exec.stats().callbacks, 1);
    let some = exec.spin_some().unwrap() as u64;
    assert_eq!(exec.stats().callbacks, 1 + some);
    for _ in 0..5 {
        guards.iter().for_each(|g| g.trigger());
    }
    exec.spin_all(Duration::from_secs(10)).unwrap();
    assert_eq!(ran.load(Ordering::Relaxed), 60);
    assert_eq!(exec.stats().callbacks, 60);
    assert_eq!(exec.stats().panicked, 0);
}

#[test]
fn callbacks_on_helper_threads_are_counted_while_spinning_and_after() {
    const GUARDS: usize = 8;
    const ROUNDS: u64 = 2_000;
    let ran = Arc::new(AtomicU64::new(0));
    let (node, guards) = counted("stats_multi", GUARDS, 0, &ran);
    let exec = Executor::multi_threaded(4).unwrap();
    exec.add_node(&node).unwrap();
    let spin = spin_in_background(&exec);
    let total = GUARDS as u64 * ROUNDS;
    let mut last = 0;
    for _ in 0..ROUNDS {
        guards.iter().for_each(|g| g.trigger());
        // Read while the workers run: never more than ran, never going back.
        let now = exec.stats().callbacks;
        assert!(now >= last, "the count went back from {last} to {now}");
        assert!(now <= ran.load(Ordering::Relaxed));
        last = now;
    }
    wait_until("every trigger ran", || exec.stats().callbacks == total);
    exec.cancel();
    spin.join().unwrap().unwrap();
    assert_eq!(ran.load(Ordering::Relaxed), total);
    assert_eq!(exec.stats().callbacks, total, "after the spin ended");

    // A second spin adds to the same total.
    guards.iter().for_each(|g| g.trigger());
    exec.spin_all(Duration::from_secs(10)).unwrap();
    assert_eq!(exec.stats().callbacks, total + GUARDS as u64);
}

#[test]
fn panicking_callbacks_are_counted_as_callbacks_and_as_panics() {
    let ran = Arc::new(AtomicU64::new(0));
    // Guards 0 and 3 of 6 panic on every run.
    let (node, guards) = counted("stats_panics", 6, 3, &ran);
    let exec = Executor::single_threaded();
    exec.add_node(&node).unwrap();
    for _ in 0..4 {
        guards.iter().for_each(|g| g.trigger());
    }
    let spin = spin_in_background(&exec);
    wait_until("every trigger ran", || ran.load(Ordering::Relaxed) == 24);
    wait_until("every run was counted", || exec.stats().callbacks == 24);
    exec.cancel();
    spin.join().unwrap().unwrap();
    let stats = exec.stats();
    assert_eq!(stats.callbacks, 24);
    assert_eq!(stats.panicked, 8);
}

/// A node with many entities creates, runs and drops them in time linear in their number
/// (dropping each entity used to scan the node's list: 100,000 drops took minutes).
#[test]
fn a_hundred_thousand_entities_come_and_go_in_bounded_time() {
    const ENTITIES: usize = 100_000;
    let start = std::time::Instant::now();
    let ran = Arc::new(AtomicU64::new(0));
    let (node, guards) = counted("stats_many", ENTITIES, 0, &ran);
    let exec = Executor::single_threaded();
    exec.add_node(&node).unwrap();
    guards.iter().for_each(|g| g.trigger());
    exec.spin_all(Duration::from_secs(60)).unwrap();
    assert_eq!(exec.stats().callbacks, ENTITIES as u64);
    drop(guards);
    let took = start.elapsed();
    assert!(
        took < std::time::Duration::from_secs(30),
        "{ENTITIES} entities took {took:?} to create, run and drop"
    );
}
