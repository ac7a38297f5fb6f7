//! The callback-group gate: decides whether ready work may start now.
//!
//! A mutually exclusive gate admits one holder at a time; work that arrives while it is
//! held is parked here in arrival order and handed back, one item per release, to be queued
//! at the front of the ready queue. A reentrant gate admits everything.
//!
//! # Ground rules
//! - `holders` counts the callbacks inside. Entering a free gate is one compare-exchange
//!   and leaving a gate with nothing parked one decrement: the dispatch path takes no lock.
//! - `parked` is only touched under `state`'s lock, and `parked_len` mirrors its length.
//! - Parked work is never forgotten: a parker stores `parked_len`, fences (SeqCst) and
//!   reads `holders`; a leaver decrements `holders`, fences and reads `parked_len`. Of two
//!   such sequences one sees the other's store: either the parker sees the gate free (and
//!   takes its item back and enters instead) or the leaver sees the parked item (and takes
//!   the lock to hand it back). Both checked by loom in `tests/exec_loom.rs`.

use crate::loom::sync::Mutex;
use crate::loom::sync::atomic::{AtomicUsize, Ordering, fence};
use std::collections::VecDeque;

#[derive(Debug)]
pub(crate) struct Gate<T> {
    exclusive: bool,
    holders: AtomicUsize,
    parked_len: AtomicUsize,
    state: Mutex<GateState<T>>,
}

/// How an attempt to enter ended.
enum Entered<T> {
    /// Entered; with the item `park` made if it was parked and taken back.
    Yes(Option<T>),
    Parked,
}

#[derive(Debug)]
struct GateState<T> {
    parked: VecDeque<T>,
}

impl<T> Gate<T> {
    pub(crate) fn new(exclusive: bool) -> Self {
        Self {
            exclusive,
            holders: AtomicUsize::new(0),
            parked_len: AtomicUsize::new(0),
            state: Mutex::new(GateState {
                parked: VecDeque::new(),
            }),
        }
    }

    /// Enters and gives the item back, or parks it (returns `None`) if the gate is held.
    #[allow(dead_code)] // The loom model's entry (tests/exec_loom.rs); the executor's is below.
    pub(crate) fn enter_or_park(&self, item: T) -> Option<T> {
        let mut item = Some(item);
        match self.enter_or_park_inner(|| item.take().expect("made once")) {
            Entered::Yes(taken_back) => taken_back.or(item),
            Entered::Parked => None,
        }
    }

    /// Enters (true), or parks the item `park` makes (false) if the gate is held: the
    /// caller keeps its own reference when it enters, the common case.
    pub(crate) fn enter_or_park_with(&self, park: impl FnOnce() -> T) -> bool {
        match self.enter_or_park_inner(park) {
            // An item made, parked and taken back is a spare reference: dropped here.
            Entered::Yes(_) => true,
            Entered::Parked => false,
        }
    }

    fn enter_or_park_inner(&self, park: impl FnOnce() -> T) -> Entered<T> {
        if !self.exclusive {
            self.holders.fetch_add(1, Ordering::AcqRel);
            return Entered::Yes(None);
        }
        if self.try_enter() {
            return Entered::Yes(None);
        }
        let mut state = self.state.lock();
        let mut park = Some(park);
        let mut taken_back = None;
        loop {
            if self.try_enter() {
                drop(state);
                return Entered::Yes(taken_back);
            }
            let item = match taken_back.take() {
                Some(item) => item,
                None => (park.take().expect("an item is made once"))(),
            };
            state.parked.push_back(item);
            self.parked_len.store(state.parked.len(), Ordering::Relaxed);
            fence(Ordering::SeqCst);
            if self.holders.load(Ordering::Relaxed) != 0 {
                return Entered::Parked;
            }
            // The holder left without seeing this item: take it back and try to enter.
            taken_back = state.parked.pop_back();
            self.parked_len.store(state.parked.len(), Ordering::Relaxed);
        }
    }

    fn try_enter(&self) -> bool {
        self.holders
            .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    }

    /// Leaves the gate; returns the oldest parked item, which the caller must make ready.
    pub(crate) fn leave(&self) -> Option<T> {
        let _ = self
            .holders
            .fetch_update(Ordering::AcqRel, Ordering::Relaxed, |n| n.checked_sub(1));
        if !self.exclusive {
            return None;
        }
        fence(Ordering::SeqCst);
        if self.parked_len.load(Ordering::Relaxed) == 0 {
            return None;
        }
        let mut state = self.state.lock();
        let next = state.parked.pop_front();
        self.parked_len.store(state.parked.len(), Ordering::Relaxed);
        next
    }

    /// Returns the oldest parked item if nobody holds the gate: an item that was handed
    /// the gate by [`leave`](Self::leave) and will not run passes it on this way.
    pub(crate) fn kick(&self) -> Option<T> {
        let mut state = self.state.lock();
        if self.holders.load(Ordering::Acquire) > 0 {
            return None;
        }
        let next = state.parked.pop_front();
        self.parked_len.store(state.parked.len(), Ordering::Relaxed);
        next
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
        self.parked_len.store(state.parked.len(), Ordering::Relaxed);
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

    /// Whether work waits behind the gate, without the lock: a hint (a holder running a
    /// batch of callbacks asks it between them, to yield the gate to parked work).
    pub(crate) fn has_parked(&self) -> bool {
        self.parked_len.load(Ordering::Relaxed) != 0
    }

    /// Whether only one callback may hold the gate at a time.
    pub(crate) fn is_exclusive(&self) -> bool {
        self.exclusive
    }

    /// Whether some callback currently holds the gate.
    pub(crate) fn is_held(&self) -> bool {
        self.holders.load(Ordering::Acquire) > 0
    }
}
