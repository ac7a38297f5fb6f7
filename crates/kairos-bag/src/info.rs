//! What `ros2 bag info` says of a bag, in its layout, so a user's scripts and eyes read
//! kairos's description as they read rosbag2's.
//!
//! What this module promises:
//! - [`describe`] is rosbag2_py's `format_bag_meta_data`: files, size, storage, distro
//!   (`unknown` when not recorded), duration, start and end in local time (`TZ` applies)
//!   and in seconds, the message count without service events, each topic, then the
//!   services whose calls were recorded (introspection topics, listed apart and not
//!   counted as messages) with their event counts.
//! - [`describe_verbose`] is `ros2 bag info --verbose`: each topic's and service's size
//!   contribution, and a service's requests and responses counted as rosbag2 counts them
//!   (distinct client and sequence number pairs), from the messages [`Contents`] read.
//! - [`topic_names`] is `--topic-name`: the topics, service events left out.
//! - [`summary`] is the same facts as data (`--json`).
//! - The text ends where rosbag2's does: print it with a line break after it, as
//!   `ros2 bag info` does.
//! - Every list is sorted by [`SortBy`], name first as rosbag2's default, count ascending;
//!   ties keep the bag's order.

use crate::error::{Error, Result};
use crate::metadata::{BagMetadata, TopicInformation};
use crate::reader::{Bag, ReadFilter};
use kairos_interface::service_event::{EventInfo, SERVICE_EVENT_SUFFIX};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write;

/// The column a value starts at: the longest label (`Topic information: `).
const INDENT: usize = 19;
/// Where a service line starts: after `Service information: `.
const SERVICE_INDENT: usize = 21;

/// The order topics and services are listed in (`ros2 bag info --sort`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SortBy {
    /// By name (the default).
    #[default]
    Name,
    /// By type name.
    Type,
    /// By message count, fewest first.
    Count,
}

impl SortBy {
    /// The names `--sort` takes.
    pub const CHOICES: [&'static str; 3] = ["name", "type", "count"];
}

impl std::str::FromStr for SortBy {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "name" => Ok(Self::Name),
            "type" => Ok(Self::Type),
            "count" => Ok(Self::Count),
            _ => Err(Error::InvalidOption(format!(
                "sorting method '{s}' is not one of {}",
                Self::CHOICES.join(", ")
            ))),
        }
    }
}

/// What reading every message of a bag tells beyond its metadata: bytes per topic, and
/// each recorded service's requests and responses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Contents {
    /// Serialized bytes per topic (a topic without messages is absent).
    pub bytes: HashMap<String, u64>,
    /// Per service event topic: distinct (client, sequence number) pairs of requests and
    /// of responses.
    pub calls: HashMap<String, CallCounts>,
}

/// One service's calls, as rosbag2's `Info::read_service_info` counts them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallCounts {
    /// Requests (sent or received), each client's sequence number once.
    pub requests: u64,
    /// Responses (sent or received), each client's sequence number once.
    pub responses: u64,
}

impl Contents {
    /// Reads every message of `bag`. An event whose header does not decode is counted in
    /// bytes only.
    pub fn of(bag: &Bag) -> Result<Self> {
        let services: HashSet<&str> = bag
            .info()
            .topics
            .iter()
            .filter(|t| t.service().is_some())
            .map(|t| t.name.as_str())
            .collect();
        let mut bytes: HashMap<String, u64> = HashMap::new();
        type Calls = (HashSet<([u8; 16], i64)>, HashSet<([u8; 16], i64)>);
        let mut seen: BTreeMap<String, Calls> = BTreeMap::new();
        for message in bag.read(&ReadFilter::all())? {
            let message = message?;
            *bytes.entry(message.topic.to_string()).or_default() += message.data.len() as u64;
            if !services.contains(&*message.topic) {
                continue;
            }
            let Ok(Some(info)) = EventInfo::from_event_payload(&message.data) else {
                continue;
            };
            let (requests, responses) = seen.entry(message.topic.to_string()).or_default();
            let call = (info.client_gid, info.sequence_number);
            if info.is_request() {
                requests.insert(call);
            } else {
                responses.insert(call);
            }
        }
        let calls = seen
            .into_iter()
            .map(|(topic, (requests, responses))| {
                let counts = CallCounts {
                    requests: requests.len() as u64,
                    responses: responses.len() as u64,
                };
                (topic, counts)
            })
            .collect();
        Ok(Self { bytes, calls })
    }

    fn size_of(&self, topic: &str) -> u64 {
        self.bytes.get(topic).copied().unwrap_or(0)
    }
}

/// The bag's description as data (`kairos bag info --json`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct Summary<'a> {
    /// The storage files, relative to the bag.
    pub files: &'a [String],
    /// Their bytes.
    pub size_bytes: u64,
    /// `mcap` or `sqlite3`.
    pub storage: &'a str,
    /// The metadata version.
    pub version: u32,
    /// `ROS_DISTRO` of the recording (empty when not recorded).
    pub ros_distro: &'a str,
    /// Last receive time minus first.
    pub duration_ns: u64,
    /// First receive time, ns since the epoch.
    pub start_ns: u64,
    /// Last receive time.
    pub end_ns: u64,
    /// Messages in the bag, service events included.
    pub messages: u64,
    /// `zstd` when compressed.
    pub compression_format: &'a str,
    /// `file` or `message` when compressed.
    pub compression_mode: &'a str,
    /// Each topic, in the bag's order.
    pub topics: Vec<TopicSummary<'a>>,
}

/// One topic of a [`Summary`].
#[derive(Debug, Clone, serde::Serialize)]
pub struct TopicSummary<'a> {
    /// The topic.
    pub name: &'a str,
    /// `pkg/msg/Type`.
    #[serde(rename = "type")]
    pub type_name: &'a str,
    /// Its messages.
    pub count: u64,
    /// `cdr`.
    pub serialization_format: &'a str,
    /// RIHS01 hash, empty when not recorded.
    pub type_description_hash: &'a str,
}

/// The bag's description as data, `bag_size` its storage files' bytes.
pub fn summary(meta: &BagMetadata, bag_size: u64) -> Summary<'_> {
    Summary {
        files: &meta.relative_file_paths,
        size_bytes: bag_size,
        storage: &meta.storage_identifier,
        version: meta.version,
        ros_distro: &meta.ros_distro,
        duration_ns: meta.duration_ns,
        start_ns: meta.starting_time_ns,
        end_ns: meta.end_time_ns(),
        messages: meta.message_count,
        compression_format: &meta.compression_format,
        compression_mode: &meta.compression_mode,
        topics: meta
            .topics
            .iter()
            .map(|t| TopicSummary {
                name: &t.name,
                type_name: &t.type_name,
                count: t.message_count,
                serialization_format: &t.serialization_format,
                type_description_hash: &t.type_description_hash,
            })
            .collect(),
    }
}

/// `ros2 bag info`: the bag's description, `bag_size` its storage files' bytes.
pub fn describe(meta: &BagMetadata, bag_size: u64, sort: SortBy) -> String {
    let mut out = header(meta, bag_size);
    topic_lines(&mut out, meta, sort, None);
    let services = sorted(services(meta), sort, |s| s.message_count);
    let _ = writeln!(out, "{:<INDENT$}{}", "Service:", services.len());
    out.push_str("Service information: ");
    for (i, topic) in services.iter().enumerate() {
        let (service, service_type) = topic.service().unwrap_or_default();
        indent_after_first(&mut out, i, SERVICE_INDENT);
        let _ = writeln!(
            out,
            "Service: {service} | Type: {service_type} | Event Count: {} | Serialization Format: {}",
            topic.message_count, topic.serialization_format
        );
    }
    out
}

/// `ros2 bag info --verbose`: as [`describe`], with each topic's and service's bytes and
/// each service's requests and responses from `contents`.
pub fn describe_verbose(
    meta: &BagMetadata,
    bag_size: u64,
    sort: SortBy,
    contents: &Contents,
) -> String {
    let mut out = header(meta, bag_size);
    topic_lines(&mut out, meta, sort, Some(contents));
    let calls = |t: &TopicInformation| contents.calls.get(&t.name).copied().unwrap_or_default();
    let services = sorted(services(meta), sort, |t| {
        let c = calls(t);
        c.requests + c.responses
    });
    let _ = writeln!(out, "{:<INDENT$}{}", "Service:", services.len());
    out.push_str("Service information: ");
    for (i, topic) in services.iter().enumerate() {
        let (service, service_type) = topic.service().unwrap_or_default();
        let c = calls(topic);
        indent_after_first(&mut out, i, SERVICE_INDENT);
        let _ = writeln!(
            out,
            "Service: {service} | Type: {service_type} | Request Count: {} | Response Count: {} | Size Contribution: {} | Serialization Format: {}",
            c.requests,
            c.responses,
            human_size(contents.size_of(&format!("{service}{SERVICE_EVENT_SUFFIX}"))),
            topic.serialization_format
        );
    }
    out
}

/// `ros2 bag info --topic-name`: the topics' names, service events left out.
pub fn topic_names(meta: &BagMetadata, sort: SortBy) -> Vec<&str> {
    sorted(plain_topics(meta), sort, |t| t.message_count)
        .into_iter()
        .map(|t| t.name.as_str())
        .collect()
}

/// The bytes of `bag`'s storage files.
pub fn bag_size(bag: &Bag) -> u64 {
    bag.files()
        .iter()
        .filter_map(|file| file.metadata().ok())
        .map(|m| m.len())
        .sum()
}

fn header(meta: &BagMetadata, bag_size: u64) -> String {
    let mut out = String::from("\n");
    let mut line = |label: &str, value: &str| {
        let _ = writeln!(out, "{:<INDENT$}{value}", format!("{label}:"));
    };
    line(
        "Files",
        &meta.relative_file_paths.join(&format!("\n{:INDENT$}", "")),
    );
    line("Bag size", &human_size(bag_size));
    line("Storage id", &meta.storage_identifier);
    line(
        "ROS Distro",
        if meta.ros_distro.is_empty() {
            "unknown"
        } else {
            &meta.ros_distro
        },
    );
    line("Duration", &format!("{}s", seconds(meta.duration_ns)));
    line("Start", &time_point(meta.starting_time_ns));
    line("End", &time_point(meta.end_time_ns()));
    let events: u64 = services(meta).iter().map(|t| t.message_count).sum();
    line(
        "Messages",
        &meta.message_count.saturating_sub(events).to_string(),
    );
    out
}

fn topic_lines(out: &mut String, meta: &BagMetadata, sort: SortBy, sizes: Option<&Contents>) {
    out.push_str("Topic information: ");
    let topics = sorted(plain_topics(meta), sort, |t| t.message_count);
    for (i, t) in topics.iter().enumerate() {
        indent_after_first(out, i, INDENT);
        let _ = write!(
            out,
            "Topic: {} | Type: {} | Count: {} | ",
            t.name, t.type_name, t.message_count
        );
        if let Some(contents) = sizes {
            let _ = write!(
                out,
                "Size Contribution: {} | ",
                human_size(contents.size_of(&t.name))
            );
        }
        let _ = writeln!(out, "Serialization Format: {}", t.serialization_format);
    }
    if topics.is_empty() {
        out.push('\n');
    }
}

fn indent_after_first(out: &mut String, index: usize, width: usize) {
    if index > 0 {
        let _ = write!(out, "{:width$}", "");
    }
}

fn plain_topics(meta: &BagMetadata) -> Vec<&TopicInformation> {
    meta.topics
        .iter()
        .filter(|t| t.service().is_none())
        .collect()
}

fn services(meta: &BagMetadata) -> Vec<&TopicInformation> {
    meta.topics
        .iter()
        .filter(|t| t.service().is_some())
        .collect()
}

/// `items` in `sort`'s order; a service sorts by its service's name and type.
fn sorted(
    mut items: Vec<&TopicInformation>,
    sort: SortBy,
    count: impl Fn(&TopicInformation) -> u64,
) -> Vec<&TopicInformation> {
    match sort {
        SortBy::Name => items.sort_by(|a, b| a.name.cmp(&b.name)),
        SortBy::Type => items.sort_by(|a, b| a.type_name.cmp(&b.type_name)),
        SortBy::Count => items.sort_by_key(|t| count(t)),
    }
    items
}

/// `1.500000000`.
fn seconds(ns: u64) -> String {
    format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000)
}

/// rosbag2's `format_time_point`: `Apr  9 2020 04:27:36.763032325 (1586406456.763032325)`,
/// in local time.
fn time_point(ns: u64) -> String {
    let secs = i64::try_from(ns / 1_000_000_000).unwrap_or(i64::MAX);
    let date = chrono::DateTime::from_timestamp(secs, 0)
        .map(|utc| {
            utc.with_timezone(&chrono::Local)
                .format("%b %e %Y %H:%M:%S")
                .to_string()
        })
        .unwrap_or_default();
    format!("{date}.{:09} ({})", ns % 1_000_000_000, seconds(ns))
}

/// rosbag2's `format_file_size`: `217 B`, `2.7 KiB`.
pub fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topic(name: &str, type_name: &str, count: u64) -> TopicInformation {
        TopicInformation {
            name: name.into(),
            type_name: type_name.into(),
            serialization_format: "cdr".into(),
            message_count: count,
            ..Default::default()
        }
    }

    fn meta() -> BagMetadata {
        BagMetadata {
            storage_identifier: "mcap".into(),
            relative_file_paths: vec!["b_0.mcap".into(), "b_1.mcap".into()],
            duration_ns: 1_500_000_000,
            starting_time_ns: 1_586_406_456_763_032_325,
            message_count: 9,
            topics: vec![
                topic("/z", "std_msgs/msg/A", 1),
                topic("/add/_service_event", "pkg/srv/Add_Event", 4),
                topic("/a", "std_msgs/msg/B", 4),
            ],
            ..Default::default()
        }
    }

    #[test]
    fn topics_and_services_are_listed_apart_in_rosbag2s_layout() {
        let text = describe(&meta(), 2048, SortBy::Name);
        assert!(
            text.starts_with("\nFiles:             b_0.mcap\n                   b_1.mcap\n"),
            "{text}"
        );
        for expected in [
            "\nBag size:          2.0 KiB\n",
            "\nROS Distro:        unknown\n",
            "\nDuration:          1.500000000s\n",
            "\nMessages:          5\n",
            "\nTopic information: Topic: /a | Type: std_msgs/msg/B | Count: 4 | Serialization Format: cdr\n                   Topic: /z |",
            "\nService:           1\nService information: Service: /add | Type: pkg/srv/Add | Event Count: 4 | Serialization Format: cdr\n",
        ] {
            assert!(text.contains(expected), "{expected:?} in:\n{text}");
        }
        assert!(text.contains("(1586406456.763032325)\n"), "{text}");
        assert!(text.contains("(1586406458.263032325)\n"), "{text}");
    }

    #[test]
    fn sorting_follows_the_choice_and_count_is_ascending() {
        assert_eq!(topic_names(&meta(), SortBy::Name), ["/a", "/z"]);
        assert_eq!(topic_names(&meta(), SortBy::Count), ["/z", "/a"]);
        assert_eq!(topic_names(&meta(), SortBy::Type), ["/z", "/a"]);
        assert_eq!("COUNT".parse::<SortBy>().unwrap(), SortBy::Count);
        let err = "size".parse::<SortBy>().unwrap_err().to_string();
        assert!(
            err.contains("'size'") && err.contains("name, type, count"),
            "{err}"
        );
    }

    #[test]
    fn an_empty_list_ends_its_line() {
        let bag = BagMetadata {
            topics: vec![],
            ..meta()
        };
        let text = describe(&bag, 0, SortBy::Name);
        assert!(
            text.ends_with("\nTopic information: \nService:           0\nService information: "),
            "{text}"
        );
        assert!(text.contains("\nBag size:          0 B\n"), "{text}");
    }
}
