//! Client publishing (`clientPublish`): a topic a client advertises becomes a kairos
//! publisher, and each message it sends is published as it came, without decoding.
//!
//! What it promises: the publisher is announced with the type the client names as schema
//! (`pkg/msg/Type`; `pkg/Type` is read as `pkg/msg/Type`) and the RIHS01 hash that type has
//! on the graph (the hash a process announcing the topic with that type uses, else the hash
//! of the type kairos ships), with the default QoS (reliable, keep last 10). A type neither
//! known on the topic nor shipped is refused with a status that says so
//! ([`PublishError::UnknownType`]). Only CDR payloads are accepted.

use crate::error::PublishError;
use kairos::graph::{Node, Qos};
use kairos_zenoh::ZenohTransport;
use kairos_zenoh::graph_key::EntityKind;
use kairos_zenoh::raw::{RawPublisher, RawTopic};

/// `pkg/msg/Type` for `pkg/msg/Type` or `pkg/Type`.
pub(crate) fn full_type_name(schema_name: &str) -> String {
    let parts: Vec<&str> = schema_name.split('/').collect();
    match parts.as_slice() {
        [package, name] => format!("{package}/msg/{name}"),
        _ => schema_name.to_owned(),
    }
}

/// A publisher for a client's channel (see the module docs).
pub(crate) fn declare(
    transport: &ZenohTransport,
    node: &Node,
    topic: &str,
    encoding: &str,
    schema_name: &str,
) -> Result<RawPublisher, PublishError> {
    if encoding != "cdr" {
        return Err(PublishError::Encoding {
            topic: topic.to_owned(),
            encoding: encoding.to_owned(),
        });
    }
    let ros_type = full_type_name(schema_name);
    let unknown = || PublishError::UnknownType {
        topic: topic.to_owned(),
        ros_type: schema_name.to_owned(),
    };
    let on_graph = transport.graph().tokens().into_iter().find_map(|token| {
        let endpoint = token.endpoint?;
        let same = matches!(token.kind, EntityKind::Publisher | EntityKind::Subscription)
            && endpoint.name == topic
            && kairos_zenoh::message::ros_type_name(&endpoint.dds_type).as_deref()
                == Some(ros_type.as_str());
        same.then_some(endpoint.hash)
    });
    let hash = match on_graph {
        Some(hash) => hash,
        None => kairos_zenoh::interfaces::message_by_name(&ros_type)
            .map(|tool| tool.type_hash().to_owned())
            .ok_or_else(unknown)?,
    };
    transport
        .raw_publisher(
            node,
            RawTopic {
                name: topic,
                ros_type: &ros_type,
                type_hash: &hash,
            },
            Qos::default(),
        )
        .map_err(|source| PublishError::Transport {
            topic: topic.to_owned(),
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ros1_style_type_names_get_their_msg_part() {
        assert_eq!(full_type_name("std_msgs/String"), "std_msgs/msg/String");
        assert_eq!(full_type_name("std_msgs/msg/String"), "std_msgs/msg/String");
        assert_eq!(full_type_name("String"), "String");
    }
}
