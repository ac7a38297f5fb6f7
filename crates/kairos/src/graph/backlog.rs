//! A subscription's count of the messages its worker already knows are queued, so that
//! "is there more?" between two callbacks of a batch does not read the queue's tail, the
//! cache line every publish writes.
//!
//! What this module promises: the hint only ever answers "yes" early. A "no" always comes
//! from looking at the queue itself, so the schedule-flag handshake (release the flag,
//! then look for work: `EntityCore::requeue_held`) still sees every message published
//! before the release. A "yes" that is no longer true (another worker took the message,
//! or a full queue evicted it) costs one run that finds the queue empty, which
//! forgets the hint ([`Backlog::none`]).
//!
//! # Ground rules
//! - `known` is written by whoever looked at the queue ([`Backlog::saw`]) and by the
//!   workers that take messages ([`Backlog::took`], [`Backlog::none`]); all accesses are
//!   relaxed: it orders nothing, the queue's own operations do.
//! - Checked by loom in `tests/exec_loom.rs` (`loom_a_backlog_hint_never_hides_work`).

use crate::loom::sync::atomic::{AtomicUsize, Ordering};

/// How many messages were queued when a worker last looked, less those it took since.
#[derive(Debug)]
pub(crate) struct Backlog {
    known: AtomicUsize,
}

impl Backlog {
    pub(crate) fn new() -> Self {
        Self {
            known: AtomicUsize::new(0),
        }
    }

    /// Whether messages are known to be queued, without looking at the queue. `false`
    /// means "look" (see [`Backlog::saw`]), not "none".
    pub(crate) fn known(&self) -> bool {
        self.known.load(Ordering::Relaxed) > 0
    }

    /// The queue was looked at and held `queued` messages.
    pub(crate) fn saw(&self, queued: usize) {
        self.known.store(queued, Ordering::Relaxed);
    }

    /// A worker took one message.
    pub(crate) fn took(&self) {
        let known = self.known.load(Ordering::Relaxed);
        if known > 0 {
            // A race with another taker or a `saw` only leaves the hint too high or too
            // low: too high is corrected by `none`, too low means one more look.
            self.known.store(known - 1, Ordering::Relaxed);
        }
    }

    /// A worker found the queue empty.
    pub(crate) fn none(&self) {
        self.known.store(0, Ordering::Relaxed);
    }
}
