//! How late `kairos_bag::play::Player` sends, beside the simplest player one could write.
//!
//! Writes a 1 kHz bag of N messages (default 2000; `cargo run --release --example
//! play_timing --features zenoh -- N`), plays it with no subscriber on a zenoh session of
//! its own (peer mode, listening on 127.0.0.1 only, no scouting), and prints p50/p99/max of
//! send time - planned time. Then, in the same run, a plain loop of `std::thread::sleep`
//! to the same absolute deadlines (1 ms apart on the monotonic clock), measured the same
//! way, and the ratio of the two.

use kairos::graph::{Context, Node};
use kairos_bag::play::{Lateness, PlayOptions, Player};
use kairos_bag::{BagWriter, TopicInfo, WriterOptions};
use kairos_zenoh::ZenohTransport;
use std::time::{Duration, Instant};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: u64 = std::env::args()
        .nth(1)
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(2000);
    let period = Duration::from_millis(1);
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("one_khz");
    let mut writer = BagWriter::create(&path, WriterOptions::default())?;
    writer.add_topic(TopicInfo::new("/timing", "std_msgs/msg/String"))?;
    let start_ns = 1_700_000_000_000_000_000u64;
    for i in 0..n {
        let text = format!("message {i:08}");
        let mut cdr = vec![0, 1, 0, 0];
        cdr.extend_from_slice(&(text.len() as u32 + 1).to_le_bytes());
        cdr.extend_from_slice(text.as_bytes());
        cdr.push(0);
        let t = start_ns + i * period.as_nanos() as u64;
        writer.write("/timing", t, t, i as u32, &cdr)?;
    }
    writer.finish()?;

    // Peer mode, 127.0.0.1 only, no scouting; timestamping on as in kairos's own
    // configuration (transient-local caches need it).
    let mut config = kairos_testkit::zenoh_session::loopback_config("peer", None, 0);
    config
        .insert_json5(
            "timestamping/enabled",
            "{router: true, peer: true, client: true}",
        )
        .map_err(|e| format!("timestamping: {e}"))?;
    let transport = ZenohTransport::open_with(config, 0)?;
    let context = Context::new();
    transport.install(&context)?;
    let node = Node::new_in(&context, "play_timing", "/")?;
    let player = Player::start(transport.clone(), node, &path, PlayOptions::default())?;
    let report = player.wait();
    let played = report.lateness();
    assert_eq!(report.total_sent(), n, "every message sent");

    let start = Instant::now();
    let mut lateness_ns = Vec::with_capacity(n as usize);
    for i in 0..n {
        let deadline = start + period * i as u32;
        let now = Instant::now();
        if deadline > now {
            std::thread::sleep(deadline - now);
        }
        lateness_ns.push(i64::try_from((Instant::now() - deadline).as_nanos()).unwrap_or(i64::MAX));
    }
    let baseline = Lateness::of(&lateness_ns);

    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let row = |name: &str, l: &Lateness| {
        println!(
            "{name:<28} {:>10.1} {:>10.1} {:>10.1}",
            us(l.p50),
            us(l.p99),
            us(l.max)
        );
    };
    println!("{n} messages at 1 kHz, send time - planned time (µs), no subscriber");
    println!("{:<28} {:>10} {:>10} {:>10}", "", "p50", "p99", "max");
    row("kairos bag play (Player)", &played);
    row("std::thread::sleep loop", &baseline);
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64().max(1e-9);
    println!(
        "{:<28} {:>10.2} {:>10.2} {:>10.2}",
        "ratio (player / baseline)",
        ratio(played.p50, baseline.p50),
        ratio(played.p99, baseline.p99),
        ratio(played.max, baseline.max)
    );
    println!(
        "player: {} later than 10 ms, none early (min {:.1} µs)",
        report.late,
        us(played.min)
    );
    Ok(())
}
