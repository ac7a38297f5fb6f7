//! The reader reads a packet through a window that slides along it, not whole. Random
//! traces whose events straddle the window, are larger than it, or align to 512 bytes of
//! their packet, read as babeltrace2 reads them; payloads skipped read the same events;
//! a file cut inside a large event keeps every event before the cut.
//!
//! Each event header holds two clock fields (16 and 8 bits), so an event decoded a second
//! time with a larger window must start again from the clock it started from: updating
//! the clock twice moves it on (when the 16-bit value is below the low bits the 8-bit
//! field left), and every later timestamp with it.

use std::path::Path;

use kairos_trace::read::{Selection, TraceSet, text};

const METADATA: &str = r#"/* CTF 1.8 */
typealias integer { size = 8; align = 8; signed = false; } := uint8_t;
typealias integer { size = 32; align = 8; signed = false; } := uint32_t;
typealias integer { size = 64; align = 8; signed = false; } := uint64_t;
trace { major = 1; minor = 8; byte_order = le; packet.header := struct { uint32_t magic; uint32_t stream_id; }; };
clock { name = mono; freq = 1000000000; };
typealias integer { size = 8; align = 8; signed = false; map = clock.mono.value; } := clk8;
typealias integer { size = 16; align = 8; signed = false; map = clock.mono.value; } := clk16;
typealias integer { size = 64; align = 8; signed = false; map = clock.mono.value; } := clk64;
stream {
  id = 0;
  packet.context := struct { clk64 timestamp_begin; clk64 timestamp_end; uint64_t content_size; uint64_t packet_size; uint64_t packet_seq_num; };
  event.header := struct { uint8_t id; clk16 coarse; clk8 fine; };
};
event { name = "w:small"; id = 0; stream_id = 0; fields := struct { uint32_t _n; }; };
event { name = "w:text"; id = 1; stream_id = 0; fields := struct { string _s; uint64_t _after; }; };
event { name = "w:seq"; id = 2; stream_id = 0; fields := struct { uint32_t _len; uint32_t _v[ _len ]; }; };
event { name = "w:far"; id = 3; stream_id = 0; fields := struct { uint8_t _a; integer { size = 64; align = 4096; signed = false; } _x; }; };
"#;

/// Bytes of the packet header and context; events start after them.
const START: usize = 48;

/// The clock after a field of `size` bits holding `v`, as CTF defines it.
fn update(clock: u64, size: u32, v: u64) -> u64 {
    let mask = (1u64 << size) - 1;
    let next = (clock & !mask) | v;
    if v < clock & mask {
        next + (1 << size)
    } else {
        next
    }
}

/// One event's bytes at byte `at` of its packet (its alignment depends on it), the
/// clock after it, and its string if it is a `w:text`.
fn event(rng: &mut fastrand::Rng, at: usize, clock: u64) -> (Vec<u8>, u64, Option<String>) {
    let (coarse, fine) = (rng.u16(..), rng.u8(..));
    let clock = update(update(clock, 16, u64::from(coarse)), 8, u64::from(fine));
    let id = rng.u8(..4);
    let mut b = vec![id];
    b.extend(coarse.to_le_bytes());
    b.push(fine);
    let mut text = None;
    match id {
        0 => b.extend(rng.u32(..).to_le_bytes()),
        1 => {
            // Mostly short, sometimes several times the window.
            let len = if rng.u8(..8) == 0 {
                rng.usize(..200_000)
            } else {
                rng.usize(..100)
            };
            let s: String = (0..len).map(|_| rng.lowercase()).collect();
            b.extend(s.as_bytes());
            b.push(0);
            text = Some(s);
            b.extend(rng.u64(..).to_le_bytes());
        }
        2 => {
            let len = if rng.u8(..8) == 0 {
                rng.u32(..40_000)
            } else {
                rng.u32(..20)
            };
            b.extend(len.to_le_bytes());
            for _ in 0..len {
                b.extend(rng.u32(..).to_le_bytes());
            }
        }
        _ => {
            // The payload structure aligns as its most aligned field: 512 bytes.
            let pad = |b: &mut Vec<u8>| {
                while (at + b.len()) % 512 != 0 {
                    b.push(0);
                }
            };
            pad(&mut b);
            b.push(rng.u8(..));
            pad(&mut b);
            b.extend(rng.u64(..).to_le_bytes());
        }
    }
    (b, clock, text)
}

/// A stream of packets of random sizes (4 KiB to 1.5 MiB, some with padding after the
/// content); returns its bytes, the end of every event in bytes from the file's start,
/// and the string of every `w:text` event.
fn stream(rng: &mut fastrand::Rng, packets: u64) -> (Vec<u8>, Vec<usize>, Vec<Option<String>>) {
    let mut file = Vec::new();
    let mut ends = Vec::new();
    let mut texts = Vec::new();
    let mut clock = 1_000_000u64;
    for seq in 0..packets {
        let size = rng.usize(4096..1_500_000);
        let begin = clock;
        let mut body = vec![0u8; START];
        let mut packet_ends = Vec::new();
        loop {
            let (bytes, after, text) = event(rng, body.len(), clock);
            if body.len() + bytes.len() > size {
                break;
            }
            body.extend(bytes);
            texts.push(text);
            packet_ends.push(body.len());
            clock = after;
        }
        let content = body.len();
        let padded = if rng.bool() { content } else { size };
        let mut head = Vec::new();
        head.extend(0xC1FC_1FC1u32.to_le_bytes());
        head.extend(0u32.to_le_bytes());
        for v in [begin, clock, content as u64 * 8, padded as u64 * 8, seq] {
            head.extend(v.to_le_bytes());
        }
        body[..START].copy_from_slice(&head);
        body.resize(padded, 0);
        ends.extend(packet_ends.iter().map(|e| file.len() + e));
        file.extend(body);
    }
    (file, ends, texts)
}

fn ours(dir: &Path) -> Vec<String> {
    let set = TraceSet::open(dir).unwrap();
    set.events()
        .unwrap()
        .map(|ev| {
            let mut line = String::new();
            text::write_event(&mut line, &ev.unwrap());
            line
        })
        .collect()
}

#[test]
fn random_large_events_read_as_babeltrace2_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    for seed in 0..6 {
        let mut rng = fastrand::Rng::with_seed(seed);
        let (bytes, ends, texts) = stream(&mut rng, 4);
        let trace = dir.path().join(format!("t{seed}"));
        std::fs::create_dir_all(&trace).unwrap();
        std::fs::write(trace.join("metadata"), METADATA).unwrap();
        std::fs::write(trace.join("stream"), &bytes).unwrap();

        let bt = kairos_testkit::babeltrace2_clean(&["--clock-seconds", "--no-delta"], &trace);
        let theirs: Vec<&str> = bt.lines().collect();
        let mine = ours(&trace);
        assert_eq!(mine.len(), ends.len(), "seed {seed}: every event written");
        assert_eq!(theirs.len(), mine.len(), "seed {seed}: babeltrace2's count");
        for (i, (a, b)) in mine.iter().zip(&theirs).enumerate() {
            if let Some(text) = &texts[i] {
                assert!(
                    a.contains(&format!("s = \"{text}\", ")),
                    "seed {seed}, event {i}: {a}"
                );
                if text.is_empty() {
                    // babeltrace2 2.0.4 prints an empty string as the string the same
                    // field held in the event before (the bytes hold a lone NUL).
                    continue;
                }
            }
            assert!(
                a == b,
                "seed {seed}, event {i}:\nkairos      {}\nbabeltrace2 {}",
                &a[..a.len().min(300)],
                &b[..b.len().min(300)]
            );
        }

        // Payloads skipped by their plans: the same events at the same times.
        let set = TraceSet::open(&trace).unwrap();
        let skipped: Vec<(i64, String)> = set
            .events_with(Selection::payloads(|_| false))
            .unwrap()
            .map(|ev| {
                let ev = ev.unwrap();
                (ev.timestamp, ev.name().to_string())
            })
            .collect();
        let full: Vec<(i64, String)> = set
            .events()
            .unwrap()
            .map(|ev| {
                let ev = ev.unwrap();
                (ev.timestamp, ev.name().to_string())
            })
            .collect();
        assert_eq!(skipped, full, "seed {seed}: skipping payloads");

        // Cut inside a large event of the last packets: every event before the cut is
        // read, then an error names the stream.
        let large: Vec<usize> = (1..ends.len())
            .filter(|&i| ends[i] - ends[i - 1] > 40_000)
            .collect();
        let Some(&victim) = large.get(rng.usize(..large.len().max(1))) else {
            continue;
        };
        let cut = ends[victim - 1] + rng.usize(1..ends[victim] - ends[victim - 1]);
        std::fs::write(trace.join("stream"), &bytes[..cut]).unwrap();
        let set = TraceSet::open(&trace).unwrap();
        let mut read = Vec::new();
        let mut error = None;
        for ev in set.events().unwrap() {
            match ev {
                Ok(ev) => {
                    let mut line = String::new();
                    text::write_event(&mut line, &ev);
                    read.push(line);
                }
                Err(e) => error = Some(e.to_string()),
            }
        }
        assert_eq!(read[..], mine[..victim], "seed {seed}: cut at byte {cut}");
        let error = error.unwrap_or_else(|| panic!("seed {seed}: no error for the cut"));
        assert!(error.contains("stream"), "{error}");
    }
}
