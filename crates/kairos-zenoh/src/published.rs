//! Topics as their publishers announce them in the graph: what a tool that follows every
//! topic (the bag recorder, the Foxglove bridge) subscribes to.
//!
//! What this module promises: [`published_topics`] groups the publisher tokens of a graph
//! snapshot by topic; a topic's type and hash are its earliest announced publisher's
//! (lowest session id, then entity id), the same choice on every call while that
//! publisher lives, and its offered QoS are those of the publishers with that type and
//! hash (a publisher of another type is on another key expression and is not followed).

use crate::graph_key::{EndpointKey, EntityKind, Token, WireQos};
use std::collections::BTreeMap;

/// One topic of the graph and its publishers (see the module docs).
#[derive(Debug, Clone)]
pub struct PublishedTopic<'a> {
    /// The earliest announced publisher's endpoint: the topic's type and hash.
    pub endpoint: &'a EndpointKey,
    /// The QoS each publisher of that type and hash offers.
    pub offered: Vec<&'a WireQos>,
}

impl PublishedTopic<'_> {
    /// The type as ROS names it (`pkg/msg/Type`); `None` when the announced type is not a
    /// ROS 2 message type.
    pub fn ros_type(&self) -> Option<String> {
        crate::message::ros_type_name(&self.endpoint.dds_type)
    }
}

/// The topics with a publisher in `tokens`, by name; publishers of session `except_zid`
/// (a tool's own) are left out.
pub fn published_topics<'a>(
    tokens: &'a [Token],
    except_zid: Option<&str>,
) -> BTreeMap<&'a str, PublishedTopic<'a>> {
    let mut publishers: BTreeMap<&str, Vec<&Token>> = BTreeMap::new();
    for token in tokens {
        if token.kind != EntityKind::Publisher || Some(token.node.zid.as_str()) == except_zid {
            continue;
        }
        if let Some(endpoint) = &token.endpoint {
            publishers.entry(&endpoint.name).or_default().push(token);
        }
    }
    publishers
        .into_iter()
        .filter_map(|(topic, mut offered)| {
            offered.sort_by(|a, b| (&a.node.zid, a.id).cmp(&(&b.node.zid, b.id)));
            let endpoint = offered[0].endpoint.as_ref()?;
            let offered = offered
                .iter()
                .filter_map(|t| t.endpoint.as_ref())
                .filter(|e| e.dds_type == endpoint.dds_type && e.hash == endpoint.hash)
                .map(|e| &e.qos)
                .collect();
            Some((topic, PublishedTopic { endpoint, offered }))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph_key::{History, NodeKey};

    fn publisher(zid: &str, id: u64, topic: &str, dds_type: &str, depth: u64) -> Token {
        Token {
            node: NodeKey {
                domain: 0,
                zid: zid.into(),
                nid: 0,
                enclave: String::new(),
                namespace: "/".into(),
                name: "n".into(),
            },
            id,
            kind: EntityKind::Publisher,
            endpoint: Some(EndpointKey {
                name: topic.into(),
                dds_type: dds_type.into(),
                hash: format!("RIHS01_{dds_type}"),
                qos: WireQos {
                    history: History::KeepLast(depth),
                    ..WireQos::default()
                },
            }),
        }
    }

    #[test]
    fn the_earliest_publisher_names_the_type_and_its_kind_offers_the_qos() {
        let string = "std_msgs::msg::dds_::String_";
        let tokens = vec![
            publisher("b", 1, "/chatter", string, 7),
            publisher("a", 9, "/chatter", string, 5),
            publisher("a", 10, "/chatter", "std_msgs::msg::dds_::Int32_", 3),
            publisher("own", 1, "/mine", string, 1),
            publisher("b", 2, "/odd", "NotARosType", 1),
        ];
        let topics = published_topics(&tokens, Some("own"));
        assert_eq!(
            topics.keys().copied().collect::<Vec<_>>(),
            ["/chatter", "/odd"]
        );
        let chatter = &topics["/chatter"];
        assert_eq!(chatter.ros_type().as_deref(), Some("std_msgs/msg/String"));
        let histories: Vec<History> = chatter.offered.iter().map(|q| q.history).collect();
        assert_eq!(
            histories,
            [History::KeepLast(5), History::KeepLast(7)],
            "the Int32 publisher is on another key expression"
        );
        assert_eq!(topics["/odd"].ros_type(), None);
        assert!(published_topics(&tokens, None).contains_key("/mine"));
    }
}
