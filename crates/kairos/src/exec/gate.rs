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
    #[allow(dead_code)] // The loom model's entry (tests/exec_loom.rs); the executor's is below.
    pub(crate) fn enter_or_park(&self, item: T) -> Option<T> {
        let mut item = Some(item);
        if self.enter_or_park_with(|| item.take().expect("taken once")) {
            item
        } else {
            None
        }
    }

    /// Enters (true), or parks the item `park` makes (false) if the gate is held: the
    /// caller keeps its own reference when it enters, the common case.
    pub(crate) fn enter_or_park_with(&self, park: impl FnOnce() -> T) -> bool {
        let mut state = self.state.lock();
        if self.exclusive && state.holders > 0 {
            state.parked.push_back(park());
            return false;
        }
        state.holders += 1;
        true
    }

    /// Leaves the gate; returns the oldest parked item, which the caller must make ready.
    pub(crate) fn leave(&self) -> Option<T> {
        let mut state = self.state.lock();
        state.holders = state.holders.saturating_sub(1);
        state.parked.pop_front()
    }

    /// Returns the oldest parked item if nobody holds the gate: an item that was handed
    /// the gate by [`leave`](Self::leave) and will not run passes it on this way.
    pub(crate) fn kick(&self) -> Option<T> {
        let mut state = self.state.lock();
        if state.holders > 0 {
            return None;
        }
        state.parked.pop_front()
    }

    /// Removes the parked items for which `gone` holds (their entity was destroyed or
    /// detached) and returns them, so the caller drops them outside the lock.
    pub(crate) fn unpark(&self, gone: impl Fn(&T) -> bool) -> Vec<T> {
        let mut state = self.state.lock();
        let mut removed = Vec::new();
        let mut kept = VecDeque::with_capacity(state.parked.len());
        for item in state.parked.drain(..) {
            if gone(&item) {
                removed.push(item);
            } else {
                kept.push_back(item);
            }
        }
        state.parked = kept;
        removed
    }

    /// Calls `f` on every parked item, under the gate's lock (`f` must not re-enter it).
    pub(crate) fn for_each_parked(&self, mut f: impl FnMut(&T)) {
        let state = self.state.lock();
        state.parked.iter().for_each(&mut f);
    }

    /// How many items are parked.
    pub(crate) fn parked(&self) -> usize {
        self.state.lock().parked.len()
    }

    /// Whether some callback currently holds the gate.
    pub(crate) fn is_held(&self) -> bool {
        self.state.lock().holders > 0
    }
}
