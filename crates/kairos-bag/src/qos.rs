//! The QoS profiles a topic's publishers offered, as rosbag2 records them.
//!
//! What this module promises: [`QosProfile`] holds the nine policies rosbag2 records
//! (rosbag2_storage `qos.cpp`): history, depth, reliability, durability, deadline,
//! lifespan, liveliness, liveliness lease duration and
//! `avoid_ros_namespace_conventions`.
//!
//! - [`profiles_to_yaml`] writes a list of profiles as rosbag2 writes it into the
//!   `offered_qos_profiles` metadata of an MCAP channel and the `offered_qos_profiles` column
//!   of a `.db3` file: a YAML sequence, policies by their rmw names (`keep_last`,
//!   `reliable`, ...), durations as `sec`/`nsec` (metadata version 9 form).
//! - [`profiles_from_yaml`] reads every form rosbag2 ever wrote: policies as rmw enum
//!   numbers (metadata versions 4 to 8) or names (version 9), the whole list as one YAML
//!   string or as a YAML sequence; the "infinite" durations of Foxy-era rmw
//!   implementations are read as [`RmwDuration::INFINITE`], as rosbag2 does.

use serde::{Deserialize, Serialize};

/// Which samples a publisher keeps (`rmw_qos_history_policy_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum History {
    /// The rmw implementation's default.
    SystemDefault,
    /// Keep the last `depth` samples.
    #[default]
    KeepLast,
    /// Keep all samples.
    KeepAll,
    /// Not known (what rosbag2 records for graph information without it).
    Unknown,
}

/// Whether delivery is guaranteed (`rmw_qos_reliability_policy_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Reliability {
    /// The rmw implementation's default.
    SystemDefault,
    /// Retry until delivered.
    #[default]
    Reliable,
    /// Deliver what the network delivers.
    BestEffort,
    /// Not known.
    Unknown,
    /// Match the majority of endpoints.
    BestAvailable,
}

/// Whether samples outlive their publication (`rmw_qos_durability_policy_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Durability {
    /// The rmw implementation's default.
    SystemDefault,
    /// Late joiners get the publisher's kept samples.
    TransientLocal,
    /// Samples are not kept for late joiners.
    #[default]
    Volatile,
    /// Not known.
    Unknown,
    /// Match the majority of endpoints.
    BestAvailable,
}

/// How a publisher shows it is alive (`rmw_qos_liveliness_policy_t`).
///
/// The deprecated `MANUAL_BY_NODE` (rmw number 2), which rmw has no name for, is read as
/// [`Liveliness::Unknown`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Liveliness {
    /// The rmw implementation's default.
    #[default]
    SystemDefault,
    /// The rmw layer asserts liveliness.
    Automatic,
    /// The publisher asserts liveliness itself.
    ManualByTopic,
    /// Not known.
    Unknown,
    /// Match the majority of endpoints.
    BestAvailable,
}

/// A QoS duration (`rmw_time_t`): seconds and nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct RmwDuration {
    /// Whole seconds.
    #[serde(default)]
    pub sec: u64,
    /// Nanoseconds.
    #[serde(default)]
    pub nsec: u64,
}

impl RmwDuration {
    /// `RMW_DURATION_INFINITE`.
    pub const INFINITE: Self = Self {
        sec: 9_223_372_036,
        nsec: 854_775_807,
    };
    /// `RMW_DURATION_UNSPECIFIED`: the rmw implementation's default.
    pub const UNSPECIFIED: Self = Self { sec: 0, nsec: 0 };

    /// The Foxy-era "infinite" values of CycloneDDS, Fast DDS and Connext read as
    /// [`Self::INFINITE`], as rosbag2 reads them.
    fn normalized(self) -> Self {
        const CYCLONE: RmwDuration = RmwDuration {
            sec: 9_223_372_036,
            nsec: 854_775_807,
        };
        const FASTRTPS: RmwDuration = RmwDuration {
            sec: 0x7FFF_FFFF,
            nsec: 0xFFFF_FFFF,
        };
        const CONNEXT: RmwDuration = RmwDuration {
            sec: 0x7FFF_FFFF,
            nsec: 0x7FFF_FFFF,
        };
        if self == CYCLONE || self == FASTRTPS || self == CONNEXT {
            Self::INFINITE
        } else {
            self
        }
    }
}

/// The QoS profile one publisher offered on a topic.
///
/// The default is `rmw_qos_profile_default`: keep last 10, reliable, volatile, durations
/// unspecified, system-default liveliness.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct QosProfile {
    /// History policy.
    pub history: History,
    /// Queue depth (used with [`History::KeepLast`]).
    pub depth: u64,
    /// Reliability policy.
    pub reliability: Reliability,
    /// Durability policy.
    pub durability: Durability,
    /// Deadline between samples.
    pub deadline: RmwDuration,
    /// How long a sample stays valid.
    pub lifespan: RmwDuration,
    /// Liveliness policy.
    pub liveliness: Liveliness,
    /// How long a publisher counts as alive after asserting it.
    pub liveliness_lease_duration: RmwDuration,
    /// Whether topic names bypass the ROS namespace conventions.
    pub avoid_ros_namespace_conventions: bool,
}

impl Default for QosProfile {
    fn default() -> Self {
        Self {
            history: History::KeepLast,
            depth: 10,
            reliability: Reliability::Reliable,
            durability: Durability::Volatile,
            deadline: RmwDuration::UNSPECIFIED,
            lifespan: RmwDuration::UNSPECIFIED,
            liveliness: Liveliness::SystemDefault,
            liveliness_lease_duration: RmwDuration::UNSPECIFIED,
            avoid_ros_namespace_conventions: false,
        }
    }
}

/// The YAML rosbag2 writes for `profiles` (channel metadata and `.db3` column form).
pub fn profiles_to_yaml(profiles: &[QosProfile]) -> String {
    if profiles.is_empty() {
        // yaml-cpp's `Dump` of an empty sequence.
        return "[]".to_owned();
    }
    let raw: Vec<RawQos> = profiles.iter().map(RawQos::from).collect();
    // Serializing plain structs of strings, numbers and bools to YAML cannot fail.
    let text = serde_yaml::to_string(&raw).unwrap_or_default();
    text.trim_end().to_owned()
}

/// The profiles in `text`, in any form rosbag2 wrote (see the module docs); an empty text
/// is no profiles.
pub fn profiles_from_yaml(text: &str) -> Result<Vec<QosProfile>, String> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let list: Vec<RawQos> = serde_yaml::from_str(text).map_err(|e| e.to_string())?;
    Ok(list.into_iter().map(QosProfile::from).collect())
}

/// A YAML map from topic to one profile (`ros2 bag play --qos-profile-overrides-path`),
/// policies by name or number; a policy left out is [`History::Unknown`] and the like,
/// a depth left out 0.
pub fn profile_map_from_yaml(
    text: &str,
) -> Result<std::collections::BTreeMap<String, QosProfile>, String> {
    if text.trim().is_empty() {
        return Ok(std::collections::BTreeMap::new());
    }
    let map: std::collections::BTreeMap<String, RawQos> =
        serde_yaml::from_str(text).map_err(|e| e.to_string())?;
    Ok(map
        .into_iter()
        .map(|(topic, raw)| (topic, QosProfile::from(raw)))
        .collect())
}

/// `offered_qos_profiles` as found in metadata: a YAML string (versions 4 to 8) or a
/// sequence (version 9).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub(crate) enum QosField {
    List(Vec<RawQos>),
    Text(String),
}

impl Default for QosField {
    fn default() -> Self {
        Self::List(Vec::new())
    }
}

impl QosField {
    /// The version 9 form.
    pub(crate) fn list(profiles: &[QosProfile]) -> Self {
        Self::List(profiles.iter().map(RawQos::from).collect())
    }

    pub(crate) fn into_profiles(self) -> Result<Vec<QosProfile>, String> {
        match self {
            Self::List(list) => Ok(list.into_iter().map(QosProfile::from).collect()),
            Self::Text(text) => profiles_from_yaml(&text),
        }
    }
}

/// A policy as written: an rmw enum number (versions up to 8) or name (version 9).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub(crate) enum Policy {
    Number(i64),
    Name(String),
}

impl Default for Policy {
    fn default() -> Self {
        Self::Name("unknown".to_owned())
    }
}

/// One profile in rosbag2's YAML layout, keys in rosbag2's order.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct RawQos {
    #[serde(default)]
    history: Policy,
    #[serde(default)]
    depth: u64,
    #[serde(default)]
    reliability: Policy,
    #[serde(default)]
    durability: Policy,
    #[serde(default)]
    deadline: RmwDuration,
    #[serde(default)]
    lifespan: RmwDuration,
    #[serde(default)]
    liveliness: Policy,
    #[serde(default)]
    liveliness_lease_duration: RmwDuration,
    #[serde(default)]
    avoid_ros_namespace_conventions: bool,
}

impl From<&QosProfile> for RawQos {
    fn from(p: &QosProfile) -> Self {
        let name = |s: &str| Policy::Name(s.to_owned());
        Self {
            history: name(match p.history {
                History::SystemDefault => "system_default",
                History::KeepLast => "keep_last",
                History::KeepAll => "keep_all",
                History::Unknown => "unknown",
            }),
            depth: p.depth,
            reliability: name(match p.reliability {
                Reliability::SystemDefault => "system_default",
                Reliability::Reliable => "reliable",
                Reliability::BestEffort => "best_effort",
                Reliability::Unknown => "unknown",
                Reliability::BestAvailable => "best_available",
            }),
            durability: name(match p.durability {
                Durability::SystemDefault => "system_default",
                Durability::TransientLocal => "transient_local",
                Durability::Volatile => "volatile",
                Durability::Unknown => "unknown",
                Durability::BestAvailable => "best_available",
            }),
            deadline: p.deadline,
            lifespan: p.lifespan,
            liveliness: name(match p.liveliness {
                Liveliness::SystemDefault => "system_default",
                Liveliness::Automatic => "automatic",
                Liveliness::ManualByTopic => "manual_by_topic",
                Liveliness::Unknown => "unknown",
                Liveliness::BestAvailable => "best_available",
            }),
            liveliness_lease_duration: p.liveliness_lease_duration,
            avoid_ros_namespace_conventions: p.avoid_ros_namespace_conventions,
        }
    }
}

impl From<RawQos> for QosProfile {
    fn from(raw: RawQos) -> Self {
        // rmw enum numbers (rmw/types.h) and names (rmw/qos_string_conversions.c).
        let history = match &raw.history {
            Policy::Number(0) => History::SystemDefault,
            Policy::Number(1) => History::KeepLast,
            Policy::Number(2) => History::KeepAll,
            Policy::Number(_) => History::Unknown,
            Policy::Name(n) => match n.as_str() {
                "system_default" => History::SystemDefault,
                "keep_last" => History::KeepLast,
                "keep_all" => History::KeepAll,
                _ => History::Unknown,
            },
        };
        let reliability = match &raw.reliability {
            Policy::Number(0) => Reliability::SystemDefault,
            Policy::Number(1) => Reliability::Reliable,
            Policy::Number(2) => Reliability::BestEffort,
            Policy::Number(4) => Reliability::BestAvailable,
            Policy::Number(_) => Reliability::Unknown,
            Policy::Name(n) => match n.as_str() {
                "system_default" => Reliability::SystemDefault,
                "reliable" => Reliability::Reliable,
                "best_effort" => Reliability::BestEffort,
                "best_available" => Reliability::BestAvailable,
                _ => Reliability::Unknown,
            },
        };
        let durability = match &raw.durability {
            Policy::Number(0) => Durability::SystemDefault,
            Policy::Number(1) => Durability::TransientLocal,
            Policy::Number(2) => Durability::Volatile,
            Policy::Number(4) => Durability::BestAvailable,
            Policy::Number(_) => Durability::Unknown,
            Policy::Name(n) => match n.as_str() {
                "system_default" => Durability::SystemDefault,
                "transient_local" => Durability::TransientLocal,
                "volatile" => Durability::Volatile,
                "best_available" => Durability::BestAvailable,
                _ => Durability::Unknown,
            },
        };
        let liveliness = match &raw.liveliness {
            Policy::Number(0) => Liveliness::SystemDefault,
            Policy::Number(1) => Liveliness::Automatic,
            Policy::Number(3) => Liveliness::ManualByTopic,
            Policy::Number(5) => Liveliness::BestAvailable,
            Policy::Number(_) => Liveliness::Unknown,
            Policy::Name(n) => match n.as_str() {
                "system_default" => Liveliness::SystemDefault,
                "automatic" => Liveliness::Automatic,
                "manual_by_topic" => Liveliness::ManualByTopic,
                "best_available" => Liveliness::BestAvailable,
                _ => Liveliness::Unknown,
            },
        };
        Self {
            history,
            depth: raw.depth,
            reliability,
            durability,
            deadline: raw.deadline.normalized(),
            lifespan: raw.lifespan.normalized(),
            liveliness,
            liveliness_lease_duration: raw.liveliness_lease_duration.normalized(),
            avoid_ros_namespace_conventions: raw.avoid_ros_namespace_conventions,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A profile as rosbag2 wrote it in a Foxy-era bag (rosbag2_py talker test bag).
    const V4: &str = "- history: 3\n  depth: 0\n  reliability: 1\n  durability: 2\n  \
        deadline:\n    sec: 0\n    nsec: 0\n  lifespan:\n    sec: 10\n    nsec: 0\n  \
        liveliness: 1\n  liveliness_lease_duration:\n    sec: 2147483647\n    \
        nsec: 4294967295\n  avoid_ros_namespace_conventions: false";

    #[test]
    fn reads_rmw_numbers_and_foxy_infinity() {
        let p = profiles_from_yaml(V4).unwrap();
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].history, History::Unknown);
        assert_eq!(p[0].reliability, Reliability::Reliable);
        assert_eq!(p[0].durability, Durability::Volatile);
        assert_eq!(p[0].lifespan, RmwDuration { sec: 10, nsec: 0 });
        assert_eq!(p[0].liveliness, Liveliness::Automatic);
        assert_eq!(p[0].liveliness_lease_duration, RmwDuration::INFINITE);
    }

    #[test]
    fn writes_version_9_names_and_reads_them_back() {
        let profile = QosProfile {
            history: History::KeepAll,
            depth: 7,
            reliability: Reliability::BestEffort,
            durability: Durability::TransientLocal,
            deadline: RmwDuration::INFINITE,
            lifespan: RmwDuration { sec: 1, nsec: 5 },
            liveliness: Liveliness::ManualByTopic,
            liveliness_lease_duration: RmwDuration::UNSPECIFIED,
            avoid_ros_namespace_conventions: true,
        };
        let text = profiles_to_yaml(&[profile, QosProfile::default()]);
        assert!(text.starts_with(
            "- history: keep_all\n  depth: 7\n  reliability: best_effort\n  \
             durability: transient_local\n  deadline:\n    sec: 9223372036\n    nsec: 854775807\n"
        ));
        assert!(!text.ends_with('\n'));
        assert_eq!(
            profiles_from_yaml(&text).unwrap(),
            vec![profile, QosProfile::default()]
        );
        assert_eq!(profiles_to_yaml(&[]), "[]");
        assert!(profiles_from_yaml("[]").unwrap().is_empty());
        assert!(profiles_from_yaml("").unwrap().is_empty());
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(profiles_from_yaml("- history: [1, 2").is_err());
        assert!(profiles_from_yaml("{a: b}").is_err());
    }
}
