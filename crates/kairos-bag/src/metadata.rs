//! A bag's metadata: what rosbag2 writes into `metadata.yaml` and into each storage file.
//!
//! What this module promises: [`BagMetadata::from_yaml`] reads the metadata of every
//! rosbag2 version (1 to [`CURRENT_VERSION`]), in the `metadata.yaml` form (under the key
//! `rosbag2_bagfile_information`) or in the bare form rosbag2 stores in an MCAP `rosbag2`
//! metadata record (`serialized_metadata`) and in a `.db3` file's `metadata` table. A key
//! a version did not have yet reads as empty, as rosbag2_storage's `yaml.hpp` decodes it;
//! `offered_qos_profiles` is read both as the YAML string of versions 4 to 8 and as the
//! list of version 9.
//!
//! [`BagMetadata::to_metadata_yaml`] and [`BagMetadata::to_yaml`] write version
//! [`CURRENT_VERSION`] with rosbag2's keys in rosbag2's order. The YAML style is
//! serde_yaml's rather than yaml-cpp's (sequences are not indented under their key, an
//! empty `custom_data` is `null` rather than `~`); the document is the same.

use crate::error::{Error, Result};
use crate::qos::{QosField, QosProfile};
use serde::{Deserialize, Deserializer, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The name of the metadata file in a bag folder.
pub const METADATA_FILENAME: &str = "metadata.yaml";

/// The metadata version this crate writes: rosbag2's current one (`BagMetadata::version`
/// in rosbag2_storage's `bag_metadata.hpp`).
pub const CURRENT_VERSION: u32 = 9;

/// What rosbag2 knows about a bag: its storage, files, time span and topics.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BagMetadata {
    /// The metadata version the bag was written with (0 for a bag opened from storage
    /// files that hold no rosbag2 metadata, such as MCAP files written by other tools).
    pub version: u32,
    /// The storage plugin: `mcap` or `sqlite3`.
    pub storage_identifier: String,
    /// The storage files, relative to the bag folder, in the order they were written.
    pub relative_file_paths: Vec<String>,
    /// Per storage file: path, time span, message count (versions 5 and later).
    pub files: Vec<FileInformation>,
    /// Last receive time minus first, in nanoseconds.
    pub duration_ns: u64,
    /// First receive time, nanoseconds since the epoch (rosbag2 writes `i64::MAX` for a
    /// bag without messages).
    pub starting_time_ns: u64,
    /// Messages in the bag.
    pub message_count: u64,
    /// The topics and how many messages each has (`topics_with_message_count`).
    pub topics: Vec<TopicInformation>,
    /// `zstd` when the bag is compressed, else empty.
    pub compression_format: String,
    /// `file` or `message` when the bag is compressed, else empty.
    pub compression_mode: String,
    /// Free key/value pairs the recording tool stored (versions 6 and later).
    pub custom_data: BTreeMap<String, String>,
    /// `ROS_DISTRO` of the recording (versions 8 and later).
    pub ros_distro: String,
}

/// One storage file of a bag.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FileInformation {
    /// The path, relative to the bag folder.
    pub path: String,
    /// First receive time in the file, nanoseconds since the epoch.
    pub starting_time_ns: u64,
    /// Last receive time minus first, in nanoseconds.
    pub duration_ns: u64,
    /// Messages in the file.
    pub message_count: u64,
}

/// One topic of a bag and its message count.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TopicInformation {
    /// The topic name.
    pub name: String,
    /// The message type, `pkg/msg/Type`.
    pub type_name: String,
    /// `cdr` for ROS 2 messages.
    pub serialization_format: String,
    /// The QoS profiles the topic's publishers offered.
    pub offered_qos_profiles: Vec<QosProfile>,
    /// The REP-2011 type hash (`RIHS01_...`), empty when not recorded.
    pub type_description_hash: String,
    /// Messages on the topic.
    pub message_count: u64,
}

impl TopicInformation {
    /// The service whose calls this topic records, when it is a service's introspection
    /// topic (`<service>/_service_event` of a `pkg/srv/<Type>_Event`, rosbag2's
    /// `is_service_event_topic`): `(service, pkg/srv/Type)`.
    pub fn service(&self) -> Option<(&str, &str)> {
        let service = self
            .name
            .strip_suffix(kairos_interface::service_event::SERVICE_EVENT_SUFFIX)?;
        let service_type = self.type_name.strip_suffix("_Event")?;
        service_type
            .contains("/srv/")
            .then_some((service, service_type))
    }
}

impl BagMetadata {
    /// Last receive time (start plus duration), nanoseconds since the epoch.
    pub fn end_time_ns(&self) -> u64 {
        self.starting_time_ns.saturating_add(self.duration_ns)
    }

    /// The topic named `name`.
    pub fn topic(&self, name: &str) -> Option<&TopicInformation> {
        self.topics.iter().find(|t| t.name == name)
    }

    /// Reads a `metadata.yaml` file.
    pub fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        Self::from_yaml(&text).map_err(|reason| Error::metadata(path, reason))
    }

    /// Parses metadata of any version, wrapped in `rosbag2_bagfile_information` (the
    /// `metadata.yaml` form) or bare (the form stored in storage files).
    pub fn from_yaml(text: &str) -> Result<Self, String> {
        let mut value: serde_yaml::Value = serde_yaml::from_str(text).map_err(|e| e.to_string())?;
        if let Some(inner) = value
            .as_mapping_mut()
            .and_then(|m| m.remove("rosbag2_bagfile_information"))
        {
            value = inner;
        }
        let raw: RawMetadata = serde_yaml::from_value(value).map_err(|e| e.to_string())?;
        raw.into_metadata()
    }

    /// The `metadata.yaml` text: this metadata under `rosbag2_bagfile_information`, as
    /// version [`CURRENT_VERSION`].
    pub fn to_metadata_yaml(&self) -> String {
        #[derive(Serialize)]
        struct File<'a> {
            rosbag2_bagfile_information: WriteMetadata<'a>,
        }
        to_yaml_text(&File {
            rosbag2_bagfile_information: WriteMetadata::from(self),
        })
    }

    /// The bare metadata text rosbag2 stores in storage files (`serialized_metadata`), as
    /// version [`CURRENT_VERSION`].
    pub fn to_yaml(&self) -> String {
        to_yaml_text(&WriteMetadata::from(self))
    }
}

fn to_yaml_text<T: Serialize>(value: &T) -> String {
    // Structs of strings, numbers and string maps always serialize.
    serde_yaml::to_string(value).unwrap_or_default()
}

/// A value that may also be written as `null` (`~`): null reads as the default.
fn nullable<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Option::<T>::deserialize(deserializer).map(Option::unwrap_or_default)
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Nanoseconds {
    #[serde(default, deserialize_with = "nullable")]
    nanoseconds: u64,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct SinceEpoch {
    #[serde(default, deserialize_with = "nullable")]
    nanoseconds_since_epoch: u64,
}

/// Metadata as read: every key but `version` may be missing (older versions) or null.
#[derive(Debug, Deserialize)]
struct RawMetadata {
    version: u32,
    #[serde(default, deserialize_with = "nullable")]
    storage_identifier: String,
    #[serde(default, deserialize_with = "nullable")]
    duration: Nanoseconds,
    #[serde(default, deserialize_with = "nullable")]
    starting_time: SinceEpoch,
    #[serde(default, deserialize_with = "nullable")]
    message_count: u64,
    #[serde(default, deserialize_with = "nullable")]
    topics_with_message_count: Vec<RawTopicInformation>,
    #[serde(default, deserialize_with = "nullable")]
    compression_format: String,
    #[serde(default, deserialize_with = "nullable")]
    compression_mode: String,
    #[serde(default, deserialize_with = "nullable")]
    relative_file_paths: Vec<String>,
    #[serde(default, deserialize_with = "nullable")]
    files: Vec<RawFile>,
    #[serde(default, deserialize_with = "nullable")]
    custom_data: BTreeMap<String, serde_yaml::Value>,
    #[serde(default, deserialize_with = "nullable")]
    ros_distro: String,
}

#[derive(Debug, Default, Deserialize)]
struct RawTopicInformation {
    #[serde(default, deserialize_with = "nullable")]
    topic_metadata: RawTopicMetadata,
    #[serde(default, deserialize_with = "nullable")]
    message_count: u64,
}

#[derive(Debug, Default, Deserialize)]
struct RawTopicMetadata {
    #[serde(default, deserialize_with = "nullable")]
    name: String,
    #[serde(rename = "type", default, deserialize_with = "nullable")]
    type_name: String,
    #[serde(default, deserialize_with = "nullable")]
    serialization_format: String,
    #[serde(default, deserialize_with = "nullable")]
    offered_qos_profiles: QosField,
    #[serde(default, deserialize_with = "nullable")]
    type_description_hash: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct RawFile {
    #[serde(default, deserialize_with = "nullable")]
    path: String,
    #[serde(default, deserialize_with = "nullable")]
    starting_time: SinceEpoch,
    #[serde(default, deserialize_with = "nullable")]
    duration: Nanoseconds,
    #[serde(default, deserialize_with = "nullable")]
    message_count: u64,
}

impl RawMetadata {
    fn into_metadata(self) -> Result<BagMetadata, String> {
        let topics = self
            .topics_with_message_count
            .into_iter()
            .map(|t| {
                let m = t.topic_metadata;
                let offered_qos_profiles = m
                    .offered_qos_profiles
                    .into_profiles()
                    .map_err(|e| format!("offered_qos_profiles of topic '{}': {e}", m.name))?;
                Ok(TopicInformation {
                    name: m.name,
                    type_name: m.type_name,
                    serialization_format: m.serialization_format,
                    offered_qos_profiles,
                    type_description_hash: m.type_description_hash,
                    message_count: t.message_count,
                })
            })
            .collect::<Result<_, String>>()?;
        let custom_data = self
            .custom_data
            .into_iter()
            .map(|(key, value)| {
                let text = match value {
                    serde_yaml::Value::String(s) => s,
                    serde_yaml::Value::Null => String::new(),
                    other => to_yaml_text(&other).trim_end().to_owned(),
                };
                (key, text)
            })
            .collect();
        Ok(BagMetadata {
            version: self.version,
            storage_identifier: self.storage_identifier,
            relative_file_paths: self.relative_file_paths,
            files: self
                .files
                .into_iter()
                .map(|f| FileInformation {
                    path: f.path,
                    starting_time_ns: f.starting_time.nanoseconds_since_epoch,
                    duration_ns: f.duration.nanoseconds,
                    message_count: f.message_count,
                })
                .collect(),
            duration_ns: self.duration.nanoseconds,
            starting_time_ns: self.starting_time.nanoseconds_since_epoch,
            message_count: self.message_count,
            topics,
            compression_format: self.compression_format,
            compression_mode: self.compression_mode,
            custom_data,
            ros_distro: self.ros_distro,
        })
    }
}

/// Metadata as written: rosbag2's keys, in the order rosbag2_storage's `yaml.hpp` emits
/// them.
#[derive(Serialize)]
struct WriteMetadata<'a> {
    version: u32,
    storage_identifier: &'a str,
    duration: Nanoseconds,
    starting_time: SinceEpoch,
    message_count: u64,
    topics_with_message_count: Vec<WriteTopicInformation<'a>>,
    compression_format: &'a str,
    compression_mode: &'a str,
    relative_file_paths: &'a [String],
    files: Vec<RawFile>,
    custom_data: Option<&'a BTreeMap<String, String>>,
    ros_distro: &'a str,
}

#[derive(Serialize)]
struct WriteTopicInformation<'a> {
    topic_metadata: WriteTopicMetadata<'a>,
    message_count: u64,
}

#[derive(Serialize)]
struct WriteTopicMetadata<'a> {
    name: &'a str,
    #[serde(rename = "type")]
    type_name: &'a str,
    serialization_format: &'a str,
    offered_qos_profiles: QosField,
    type_description_hash: &'a str,
}

impl<'a> From<&'a BagMetadata> for WriteMetadata<'a> {
    fn from(m: &'a BagMetadata) -> Self {
        Self {
            version: CURRENT_VERSION,
            storage_identifier: &m.storage_identifier,
            duration: Nanoseconds {
                nanoseconds: m.duration_ns,
            },
            starting_time: SinceEpoch {
                nanoseconds_since_epoch: m.starting_time_ns,
            },
            message_count: m.message_count,
            topics_with_message_count: m
                .topics
                .iter()
                .map(|t| WriteTopicInformation {
                    topic_metadata: WriteTopicMetadata {
                        name: &t.name,
                        type_name: &t.type_name,
                        serialization_format: &t.serialization_format,
                        offered_qos_profiles: QosField::list(&t.offered_qos_profiles),
                        type_description_hash: &t.type_description_hash,
                    },
                    message_count: t.message_count,
                })
                .collect(),
            compression_format: &m.compression_format,
            compression_mode: &m.compression_mode,
            relative_file_paths: &m.relative_file_paths,
            files: m
                .files
                .iter()
                .map(|f| RawFile {
                    path: f.path.clone(),
                    starting_time: SinceEpoch {
                        nanoseconds_since_epoch: f.starting_time_ns,
                    },
                    duration: Nanoseconds {
                        nanoseconds: f.duration_ns,
                    },
                    message_count: f.message_count,
                })
                .collect(),
            custom_data: (!m.custom_data.is_empty()).then_some(&m.custom_data),
            ros_distro: &m.ros_distro,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qos::{Durability, History, Reliability};

    /// Version 1: no QoS, no compression, no files (a yaml shape rosbag2 Dashing wrote).
    const V1: &str = "rosbag2_bagfile_information:
  version: 1
  storage_identifier: sqlite3
  relative_file_paths:
    - old_bag/old_bag.db3
  duration:
    nanoseconds: 10
  starting_time:
    nanoseconds_since_epoch: 100
  message_count: 2
  topics_with_message_count:
    - topic_metadata:
        name: /chatter
        type: std_msgs/msg/String
        serialization_format: cdr
      message_count: 2
";

    #[test]
    fn reads_version_1() {
        let m = BagMetadata::from_yaml(V1).unwrap();
        assert_eq!(m.version, 1);
        assert_eq!(m.storage_identifier, "sqlite3");
        assert_eq!(m.relative_file_paths, ["old_bag/old_bag.db3"]);
        assert_eq!(m.end_time_ns(), 110);
        assert_eq!(m.topics.len(), 1);
        assert_eq!(m.topics[0].type_name, "std_msgs/msg/String");
        assert!(m.topics[0].offered_qos_profiles.is_empty());
        assert!(m.files.is_empty() && m.custom_data.is_empty());
    }

    #[test]
    fn writes_version_9_and_reads_it_back() {
        let m = BagMetadata {
            version: CURRENT_VERSION,
            storage_identifier: "mcap".into(),
            relative_file_paths: vec!["b_0.mcap".into()],
            files: vec![FileInformation {
                path: "b_0.mcap".into(),
                starting_time_ns: 5,
                duration_ns: 6,
                message_count: 1,
            }],
            duration_ns: 6,
            starting_time_ns: 5,
            message_count: 1,
            topics: vec![TopicInformation {
                name: "/a".into(),
                type_name: "std_msgs/msg/String".into(),
                serialization_format: "cdr".into(),
                offered_qos_profiles: vec![QosProfile {
                    history: History::KeepAll,
                    reliability: Reliability::BestEffort,
                    durability: Durability::TransientLocal,
                    ..QosProfile::default()
                }],
                type_description_hash: "RIHS01_00".into(),
                message_count: 1,
            }],
            custom_data: [("k".to_owned(), "v".to_owned())].into(),
            ros_distro: "jazzy".into(),
            ..BagMetadata::default()
        };
        let file = m.to_metadata_yaml();
        assert!(file.starts_with("rosbag2_bagfile_information:\n  version: 9\n"));
        assert!(file.contains("offered_qos_profiles:\n"));
        assert!(file.contains("history: keep_all"));
        assert_eq!(BagMetadata::from_yaml(&file).unwrap(), m);
        assert_eq!(BagMetadata::from_yaml(&m.to_yaml()).unwrap(), m);
    }

    #[test]
    fn bad_yaml_is_an_error() {
        for text in [
            "",
            "[1, 2]",
            "version: x",
            "rosbag2_bagfile_information: 3",
            "{{{",
        ] {
            assert!(BagMetadata::from_yaml(text).is_err(), "{text:?}");
        }
    }
}
