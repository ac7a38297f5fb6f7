//! Blocking waits made by crates built on kairos (a tf2 buffer's lookup with a timeout):
//! the same check, before the wait blocks, that a service call's `call()` makes.
//!
//! A crate whose wait can only complete once some subscriptions (or other entities) of
//! this process have run names them by their [`WaitCompleter`]s; [`check_blocking_wait`]
//! then fails at once with [`WouldDeadlock`] where they could never run while the caller
//! blocks (a mutually exclusive group the calling callback holds, no free worker on a
//! single-threaded executor, a wait-for cycle), and otherwise counts the caller as
//! blocked, in the wait-for graph, until the returned [`BlockingWait`] is dropped.
//! [`check_await`] is the check of an `.await` in an async callback. There is one
//! mechanism (`deadlock`); this module only lends it out.

use super::deadlock::{self, BlockedWorker, WaitAdvice, WouldDeadlock};
use super::entity::{Entity, EntityCore};
use std::fmt;
use std::sync::{Arc, Weak};

/// An entity (a subscription) whose callback must run for some wait to complete; it
/// does not keep the entity alive. Made by
/// [`Subscription::completer`](crate::graph::Subscription::completer).
#[derive(Clone)]
pub struct WaitCompleter {
    entity: Weak<dyn Entity>,
}

impl WaitCompleter {
    pub(crate) fn new(entity: Weak<dyn Entity>) -> Self {
        WaitCompleter { entity }
    }

    /// The entity's name as errors print it (`subscription /tf`), if it still exists.
    pub fn name(&self) -> Option<String> {
        self.entity.upgrade().map(|e| e.core().name.to_string())
    }
}

impl fmt::Debug for WaitCompleter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("WaitCompleter").field(&self.name()).finish()
    }
}

/// This thread counted as blocked on its executors (and its wait in the wait-for graph)
/// until dropped: hold it for exactly as long as the wait blocks.
#[derive(Debug)]
pub struct BlockingWait {
    _blocked: BlockedWorker,
}

/// The entities of `completers` that still exist.
fn alive(completers: &[WaitCompleter]) -> Vec<Arc<dyn Entity>> {
    completers
        .iter()
        .filter_map(|c| c.entity.upgrade())
        .collect()
}

/// Checks a blocking wait named `operation` (`lookup_transform('map', 'base_link')`) that
/// only `completers` can complete, made on this thread: `Err` at once where they could
/// never run while it blocks (see the module docs), the fix worded with `advice`.
/// Outside a callback it always succeeds.
///
/// # Errors
///
/// [`WouldDeadlock`], naming the group and the fix.
pub fn check_blocking_wait(
    operation: &str,
    completers: &[WaitCompleter],
    advice: &WaitAdvice<'_>,
) -> Result<BlockingWait, WouldDeadlock> {
    let entities = alive(completers);
    let cores: Vec<&EntityCore> = entities.iter().map(|e| e.core()).collect();
    deadlock::check_blocking_wait_advised(operation, &cores, None, advice)
        .map(|blocked| BlockingWait { _blocked: blocked })
}

/// Checks an `.await` named `operation` that only `completers` can complete, made in
/// the poll of an async callback: an async callback holds its group until its future
/// completes, so a completer in that mutually exclusive group could never run. Elsewhere
/// (outside an async callback's poll) it always succeeds.
///
/// # Errors
///
/// [`WouldDeadlock`], naming the group and the fix.
pub fn check_await(
    operation: &str,
    completers: &[WaitCompleter],
    advice: &WaitAdvice<'_>,
) -> Result<(), WouldDeadlock> {
    if !deadlock::in_task() {
        return Ok(());
    }
    let entities = alive(completers);
    let cores: Vec<&EntityCore> = entities.iter().map(|e| e.core()).collect();
    deadlock::check_await_advised(operation, &cores, advice)
}
