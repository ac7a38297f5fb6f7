//! Round trip: random topics, timestamps (out of order and repeated), payloads, storages
//! (MCAP, sqlite3), chunk compressions, rosbag2 compression modes and file splits are
//! written with `BagWriter` and read back with `Bag`: every message comes back once, byte
//! for byte, in log-time order (equal times in write order), and the metadata counts them
//! all.

use kairos_bag::{
    Bag, BagCompression, BagMessage, BagWriter, Compression, ReadFilter, SplitReason, StorageId,
    TopicInfo, WriterOptions,
};
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Clone)]
struct Written {
    topic: usize,
    receive: u64,
    publish: u64,
    sequence: u32,
    data: Vec<u8>,
}

#[derive(Debug, Clone)]
struct Case {
    topics: usize,
    messages: Vec<Written>,
    compression: Compression,
    storage: StorageId,
    bag_compression: BagCompression,
    max_file_size: Option<u64>,
    max_file_duration: Option<Duration>,
    chunk_size: u64,
    finish: bool,
}

const TYPES: [&str; 3] = [
    "std_msgs/msg/String",
    "sensor_msgs/msg/Imu",
    "geometry_msgs/msg/TransformStamped",
];

fn case() -> impl Strategy<Value = Case> {
    (1usize..5).prop_flat_map(|topics| {
        let message = (
            0..topics,
            // Receive times cluster in 0..3 s with repeats, so splits and ties both occur.
            prop_oneof![
                0u64..3_000_000_000,
                (0u64..20).prop_map(|t| t * 100_000_000)
            ],
            0u64..1_000_000,
            any::<u32>(),
            prop::collection::vec(any::<u8>(), 0..300),
        )
            .prop_map(|(topic, receive, delay, sequence, data)| Written {
                topic,
                receive: 1_700_000_000_000_000_000 + receive,
                publish: 1_700_000_000_000_000_000 + receive.saturating_sub(delay),
                sequence,
                data,
            });
        (
            Just(topics),
            prop::collection::vec(message, 0..250),
            prop_oneof![
                Just(Compression::Zstd),
                Just(Compression::Lz4),
                Just(Compression::None)
            ],
            prop_oneof![Just(StorageId::Mcap), Just(StorageId::Sqlite3)],
            prop_oneof![
                Just(BagCompression::None),
                Just(BagCompression::Message),
                Just(BagCompression::File)
            ],
            prop::option::of(2_000u64..40_000),
            prop::option::of((200u64..2_000).prop_map(Duration::from_millis)),
            256u64..8_192,
            any::<bool>(),
        )
            .prop_map(
                |(
                    topics,
                    messages,
                    compression,
                    storage,
                    bag_compression,
                    max_file_size,
                    max_file_duration,
                    chunk_size,
                    finish,
                )| Case {
                    topics,
                    messages,
                    compression,
                    storage,
                    bag_compression,
                    max_file_size,
                    max_file_duration,
                    chunk_size,
                    finish,
                },
            )
    })
}

fn topic_name(i: usize) -> String {
    format!("/topic_{i}")
}

fn write(case: &Case, dir: &std::path::Path) -> u64 {
    let options = WriterOptions {
        // A sqlite3 bag has no MCAP chunks to compress (the writer refuses the option).
        compression: match case.storage {
            StorageId::Mcap => case.compression,
            StorageId::Sqlite3 => Compression::None,
        },
        storage: case.storage,
        bag_compression: case.bag_compression,
        max_file_size: case.max_file_size,
        max_file_duration: case.max_file_duration,
        chunk_size: case.chunk_size,
        ..WriterOptions::default()
    };
    let mut writer = BagWriter::create(dir, options).unwrap();
    for i in 0..case.topics {
        writer
            .add_topic(TopicInfo::new(topic_name(i), TYPES[i % TYPES.len()]))
            .unwrap();
    }
    for m in &case.messages {
        writer
            .write(
                &topic_name(m.topic),
                m.receive,
                m.publish,
                m.sequence,
                &m.data,
            )
            .unwrap();
    }
    assert_eq!(writer.total_message_count(), case.messages.len() as u64);
    let files = writer.metadata().files.len() as u64;
    if case.finish {
        writer.finish().unwrap();
    } else {
        drop(writer); // finishes in Drop
    }
    files
}

fn expected(case: &Case, filter: &ReadFilter) -> Vec<Row> {
    let mut messages: Vec<_> = case
        .messages
        .iter()
        .filter(|m| {
            filter
                .topics
                .as_ref()
                .is_none_or(|t| t.contains(&topic_name(m.topic)))
                && filter.start_ns.is_none_or(|s| m.receive >= s)
                && filter.end_ns.is_none_or(|e| m.receive <= e)
        })
        .map(|m| match case.storage {
            StorageId::Mcap => (
                topic_name(m.topic),
                m.receive,
                m.publish,
                m.sequence,
                m.data.clone(),
            ),
            // A .db3 row has no send time nor sequence number.
            StorageId::Sqlite3 => (topic_name(m.topic), m.receive, m.receive, 0, m.data.clone()),
        })
        .collect();
    messages.sort_by_key(|m| m.1); // stable: equal times keep write order
    messages
}

/// Fails with the first difference (without payloads) when `got` is not `want`.
fn same(got: &[Row], want: &[Row]) -> Result<(), TestCaseError> {
    let brief = |rows: &[Row], i: usize| {
        rows.get(i)
            .map(|r| format!("{} at {} seq {} ({} bytes)", r.0, r.1, r.3, r.4.len()))
            .unwrap_or_else(|| "nothing".into())
    };
    if let Some(i) = (0..got.len().max(want.len())).find(|&i| got.get(i) != want.get(i)) {
        return Err(TestCaseError::fail(format!(
            "message {i} of {} read (of {} expected): got {}, want {}",
            got.len(),
            want.len(),
            brief(got, i),
            brief(want, i)
        )));
    }
    Ok(())
}

type Row = (String, u64, u64, u32, Vec<u8>);

fn read(bag: &Bag, filter: &ReadFilter) -> Vec<Row> {
    bag.read(filter)
        .unwrap()
        .map(|m| {
            let m: BagMessage = m.unwrap();
            (
                m.topic.to_string(),
                m.log_time,
                m.publish_time,
                m.sequence,
                m.data.to_vec(),
            )
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn every_message_comes_back_in_order(case in case()) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bag");
        let files = write(&case, &path);

        let bag = Bag::open(&path).unwrap();
        prop_assert_eq!(bag.files().len() as u64, files);
        let info = bag.info();
        prop_assert_eq!(info.version, 9);
        prop_assert_eq!(info.message_count, case.messages.len() as u64);
        prop_assert_eq!(info.files.iter().map(|f| f.message_count).sum::<u64>(), info.message_count);
        let mut per_topic = BTreeMap::new();
        for m in &case.messages {
            *per_topic.entry(topic_name(m.topic)).or_insert(0u64) += 1;
        }
        for topic in &info.topics {
            prop_assert_eq!(topic.message_count, per_topic.get(&topic.name).copied().unwrap_or(0));
        }
        if let (Some(first), Some(last)) = (
            case.messages.iter().map(|m| m.receive).min(),
            case.messages.iter().map(|m| m.receive).max(),
        ) {
            prop_assert_eq!(info.starting_time_ns, first);
            prop_assert_eq!(info.end_time_ns(), last);
        }

        let all = ReadFilter::all();
        same(&read(&bag, &all), &expected(&case, &all))?;

        let some = ReadFilter::all()
            .topics([topic_name(0)])
            .start(1_700_000_000_500_000_000)
            .end(1_700_000_002_000_000_000);
        same(&read(&bag, &some), &expected(&case, &some))?;

        prop_assert_eq!(&info.storage_identifier, case.storage.as_str());
        prop_assert_eq!(info.compression_mode.as_str(), case.bag_compression.mode());
        if case.bag_compression != BagCompression::File {
            // Each file on its own is a valid bag too (what a reader given one file sees).
            let mut total = 0;
            for file in bag.files() {
                total += Bag::open(file).unwrap().messages().unwrap().count();
            }
            prop_assert_eq!(total, case.messages.len());
        }
    }
}

/// Splitting by duration starts a new file when a message comes more than the maximum after
/// the file's first, and each file lists its own span.
#[test]
fn splits_by_duration_like_rosbag2() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("split");
    let options = WriterOptions {
        max_file_duration: Some(Duration::from_secs(1)),
        ..WriterOptions::default()
    };
    let mut writer = BagWriter::create(&path, options).unwrap();
    writer
        .add_topic(TopicInfo::new("/a", "std_msgs/msg/Empty"))
        .unwrap();
    let second = 1_000_000_000;
    for t in [
        0,
        second / 2,
        second,
        second + 1,
        2 * second,
        3 * second + 2,
    ] {
        writer.write("/a", t, t, 0, &[0, 1, 0, 0]).unwrap();
    }
    // Each split is reported once, closed and opened file by full path.
    let splits: Vec<(PathBuf, PathBuf, SplitReason)> = writer
        .take_splits()
        .into_iter()
        .map(|s| (s.closed_file, s.opened_file, s.reason))
        .collect();
    let file = |n: u32| path.join(format!("split_{n}.mcap"));
    let by_duration = SplitReason::MaxDuration;
    assert_eq!(
        splits,
        [
            (file(0), file(1), by_duration),
            (file(1), file(2), by_duration)
        ]
    );
    assert!(writer.take_splits().is_empty(), "reported once");
    let metadata = writer.finish().unwrap();
    let names: Vec<_> = metadata.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(names, ["split_0.mcap", "split_1.mcap", "split_2.mcap"]);
    let spans: Vec<_> = metadata
        .files
        .iter()
        .map(|f| (f.starting_time_ns, f.duration_ns, f.message_count))
        .collect();
    assert_eq!(
        spans,
        [
            (0, second, 3),
            (second + 1, second - 1, 2),
            (3 * second + 2, 0, 1)
        ]
    );
    assert_eq!(Bag::open(&path).unwrap().messages().unwrap().count(), 6);
}

/// A split asked for (rosbag2's `split_bagfile`) closes the file at once and is reported
/// like the others; in file compression mode the closed file is named as compressed.
#[test]
fn a_split_asked_for_is_reported_with_the_files_final_names() {
    for (mode, closed) in [
        (BagCompression::None, "asked_0.mcap"),
        (BagCompression::File, "asked_0.mcap.zstd"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("asked");
        let options = WriterOptions {
            bag_compression: mode,
            ..WriterOptions::default()
        };
        let mut writer = BagWriter::create(&path, options).unwrap();
        writer
            .add_topic(TopicInfo::new("/a", "std_msgs/msg/Empty"))
            .unwrap();
        writer.write("/a", 1, 1, 0, &[0, 1, 0, 0]).unwrap();
        writer.split().unwrap();
        writer.write("/a", 2, 2, 1, &[0, 1, 0, 0]).unwrap();
        assert_eq!(
            writer.take_splits(),
            [kairos_bag::FileSplit {
                closed_file: path.join(closed),
                opened_file: path.join("asked_1.mcap"),
                reason: kairos_bag::SplitReason::Asked,
            }],
            "{mode:?}"
        );
        assert!(path.join(closed).exists());
        writer.finish().unwrap();
        assert_eq!(Bag::open(&path).unwrap().messages().unwrap().count(), 2);
    }
}

/// Splitting by size: files stay near the maximum, and nothing is lost.
#[test]
fn splits_by_size() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sized");
    let options = WriterOptions {
        max_file_size: Some(20_000),
        compression: Compression::None,
        chunk_size: 4_096,
        ..WriterOptions::default()
    };
    let mut writer = BagWriter::create(&path, options).unwrap();
    writer
        .add_topic(TopicInfo::new("/a", "std_msgs/msg/String"))
        .unwrap();
    for i in 0..500u64 {
        writer.write("/a", i, i, i as u32, &[7u8; 300]).unwrap();
    }
    let splits = writer.take_splits();
    assert!(
        splits.iter().all(|s| s.reason == SplitReason::MaxSize),
        "{splits:?}"
    );
    let metadata = writer.finish().unwrap();
    assert_eq!(splits.len() + 1, metadata.files.len());
    assert!(metadata.files.len() >= 5, "{} files", metadata.files.len());
    let bag = Bag::open(&path).unwrap();
    for file in bag.files() {
        let size = std::fs::metadata(file).unwrap().len();
        assert!(size < 20_000 + 8_000, "{} is {size} bytes", file.display());
    }
    let sequences: Vec<u32> = bag
        .messages()
        .unwrap()
        .map(|m| m.unwrap().sequence)
        .collect();
    assert_eq!(sequences, (0..500).collect::<Vec<_>>());
}
