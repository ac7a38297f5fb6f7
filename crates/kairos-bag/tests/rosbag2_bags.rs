//! kairos-bag reads rosbag2's own test bags (tests/data/rosbag2, see its README) and finds
//! in them what rosbag2's tests and metadata say is there.

mod common;

use common::{StringMsg, rosbag2_data};
use kairos_bag::qos::{Durability, History, Liveliness, Reliability, RmwDuration};
use kairos_bag::{Bag, BagMessage, ReadFilter, StorageId};
use std::collections::BTreeMap;

fn read_all(bag: &Bag, filter: &ReadFilter) -> Vec<BagMessage> {
    bag.read(filter)
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap()
}

fn counts(messages: &[BagMessage]) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    for m in messages {
        *counts.entry(m.topic.to_string()).or_default() += 1;
    }
    counts
}

fn assert_log_time_order(messages: &[BagMessage]) {
    assert!(
        messages.windows(2).all(|w| w[0].log_time <= w[1].log_time),
        "messages out of log-time order"
    );
}

/// `ros2 bag info cdr_test` as rosbag2_tests' test_rosbag2_info_end_to_end.cpp expects it
/// (duration 0.151137181 s, start 1586406456.763032325, end 1586406456.914169506, 7
/// messages, /test_topic BasicTypes 3, /array_topic Arrays 4), in both storages.
#[test]
fn cdr_test_matches_rosbag2_info() {
    for (storage, id) in [("mcap", StorageId::Mcap), ("sqlite3", StorageId::Sqlite3)] {
        let bag = Bag::open(rosbag2_data(&format!("{storage}/cdr_test"))).unwrap();
        let info = bag.info();
        assert_eq!(bag.storage(), id);
        assert_eq!(info.version, 7);
        assert_eq!(info.storage_identifier, storage);
        assert_eq!(info.duration_ns, 151_137_181);
        assert_eq!(info.starting_time_ns, 1_586_406_456_763_032_325);
        assert_eq!(info.end_time_ns(), 1_586_406_456_914_169_506);
        assert_eq!(info.message_count, 7);
        let test_topic = bag.topic("/test_topic").unwrap();
        assert_eq!(test_topic.type_name, "test_msgs/msg/BasicTypes");
        assert_eq!(test_topic.message_count, 3);
        assert_eq!(test_topic.serialization_format, "cdr");
        let array_topic = bag.topic("/array_topic").unwrap();
        assert_eq!(array_topic.type_name, "test_msgs/msg/Arrays");
        assert_eq!(array_topic.message_count, 4);
        // The QoS string of version 7: "history: 3, depth: 4, reliability: 1, durability: 1".
        let qos = &array_topic.offered_qos_profiles;
        assert_eq!(qos.len(), 1);
        assert_eq!(qos[0].history, History::Unknown);
        assert_eq!(qos[0].depth, 4);
        assert_eq!(qos[0].reliability, Reliability::Reliable);
        assert_eq!(qos[0].durability, Durability::TransientLocal);
        assert_eq!(qos[0].liveliness, Liveliness::Automatic);

        let messages = read_all(&bag, &ReadFilter::all());
        assert_eq!(messages.len(), 7);
        assert_log_time_order(&messages);
        assert_eq!(messages[0].log_time, info.starting_time_ns);
        assert_eq!(messages[6].log_time, info.end_time_ns());
        assert_eq!(
            counts(&messages),
            BTreeMap::from([("/array_topic".into(), 4), ("/test_topic".into(), 3)])
        );
        for m in &messages {
            assert_eq!(&m.data[..2], &[0, 1], "little-endian CDR encapsulation");
            assert_eq!(
                &*m.type_name,
                bag.topic(&m.topic).unwrap().type_name.as_str()
            );
        }
    }
}

/// rosbag2_py's test_sequential_reader.py: /topic holds std_msgs/String messages
/// "Hello, world! 0" to "Hello, world! 9"; /rosout holds rcl_interfaces/Log.
#[test]
fn talker_decodes_as_rosbag2_py_reads_it() {
    for storage in ["mcap", "sqlite3"] {
        let bag = Bag::open(rosbag2_data(&format!("{storage}/talker"))).unwrap();
        let info = bag.info();
        assert_eq!(info.version, 4);
        assert_eq!(info.message_count, 20);
        assert_eq!(info.starting_time_ns, 1_585_866_235_112_411_371);
        assert_eq!(info.duration_ns, 4_531_096_768);
        assert_eq!(bag.topic("/topic").unwrap().message_count, 10);
        assert_eq!(
            bag.topic("/rosout").unwrap().type_name,
            "rcl_interfaces/msg/Log"
        );
        assert_eq!(bag.topic("/parameter_events").unwrap().message_count, 0);
        // Version 4 QoS of /rosout: lifespan 10 s, transient local.
        let rosout = &bag.topic("/rosout").unwrap().offered_qos_profiles[0];
        assert_eq!(rosout.lifespan, RmwDuration { sec: 10, nsec: 0 });
        assert_eq!(rosout.durability, Durability::TransientLocal);

        let texts: Vec<String> = bag
            .typed::<StringMsg>("/topic")
            .unwrap()
            .map(|r| r.unwrap().1.data)
            .collect();
        let expected: Vec<String> = (0..10).map(|i| format!("Hello, world! {i}")).collect();
        assert_eq!(texts, expected, "{storage}");

        let all = read_all(&bag, &ReadFilter::all());
        assert_eq!(all.len(), 20);
        assert_log_time_order(&all);
        assert!(matches!(
            bag.typed::<StringMsg>("/rosout"),
            Err(kairos_bag::Error::TypeMismatch { .. })
        ));
        assert!(matches!(
            bag.typed::<StringMsg>("/nope"),
            Err(kairos_bag::Error::NoSuchTopic { .. })
        ));
        // Reading leaves the folder as it was (talker.db3 is a WAL-mode database, which a
        // plain read-only SQLite connection would leave -wal and -shm files beside).
        let mut names: Vec<String> = std::fs::read_dir(rosbag2_data(&format!("{storage}/talker")))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        let data_file = if storage == "mcap" {
            "talker.mcap"
        } else {
            "talker.db3"
        };
        assert_eq!(names, ["metadata.yaml", data_file]);
    }
}

/// rosbag2_py's test_sequential_reader_multiple_files.py (test_reset_filter): the 5-file
/// bag `wbag`, filtered to AAA, CCC, DDD, starts AAA@1001, CCC@1002, AAA@1004; unfiltered,
/// AAA@1004 is followed by FFF@1004, BBB@1004, EEE@1005. Every message of the 6074 is read
/// once, merged across the files in log-time order.
/// The talker bag's message definitions, as rosbag2_py's
/// `test_sequential_reader.py::test_get_message_definitions` reads them, in both storages.
#[test]
fn talker_message_definitions_as_rosbag2_py_reads_them() {
    for storage in ["mcap", "sqlite3"] {
        let bag = Bag::open(rosbag2_data(&format!("{storage}/talker"))).unwrap();
        let definitions = bag.message_definitions().unwrap();
        let found: Vec<(&str, &str)> = definitions
            .iter()
            .map(|d| (d.type_name.as_str(), d.encoding.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                ("rcl_interfaces/msg/Log", "ros2msg"),
                ("rcl_interfaces/msg/ParameterEvent", "ros2msg"),
                ("std_msgs/msg/String", "ros2msg")
            ],
            "{storage}"
        );
        let text = |i: usize| definitions[i].text.as_str();
        assert!(text(0).contains("uint8 level"), "{storage}: {}", text(0));
        assert!(text(1).contains("Parameter[] new_parameters"), "{storage}");
        assert!(text(2).contains("string data"), "{storage}");
    }
    // A db schema 2 file has no message_definitions table: no definitions, no error.
    let old = Bag::open(rosbag2_data("sqlite3/wbag")).unwrap();
    assert_eq!(old.message_definitions().unwrap(), []);
}

#[test]
fn wbag_merges_five_files_as_rosbag2_py_reads_them() {
    for storage in ["mcap", "sqlite3"] {
        let bag = Bag::open(rosbag2_data(&format!("{storage}/wbag"))).unwrap();
        assert_eq!(bag.files().len(), 5);
        let info = bag.info();
        assert_eq!(info.message_count, 6074);

        let filtered = read_all(&bag, &ReadFilter::all().topics(["AAA", "CCC", "DDD"]));
        let head: Vec<(&str, u64)> = filtered[..3]
            .iter()
            .map(|m| (&*m.topic, m.log_time))
            .collect();
        assert_eq!(
            head,
            [("AAA", 1001), ("CCC", 1002), ("AAA", 1004)],
            "{storage}"
        );
        assert!(
            filtered
                .iter()
                .all(|m| ["AAA", "CCC", "DDD"].contains(&&*m.topic))
        );

        let all = read_all(&bag, &ReadFilter::all());
        assert_eq!(all.len(), 6074);
        assert_log_time_order(&all);
        let at = all
            .iter()
            .position(|m| &*m.topic == "AAA" && m.log_time == 1004)
            .unwrap();
        let next: Vec<(&str, u64)> = all[at + 1..at + 4]
            .iter()
            .map(|m| (&*m.topic, m.log_time))
            .collect();
        assert_eq!(
            next,
            [("FFF", 1004), ("BBB", 1004), ("EEE", 1005)],
            "{storage}"
        );
        let expected: BTreeMap<String, u64> = info
            .topics
            .iter()
            .map(|t| (t.name.clone(), t.message_count))
            .collect();
        assert_eq!(counts(&all), expected);

        // Time filter: inclusive bounds.
        let window = read_all(&bag, &ReadFilter::all().start(1500).end(1600));
        assert!(!window.is_empty());
        assert!(window.iter().all(|m| (1500..=1600).contains(&m.log_time)));
        let in_window = all
            .iter()
            .filter(|m| (1500..=1600).contains(&m.log_time))
            .count();
        assert_eq!(window.len(), in_window);
    }
}

/// Metadata versions 5, 6 and 8 and service event topics; the `rosbag2` metadata records
/// of libmcap 1.1.0 files; two offered QoS profiles on one topic.
#[test]
fn other_metadata_versions() {
    // Bag, metadata version, message count, messages per topic.
    type Case<'a> = (&'a str, u32, u64, &'a [(&'a str, u64)]);
    let cases: [Case; 5] = [
        (
            "mcap/convert_a",
            5,
            150,
            &[("a_empty", 100), ("b_basictypes", 50)],
        ),
        (
            "sqlite3/rewriter_a",
            5,
            150,
            &[("a_empty", 100), ("b_basictypes", 50)],
        ),
        (
            "mcap/rewriter_b",
            6,
            75,
            &[("a_empty", 25), ("c_strings", 50)],
        ),
        (
            "mcap/bag_with_topics_and_service_events",
            8,
            10,
            &[
                ("/test_service1/_service_event", 4),
                ("/test_service2/_service_event", 4),
                ("/test_topic1", 1),
                ("/test_topic2", 1),
            ],
        ),
        (
            "sqlite3/bag_with_topics_and_service_events",
            8,
            10,
            &[
                ("/test_service1/_service_event", 4),
                ("/test_service2/_service_event", 4),
                ("/test_topic1", 1),
                ("/test_topic2", 1),
            ],
        ),
    ];
    for (path, version, count, topics) in cases {
        let bag = Bag::open(rosbag2_data(path)).unwrap();
        assert_eq!(bag.info().version, version, "{path}");
        assert_eq!(bag.info().message_count, count, "{path}");
        let all = read_all(&bag, &ReadFilter::all());
        assert_log_time_order(&all);
        let expected: BTreeMap<String, u64> =
            topics.iter().map(|(t, c)| (t.to_string(), *c)).collect();
        assert_eq!(counts(&all), expected, "{path}");
        if let Some(first) = all.first() {
            assert_eq!(first.log_time, bag.info().starting_time_ns, "{path}");
        }
    }
    let events = Bag::open(rosbag2_data("mcap/bag_with_topics_and_service_events")).unwrap();
    let service = events.topic("/test_service1/_service_event").unwrap();
    assert_eq!(service.type_name, "test_msgs/srv/BasicTypes_Event");
    assert_eq!(
        service.type_description_hash,
        "RIHS01_5b9988a4805a06ae22dff12903a774ccda710e9514926b826ffc884e3a9a982e"
    );
    assert_eq!(
        service.offered_qos_profiles[0].deadline,
        RmwDuration::INFINITE
    );
    let convert = Bag::open(rosbag2_data("mcap/convert_a")).unwrap();
    let qos = &convert.topic("a_empty").unwrap().offered_qos_profiles;
    assert_eq!(qos.len(), 2);
    assert_eq!(qos[1].reliability, Reliability::BestEffort);
    assert_eq!(qos[0].history, History::KeepLast);
}

/// ros2bag's empty_bag: version 4, no messages (rosbag2 writes `i64::MAX` as its start).
#[test]
fn empty_bag() {
    let bag = Bag::open(rosbag2_data("sqlite3/empty_bag")).unwrap();
    assert_eq!(bag.info().message_count, 0);
    assert_eq!(bag.info().topics.len(), 2);
    assert_eq!(bag.messages().unwrap().count(), 0);
}

/// A single rosbag2 `.mcap` file opened without metadata.yaml: topics from its channels,
/// counts from its statistics, version and distro from its `rosbag2` metadata record.
#[test]
fn single_mcap_file() {
    let bag = Bag::open(rosbag2_data("single/only_topics.mcap")).unwrap();
    let info = bag.info();
    assert_eq!(info.storage_identifier, "mcap");
    assert_eq!(info.version, 8);
    assert_eq!(info.ros_distro, "rolling");
    assert_eq!(info.message_count, 7);
    // What the file's own rosbag2 metadata record says: start and duration 6537925 ns.
    assert_eq!(info.starting_time_ns, 1_697_521_620_031_724_098);
    assert_eq!(info.duration_ns, 6_537_925);
    let events = bag.topic("/parameter_events").unwrap();
    assert_eq!(events.type_name, "rcl_interfaces/msg/ParameterEvent");
    assert_eq!(events.message_count, 7);
    assert_eq!(events.offered_qos_profiles.len(), 2);
    assert_eq!(
        events.type_description_hash,
        "RIHS01_043e627780fcad87a22d225bc2a037361dba713fca6a6b9f4b869a5aa0393204"
    );
    assert_eq!(bag.topic("/rosout").unwrap().message_count, 0);
    let all = read_all(&bag, &ReadFilter::all());
    assert_eq!(all.len(), 7);
    assert_log_time_order(&all);
    assert!(all.iter().all(|m| m.publish_time == m.log_time));
}

/// A single rosbag2 `.db3` file (db schema 4, with `metadata` and `schema` tables).
#[test]
fn single_db3_file() {
    let bag = Bag::open(rosbag2_data("single/topics_and_services.db3")).unwrap();
    let info = bag.info();
    assert_eq!(info.storage_identifier, "sqlite3");
    assert_eq!(info.ros_distro, "rolling");
    assert_eq!(info.message_count, 13);
    assert_eq!(bag.topic("/parameter_events").unwrap().message_count, 7);
    assert_eq!(
        bag.topic("/add_two_ints/_service_event")
            .unwrap()
            .message_count,
        6
    );
    let all = read_all(&bag, &ReadFilter::all());
    assert_eq!(all.len(), 13);
    assert_eq!(all[0].log_time, 1_697_522_387_465_250_790);
    assert_eq!(all[12].log_time, 1_697_522_388_973_342_699);
}

/// rosbag2_py's reindex test bags: a folder of 3 storage files without metadata.yaml (what
/// `ros2 bag reindex` repairs) is read whole, in order, in both storages.
#[test]
fn folder_without_metadata() {
    for storage in ["mcap", "sqlite3"] {
        let bag = Bag::open(rosbag2_data(&format!("{storage}/multiple_files"))).unwrap();
        assert_eq!(bag.files().len(), 3);
        let info = bag.info();
        assert_eq!(info.message_count, 1324 + 1324 + 529);
        assert_eq!(info.starting_time_ns, 1_616_653_333_034_080_451);
        assert_eq!(info.end_time_ns(), 1_616_653_339_386_193_357);
        let chatter = bag.topic("/chatter").unwrap();
        assert_eq!(chatter.type_name, "std_msgs/msg/String");
        let texts: Vec<String> = bag
            .typed::<StringMsg>("/chatter")
            .unwrap()
            .map(|r| r.unwrap().1.data)
            .collect();
        assert_eq!(texts.len(), 3177);
        // Every /chatter message of these bags says "test".
        assert!(texts.iter().all(|t| t == "test"), "{storage}");
        let all = read_all(&bag, &ReadFilter::all());
        assert_log_time_order(&all);
    }
}

/// The path of a metadata.yaml opens its bag.
#[test]
fn metadata_yaml_path_opens_the_bag() {
    let bag = Bag::open(rosbag2_data("mcap/cdr_test/metadata.yaml")).unwrap();
    assert_eq!(bag.info().message_count, 7);
    assert_eq!(bag.messages().unwrap().count(), 7);
}

/// A metadata version newer than kairos-bag knows is read as the current one (rosbag2 reads
/// it as far as its decoder goes too), not refused.
#[test]
fn newer_metadata_version_is_read() {
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(rosbag2_data("mcap/cdr_test")).unwrap() {
        let path = entry.unwrap().path();
        let mut bytes = std::fs::read(&path).unwrap();
        if path.ends_with("metadata.yaml") {
            bytes = String::from_utf8(bytes)
                .unwrap()
                .replace("version: 7", "version: 10")
                .into_bytes();
        }
        std::fs::write(dir.path().join(path.file_name().unwrap()), bytes).unwrap();
    }
    let bag = Bag::open(dir.path()).unwrap();
    assert_eq!(bag.info().version, 10);
    assert_eq!(bag.messages().unwrap().count(), 7);
}
