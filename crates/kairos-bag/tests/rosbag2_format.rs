//! What kairos-bag writes has the shape of what rosbag2 writes: the keys, their order and
//! value kinds of `metadata.yaml` (against a rosbag2-written one brought to version 9 the
//! way rosbag2_storage's `yaml.hpp` changes it), and the MCAP records (header profile,
//! record kinds, schema encoding, channel encoding and metadata keys, the `rosbag2`
//! metadata record) against a `.mcap` file rosbag2 wrote.

mod common;

use common::{StringMsg, TransformStamped, msg_text, rosbag2_data};
use kairos_bag::{BagWriter, QosProfile, TopicInfo, WriterOptions, ros2msg_definition};
use kairos_interface::Message;
use mcap::records::Record;
use serde_yaml::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Key paths of a YAML document with the kind of their values, keys in document order
/// (sequence elements merged under `[]`).
fn shape(value: &Value, prefix: &str, out: &mut Vec<(String, &'static str)>) {
    let kind = match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Sequence(_) => "sequence",
        Value::Mapping(_) => "mapping",
        Value::Tagged(_) => "tagged",
    };
    if !prefix.is_empty() && !out.iter().any(|(p, _)| p == prefix) {
        out.push((prefix.to_owned(), kind));
    }
    match value {
        Value::Mapping(map) => {
            for (key, value) in map {
                let key = key.as_str().unwrap_or("?");
                let path = if prefix.is_empty() {
                    key.to_owned()
                } else {
                    format!("{prefix}.{key}")
                };
                shape(value, &path, out);
            }
        }
        Value::Sequence(items) => {
            for item in items {
                shape(item, &format!("{prefix}[]"), out);
            }
        }
        _ => {}
    }
}

fn shape_of(value: &Value) -> Vec<(String, &'static str)> {
    let mut out = Vec::new();
    shape(value, "", &mut out);
    out
}

/// A small bag kairos writes: two topics, one with no messages, custom data.
fn write_bag(path: &Path) {
    let options = WriterOptions {
        custom_data: BTreeMap::from([("robot".to_owned(), "kairos-1".to_owned())]),
        ros_distro: Some("jazzy".into()),
        ..WriterOptions::default()
    };
    let mut writer = BagWriter::create(path, options).unwrap();
    writer
        .add_topic(
            TopicInfo::of::<StringMsg>("/chatter")
                .with_schema_text(ros2msg_definition(StringMsg::TYPE_NAME, msg_text).unwrap())
                .with_qos(vec![QosProfile::default()]),
        )
        .unwrap();
    writer
        .add_topic(
            TopicInfo::of::<TransformStamped>("/tf")
                .with_schema_text(
                    ros2msg_definition(TransformStamped::TYPE_NAME, msg_text).unwrap(),
                )
                .with_qos(vec![QosProfile::default()]),
        )
        .unwrap();
    for i in 0..5u64 {
        let cdr = kairos_interface::encode(&StringMsg {
            data: format!("m{i}"),
        });
        writer
            .write("/chatter", 1_000 + i, 900 + i, i as u32, &cdr)
            .unwrap();
    }
    writer.finish().unwrap();
}

/// rosbag2's version 8 `metadata.yaml` brought to version 9 as rosbag2 would write it:
/// each `offered_qos_profiles` string becomes the sequence it holds.
fn rosbag2_metadata_as_version_9() -> Value {
    let text = std::fs::read_to_string(rosbag2_data(
        "mcap/bag_with_topics_and_service_events/metadata.yaml",
    ))
    .unwrap();
    let mut document: Value = serde_yaml::from_str(&text).unwrap();
    let info = &mut document["rosbag2_bagfile_information"];
    assert_eq!(info["version"], Value::from(8));
    info["version"] = Value::from(9);
    for topic in info["topics_with_message_count"].as_sequence_mut().unwrap() {
        let qos = &mut topic["topic_metadata"]["offered_qos_profiles"];
        let parsed: Value = serde_yaml::from_str(qos.as_str().unwrap()).unwrap();
        *qos = parsed;
    }
    // rosbag2 writes `custom_data: ~` when empty; a bag with custom data has a mapping.
    info["custom_data"] = serde_yaml::from_str("robot: kairos-1").unwrap();
    document
}

#[test]
fn metadata_yaml_has_rosbag2_keys_order_and_kinds() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shape");
    write_bag(&path);
    let ours: Value =
        serde_yaml::from_str(&std::fs::read_to_string(path.join("metadata.yaml")).unwrap())
            .unwrap();
    let theirs = rosbag2_metadata_as_version_9();
    let ours_shape = shape_of(&ours);
    let theirs_shape = shape_of(&theirs);
    // QoS policies are numbers in rosbag2's version 8 file and names in version 9.
    let normalize = |shape: Vec<(String, &'static str)>| -> Vec<(String, &'static str)> {
        shape
            .into_iter()
            .map(|(path, kind)| {
                let policy = ["history", "reliability", "durability", "liveliness"]
                    .iter()
                    .any(|p| path.ends_with(&format!("offered_qos_profiles[].{p}")));
                (path, if policy { "policy" } else { kind })
            })
            .collect()
    };
    assert_eq!(normalize(ours_shape), normalize(theirs_shape));

    // The values kairos knows are the ones it wrote.
    let info = &ours["rosbag2_bagfile_information"];
    assert_eq!(info["version"], Value::from(9));
    assert_eq!(info["storage_identifier"], Value::from("mcap"));
    assert_eq!(info["relative_file_paths"][0], Value::from("shape_0.mcap"));
    assert_eq!(
        info["starting_time"]["nanoseconds_since_epoch"],
        Value::from(1_000)
    );
    assert_eq!(info["duration"]["nanoseconds"], Value::from(4));
    assert_eq!(info["ros_distro"], Value::from("jazzy"));
    let tf = &info["topics_with_message_count"][1];
    assert_eq!(tf["message_count"], Value::from(0));
    assert_eq!(
        tf["topic_metadata"]["type_description_hash"],
        Value::from(TransformStamped::type_hash().to_string())
    );
    assert_eq!(
        tf["topic_metadata"]["offered_qos_profiles"][0]["history"],
        Value::from("keep_last")
    );
}

/// Every record of an MCAP file, chunks opened.
fn records(path: &Path) -> Vec<Record<'static>> {
    let bytes = std::fs::read(path).unwrap();
    let mut out = Vec::new();
    for record in mcap::read::LinearReader::new(&bytes).unwrap() {
        let record = record.unwrap();
        if let Record::Chunk { header, data } = &record {
            for inner in mcap::read::ChunkReader::new(header.clone(), data).unwrap() {
                out.push(into_owned(inner.unwrap()));
            }
        }
        out.push(into_owned(record));
    }
    out
}

fn into_owned(record: Record<'_>) -> Record<'static> {
    match record {
        Record::Schema { header, data } => Record::Schema {
            header,
            data: data.into_owned().into(),
        },
        Record::Message { header, data } => Record::Message {
            header,
            data: data.into_owned().into(),
        },
        Record::Chunk { header, .. } => Record::Chunk {
            header,
            data: Vec::new().into(),
        },
        Record::Header(h) => Record::Header(h),
        Record::Footer(f) => Record::Footer(f),
        Record::Channel(c) => Record::Channel(c),
        Record::MessageIndex(i) => Record::MessageIndex(i),
        Record::ChunkIndex(i) => Record::ChunkIndex(i),
        Record::Statistics(s) => Record::Statistics(s),
        Record::Metadata(m) => Record::Metadata(m),
        Record::MetadataIndex(i) => Record::MetadataIndex(i),
        Record::SummaryOffset(o) => Record::SummaryOffset(o),
        Record::DataEnd(d) => Record::DataEnd(d),
        other => Record::Unknown {
            opcode: other.opcode(),
            data: Vec::new().into(),
        },
    }
}

/// What the comparison looks at in a file's records.
#[derive(Debug, PartialEq)]
struct Shape {
    profile: String,
    kinds: BTreeSet<u8>,
    schema_encodings: BTreeSet<String>,
    schema_names_are_ros: bool,
    channel_encodings: BTreeSet<String>,
    channel_metadata_keys: BTreeSet<String>,
    qos_keys: Vec<String>,
    metadata_records: BTreeSet<(String, Vec<String>)>,
    serialized_metadata_keys: Vec<String>,
}

fn shape_of_mcap(path: &Path) -> Shape {
    let records = records(path);
    let mut shape = Shape {
        profile: String::new(),
        kinds: BTreeSet::new(),
        schema_encodings: BTreeSet::new(),
        schema_names_are_ros: true,
        channel_encodings: BTreeSet::new(),
        channel_metadata_keys: BTreeSet::new(),
        qos_keys: Vec::new(),
        metadata_records: BTreeSet::new(),
        serialized_metadata_keys: Vec::new(),
    };
    for record in &records {
        shape.kinds.insert(record.opcode());
        match record {
            Record::Header(h) => shape.profile = h.profile.clone(),
            Record::Schema { header, .. } => {
                shape.schema_encodings.insert(header.encoding.clone());
                let parts: Vec<&str> = header.name.split('/').collect();
                shape.schema_names_are_ros &=
                    parts.len() == 3 && (parts[1] == "msg" || parts[1] == "srv");
            }
            Record::Channel(c) => {
                shape.channel_encodings.insert(c.message_encoding.clone());
                shape
                    .channel_metadata_keys
                    .extend(c.metadata.keys().cloned());
                let qos: Value = serde_yaml::from_str(&c.metadata["offered_qos_profiles"]).unwrap();
                shape.qos_keys = qos[0]
                    .as_mapping()
                    .unwrap()
                    .keys()
                    .map(|k| k.as_str().unwrap().to_owned())
                    .collect();
            }
            Record::Metadata(m) => {
                shape
                    .metadata_records
                    .insert((m.name.clone(), m.metadata.keys().cloned().collect()));
                let text = &m.metadata["serialized_metadata"];
                let document: Value = serde_yaml::from_str(text).unwrap();
                shape.serialized_metadata_keys = document
                    .as_mapping()
                    .unwrap()
                    .keys()
                    .map(|k| k.as_str().unwrap().to_owned())
                    .collect();
            }
            _ => {}
        }
    }
    shape
}

#[test]
fn mcap_records_have_rosbag2_shape() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("records");
    write_bag(&path);
    let ours = shape_of_mcap(&path.join("records_0.mcap"));
    let theirs = shape_of_mcap(&rosbag2_data(
        "mcap/bag_with_topics_and_service_events/bag_with_topics_and_service_events.mcap",
    ));
    assert_eq!(ours, theirs);
    assert_eq!(ours.profile, "ros2");
    assert_eq!(
        ours.schema_encodings,
        BTreeSet::from(["ros2msg".to_owned()])
    );
    assert_eq!(
        ours.metadata_records,
        BTreeSet::from([("rosbag2".to_owned(), vec!["serialized_metadata".to_owned()])])
    );
    // Header, schema, channel, message, chunk, message index, chunk index, statistics,
    // metadata, metadata index, summary offset, data end, footer: the same in both.
    assert!(ours.kinds.is_superset(&BTreeSet::from([
        0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F
    ])));
}
