//! Damaged input: truncated stream files, flipped bytes and absurd sizes in metadata end
//! in a typed error naming the file and offset, never a panic, a hang or an allocation
//! the input did not justify; the events before the damage are kept.

use std::path::{Path, PathBuf};

use kairos_trace::read::metadata::read_metadata_text;
use kairos_trace::read::{Metadata, ReadError, TraceSet, decode_stream_bytes};

fn real(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces")
        .join(name)
}

fn ros2_metadata() -> Metadata {
    let bytes = std::fs::read(real("ros2-sync-one-to-one/metadata")).unwrap();
    Metadata::parse(&read_metadata_text(&bytes).unwrap().text).unwrap()
}

fn biggest_stream(dir: &Path) -> PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && !p.ends_with("metadata"))
        .max_by_key(|p| std::fs::metadata(p).unwrap().len())
        .unwrap()
}

#[test]
fn a_truncated_stream_keeps_every_event_before_the_cut() {
    let md = ros2_metadata();
    let bytes = std::fs::read(biggest_stream(&real("ros2-sync-one-to-one"))).unwrap();
    let (all, err) = decode_stream_bytes(&md, &bytes);
    assert!(err.is_none(), "{err:?}");
    let mut last = 0;
    for cut in [bytes.len() / 3, bytes.len() / 2 + 123, bytes.len() - 1] {
        let (n, err) = decode_stream_bytes(&md, &bytes[..cut]);
        let Some(ReadError::Damaged {
            offset, expected, ..
        }) = err
        else {
            panic!("cut at {cut}: expected a Damaged error, got {err:?}");
        };
        assert!(
            offset <= cut as u64,
            "offset {offset} within the {cut} bytes"
        );
        assert!(!expected.is_empty());
        // The last cut only removes padding after the last event, and is still reported.
        assert!(n > last && n <= all, "cut at {cut}: {n} of {all} events");
        if cut < bytes.len() / 2 + 1000 {
            assert!(n < all, "cut at {cut}: {n} of {all} events");
        }
        last = n;
    }
}

#[test]
fn flipped_bytes_never_panic() {
    let md = ros2_metadata();
    let bytes = std::fs::read(biggest_stream(&real("ros2-sync-one-to-one"))).unwrap();
    let sample = &bytes[..bytes.len().min(1 << 16)];
    let mut damaged = 0;
    for i in (0..sample.len()).step_by(61) {
        for flip in [0x01u8, 0x80, 0xFF] {
            let mut copy = sample.to_vec();
            copy[i] ^= flip;
            if decode_stream_bytes(&md, &copy).1.is_some() {
                damaged += 1;
            }
        }
    }
    // The sample ends inside a packet, so every run reports damage at least there.
    assert!(damaged > 0);
}

#[test]
fn an_absurd_packet_size_is_refused_with_its_offset() {
    let md = ros2_metadata();
    let mut bytes = std::fs::read(biggest_stream(&real("ros2-sync-one-to-one"))).unwrap();
    // Packet header: magic(4) uuid(16) stream_id(4) stream_instance_id(8); context:
    // timestamp_begin(8) timestamp_end(8) content_size(8) packet_size(8).
    bytes[56..64].copy_from_slice(&(u64::MAX - 7).to_le_bytes());
    let (n, err) = decode_stream_bytes(&md, &bytes);
    assert_eq!(n, 0);
    let Some(ReadError::Damaged {
        offset: 0,
        expected,
        ..
    }) = err
    else {
        panic!("{err:?}")
    };
    assert!(expected.contains("packet"), "{expected}");
}

#[test]
fn absurd_metadata_sizes_are_errors_with_a_line() {
    for (text, needle) in [
        (
            "/* CTF 1.8 */\ntypealias integer { size = 4294967296; } := x;",
            "size",
        ),
        (
            "/* CTF 1.8 */\ntypealias integer { size = 8; align = 3; } := x;",
            "alignment",
        ),
        (
            "/* CTF 1.8 */\ntypealias integer { size = 8; } := u8;\nevent { fields := struct { u8 a[4294967296]; }; };",
            "absurd",
        ),
        (
            "/* CTF 1.8 */\nclock { name = c; freq = 0; };",
            "frequency 0",
        ),
        ("/* CTF 1.8 */\ntrace { major = 2; };", "CTF 2"),
    ] {
        let err = Metadata::parse(text).unwrap_err();
        assert!(err.to_string().contains(needle), "{text}: {err}");
        assert!(err.line.is_some_and(|line| line >= 2), "{text}: {err}");
    }
}

#[test]
fn a_damaged_trace_on_disk_names_the_file_and_the_offset() {
    let dir = std::env::temp_dir().join(format!("kairos-read-damaged-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = real("ros2-sync-one-to-one");
    std::fs::copy(src.join("metadata"), dir.join("metadata")).unwrap();
    let stream = biggest_stream(&src);
    let bytes = std::fs::read(&stream).unwrap();
    std::fs::write(dir.join("cut_0"), &bytes[..bytes.len() / 2 + 1]).unwrap();
    let set = TraceSet::open(&dir).unwrap();
    let results: Vec<_> = set.events().unwrap().collect();
    std::fs::remove_dir_all(&dir).unwrap();
    let errors: Vec<String> = results
        .iter()
        .filter_map(|r| r.as_ref().err())
        .map(|e| e.to_string())
        .collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("cut_0 at byte "), "{}", errors[0]);
    assert!(results.iter().filter(|r| r.is_ok()).count() > 1000);
}

#[test]
fn garbage_metadata_is_an_error_not_a_panic() {
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    for _ in 0..200 {
        let mut text = String::from("/* CTF 1.8 */ ");
        for _ in 0..40 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let words = [
                "struct",
                "{",
                "}",
                ";",
                "integer",
                "size",
                "=",
                "8",
                "[",
                "]",
                "x",
                "variant",
                "<",
                ">",
                "enum",
                ":",
                "typealias",
                ":=",
                "...",
                "event",
                "fields",
            ];
            text.push_str(words[(seed % words.len() as u64) as usize]);
            text.push(' ');
        }
        let err = match Metadata::parse(&text) {
            Ok(_) => panic!("word salad parsed as metadata: {text}"),
            Err(err) => err,
        };
        assert!(err.line.is_some(), "{text}: {err} has no line");
        assert!(!err.message.is_empty(), "{text}: an empty message");
    }
}

/// A fault of the metadata file as a whole (here its packet framing) has no line: the
/// error says what is wrong without a made-up `line 0`, and returns the metadata fault as
/// its `source()`, as an unreadable file returns the operating system's error.
#[test]
fn metadata_errors_have_a_line_only_when_one_is_at_fault_and_return_their_cause() {
    use std::error::Error as _;
    let dir = std::env::temp_dir().join(format!("kairos-read-framing-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // The packetized metadata magic, then a packet header cut short.
    let mut bytes = 0x75D1_1D57u32.to_le_bytes().to_vec();
    bytes.extend_from_slice(&[0; 8]);
    std::fs::write(dir.join("metadata"), &bytes).unwrap();
    let err = TraceSet::open(&dir).unwrap_err();
    std::fs::remove_dir_all(&dir).unwrap();
    let text = err.to_string();
    assert!(!text.contains("line 0"), "{text}");
    assert!(text.contains("metadata packet at byte 0"), "{text}");
    let ReadError::Metadata { cause, .. } = &err else {
        panic!("expected a metadata error, got {err:?}");
    };
    assert_eq!(cause.line, None, "{text}");
    let source = err.source().expect("the metadata fault as source()");
    assert_eq!(source.to_string(), cause.to_string());

    let missing = std::env::temp_dir().join(format!("kairos-read-none-{}", std::process::id()));
    let err = TraceSet::open(&missing);
    let Err(err @ ReadError::Io { .. }) = err else {
        panic!("a path that does not exist: expected an IO error, got {err:?}");
    };
    let source = err
        .source()
        .expect("the operating system's error as source()");
    assert!(source.downcast_ref::<std::io::Error>().is_some(), "{err}");
}

/// Payloads skipped by compiled plans meet damage exactly where decoded payloads do: on
/// a real LTTng kernel trace with bytes flipped across its biggest stream, reading with
/// every payload skipped delivers as many events, and as many errors, as reading them
/// all, and never panics.
#[test]
fn skipped_payloads_stop_at_damage_where_decoded_ones_do() {
    use kairos_trace::read::Selection;
    let src = real("ros1-pub-sub-1/kernel");
    let stream = biggest_stream(&src);
    let bytes = std::fs::read(&stream).unwrap();
    let dir = std::env::temp_dir().join(format!("kairos-skip-damage-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(src.join("metadata"), dir.join("metadata")).unwrap();
    let target = dir.join(stream.file_name().unwrap());
    let count = |select: Selection| {
        let set = TraceSet::open(&dir).unwrap();
        let (mut ok, mut errors) = (0, 0);
        for item in set.events_with(select).unwrap() {
            match item {
                Ok(_) => ok += 1,
                Err(_) => errors += 1,
            }
        }
        (ok, errors)
    };
    let mut damaged = 0;
    for k in 0..40 {
        let mut copy = bytes.clone();
        let at = 200 + (k * 7919) % (bytes.len() - 200);
        copy[at] ^= 0x5A;
        copy[(at + 1) % bytes.len()] ^= 0xFF;
        std::fs::write(&target, &copy).unwrap();
        let full = count(Selection::all().with_threads(0));
        let skipped = count(Selection::payloads(|_| false).with_threads(0));
        assert_eq!(full, skipped, "bytes flipped at {at}");
        damaged += usize::from(full.1 > 0);
    }
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        damaged > 0,
        "no flip made the stream unreadable: the test saw no damage"
    );
}
