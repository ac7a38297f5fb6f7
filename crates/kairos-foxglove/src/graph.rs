//! The connection graph: which nodes publish and subscribe each topic and serve each
//! service, as the protocol's `connectionGraphUpdate` tells a client that subscribed to it.
//!
//! What it promises: a client that sends `subscribeConnectionGraph` gets the whole graph
//! at once (as an update from nothing), then an update each time the graph changes, with
//! only the topics and services that changed (each with its full list of nodes) and those
//! that left. Nodes are named by their fully qualified names (`/robot/talker`), the same
//! in every kairos and rmw_zenoh process the transport reaches.

use foxglove::ws_protocol::server::ConnectionGraphUpdate;
use foxglove::ws_protocol::server::connection_graph_update::{
    AdvertisedService, PublishedTopic, SubscribedTopic,
};
use kairos_zenoh::graph_key::{EntityKind, Token};
use std::collections::{BTreeMap, BTreeSet};

/// Names (topics or services) and the nodes at each.
type Ends = BTreeMap<String, BTreeSet<String>>;

/// The graph as the protocol sees it.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Graph {
    published: Ends,
    subscribed: Ends,
    services: Ends,
}

impl Graph {
    /// The graph `tokens` announce.
    pub(crate) fn of(tokens: &[Token]) -> Self {
        let mut graph = Graph::default();
        for token in tokens {
            let Some(endpoint) = &token.endpoint else {
                continue;
            };
            let ends = match token.kind {
                EntityKind::Publisher => &mut graph.published,
                EntityKind::Subscription => &mut graph.subscribed,
                EntityKind::Service => &mut graph.services,
                EntityKind::Client | EntityKind::Node => continue,
            };
            let node = match token.node.namespace.as_str() {
                "/" | "" => format!("/{}", token.node.name),
                namespace => format!("{namespace}/{}", token.node.name),
            };
            ends.entry(endpoint.name.clone()).or_default().insert(node);
        }
        graph
    }

    /// What changed from `before` to `self`; `None` when nothing did.
    pub(crate) fn update_from(&self, before: &Graph) -> Option<ConnectionGraphUpdate> {
        let changed = |now: &Ends, was: &Ends| -> Vec<(String, Vec<String>)> {
            now.iter()
                .filter(|(name, nodes)| was.get(*name) != Some(*nodes))
                .map(|(name, nodes)| (name.clone(), nodes.iter().cloned().collect()))
                .collect()
        };
        let topics = |g: &Graph| -> BTreeSet<String> {
            g.published
                .keys()
                .chain(g.subscribed.keys())
                .cloned()
                .collect()
        };
        let update = ConnectionGraphUpdate {
            published_topics: changed(&self.published, &before.published)
                .into_iter()
                .map(|(name, ids)| PublishedTopic::new(name, ids))
                .collect(),
            subscribed_topics: changed(&self.subscribed, &before.subscribed)
                .into_iter()
                .map(|(name, ids)| SubscribedTopic::new(name, ids))
                .collect(),
            advertised_services: changed(&self.services, &before.services)
                .into_iter()
                .map(|(name, ids)| AdvertisedService::new(name, ids))
                .collect(),
            removed_topics: topics(before).difference(&topics(self)).cloned().collect(),
            removed_services: before
                .services
                .keys()
                .filter(|s| !self.services.contains_key(*s))
                .cloned()
                .collect(),
        };
        (update != ConnectionGraphUpdate::default()).then_some(update)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(published: &[(&str, &[&str])], services: &[(&str, &[&str])]) -> Graph {
        let ends = |list: &[(&str, &[&str])]| -> Ends {
            list.iter()
                .map(|(name, nodes)| {
                    (
                        name.to_string(),
                        nodes.iter().map(|n| n.to_string()).collect(),
                    )
                })
                .collect()
        };
        Graph {
            published: ends(published),
            subscribed: Ends::new(),
            services: ends(services),
        }
    }

    #[test]
    fn an_update_holds_what_changed_whole_and_what_left() {
        let before = graph(&[("/a", &["/n1"]), ("/b", &["/n1"])], &[("/s", &["/n1"])]);
        let after = graph(
            &[("/a", &["/n1"]), ("/c", &["/n2"])],
            &[("/s", &["/n1", "/n2"])],
        );
        let update = after.update_from(&before).expect("a change");
        assert_eq!(
            update.published_topics,
            [PublishedTopic::new("/c", ["/n2"])]
        );
        assert_eq!(
            update.advertised_services,
            [AdvertisedService::new("/s", ["/n1", "/n2"])]
        );
        assert_eq!(update.removed_topics, ["/b"]);
        assert!(update.removed_services.is_empty());
        assert_eq!(after.update_from(&after), None, "no change, no update");
        // From nothing: the whole graph.
        let whole = after.update_from(&Graph::default()).unwrap();
        assert_eq!(whole.published_topics.len(), 2);
    }
}
