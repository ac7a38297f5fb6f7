//! The QoS a recording subscribes with, and the offered profiles it stores, chosen from
//! what the topic's publishers announce as rosbag2 chooses them.

use crate::QosProfile;
use kairos::graph::Qos;
use kairos_zenoh::graph_key::{self, History, WireQos};

/// rosbag2's choice: reliable only if every publisher is; transient local only if every
/// publisher is, with the deepest history they keep. Public for the other tools that
/// subscribe to whatever the graph offers (the Foxglove bridge).
pub fn subscription_qos(offered: &[&WireQos]) -> Qos {
    let depth = offered
        .iter()
        .map(|q| match q.history {
            History::KeepLast(d) | History::KeepAll(d) => d,
        })
        .max()
        .unwrap_or(10)
        .clamp(1, 10_000);
    let mut qos = Qos::keep_last(usize::try_from(depth).unwrap_or(10_000));
    if !offered
        .iter()
        .all(|q| q.reliability == graph_key::Reliability::Reliable)
    {
        qos = qos.best_effort();
    }
    if !offered.is_empty()
        && offered
            .iter()
            .all(|q| q.durability == graph_key::Durability::TransientLocal)
    {
        qos = qos.transient_local();
    }
    qos
}

/// A publisher's announced QoS as rosbag2 records it.
pub(super) fn profile_of(qos: &WireQos) -> QosProfile {
    use crate::qos::{Durability, History as BagHistory, Liveliness, Reliability, RmwDuration};
    let duration = |d: Option<kairos::time::Duration>| match d {
        None => RmwDuration::INFINITE,
        Some(d) => {
            let nanos = u64::try_from(d.as_nanos()).unwrap_or(0);
            RmwDuration {
                sec: nanos / 1_000_000_000,
                nsec: nanos % 1_000_000_000,
            }
        }
    };
    let (history, depth) = match qos.history {
        History::KeepLast(d) => (BagHistory::KeepLast, d),
        History::KeepAll(d) => (BagHistory::KeepAll, d),
    };
    QosProfile {
        history,
        depth,
        reliability: match qos.reliability {
            graph_key::Reliability::Reliable => Reliability::Reliable,
            graph_key::Reliability::BestEffort => Reliability::BestEffort,
        },
        durability: match qos.durability {
            graph_key::Durability::Volatile => Durability::Volatile,
            graph_key::Durability::TransientLocal => Durability::TransientLocal,
        },
        deadline: duration(qos.deadline),
        lifespan: duration(qos.lifespan),
        liveliness: match qos.liveliness {
            kairos::graph::Liveliness::Automatic => Liveliness::Automatic,
            kairos::graph::Liveliness::ManualByTopic => Liveliness::ManualByTopic,
        },
        liveliness_lease_duration: duration(qos.liveliness_lease),
        avoid_ros_namespace_conventions: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wire(reliable: bool, transient: bool, depth: u64) -> WireQos {
        WireQos {
            reliability: if reliable {
                graph_key::Reliability::Reliable
            } else {
                graph_key::Reliability::BestEffort
            },
            durability: if transient {
                graph_key::Durability::TransientLocal
            } else {
                graph_key::Durability::Volatile
            },
            history: History::KeepLast(depth),
            ..WireQos::default()
        }
    }

    #[test]
    fn qos_is_chosen_as_rosbag2_chooses_it() {
        let (a, b) = (wire(true, true, 5), wire(false, true, 20));
        let qos = subscription_qos(&[&a, &b]);
        assert_eq!(qos.reliability, kairos::graph::Reliability::BestEffort);
        assert_eq!(qos.durability, kairos::graph::Durability::TransientLocal);
        let c = wire(true, false, 1);
        let qos = subscription_qos(&[&a, &c]);
        assert_eq!(qos.reliability, kairos::graph::Reliability::Reliable);
        assert_eq!(qos.durability, kairos::graph::Durability::Volatile);
    }
}
