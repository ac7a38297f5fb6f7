//! The QoS and type hash each played topic is offered with: adapted from what its
//! recorded publishers offered (as `ros2 bag play` does), or overridden from YAML.

use super::*;

/// The hash the bag recorded, else kairos's for the type, else [`UNKNOWN_TYPE_HASH`].
pub(super) fn type_hash(topic: &TopicInformation) -> String {
    if !topic.type_description_hash.is_empty() {
        return topic.type_description_hash.clone();
    }
    match kairos_zenoh::interfaces::message_by_name(&topic.type_name) {
        Some(tool) => tool.type_hash().to_owned(),
        None => {
            log::warn!(
                "kairos bag play: the bag stored no type hash for {} ({}), a type kairos does not ship; \
                 it is announced as {UNKNOWN_TYPE_HASH} and only subscribers of that hash hear it",
                topic.name,
                topic.type_name
            );
            UNKNOWN_TYPE_HASH.to_owned()
        }
    }
}

/// rosbag2's choice from the recorded offers: reliable unless a publisher was best
/// effort, transient local if every publisher was; keep last 10 or the deepest kept
/// history recorded.
pub(super) fn adapt_to_offers(offers: &[QosProfile]) -> Qos {
    let depth = offers
        .iter()
        .filter(|p| p.history == BagHistory::KeepLast)
        .map(|p| p.depth)
        .max()
        .unwrap_or(0)
        .clamp(10, 10_000);
    let mut qos = Qos::keep_last(usize::try_from(depth).unwrap_or(10));
    if offers
        .iter()
        .any(|p| p.reliability == BagReliability::BestEffort)
    {
        qos = qos.best_effort();
    }
    if !offers.is_empty()
        && offers
            .iter()
            .all(|p| p.durability == BagDurability::TransientLocal)
    {
        qos = qos.transient_local();
    }
    qos
}

/// An override profile as a kairos QoS; policies left unknown or system default take
/// rmw's default (reliable, volatile, keep last 10).
pub(super) fn qos_of(profile: &QosProfile) -> Qos {
    let depth = usize::try_from(profile.depth)
        .unwrap_or(10_000)
        .clamp(1, 10_000);
    let mut qos = match profile.history {
        BagHistory::KeepAll => Qos::keep_all(depth.max(1000)),
        BagHistory::KeepLast => Qos::keep_last(depth),
        _ => Qos::keep_last(10),
    };
    if profile.reliability == BagReliability::BestEffort {
        qos = qos.best_effort();
    }
    if profile.durability == BagDurability::TransientLocal {
        qos = qos.transient_local();
    }
    qos
}

/// The QoS overrides of `ros2 bag play --qos-profile-overrides-path`: a YAML map from
/// topic to profile, policies by name (`reliability: best_effort`, `durability:
/// transient_local`, `history: keep_last`, `depth: 5`).
pub fn qos_overrides_from_yaml(text: &str) -> crate::Result<BTreeMap<String, QosProfile>> {
    crate::qos::profile_map_from_yaml(text)
        .map_err(|e| Error::Play(format!("cannot read the QoS overrides: {e}")))
}
