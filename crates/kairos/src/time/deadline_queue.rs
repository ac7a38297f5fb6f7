//! [`DeadlineQueue`]: waiters keyed by deadline, woken in deadline order.
//!
//! Used by the time driver (deadlines on the monotonic clock) and by each simulated
//! clock (deadlines in simulation time): whoever advances time pops what is due and wakes
//! it, so no waiter ever polls. Ties are broken by registration order, which keeps wake-up
//! order deterministic under simulation time.
//!
//! Not synchronized itself: its owner keeps it under a lock.

use super::wakers::KeyMap;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::task::Waker;

#[derive(Debug, Default)]
pub(crate) struct DeadlineQueue {
    heap: BinaryHeap<Reverse<(i64, u64)>>,
    wakers: KeyMap<(i64, Waker)>,
    next_key: u64,
}

impl DeadlineQueue {
    /// Registers `waker` for `deadline`; the key updates or removes it.
    pub(crate) fn insert(&mut self, deadline: i64, waker: Waker) -> u64 {
        let key = self.next_key;
        self.next_key += 1;
        self.heap.push(Reverse((deadline, key)));
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
            self.heap.retain(|Reverse((_, k))| wakers.contains_key(k));
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.wakers.len()
    }

    /// The earliest pending deadline.
    pub(crate) fn next_deadline(&mut self) -> Option<i64> {
        while let Some(Reverse((deadline, key))) = self.heap.peek().copied() {
            if self.wakers.contains_key(&key) {
                return Some(deadline);
            }
            self.heap.pop();
        }
        None
    }

    /// Removes every registration due at `now`, in deadline order, into `out`.
    pub(crate) fn pop_due(&mut self, now: i64, out: &mut Vec<Waker>) {
        while let Some(Reverse((deadline, key))) = self.heap.peek().copied() {
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
            let Some(Reverse((deadline, key))) = self.heap.peek().copied() else {
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
