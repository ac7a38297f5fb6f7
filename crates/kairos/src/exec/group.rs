//! Callback groups: which callbacks may run at the same time.
//!
//! Same semantics as rclcpp and rclpy: in a mutually exclusive group (every node's default)
//! at most one callback runs at a time, an `async` callback holding the group until its
//! future completes; callbacks of a reentrant group may overlap on a multi-threaded
//! executor. Work that finds its group busy waits in the group, in arrival order.

use super::entity::Ready;
use super::gate::Gate;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// How the callbacks of a group may overlap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupKind {
    /// One callback of the group at a time (the default group of every node).
    MutuallyExclusive,
    /// Callbacks of the group may run in parallel on a multi-threaded executor.
    Reentrant,
}

/// A handle to a callback group; clones refer to the same group.
///
/// As in rclcpp, what decides whether a service call from a callback can complete is the
/// *service's* group (a response wakes its future directly; only a done callback runs in
/// the client's group). An `async` callback holds its group until its future completes,
/// as a coroutine does in rclpy, so awaiting a service of that same mutually exclusive
/// group fails at once with [`WouldDeadlock`](super::WouldDeadlock); give the service a
/// group of its own (`Node::create_callback_group` + `Node::with_group`).
#[derive(Clone)]
pub struct CallbackGroup {
    pub(crate) shared: Arc<GroupShared>,
}

pub(crate) struct GroupShared {
    pub(crate) id: u64,
    pub(crate) name: String,
    pub(crate) kind: GroupKind,
    pub(crate) gate: Gate<Ready>,
    /// Whether the callback holding this (mutually exclusive) group is an async one
    /// suspended at an `.await` (see `settle`).
    held_by_suspended: AtomicBool,
}

impl GroupShared {
    pub(crate) fn set_held_by_suspended(&self, suspended: bool) {
        self.held_by_suspended.store(suspended, Ordering::SeqCst);
    }

    pub(crate) fn is_held_by_suspended(&self) -> bool {
        self.held_by_suspended.load(Ordering::SeqCst)
    }
}

impl CallbackGroup {
    pub(crate) fn new(name: String, kind: GroupKind) -> Self {
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        let gate = Gate::new(kind == GroupKind::MutuallyExclusive);
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        Self {
            shared: Arc::new(GroupShared {
                id,
                name,
                kind,
                gate,
                held_by_suspended: AtomicBool::new(false),
            }),
        }
    }

    /// A number no other group of this process has: tells groups apart where their
    /// names may repeat (two nodes' default groups).
    pub fn id(&self) -> u64 {
        self.shared.id
    }

    /// The group's name, as error messages and shutdown reports print it.
    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// Whether the group's callbacks may overlap (reentrant) or not (mutually exclusive).
    pub fn kind(&self) -> GroupKind {
        self.shared.kind
    }

    /// Ready work waiting for this (mutually exclusive) group to be free: it runs, in
    /// arrival order, as the callback holding the group returns.
    pub fn parked(&self) -> usize {
        self.shared.gate.parked()
    }

    /// Whether a callback of this group is running (or an async one is pending) right now.
    pub fn is_busy(&self) -> bool {
        self.shared.gate.is_held()
    }
}

impl PartialEq for CallbackGroup {
    fn eq(&self, other: &Self) -> bool {
        self.shared.id == other.shared.id
    }
}

impl Eq for CallbackGroup {}

impl fmt::Debug for CallbackGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallbackGroup")
            .field("name", &self.shared.name)
            .field("kind", &self.shared.kind)
            .finish()
    }
}

impl fmt::Debug for GroupShared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GroupShared")
            .field("id", &self.id)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}
