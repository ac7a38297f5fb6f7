//! A garbage flood at a kairos process, from another session on loopback: random bytes,
//! samples with no or a wrong attachment, truncated CDR, huge length prefixes, negative
//! sequence numbers, from many thousand sender ids, on a topic and on `/clock`. Checked
//! from outside the process, as a user would see it:
//! - nothing panics and the process goes on: a valid message after the flood is printed;
//! - the count is exact: every garbage sample is counted as malformed, and the process
//!   says so at exit;
//! - its reports are summaries: a handful of stderr lines, not one per sender;
//! - its memory stays bounded: RSS after the flood within a few MB of before.

mod zenoh_support;

use kairos::graph::Message;
use kairos_zenoh::attachment::Attachment;
use kairos_zenoh::graph_key::data_key;
use kairos_zenoh::message::{dds_type_name, encode};
use kairos_zenoh::msg::{Clock, StringMsg};
use std::time::{Duration, Instant};
use zenoh::Wait;
use zenoh_support::*;

const WAIT: Duration = Duration::from_secs(60);
/// Distinct sender ids in the flood (the transport remembers at most 4096 per topic).
const SENDERS: u64 = 200_000;

fn key<M: Message>(topic: &str) -> String {
    data_key(
        0,
        topic,
        &dds_type_name(M::TYPE_NAME).expect("a ROS type name"),
        &M::type_hash().to_string(),
    )
}

fn rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

fn attachment(seq: i64, sender: u64) -> Vec<u8> {
    let mut gid = [0u8; 16];
    gid[..8].copy_from_slice(&sender.to_le_bytes());
    gid[8] = 0xf1;
    Attachment {
        sequence_number: seq,
        source_timestamp: 0,
        gid,
    }
    .to_bytes()
    .to_vec()
}

/// A xorshift stream: the flood is random, and the same on every run.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn bytes(&mut self, max: usize) -> Vec<u8> {
        let len = (self.next() % max as u64) as usize;
        (0..len).map(|_| self.next() as u8).collect()
    }
}

#[test]
fn a_garbage_flood_is_counted_exactly_summarised_and_leaves_memory_flat() {
    let router = Router::start(KAIROS);
    let mut echo = spawn(echo_chatter(&mut router.kairos(), &["--count", "2"]));
    let pid = echo.0.id();
    let flooder = zenoh::open(kairos_testkit::zenoh_session::loopback_config(
        "peer",
        Some(router.port),
        0,
    ))
    .wait()
    .expect("open the flooding session");
    let publisher = |key: String| {
        // Reliable and blocking: every sample reaches the process, so the count is exact.
        let p = flooder
            .declare_publisher(key)
            .congestion_control(zenoh::qos::CongestionControl::Block)
            .wait()
            .expect("declare a raw publisher");
        assert!(
            kairos_zenoh::matching::wait_matched(&p, WAIT).expect("matching status"),
            "the echo process did not subscribe {} within {WAIT:?}",
            p.key_expr()
        );
        p
    };
    let chatter = publisher(key::<StringMsg>("/chatter"));
    let clock = publisher(key::<Clock>("/clock"));
    let rss_before = rss_kb(pid);

    let valid = encode(&StringMsg {
        data: "garbage".into(),
    });
    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    let mut sent = 0u64;
    let started = Instant::now();
    for i in 0..SENDERS {
        assert!(
            started.elapsed() < WAIT,
            "the flood ran past {WAIT:?} after {sent} samples"
        );
        let target = if i % 5 == 4 { &clock } else { &chatter };
        let sample = match i % 6 {
            // Random bytes, no attachment.
            0 => target.put(random.bytes(64)),
            // A valid payload whose attachment is random bytes.
            // (under 16 bytes: never by chance a well-formed one of 33).
            1 => target.put(valid.clone()).attachment(random.bytes(16)),
            // Truncated CDR (too short for a String and for a Clock), from a sender of
            // its own.
            2 => target.put(valid[..7].to_vec()).attachment(attachment(1, i)),
            // A string length of 4 GB.
            3 => target
                .put(vec![0, 1, 0, 0, 0xf0, 0xff, 0xff, 0xff, b'x'])
                .attachment(attachment(1, i)),
            // A valid payload with a negative sequence number.
            4 => target
                .put(valid.clone())
                .attachment(attachment(-(i as i64) - 1, i)),
            // Random CDR after a valid header, from a sender of its own.
            _ => {
                let mut payload = vec![0, 1, 0, 0];
                payload.extend(random.bytes(3).into_iter().map(|b| b | 0x80));
                target.put(payload).attachment(attachment(1, i))
            }
        };
        sample.wait().expect("put");
        sent += 1;
    }
    // The same path then delivers valid messages: the process goes on. The first shows
    // the flood was all taken in (it comes after it on the same link); memory is read
    // then, while the process still runs; the second lets it end.
    let flood_took = started.elapsed();
    let say = |text: &str, sender: u64| {
        chatter
            .put(encode(&StringMsg { data: text.into() }))
            .attachment(attachment(1, sender))
            .wait()
            .expect("put")
    };
    say("after the flood", u64::MAX);
    let mut lines = stdout_lines(&mut echo);
    lines.wait_for(r#"{"data":"after the flood"}"#, WAIT);
    let rss_after = rss_kb(pid);
    say("the end", u64::MAX - 1);
    lines.wait_for(r#"{"data":"the end"}"#, WAIT);
    let out = finish(echo, WAIT);
    let ran_for = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr:\n{stderr}");
    assert!(
        stderr.contains(&format!("{sent} sample(s) dropped as malformed")),
        "every one of the {sent} garbage samples is counted (flood took {flood_took:?}):\n{stderr}"
    );
    eprintln!(
        "{sent} garbage samples from {SENDERS} senders in {flood_took:?}; RSS {rss_before} -> {rss_after} kB; stderr:\n{stderr}"
    );
    // A summary per report interval (10 s) at most, however long a loaded machine made
    // the flood take, never a line per sender.
    let report_lines = stderr.lines().count() as u64;
    let intervals = 1 + ran_for.as_secs() / 10 + 1;
    assert!(
        report_lines <= 2 * intervals + 8 && report_lines < SENDERS / 10,
        "{SENDERS} senders gave {report_lines} stderr lines in {ran_for:?}, not a summary:\n{stderr}"
    );
    assert!(
        rss_after <= rss_before + 16 * 1024,
        "RSS grew from {rss_before} kB to {rss_after} kB over {SENDERS} senders"
    );
}
