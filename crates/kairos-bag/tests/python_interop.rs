//! Interoperability with independent implementations from PyPI (`pip install rosbags mcap
//! mcap-ros2-support`): bags kairos-bag writes (MCAP and sqlite3, uncompressed and zstd
//! message/file compressed) are read and decoded by rosbags' `AnyReader`
//! (which also checks each topic's RIHS01 hash against the stored definitions) and by
//! `mcap` + `mcap_ros2` (which decode from the `ros2msg` schema text alone); bags rosbags
//! writes (MCAP and sqlite3, metadata versions 8 and 9, uncompressed and zstd
//! file/message compressed) are read by kairos-bag message for message. A missing Python
//! package fails these tests with the `pip install` line; they are never skipped.

mod common;

use common::{
    Header, Quaternion, StringMsg, Time, Transform, TransformStamped, Vector3, msg_text, python,
};
use kairos_bag::qos::{Durability, History, Liveliness, Reliability, RmwDuration};
use kairos_bag::{
    Bag, BagCompression, BagWriter, Compression, QosProfile, StorageId, TopicInfo, WriterOptions,
    ros2msg_definition,
};
use kairos_interface::Message;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

const BASE: u64 = 1_700_000_000_000_000_000;

/// One message kairos writes.
#[derive(Debug, Clone)]
struct Sent {
    topic: &'static str,
    receive: u64,
    publish: u64,
    sequence: u32,
    text: Option<String>,
    transform: Option<TransformStamped>,
}

impl Sent {
    fn cdr(&self) -> Vec<u8> {
        match (&self.text, &self.transform) {
            (Some(text), _) => kairos_interface::encode(&StringMsg { data: text.clone() }),
            (_, Some(tf)) => kairos_interface::encode(tf),
            _ => unreachable!(),
        }
    }
}

fn tf_qos() -> QosProfile {
    QosProfile {
        history: History::KeepAll,
        depth: 0,
        reliability: Reliability::BestEffort,
        durability: Durability::TransientLocal,
        deadline: RmwDuration { sec: 1, nsec: 500 },
        lifespan: RmwDuration::INFINITE,
        liveliness: Liveliness::ManualByTopic,
        liveliness_lease_duration: RmwDuration { sec: 2, nsec: 0 },
        avoid_ros_namespace_conventions: true,
    }
}

/// 60 messages over 3 s on /chatter and /tf, some at equal receive times, not all written
/// in receive-time order.
fn messages() -> Vec<Sent> {
    (0..60u32)
        .map(|i| {
            let jitter = if i % 7 == 3 { 40_000_000 } else { 0 }; // written late
            let receive = BASE + u64::from(i) * 50_000_000 - jitter - u64::from(i % 5 == 1);
            let publish = receive - 1_000 * u64::from(i);
            if i % 3 == 2 {
                let n = i / 3;
                Sent {
                    topic: "/tf",
                    receive,
                    publish,
                    sequence: n,
                    text: None,
                    transform: Some(TransformStamped {
                        header: Header {
                            stamp: Time {
                                sec: 1_700 + n as i32,
                                nanosec: n * 1_000,
                            },
                            frame_id: "map".into(),
                        },
                        child_frame_id: format!("base_link_{n}"),
                        transform: Transform {
                            translation: Vector3 {
                                x: 1.5 * f64::from(n),
                                y: -2.0,
                                z: 0.25,
                            },
                            rotation: Quaternion {
                                x: 0.0,
                                y: 0.0,
                                z: 0.5,
                                w: 0.75,
                            },
                        },
                    }),
                }
            } else {
                Sent {
                    topic: "/chatter",
                    receive,
                    publish,
                    sequence: 1_000 + i,
                    text: Some(format!("hello from kairos {i} ✓")),
                    transform: None,
                }
            }
        })
        .collect()
}

/// Writes `sent` with kairos-bag; `finish` or drop.
fn write_kairos_bag(path: &Path, options: WriterOptions, sent: &[Sent], finish: bool) {
    let mut writer = BagWriter::create(path, options).unwrap();
    let chatter = TopicInfo::of::<StringMsg>("/chatter")
        .with_schema_text(ros2msg_definition(StringMsg::TYPE_NAME, msg_text).unwrap())
        .with_qos(vec![QosProfile::default()]);
    let tf = TopicInfo::of::<TransformStamped>("/tf")
        .with_schema_text(ros2msg_definition(TransformStamped::TYPE_NAME, msg_text).unwrap())
        .with_qos(vec![tf_qos(), QosProfile::default()]);
    writer.add_topic(chatter).unwrap();
    writer.add_topic(tf).unwrap();
    for m in sent {
        writer
            .write(m.topic, m.receive, m.publish, m.sequence, &m.cdr())
            .unwrap();
    }
    if finish {
        writer.finish().unwrap();
    } else {
        drop(writer);
    }
}

/// What `sent` looks like after a read: stable-sorted by receive time.
fn in_log_time_order(sent: &[Sent]) -> Vec<Sent> {
    let mut sorted = sent.to_vec();
    sorted.sort_by_key(|m| m.receive);
    sorted
}

/// `decoded` (a message as a Python reader decoded it) is `expected`.
fn assert_decoded(decoded: &Value, expected: &Sent) {
    if let Some(text) = &expected.text {
        assert_eq!(decoded["data"], Value::from(text.as_str()));
    }
    if let Some(tf) = &expected.transform {
        assert_eq!(decoded["header"]["frame_id"], "map");
        assert_eq!(decoded["header"]["stamp"]["sec"], tf.header.stamp.sec);
        assert_eq!(
            decoded["header"]["stamp"]["nanosec"],
            tf.header.stamp.nanosec
        );
        assert_eq!(
            decoded["child_frame_id"],
            Value::from(tf.child_frame_id.as_str())
        );
        let t = &decoded["transform"];
        assert_eq!(t["translation"]["x"], tf.transform.translation.x);
        assert_eq!(t["translation"]["y"], -2.0);
        assert_eq!(t["translation"]["z"], 0.25);
        assert_eq!(t["rotation"]["z"], 0.5);
        assert_eq!(t["rotation"]["w"], 0.75);
    }
}

/// `sent` cut into files as `BagWriter` cuts them with `max_file_duration` of `max` ns.
fn split_by_duration(sent: &[Sent], max: u64) -> Vec<Vec<Sent>> {
    let mut files: Vec<Vec<Sent>> = vec![Vec::new()];
    for m in sent {
        let start = files.last().and_then(|f| f.iter().map(|m| m.receive).min());
        if start.is_some_and(|start| m.receive.saturating_sub(start) > max) {
            files.push(Vec::new());
        }
        if let Some(file) = files.last_mut() {
            file.push(m.clone());
        }
    }
    files
}

fn mcap_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "mcap"))
        .collect();
    files.sort();
    files
}

/// rosbags reads and decodes what kairos-bag wrote: metadata, QoS, hashes, every message.
#[test]
fn rosbags_reads_kairos_bags() {
    let sent = messages();
    let expected = in_log_time_order(&sent);
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "split_zstd",
            WriterOptions {
                max_file_duration: Some(Duration::from_secs(1)),
                ..WriterOptions::default()
            },
            true,
        ),
        (
            "lz4_dropped",
            WriterOptions {
                compression: Compression::Lz4,
                ..WriterOptions::default()
            },
            false,
        ),
        (
            "sqlite3",
            WriterOptions {
                storage: StorageId::Sqlite3,
                ..WriterOptions::default()
            },
            true,
        ),
        (
            "mcap_message_zstd",
            WriterOptions {
                bag_compression: BagCompression::Message,
                ..WriterOptions::default()
            },
            true,
        ),
        (
            "sqlite3_file_zstd",
            WriterOptions {
                storage: StorageId::Sqlite3,
                bag_compression: BagCompression::File,
                max_file_duration: Some(Duration::from_secs(1)),
                ..WriterOptions::default()
            },
            false,
        ),
    ];
    for (name, options, finish) in cases {
        let storage = options.storage;
        let split = options.max_file_duration.is_some();
        let path = dir.path().join(name);
        write_kairos_bag(&path, options, &sent, finish);
        let read = python("read_rosbags.py", &[&path]);

        let info = &read["info"];
        assert_eq!(info["version"], 9);
        assert_eq!(info["storage_identifier"], storage.as_str(), "{name}");
        assert_eq!(info["message_count"], 60);
        assert_eq!(info["start_time"], expected[0].receive);
        // rosbags' end time is one past the last message.
        assert_eq!(info["end_time"], expected[59].receive + 1);
        if split {
            assert_eq!(info["files"].as_array().unwrap().len(), 3, "{name}");
        }

        let connections = read["connections"].as_array().unwrap();
        let tf = connections.iter().find(|c| c["topic"] == "/tf").unwrap();
        assert_eq!(tf["msgtype"], "geometry_msgs/msg/TransformStamped");
        assert_eq!(tf["digest"], TransformStamped::type_hash().to_string());
        assert_eq!(tf["serialization_format"], "cdr");
        assert_eq!(tf["msgcount"], 20);
        let qos = &tf["qos"][0];
        assert_eq!(qos["history"], "keep_all");
        assert_eq!(qos["reliability"], "best_effort");
        assert_eq!(qos["durability"], "transient_local");
        assert_eq!(qos["deadline"], serde_json::json!([1, 500]));
        assert_eq!(
            qos["lifespan"],
            serde_json::json!([9_223_372_036u64, 854_775_807])
        );
        assert_eq!(qos["liveliness"], "manual_by_topic");
        assert_eq!(qos["liveliness_lease_duration"], serde_json::json!([2, 0]));
        assert_eq!(qos["avoid_ros_namespace_conventions"], true);
        assert_eq!(tf["qos"][1]["history"], "keep_last");
        assert_eq!(tf["qos"][1]["depth"], 10);
        let chatter = connections
            .iter()
            .find(|c| c["topic"] == "/chatter")
            .unwrap();
        assert_eq!(chatter["digest"], StringMsg::type_hash().to_string());
        assert_eq!(chatter["msgcount"], 40);

        let decoded = read["messages"].as_array().unwrap();
        assert_eq!(decoded.len(), 60, "{name}");
        // rosbags orders by time; among equal times its order is its own.
        let mut got: Vec<(u64, String)> = decoded
            .iter()
            .map(|m| {
                (
                    m["timestamp"].as_u64().unwrap(),
                    serde_json::to_string(&m["data"]).unwrap(),
                )
            })
            .collect();
        assert!(
            got.windows(2).all(|w| w[0].0 <= w[1].0),
            "{name}: out of order"
        );
        for m in decoded {
            let time = m["timestamp"].as_u64().unwrap();
            let topic = m["topic"].as_str().unwrap();
            let candidates: Vec<&Sent> = expected
                .iter()
                .filter(|e| e.receive == time && e.topic == topic)
                .collect();
            assert!(
                !candidates.is_empty(),
                "{name}: unexpected message at {time}"
            );
            if candidates.len() == 1 {
                assert_decoded(&m["data"], candidates[0]);
            }
        }
        got.sort();
        got.dedup();
        assert_eq!(got.len(), 60, "{name}: a message was read twice");
    }
}

/// The `mcap` package reads each file kairos-bag wrote, and `mcap_ros2` decodes every
/// message from the schema text alone: the header, schemas, channels and metadata records
/// are as rosbag2 writes them.
#[test]
fn mcap_ros2_decodes_kairos_files() {
    let sent = messages();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("decoded");
    let options = WriterOptions {
        max_file_duration: Some(Duration::from_secs(1)),
        compression: Compression::Zstd,
        ..WriterOptions::default()
    };
    write_kairos_bag(&path, options, &sent, true);
    let files = mcap_files(&path);
    assert_eq!(files.len(), 3);
    assert_eq!(split_by_duration(&sent, 1_000_000_000).len(), 3);
    let args: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let read = python("read_mcap_ros2.py", &args);

    let mut decoded_all = Vec::new();
    for file in read["files"].as_array().unwrap() {
        assert_eq!(file["profile"], "ros2");
        assert!(
            file["library"].as_str().unwrap().starts_with("kairos-bag/"),
            "{}",
            file["library"]
        );
        assert_eq!(file["chunk_compression"], serde_json::json!(["zstd"]));
        // Every topic is registered in every file, as rosbag2 does after a split.
        let mut schemas: Vec<(String, String)> = file["schemas"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["name"].as_str().unwrap().to_owned(),
                    s["encoding"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        schemas.sort();
        assert_eq!(
            schemas,
            [
                (
                    "geometry_msgs/msg/TransformStamped".into(),
                    "ros2msg".into()
                ),
                ("std_msgs/msg/String".into(), "ros2msg".into())
            ]
        );
        let tf_schema = file["schemas"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == "geometry_msgs/msg/TransformStamped")
            .unwrap();
        let text = tf_schema["data"].as_str().unwrap();
        for dependency in [
            "MSG: geometry_msgs/Transform\n",
            "MSG: geometry_msgs/Quaternion\n",
            "MSG: geometry_msgs/Vector3\n",
            "MSG: std_msgs/Header\n",
            "MSG: builtin_interfaces/Time\n",
        ] {
            assert!(
                text.contains(dependency),
                "{dependency} missing from\n{text}"
            );
        }
        for channel in file["channels"].as_array().unwrap() {
            assert_eq!(channel["message_encoding"], "cdr");
            let mut keys: Vec<&String> = channel["metadata"].as_object().unwrap().keys().collect();
            keys.sort();
            assert_eq!(keys, ["offered_qos_profiles", "topic_type_hash"]);
            assert!(
                channel["metadata"]["topic_type_hash"]
                    .as_str()
                    .unwrap()
                    .starts_with("RIHS01_")
            );
        }
        let records = file["metadata"].as_array().unwrap();
        assert_eq!(records.len(), 1);
        assert_eq!(records[0]["name"], "rosbag2");
        let serialized = records[0]["metadata"]["serialized_metadata"]
            .as_str()
            .unwrap();
        let inner = kairos_bag::BagMetadata::from_yaml(serialized).unwrap();
        assert_eq!(inner.version, 9);
        assert_eq!(inner.storage_identifier, "mcap");
        let messages = file["messages"].as_array().unwrap();
        assert_eq!(file["statistics"]["message_count"], messages.len());
        decoded_all.extend(messages.iter().cloned());
    }

    // Files split in write order (as the writer splits: a message more than 1 s after
    // its file's first starts a new file); within each file, log-time order.
    let expected: Vec<Sent> = split_by_duration(&sent, 1_000_000_000)
        .iter()
        .flat_map(|file| in_log_time_order(file))
        .collect();
    assert_eq!(decoded_all.len(), expected.len());
    for (got, want) in decoded_all.iter().zip(&expected) {
        assert_eq!(got["topic"], want.topic);
        assert_eq!(got["log_time"], want.receive);
        assert_eq!(got["publish_time"], want.publish);
        assert_eq!(got["sequence"], want.sequence);
        assert_decoded(&got["data"], want);
    }
}

/// kairos-bag reads bags rosbags wrote, every storage and compression rosbags writes:
/// the metadata, QoS, hashes and every message's bytes, in log-time order, and decodes
/// them with kairos-interface.
#[test]
fn kairos_reads_rosbags_bags() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("mcap", "none", "9"),
        ("mcap", "none", "8"),
        ("mcap", "file", "9"),
        ("mcap", "message", "9"),
        ("sqlite3", "none", "9"),
        ("sqlite3", "file", "9"),
        ("sqlite3", "message", "8"),
    ];
    for (storage, compression, version) in cases {
        let case = format!("{storage}_{compression}_v{version}");
        let path = dir.path().join(&case);
        let written = python(
            "write_rosbags.py",
            &[
                &path,
                Path::new(storage),
                Path::new(compression),
                Path::new(version),
            ],
        );
        let written_messages = written["written"].as_array().unwrap();
        let bag = Bag::open(&path).unwrap_or_else(|e| panic!("{case}: {e}"));
        let info = bag.info();
        assert_eq!(info.version.to_string(), version, "{case}");
        assert_eq!(info.storage_identifier, storage, "{case}");
        assert_eq!(info.message_count, 40, "{case}");
        let chatter = bag.topic("/chatter").unwrap();
        assert_eq!(chatter.message_count, 25, "{case}");
        assert_eq!(chatter.type_name, "std_msgs/msg/String");
        assert_eq!(
            chatter.type_description_hash,
            written["hashes"]["std_msgs/msg/String"].as_str().unwrap()
        );
        // kairos-interface's hash of the hand-declared type is rosbags' hash.
        assert_eq!(
            chatter.type_description_hash,
            StringMsg::type_hash().to_string()
        );
        let tf = bag.topic("/tf").unwrap();
        assert_eq!(tf.message_count, 15, "{case}");
        assert_eq!(
            tf.type_description_hash,
            TransformStamped::type_hash().to_string()
        );
        assert_eq!(tf.offered_qos_profiles.len(), 2, "{case}");
        assert_eq!(tf.offered_qos_profiles[0], tf_qos(), "{case}");
        assert_eq!(
            chatter.offered_qos_profiles,
            [QosProfile {
                liveliness: Liveliness::Automatic,
                liveliness_lease_duration: RmwDuration::INFINITE,
                ..QosProfile::default()
            }],
            "{case}"
        );

        // Every message, byte for byte, in log-time order (rosbags writes in order).
        let mut expected: Vec<(&str, u64, String)> = written_messages
            .iter()
            .map(|m| {
                (
                    m["topic"].as_str().unwrap(),
                    m["timestamp"].as_u64().unwrap(),
                    m["cdr"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        expected.sort_by_key(|m| m.1);
        let got: Vec<(String, u64, String)> = bag
            .messages()
            .unwrap()
            .map(|m| {
                let m = m.unwrap();
                let hex: String = m.data.iter().map(|b| format!("{b:02x}")).collect();
                (m.topic.to_string(), m.log_time, hex)
            })
            .collect();
        let got: Vec<(&str, u64, String)> = got
            .iter()
            .map(|(t, l, h)| (t.as_str(), *l, h.clone()))
            .collect();
        assert_eq!(got, expected, "{case}");

        // Typed reads with kairos-interface's CDR decoder.
        let texts: Vec<String> = bag
            .typed::<StringMsg>("/chatter")
            .unwrap()
            .map(|r| r.unwrap().1.data)
            .collect();
        let want: Vec<&str> = written_messages
            .iter()
            .filter(|m| m["topic"] == "/chatter")
            .map(|m| m["fields"]["data"].as_str().unwrap())
            .collect();
        assert_eq!(texts, want, "{case}");
        let transforms: Vec<TransformStamped> = bag
            .typed::<TransformStamped>("/tf")
            .unwrap()
            .map(|r| r.unwrap().1)
            .collect();
        let want_tf: Vec<&Value> = written_messages
            .iter()
            .filter(|m| m["topic"] == "/tf")
            .map(|m| &m["fields"])
            .collect();
        assert_eq!(transforms.len(), want_tf.len());
        for (t, w) in transforms.iter().zip(want_tf) {
            assert_eq!(t.header.frame_id, w["frame_id"].as_str().unwrap());
            assert_eq!(i64::from(t.header.stamp.sec), w["sec"].as_i64().unwrap());
            assert_eq!(t.child_frame_id, w["child_frame_id"].as_str().unwrap());
            assert_eq!(t.transform.translation.x, w["x"].as_f64().unwrap());
            assert_eq!(t.transform.rotation.w, 0.75);
        }
    }
}
