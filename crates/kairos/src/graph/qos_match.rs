//! Matching a context's publishers and subscriptions against the graph by QoS: which
//! endpoints of a topic are incompatible with each one (ROS 2's rules, see
//! [`Qos::check_compatible`](super::Qos::check_compatible)) and how many of a
//! subscription's publishers are alive.
//!
//! What this module promises:
//! - A topic is matched again after every change of its endpoints in this context (one
//!   topic, not the whole graph) and after every change seen by the transport (every topic
//!   with an endpoint here); a manual-liveliness publisher that loses or regains its
//!   liveliness rematches its topic.
//! - Matches run one at a time, each on a fresh look at the graph, so a later match is
//!   never overwritten by an earlier one.
//! - An endpoint that is gone is forgotten at the next match of its topic.

use super::qos_event::EndpointEvents;
use super::view::{EntityKind, GraphEntity, Registry};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::{Arc, Weak};

/// The endpoints of a context that take part in QoS matching.
#[derive(Default)]
pub(crate) struct QosMatcher {
    /// Held while a match runs (see the module docs); the endpoints by topic.
    state: Mutex<MatchState>,
}

#[derive(Default)]
struct MatchState {
    endpoints: HashMap<String, Vec<Weak<EndpointEvents>>>,
    /// Manual-liveliness publishers of this context not alive now, by topic.
    not_alive: HashMap<String, u64>,
}

impl QosMatcher {
    /// `events` takes part in matching from now on (its topic is matched when the
    /// endpoint enters the graph).
    pub(crate) fn add(&self, events: &Arc<EndpointEvents>) {
        self.state
            .lock()
            .endpoints
            .entry(events.topic.clone())
            .or_default()
            .push(Arc::downgrade(events));
    }

    /// A manual-liveliness publisher of `topic` lost (`delta` 1) or regained (-1) it.
    pub(crate) fn not_alive(&self, registry: &Registry, topic: &str, delta: i64) {
        {
            let mut state = self.state.lock();
            let count = state.not_alive.entry(topic.to_owned()).or_default();
            *count = count.saturating_add_signed(delta);
        }
        self.rematch(registry, Some(topic));
    }

    /// Matches `topic` again, or every topic with an endpoint here (`None`).
    pub(crate) fn rematch(&self, registry: &Registry, topic: Option<&str>) {
        let mut state = self.state.lock();
        let MatchState {
            endpoints,
            not_alive,
        } = &mut *state;
        let mut work: Vec<(String, Vec<Arc<EndpointEvents>>)> = Vec::new();
        let mut take = |name: &String, list: &mut Vec<Weak<EndpointEvents>>| {
            let live: Vec<_> = list.iter().filter_map(Weak::upgrade).collect();
            list.retain(|w| w.strong_count() > 0);
            if !live.is_empty() {
                work.push((name.clone(), live));
            }
        };
        match topic {
            Some(topic) => {
                if let Some(list) = endpoints.get_mut(topic) {
                    take(&topic.to_owned(), list);
                }
            }
            None => endpoints
                .iter_mut()
                .for_each(|(name, list)| take(name, list)),
        }
        endpoints.retain(|_, list| !list.is_empty());
        if work.is_empty() {
            return;
        }
        let names: Vec<&str> = work.iter().map(|(name, _)| name.as_str()).collect();
        let mut peers: HashMap<&str, Vec<GraphEntity>> = HashMap::new();
        for entity in registry.endpoints_on(&names) {
            if let Some((name, _)) = work.iter().find(|(name, _)| *name == entity.name) {
                peers.entry(name.as_str()).or_default().push(entity);
            }
        }
        let mut warnings = Vec::new();
        for (name, list) in &work {
            let on_topic = peers.get(name.as_str()).map(Vec::as_slice).unwrap_or(&[]);
            let lost = not_alive.get(name).copied().unwrap_or(0);
            warnings.extend(
                list.iter()
                    .flat_map(|events| events.rematch(on_topic, lost)),
            );
        }
        drop(state);
        for warning in warnings {
            log::warn!("{warning}");
        }
    }
}

/// Whether a graph change of `kind` can change a QoS match.
pub(crate) fn matters(kind: EntityKind) -> bool {
    matches!(kind, EntityKind::Publisher | EntityKind::Subscription)
}
