//! The counts behind the QoS events: each event's total and what its callback was last
//! told, the matched and alive peers, and how two peers of a topic are told apart.

use crate::exec::{GuardCondition, GuardInner};
use crate::graph::qos::QosPolicy;
use crate::graph::view::GraphEntity;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

/// Where a counter tells its callback, if one is registered.
#[derive(Default)]
pub(super) struct Listener(Mutex<Option<Weak<GuardInner>>>);

impl Listener {
    pub(super) fn notify(&self) {
        if let Some(guard) = self.0.lock().as_ref().and_then(Weak::upgrade) {
            guard.trigger_coalesced();
        }
    }

    pub(super) fn set(&self, guard: &GuardCondition) {
        *self.0.lock() = Some(Arc::downgrade(&guard.inner));
    }
}

/// A count of one event, and what its callback was last told.
#[derive(Default)]
pub(super) struct Counter {
    total: AtomicU64,
    reported: Mutex<u64>,
    pub(super) listener: Listener,
}

impl Counter {
    pub(super) fn add(&self, n: u64, handle: u64, event: &str) {
        if n == 0 {
            return;
        }
        let total = self.total.fetch_add(n, Ordering::AcqRel) + n;
        crate::trace::tp::qos_event(handle, event, total, n as i64);
        self.listener.notify();
    }

    pub(super) fn total(&self) -> u64 {
        self.total.load(Ordering::Acquire)
    }

    /// The total and its change since the last call.
    pub(super) fn take(&self) -> (u64, u64) {
        let mut reported = self.reported.lock();
        let total = self.total();
        let change = total - *reported;
        *reported = total;
        (total, change)
    }
}

/// Incompatible endpoints: how many now, how many found in all, the last policy.
#[derive(Default)]
pub(super) struct Incompatible {
    pub(super) counter: Counter,
    pub(super) now: AtomicU64,
    pub(super) last_policy: Mutex<Option<QosPolicy>>,
}

/// The peers that match an endpoint: how many now, how many came in all, what the
/// callback was last told (both as `(total, now)`).
#[derive(Default)]
pub(super) struct MatchedPeers {
    pub(super) now: Mutex<(u64, u64)>,
    pub(super) reported: Mutex<(u64, u64)>,
    pub(super) listener: Listener,
}

/// The peers an endpoint saw at its last match, compatible and not, each kind by
/// signature with its multiplicity: a match counts as new every peer whose signature's
/// multiplicity rose, so a peer that leaves while another comes is still counted.
#[derive(Default)]
pub(super) struct SeenPeers {
    pub(super) compatible: HashMap<String, u64>,
    pub(super) incompatible: HashMap<String, u64>,
    pub(super) other_type: HashMap<String, u64>,
}

/// How many more of each signature `now` has than `before`.
pub(super) fn arrivals(before: &HashMap<String, u64>, now: &HashMap<String, u64>) -> u64 {
    now.iter()
        .map(|(peer, n)| n.saturating_sub(before.get(peer).copied().unwrap_or(0)))
        .sum()
}

/// What tells two endpoints of a topic apart in the graph (it has no per-endpoint id):
/// their node, type, QoS and process.
pub(super) fn signature(peer: &GraphEntity) -> String {
    format!(
        "{}|{}|{}|{}|{:?}|{}",
        peer.node_namespace, peer.node_name, peer.type_name, peer.type_hash, peer.qos, peer.local
    )
}

/// A subscription's alive and not-alive publishers, and what its callback was last told.
#[derive(Default)]
pub(super) struct Alive {
    pub(super) now: Mutex<(u64, u64)>,
    pub(super) reported: Mutex<(u64, u64)>,
    pub(super) listener: Listener,
}
