//! The callback-group gate: decides whether ready work may start now.
//!
//! A mutually exclusive gate admits one holder at a time; work that arrives while it is
//! held is parked here in arrival order and handed back, one item per release, to be queued
//! at the front of the ready queue. A reentrant gate admits everything. Parking and
//! releasing happen under one lock, so parked work is never forgotten: every park happens
//! while a holder exists, and that holder's release returns it.

use crate::loom::sync::Mutex;
use std::collections::VecDeque;

#[derive(Debug)]
pub(crate) struct Gate<T> {
    exclusive: bool,
    state: Mutex<GateState<T>>,
}

#[derive(Debug)]
struct GateState<T> {
    holders: usize,
    parked: VecDeque<T>,
}

impl<T> Gate<T> {
    pub(crate) fn new(exclusive: bool) -> Self {
        Self {
            exclusive,
            state: Mutex::new(GateState {
                holders: 0,
                parked: VecDeque::new(),
            }),
        }
    }

    /// Enters and gives the item back, or parks it (returns `None`) if the gate is held.
    pub(crate) fn enter_or_park(&self, item: T) -> Option<T> {
        let mut state = self.state.lock();
        if self.exclusive && state.holders > 0 {
            state.parked.push_back(item);
            return None;
        }
        state.holders += 1;
        Some(item)
    }

    /// Leaves the gate; returns the oldest parked item, which the caller must make ready.
    pub(crate) fn leave(&self) -> Option<T> {
        let mut state = self.state.lock();
        state.holders = state.holders.saturating_sub(1);
        state.parked.pop_front()
    }

    /// Whether some callback currently holds the gate.
    pub(crate) fn is_held(&self) -> bool {
        self.state.lock().holders > 0
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use crate::loom::sync::atomic::{AtomicUsize, Ordering};
    use loom::sync::Arc;
    use loom::thread;

    /// Two callbacks race for an exclusive gate: they never run together, and the one that
    /// was parked is handed back by the release, so both run.
    #[test]
    fn loom_exclusive_gate_never_overlaps_and_never_forgets() {
        loom::model(|| {
            let gate = Arc::new(Gate::new(true));
            let inside = Arc::new(AtomicUsize::new(0));
            let ran = Arc::new(AtomicUsize::new(0));
            let run = |gate: &Gate<u32>,
                       inside: &AtomicUsize,
                       ran: &AtomicUsize,
                       mut item: Option<u32>| {
                // What a worker does: run the item it holds, then any item the release hands it.
                while item.is_some() {
                    assert_eq!(
                        inside.fetch_add(1, Ordering::AcqRel),
                        0,
                        "two callbacks overlapped"
                    );
                    ran.fetch_add(1, Ordering::AcqRel);
                    inside.fetch_sub(1, Ordering::AcqRel);
                    item = gate.leave().and_then(|next| gate.enter_or_park(next));
                }
            };
            let threads: Vec<_> = (0..2u32)
                .map(|id| {
                    let (gate, inside, ran) = (gate.clone(), inside.clone(), ran.clone());
                    thread::spawn(move || {
                        let item = gate.enter_or_park(id);
                        run(&gate, &inside, &ran, item);
                    })
                })
                .collect();
            for t in threads {
                t.join().unwrap();
            }
            assert_eq!(
                ran.load(Ordering::Acquire),
                2,
                "a parked callback was forgotten"
            );
            assert!(!gate.is_held());
        });
    }

    #[test]
    fn loom_reentrant_gate_admits_all() {
        loom::model(|| {
            let gate = Arc::new(Gate::new(false));
            let other = {
                let gate = gate.clone();
                thread::spawn(move || gate.enter_or_park(1).is_some())
            };
            assert!(gate.enter_or_park(2).is_some());
            assert!(other.join().unwrap());
        });
    }
}
