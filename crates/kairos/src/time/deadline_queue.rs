//! [`DeadlineQueue`]: waiters keyed by deadline, woken in deadline order.
//!
//! Used by the time driver (deadlines on the monotonic clock) and by each simulated
//! clock (deadlines in simulation time): whoever advances time pops what is due and wakes
//! it, so no waiter ever polls. Ties are broken by rank: a timer's rank is its creation
//! order (see [`DeadlineQueue::insert_ranked`]), every other waiter ranks after the timers
//! in registration order. Timers of one instant that re-armed on several threads at once
//! (after a node clock switched source) thus still fire in the same order every run.
//!
//! Not synchronized itself: its owner keeps it under a lock.

use super::wakers::KeyMap;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::task::Waker;

/// The rank bit of waiters without a rank of their own: after every ranked one.
const UNRANKED: u64 = 1 << 63;

#[derive(Debug, Default)]
pub(crate) struct DeadlineQueue {
    /// (deadline, rank, key); a removed key's entry stays until it surfaces.
    heap: BinaryHeap<Reverse<(i64, u64, u64)>>,
    wakers: KeyMap<(i64, Waker)>,
    next_key: u64,
}

impl DeadlineQueue {
    /// Registers `waker` for `deadline`, ranked by registration order among waiters with
    /// no rank of their own; the key updates or removes it.
    pub(crate) fn insert(&mut self, deadline: i64, waker: Waker) -> u64 {
        self.insert_ranked(deadline, None, waker)
    }

    /// Registers `waker` for `deadline`; among waiters due at the same deadline, those with
    /// a `rank` come first, lowest rank first, then the others in registration order.
    pub(crate) fn insert_ranked(&mut self, deadline: i64, rank: Option<u64>, waker: Waker) -> u64 {
        let key = self.next_key;
        self.next_key += 1;
        let rank = rank.map_or(UNRANKED | key, |rank| rank & !UNRANKED);
        self.heap.push(Reverse((deadline, rank, key)));
        self.wakers.insert(key, (deadline, waker));
        key
    }

    /// Replaces the waker of a registration that is still pending; false when it already fired.
    pub(crate) fn update(&mut self, key: u64, waker: &Waker) -> bool {
        match self.wakers.get_mut(&key) {
            Some((_, w)) => {
                if !w.will_wake(waker) {
                    *w = waker.clone();
                }
                true
            }
            None => false,
        }
    }

    pub(crate) fn remove(&mut self, key: u64) {
        self.wakers.remove(&key);
        // The heap entry stays behind as a tombstone and is skipped when it surfaces; keep
        // the heap from growing without bound when waits are mostly cancelled.
        if self.heap.len() > 64 && self.heap.len() > 4 * self.wakers.len() {
            let wakers = &self.wakers;
            self.heap
                .retain(|Reverse((_, _, k))| wakers.contains_key(k));
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.wakers.len()
    }

    /// The earliest pending deadline.
    pub(crate) fn next_deadline(&mut self) -> Option<i64> {
        while let Some(Reverse((deadline, _, key))) = self.heap.peek().copied() {
            if self.wakers.contains_key(&key) {
                return Some(deadline);
            }
            self.heap.pop();
        }
        None
    }

    /// Whether registration `key` is still queued and due at `now`: a waker that pops
    /// the due ones one at a time in (deadline, rank) order has not reached it yet.
    pub(crate) fn waits_its_turn(&self, key: u64, now: i64) -> bool {
        self.wakers
            .get(&key)
            .is_some_and(|(deadline, _)| *deadline <= now)
    }

    /// Removes every registration due at `now`, in deadline order, into `out`.
    pub(crate) fn pop_due(&mut self, now: i64, out: &mut Vec<Waker>) {
        while let Some(Reverse((deadline, _, key))) = self.heap.peek().copied() {
            if deadline > now {
                break;
            }
            self.heap.pop();
            if let Some((_, waker)) = self.wakers.remove(&key) {
                out.push(waker);
            }
        }
    }

    /// Removes up to `max` registrations due at `now`, in deadline order: their wakers go
    /// to `out`, their keys are returned.
    pub(crate) fn pop_due_keys(&mut self, now: i64, out: &mut Vec<Waker>, max: usize) -> Vec<u64> {
        let mut keys = Vec::new();
        while keys.len() < max {
            let Some(Reverse((deadline, _, key))) = self.heap.peek().copied() else {
                break;
            };
            if deadline > now {
                break;
            }
            self.heap.pop();
            if let Some((_, waker)) = self.wakers.remove(&key) {
                out.push(waker);
                keys.push(key);
            }
        }
        keys
    }
}
