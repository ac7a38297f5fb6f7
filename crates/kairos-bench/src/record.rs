//! `kairos bench record`: how fast `kairos bag record` stores what another process
//! publishes, beside what writing the same records costs without a network.
//!
//! For each payload size, a child process publishes `count` `std_msgs/msg/UInt8MultiArray`
//! messages back to back (reliable, keep all: the publisher waits rather than drops) to a
//! recorder in this process (`kairos_bag::record::Recorder`, default options), through a
//! Zenoh router on a free loopback port. The recording rate is counted from the child's
//! first publish to the last message written. In the same run, two baselines write the same
//! number of records of the same bytes: the `mcap` crate alone (one channel, the same chunk
//! size, no network, no queue), and a plain buffered sequential file write. Drops are
//! printed: a recorder that keeps up drops none.

use anyhow::{Context as _, anyhow, bail};
use clap::Args as ClapArgs;
use kairos::graph::{Context, Node, Qos};
use kairos_bag::record::{RecordOptions, Recorder, Selection};
use kairos_msgs::std_msgs::msg::UInt8MultiArray;
use kairos_zenoh::ZenohTransport;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};
use zenoh::Wait;

#[derive(Debug, ClapArgs)]
pub struct Args {
    /// Payload sizes in bytes.
    #[arg(long, value_delimiter = ',', default_value = "64,1048576")]
    pub sizes: Vec<usize>,
    /// Messages per size: this many bytes' worth, at least 100 and at most 20,000.
    #[arg(long, default_value_t = 256 * 1024 * 1024)]
    pub bytes: usize,
    #[arg(long)]
    pub json: bool,
    /// Internal: run as the publishing child (size,count,router port).
    #[arg(long, hide = true, value_delimiter = ',')]
    pub child: Option<Vec<usize>>,
}

fn count_for(size: usize, bytes: usize) -> usize {
    (bytes / size.max(1)).clamp(100, 20_000)
}

fn peer_config(port: usize) -> anyhow::Result<zenoh::Config> {
    let mut config = zenoh::Config::default();
    for (key, value) in [
        ("mode", r#""peer""#.to_owned()),
        ("connect/endpoints", format!(r#"["tcp/127.0.0.1:{port}"]"#)),
        ("listen/endpoints", r#"["tcp/127.0.0.1:0"]"#.to_owned()),
        ("scouting/multicast/enabled", "false".to_owned()),
    ] {
        config
            .insert_json5(key, &value)
            .map_err(|e| anyhow!("{key}: {e}"))?;
    }
    Ok(config)
}

fn topic(size: usize) -> String {
    format!("/bench_record_{size}")
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if let Some(child) = &args.child {
        let [size, count, port] = child[..] else {
            bail!("--child takes size,count,port");
        };
        return publish(size, count, port);
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let mut router = zenoh::Config::default();
    for (key, value) in [
        ("mode", r#""router""#.to_owned()),
        ("listen/endpoints", format!(r#"["tcp/127.0.0.1:{port}"]"#)),
        ("scouting/multicast/enabled", "false".to_owned()),
    ] {
        router
            .insert_json5(key, &value)
            .map_err(|e| anyhow!("{key}: {e}"))?;
    }
    let _router = zenoh::open(router).wait().map_err(|e| anyhow!("{e}"))?;
    let transport = ZenohTransport::open_with(peer_config(usize::from(port))?, 0)?;
    transport.install(&Context::global())?;
    let mut rows = Vec::new();
    for &size in &args.sizes {
        let count = count_for(size, args.bytes);
        let scratch = super::ScratchDir::new("record")?;
        let recorded = record_one(&transport, size, count, port, scratch.path())?;
        let payload = cdr_of(size);
        let mcap = mcap_alone(&payload, count, &scratch.path().join("alone.mcap"))?;
        let raw = raw_write(&payload, count, &scratch.path().join("raw.bin"))?;
        rows.push(Row {
            size,
            count,
            bytes: payload.len(),
            recorded,
            mcap,
            raw,
        });
    }
    if args.json {
        let rows: Vec<serde_json::Value> = rows.iter().map(Row::json).collect();
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        println!(
            "{:>9} {:>6} | {:>21} {:>6} {:>12} | {:>21} | {:>9} | {:>5}",
            "payload",
            "msgs",
            "kairos bag record",
            "drops",
            "publisher",
            "mcap crate alone",
            "raw write",
            "ratio"
        );
        for row in &rows {
            println!("{row}");
        }
        println!(
            "(msg/s and MB/s; ratio = mcap alone / recording rate; the publisher column is the child's own send rate)"
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// What recording one size measured.
struct Recorded {
    seconds: f64,
    written: u64,
    dropped: u64,
    publisher_seconds: f64,
}

struct Row {
    size: usize,
    count: usize,
    bytes: usize,
    recorded: Recorded,
    mcap: f64,
    raw: f64,
}

impl Row {
    fn rate(&self, seconds: f64) -> (f64, f64) {
        let n = self.count as f64;
        (n / seconds, n * self.bytes as f64 / seconds / 1e6)
    }

    fn json(&self) -> serde_json::Value {
        let (record_msgs, record_mb) = self.rate(self.recorded.seconds);
        let (mcap_msgs, mcap_mb) = self.rate(self.mcap);
        let (_, raw_mb) = self.rate(self.raw);
        serde_json::json!({
            "payload": self.size, "messages": self.count,
            "record_msgs_per_s": record_msgs, "record_mb_per_s": record_mb,
            "written": self.recorded.written, "dropped": self.recorded.dropped,
            "publisher_msgs_per_s": self.count as f64 / self.recorded.publisher_seconds,
            "mcap_msgs_per_s": mcap_msgs, "mcap_mb_per_s": mcap_mb, "raw_mb_per_s": raw_mb,
        })
    }
}

impl std::fmt::Display for Row {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (record_msgs, record_mb) = self.rate(self.recorded.seconds);
        let (mcap_msgs, mcap_mb) = self.rate(self.mcap);
        let (_, raw_mb) = self.rate(self.raw);
        write!(
            f,
            "{:>9} {:>6} | {:>9.0} {:>8.1} MB/s {:>6} {:>7.0} msg/s | {:>9.0} {:>8.1} MB/s | {:>4.0} MB/s | {:>5.1}",
            self.size,
            self.count,
            record_msgs,
            record_mb,
            self.recorded.dropped,
            self.count as f64 / self.recorded.publisher_seconds,
            mcap_msgs,
            mcap_mb,
            raw_mb,
            mcap_msgs / record_msgs
        )
    }
}

/// A `UInt8MultiArray` of `size` bytes, serialized as the wire carries it.
fn message(size: usize) -> UInt8MultiArray {
    UInt8MultiArray {
        data: vec![0x5a; size].into(),
        ..Default::default()
    }
}

fn cdr_of(size: usize) -> Vec<u8> {
    kairos_msgs::encode(&message(size))
}

fn record_one(
    transport: &std::sync::Arc<ZenohTransport>,
    size: usize,
    count: usize,
    port: u16,
    dir: &std::path::Path,
) -> anyhow::Result<Recorded> {
    let node = Node::new(&format!("kairos_bench_recorder_{size}"))?;
    let options = RecordOptions {
        selection: Selection {
            topics: vec![topic(size)],
            ..Selection::default()
        },
        ..RecordOptions::default()
    };
    let clock = node.clock();
    let recorder = Recorder::start(transport.clone(), node, clock, dir.join("bag"), options)?;
    let mut child = Command::new(std::env::current_exe()?)
        .args(["bench", "record", "--child"])
        .arg(format!("{size},{count},{port}"))
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .context("start the publishing child")?;
    let mut lines = BufReader::new(child.stdout.take().expect("piped")).lines();
    let started = match lines.next() {
        Some(Ok(line)) if line == "publishing" => Instant::now(),
        other => bail!("the publishing child did not start: {other:?}"),
    };
    let deadline = started + Duration::from_secs(600);
    let total = |recorder: &Recorder| {
        recorder.counts().values().fold((0, 0, 0), |a, c| {
            (
                a.0 + c.written,
                a.1 + c.dropped_queue + c.not_written,
                a.2 + c.lost_in_transport,
            )
        })
    };
    let finished = loop {
        let (written, dropped, lost) = total(&recorder);
        if written + dropped + lost >= count as u64 {
            break Instant::now();
        }
        if Instant::now() > deadline {
            bail!("recording {count} messages of {size} B took over 10 minutes");
        }
        std::thread::sleep(Duration::from_micros(200));
    };
    let publisher_seconds = match lines.next() {
        Some(Ok(line)) => line
            .strip_prefix("sent in ")
            .and_then(|s| s.parse::<f64>().ok())
            .ok_or_else(|| anyhow!("the child said {line:?}"))?,
        other => bail!("the publishing child ended early: {other:?}"),
    };
    let _ = child.wait();
    let report = recorder.stop();
    let total = report.total();
    Ok(Recorded {
        seconds: (finished - started).as_secs_f64(),
        written: total.written,
        dropped: total.dropped_queue + total.not_written + total.lost_in_transport,
        publisher_seconds,
    })
}

/// The child: publishes `count` messages of `size` bytes once the recorder matches.
fn publish(size: usize, count: usize, port: usize) -> anyhow::Result<ExitCode> {
    let transport = ZenohTransport::open_with(peer_config(port)?, 0)?;
    transport.install(&Context::global())?;
    let node = Node::new("kairos_bench_record_publisher")?;
    let publisher = node.create_publisher::<UInt8MultiArray>(&topic(size), Qos::keep_all(1000))?;
    let tool = kairos_zenoh::interfaces::message_by_name("std_msgs/msg/UInt8MultiArray")
        .ok_or_else(|| anyhow!("UInt8MultiArray is shipped"))?;
    let key = tool.data_key(0, &topic(size));
    if !kairos_zenoh::matching::wait_remote_subscriber(
        transport.session(),
        &key,
        Duration::from_secs(60),
    )? {
        bail!("the recorder never subscribed {}", topic(size));
    }
    let message = message(size);
    let mut out = std::io::stdout();
    writeln!(out, "publishing")?;
    out.flush()?;
    let start = Instant::now();
    for _ in 0..count {
        publisher.publish(message.clone());
    }
    let seconds = start.elapsed().as_secs_f64();
    drop(publisher);
    transport.close(Duration::from_secs(30))?;
    writeln!(out, "sent in {seconds}")?;
    Ok(ExitCode::SUCCESS)
}

/// Seconds to write `count` records of `payload` with the `mcap` crate alone.
fn mcap_alone(payload: &[u8], count: usize, path: &std::path::Path) -> anyhow::Result<f64> {
    let start = Instant::now();
    let file = std::fs::File::create(path)?;
    let mut writer = mcap::WriteOptions::new()
        .profile("ros2")
        .chunk_size(Some(768 * 1024))
        .compression(None)
        .create(file)?;
    let schema = writer.add_schema("std_msgs/msg/UInt8MultiArray", "ros2msg", b"")?;
    let channel = writer.add_channel(
        schema,
        "/bench_record",
        "cdr",
        &std::collections::BTreeMap::new(),
    )?;
    for i in 0..count {
        let header = mcap::records::MessageHeader {
            channel_id: channel,
            sequence: i as u32,
            log_time: i as u64,
            publish_time: i as u64,
        };
        writer.write_to_known_channel(&header, payload)?;
    }
    writer.finish()?;
    Ok(start.elapsed().as_secs_f64())
}

/// Seconds to write `count` copies of `payload` to a file, buffered, sequentially.
fn raw_write(payload: &[u8], count: usize, path: &std::path::Path) -> anyhow::Result<f64> {
    let start = Instant::now();
    let mut file = std::io::BufWriter::new(std::fs::File::create(path)?);
    for _ in 0..count {
        file.write_all(payload)?;
    }
    file.flush()?;
    Ok(start.elapsed().as_secs_f64())
}
