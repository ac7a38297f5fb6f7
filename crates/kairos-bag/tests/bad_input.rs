//! Bad input is an error that names the file, never a panic: truncated and garbage storage
//! files, malformed metadata, missing files, unsupported storages, misuse of the writer.

mod common;

use common::rosbag2_data;
use kairos_bag::{Bag, BagWriter, Error, TopicInfo, WriterOptions};
use std::path::Path;

/// Opens `path` and reads every message; the first error met, if any.
fn open_and_read(path: &Path) -> Result<usize, Error> {
    let bag = Bag::open(path)?;
    let mut n = 0;
    for message in bag.messages()? {
        message?;
        n += 1;
    }
    Ok(n)
}

/// A copy of `bag`'s files in a fresh folder, each file passed through `damage`.
fn damaged_copy(bag: &str, damage: impl Fn(&str, Vec<u8>) -> Vec<u8>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(rosbag2_data(bag)).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(dir.path().join(&name), damage(&name, bytes)).unwrap();
    }
    dir
}

/// The messages of the bag at `path`: (topic, log time, data), in the order read.
fn read_all(path: &Path) -> Result<Vec<(String, u64, Vec<u8>)>, Error> {
    let bag = Bag::open(path)?;
    let mut out = Vec::new();
    for message in bag.messages()? {
        let m = message?;
        out.push((m.topic.to_string(), m.log_time, m.data.to_vec()));
    }
    Ok(out)
}

/// A file cut short (a recorder killed, a full disk) is read up to its last complete
/// record: every strict prefix of an MCAP file (cut every 61 bytes and around its end)
/// either fails with an error naming the file (cut inside the magic bytes) or yields
/// original messages only, as many or more the longer the prefix, and all of them once
/// only the summary is cut.
#[test]
fn a_truncated_mcap_is_read_up_to_its_last_complete_record() {
    for bag in ["mcap/cdr_test", "mcap/talker"] {
        let original = std::fs::read_dir(rosbag2_data(bag))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|e| e == "mcap"))
            .unwrap();
        let all = read_all(&original).unwrap();
        assert!(!all.is_empty());
        let bytes = std::fs::read(&original).unwrap();
        let name = original.file_name().unwrap().to_owned();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(&name);
        let cuts = (0..bytes.len())
            .step_by(61)
            .chain(bytes.len() - 40..bytes.len());
        let mut before = 0;
        for cut in cuts {
            std::fs::write(&path, &bytes[..cut]).unwrap();
            match read_all(&path) {
                Err(err) => {
                    assert!(cut < 8, "{bag} cut at {cut}: {err}");
                    assert!(
                        err.to_string().contains(name.to_str().unwrap()),
                        "error does not name the file: {err}"
                    );
                }
                Ok(read) => {
                    for m in &read {
                        assert!(all.contains(m), "{bag} cut at {cut} made up {m:?}");
                    }
                    assert!(read.len() >= before, "{bag} cut at {cut} lost messages");
                    before = read.len();
                }
            }
        }
        assert_eq!(before, all.len(), "{bag}: cut in its summary, all are read");
        // And in a bag folder whose metadata.yaml lists a file now cut short.
        let cut_bag = damaged_copy(bag, |name, b| {
            if name.ends_with(".mcap") {
                b[..b.len() / 2].to_vec()
            } else {
                b
            }
        });
        let read = read_all(cut_bag.path()).unwrap();
        assert!(read.iter().all(|m| all.contains(m)));
    }
}

/// Flipped bytes inside an MCAP file never panic (they may go unnoticed in uncompressed,
/// unchecksummed chunks, as with every MCAP reader).
#[test]
fn corrupted_mcap_does_not_panic() {
    for file in [
        "mcap/talker/talker.mcap",       // zstd chunks, mcap Go
        "mcap/cdr_test/cdr_test_0.mcap", // uncompressed chunks, libmcap 0.8
        "single/only_topics.mcap",       // libmcap 1.1, metadata records
    ] {
        let bytes = std::fs::read(rosbag2_data(file)).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.mcap");
        let mut errors = 0;
        for at in (8..bytes.len() - 8).step_by(23) {
            let mut damaged = bytes.clone();
            damaged[at] ^= 0x5a;
            damaged[at + 1] = damaged[at + 1].wrapping_add(0x81);
            damaged[at + 5] = 0xff;
            std::fs::write(&path, &damaged).unwrap();
            if open_and_read(&path).is_err() {
                errors += 1;
            }
        }
        assert!(errors > 0, "{file}: no damage was noticed at all");
    }
}

/// Garbage named like storage files, and files that are neither.
#[test]
fn garbage_files_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let garbage: Vec<u8> = (0..5000u32).map(|i| (i * 7919 % 251) as u8).collect();
    for name in ["garbage.mcap", "garbage.db3"] {
        let path = dir.path().join(name);
        std::fs::write(&path, &garbage).unwrap();
        let err = open_and_read(&path).unwrap_err();
        assert!(
            matches!(err, Error::Corrupt { .. } | Error::Sqlite { .. }),
            "{err}"
        );
        assert!(err.to_string().contains(name), "{err}");
        std::fs::write(&path, b"").unwrap();
        assert!(open_and_read(&path).is_err(), "empty {name}");
    }
    let other = dir.path().join("notes.txt");
    std::fs::write(&other, "hello").unwrap();
    let err = open_and_read(&other).unwrap_err();
    assert!(matches!(err, Error::NotABag { .. }), "{err}");
    assert!(err.to_string().starts_with("not a bag: "), "{err}");
    // A SQLite database without rosbag2's tables.
    let db = dir.path().join("other.db3");
    let connection = rusqlite::Connection::open(&db).unwrap();
    connection
        .execute("CREATE TABLE t (x INTEGER)", [])
        .unwrap();
    drop(connection);
    assert!(matches!(open_and_read(&db), Err(Error::Corrupt { .. })));
}

/// A truncated `.db3` file is an error (SQLite finds its pages missing).
#[test]
fn truncated_db3_is_an_error() {
    let bytes = std::fs::read(rosbag2_data("sqlite3/talker/talker.db3")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("talker.db3");
    for cut in [0, 100, 4096, bytes.len() / 2] {
        std::fs::write(&path, &bytes[..cut]).unwrap();
        let result = open_and_read(&path);
        assert!(result.is_err(), "cut at {cut}: {result:?}");
    }
}

#[test]
fn folder_errors_say_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let err = Bag::open(dir.path()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "not a bag: {} has no metadata.yaml, .mcap or .db3 file \
             (give a rosbag2 bag folder, or one of its .mcap or .db3 files)",
            dir.path().display()
        )
    );
    let missing = dir.path().join("nope");
    assert!(matches!(Bag::open(&missing), Err(Error::NotFound { .. })));

    // Unsupported storage plugin.
    let other = damaged_copy("mcap/cdr_test", |name, b| {
        if name == "metadata.yaml" {
            String::from_utf8(b)
                .unwrap()
                .replace("storage_identifier: mcap", "storage_identifier: hdf5")
                .into_bytes()
        } else {
            b
        }
    });
    let err = Bag::open(other.path()).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("unsupported storage 'hdf5' in ")
            && err.to_string().ends_with("(kairos reads mcap and sqlite3)"),
        "{err}"
    );

    // A storage file listed in metadata.yaml is missing.
    let missing_file = damaged_copy("mcap/cdr_test", |_, b| b);
    std::fs::remove_file(missing_file.path().join("cdr_test_0.mcap")).unwrap();
    let err = Bag::open(missing_file.path()).unwrap_err();
    assert!(matches!(err, Error::MissingFile { .. }), "{err}");

    // Malformed metadata.yaml, and an unknown compression.
    for (from, to) in [
        ("version: 7", "version: [7"),
        ("version: 7", "version: seven"),
        ("message_count: 4", "message_count: -4"),
        (
            "offered_qos_profiles: \"- history",
            "offered_qos_profiles: \"- : [history",
        ),
    ] {
        let bad = damaged_copy("mcap/cdr_test", |name, b| {
            if name == "metadata.yaml" {
                let text = String::from_utf8(b).unwrap();
                assert!(text.contains(from));
                text.replacen(from, to, 1).into_bytes()
            } else {
                b
            }
        });
        let err = Bag::open(bad.path()).unwrap_err();
        assert!(matches!(err, Error::Metadata { .. }), "{to}: {err}");
        assert!(err.to_string().contains("metadata.yaml"), "{err}");
    }
    let lz4 = damaged_copy("mcap/cdr_test", |name, b| {
        if name == "metadata.yaml" {
            String::from_utf8(b)
                .unwrap()
                .replace("compression_format: \"\"", "compression_format: lz4")
                .replace("compression_mode: \"\"", "compression_mode: FILE")
                .into_bytes()
        } else {
            b
        }
    });
    assert!(matches!(
        Bag::open(lz4.path()),
        Err(Error::UnsupportedCompression { .. })
    ));
}

#[test]
fn writer_misuse_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bag");
    let mut writer = BagWriter::create(&path, WriterOptions::default()).unwrap();
    assert!(matches!(
        BagWriter::create(&path, WriterOptions::default()),
        Err(Error::BagExists { .. })
    ));
    let err = writer.write("/nope", 1, 1, 0, &[0, 1, 0, 0]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "topic '/nope' was not added to the bag: call add_topic before writing to it"
    );
    writer
        .add_topic(TopicInfo::new("/a", "std_msgs/msg/String"))
        .unwrap();
    writer
        .add_topic(TopicInfo::new("/a", "std_msgs/msg/String"))
        .unwrap();
    assert!(matches!(
        writer.add_topic(TopicInfo::new("/a", "std_msgs/msg/Int32")),
        Err(Error::TopicConflict { .. })
    ));
    assert_eq!(writer.total_message_count(), 0);
    let options = WriterOptions {
        max_file_size: Some(0),
        ..WriterOptions::default()
    };
    assert!(matches!(
        BagWriter::create(dir.path().join("other"), options),
        Err(Error::InvalidOption(_))
    ));
    // A sqlite3 bag has no MCAP chunks to compress: the option would do nothing.
    let sqlite = WriterOptions {
        storage: kairos_bag::StorageId::Sqlite3,
        compression: kairos_bag::Compression::Zstd,
        ..WriterOptions::default()
    };
    assert!(matches!(
        BagWriter::create(dir.path().join("third"), sqlite),
        Err(Error::InvalidOption(_))
    ));
    writer.finish().unwrap();
}
