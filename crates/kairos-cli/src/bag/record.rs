//! `kairos bag record`: the arguments of `ros2 bag record`, mapped onto
//! [`kairos_bag::record::Recorder`]. Runs until Ctrl-C (or `--duration`), then closes the
//! bag and prints what each topic received, wrote and lost.

use crate::shared_args::{HiddenTopics, TopicPatterns};
use anyhow::{Context, anyhow};
use clap::Args;
use kairos_bag::record::{RecordOptions, RecordReport, Recorder, Selection};
use kairos_bag::{BagCompression, Compression, StorageId, WriterOptions};
use kairos_tools::{absolute_name, seconds};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Debug, Args)]
pub struct RecordArgs {
    /// Topics to record.
    pub topics: Vec<String>,
    /// Record every topic and every service (hidden topics too with
    /// --include-hidden-topics), as rosbag2's -a.
    #[arg(short = 'a', long)]
    pub all: bool,
    /// Record every topic (not services).
    #[arg(long)]
    pub all_topics: bool,
    /// Record every service whose calls are published (service introspection: a server or
    /// client with configure_introspection on): its `<service>/_service_event` topic.
    #[arg(long)]
    pub all_services: bool,
    /// Record these services' calls (their `<service>/_service_event` topics).
    #[arg(long, num_args = 1..)]
    pub services: Vec<String>,
    /// Record the topics of these types (e.g. sensor_msgs/msg/Image).
    #[arg(long, num_args = 1..)]
    pub topic_types: Vec<String>,
    /// Leave out these topics (a topic named to record is recorded).
    #[arg(long, num_args = 1..)]
    pub exclude_topics: Vec<String>,
    /// Leave out the topics of these types (a topic named to record is recorded).
    #[arg(long, num_args = 1..)]
    pub exclude_topic_types: Vec<String>,
    /// Leave out these services' calls.
    #[arg(long, num_args = 1..)]
    pub exclude_services: Vec<String>,
    #[command(flatten)]
    pub patterns: TopicPatterns,
    #[command(flatten)]
    pub hidden: HiddenTopics,
    /// The bag folder to create (default: rosbag2_YYYY_MM_DD-HH_MM_SS).
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    /// Start a new file once the current one has this many bytes (0: never).
    #[arg(short = 'b', long, default_value_t = 0)]
    pub max_bag_size: u64,
    /// Start a new file once the current one spans this many seconds (0: never).
    #[arg(short = 'd', long, default_value_t = 0.0)]
    pub max_bag_duration: f64,
    /// The storage: MCAP files (rosbag2's default since Iron) or sqlite3 databases.
    #[arg(short = 's', long, value_enum, default_value_t = Storage::Mcap)]
    pub storage: Storage,
    /// rosbag2's zstd compression: of each message, or of each file once closed.
    #[arg(long, value_enum, default_value_t = CompressionMode::None)]
    pub compression_mode: CompressionMode,
    /// The compression format of --compression-mode: zstd, the one rosbag2 has.
    #[arg(long, value_enum, default_value_t = CompressionFormat::Zstd)]
    pub compression_format: CompressionFormat,
    /// MCAP chunk compression.
    #[arg(long, value_enum, default_value_t = ChunkCompression::None)]
    pub chunk_compression: ChunkCompression,
    /// Target size of an MCAP chunk in bytes (rosbag2: 768 KiB); a chunk is on disk once
    /// full, so smaller chunks lose less when the recorder is killed.
    #[arg(long, default_value_t = 768 * 1024)]
    pub chunk_size: u64,
    /// Stamp receive times on simulation time (/clock).
    #[arg(long)]
    pub use_sim_time: bool,
    /// The most bytes waiting for the writer; messages beyond are dropped and counted.
    /// In snapshot mode, also the bytes of messages held for the next snapshot.
    #[arg(long, default_value_t = 100 * 1024 * 1024)]
    pub max_cache_size: u64,
    /// Snapshot mode: keep the latest --max-cache-size bytes of messages in memory and
    /// write them only when `/NODE/snapshot` is called (what is still held at the end is
    /// not written, as rosbag2's).
    #[arg(long)]
    pub snapshot_mode: bool,
    /// How often to look for new topics, in milliseconds.
    #[arg(long, default_value_t = 100)]
    pub polling_interval: u64,
    /// The recorder's node name; its control services are `/NODE/pause`, `/NODE/resume`,
    /// `/NODE/is_paused`, `/NODE/split_bagfile` and in snapshot mode `/NODE/snapshot`, as
    /// rosbag2's.
    #[arg(long, default_value = "rosbag2_recorder")]
    pub node_name: String,
    /// Start paused: nothing is recorded until `/NODE/resume` is called.
    #[arg(long)]
    pub start_paused: bool,
    /// Print the counts so far each second (received, written, dropped, lost).
    #[arg(long)]
    pub progress: bool,
    /// Stop after this many seconds (default: at Ctrl-C).
    #[arg(long)]
    pub duration: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Storage {
    Mcap,
    Sqlite3,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CompressionMode {
    None,
    File,
    Message,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CompressionFormat {
    Zstd,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ChunkCompression {
    None,
    Zstd,
    Lz4,
}

pub fn record(args: RecordArgs) -> anyhow::Result<ExitCode> {
    let (regex, exclude) = args.patterns.compile()?;
    let selection = Selection {
        all: args.all || args.all_topics,
        topics: args.topics.iter().map(|t| absolute_name(t)).collect(),
        regex,
        exclude,
        include_hidden: args.hidden.include_hidden_topics,
        all_services: args.all || args.all_services,
        services: args.services.iter().map(|s| absolute_name(s)).collect(),
        topic_types: args.topic_types.clone(),
        exclude_topics: args
            .exclude_topics
            .iter()
            .map(|t| absolute_name(t))
            .collect(),
        exclude_topic_types: args.exclude_topic_types.clone(),
        exclude_services: args
            .exclude_services
            .iter()
            .map(|s| absolute_name(s))
            .collect(),
    };
    if selection.is_empty() {
        return Err(anyhow!(
            "nothing to record: name topics, --services or --topic-types, or pass --all, --all-topics, --all-services or --regex"
        ));
    }
    let max_duration = seconds("--max-bag-duration", args.max_bag_duration)?;
    let stop_after = args
        .duration
        .map(|d| seconds("--duration", d))
        .transpose()?;
    if args.storage == Storage::Sqlite3 && args.chunk_compression != ChunkCompression::None {
        return Err(anyhow!(
            "--chunk-compression is for MCAP chunks: a sqlite3 bag has none (use --compression-mode)"
        ));
    }
    let writer = WriterOptions {
        storage: match args.storage {
            Storage::Mcap => StorageId::Mcap,
            Storage::Sqlite3 => StorageId::Sqlite3,
        },
        bag_compression: match args.compression_mode {
            CompressionMode::None => BagCompression::None,
            CompressionMode::File => BagCompression::File,
            CompressionMode::Message => BagCompression::Message,
        },
        compression: match args.chunk_compression {
            ChunkCompression::None => Compression::None,
            ChunkCompression::Zstd => Compression::Zstd,
            ChunkCompression::Lz4 => Compression::Lz4,
        },
        max_file_size: (args.max_bag_size > 0).then_some(args.max_bag_size),
        max_file_duration: (!max_duration.is_zero()).then_some(max_duration),
        chunk_size: args.chunk_size,
        ..WriterOptions::default()
    };
    let output = args.output.unwrap_or_else(default_output);

    let transport = kairos_zenoh::ZenohTransport::open()?;
    transport.install(&kairos::graph::Context::global())?;
    let node = kairos::graph::Node::with_options(
        &kairos::graph::Context::global(),
        &args.node_name,
        kairos::graph::NodeOptions::new().use_sim_time(args.use_sim_time),
    )?;
    let options = RecordOptions {
        selection,
        writer,
        max_cache_bytes: args.max_cache_size,
        discovery_period: Duration::from_millis(args.polling_interval.max(1)),
        start_paused: args.start_paused,
        snapshot_mode: args.snapshot_mode,
        on_split: Some(
            kairos_bag::services::recorder::split_events(&node)
                .context("cannot publish the split events")?,
        ),
    };
    let clock = node.clock();
    // Spun so that Ctrl-C shuts an executor down (the runtime's graceful path, see
    // kairos::signal) and ends the loop below, which then closes the bag.
    let exec = kairos::exec::Executor::single_threaded();
    exec.add_node(&node)?;
    let spinner = exec.clone();
    std::thread::spawn(move || spinner.spin());
    let recorder = Recorder::start(transport.clone(), node.clone(), clock, &output, options)
        .with_context(|| format!("cannot record into {}", output.display()))?;
    let _services =
        kairos_bag::services::recorder::serve(&node, &recorder.control(), args.snapshot_mode)
            .context("cannot serve the recorder's control services")?;
    if args.snapshot_mode {
        eprintln!(
            "kairos bag record: snapshot mode: call {}/snapshot to write the latest messages",
            node.fully_qualified_name()
        );
    }
    if args.start_paused {
        eprintln!(
            "kairos bag record: paused: call {}/resume to start",
            node.fully_qualified_name()
        );
    }
    eprintln!(
        "kairos bag record: recording into {} (Ctrl-C stops)",
        output.display()
    );
    // Bounded: ends at Ctrl-C, at --duration, or when writing fails.
    let steady = kairos::time::Clock::steady();
    let token = kairos::signal::shutdown_token();
    let end = stop_after.map(|d| steady.now() + kairos::time::Duration::from(d));
    let mut announced = 0;
    let mut last_progress = steady.now();
    let mut last_counts = None;
    let failure = loop {
        let mut next = steady.now() + kairos::time::Duration::from_millis(100);
        if let Some(end) = end {
            if steady.now() >= end {
                break None;
            }
            if end < next {
                next = end;
            }
        }
        if steady.sleep_until(next, &token).is_err() {
            break None;
        }
        if let Some(failure) = recorder.failure() {
            break Some(failure);
        }
        let topics = recorder.topics();
        for topic in topics.iter().skip(announced) {
            eprintln!("kairos bag record: subscribed to {topic}");
        }
        announced = topics.len();
        if args.progress && steady.now() >= last_progress + kairos::time::Duration::from_secs(1) {
            last_progress = steady.now();
            let total = total(&recorder.counts());
            if last_counts != Some(total) {
                let paused = if total.while_paused > 0 {
                    format!(", {} while paused", total.while_paused)
                } else {
                    String::new()
                };
                eprintln!(
                    "kairos bag record: so far {} received, {} written, {} dropped, {} lost in transport{paused}",
                    total.received,
                    total.written,
                    total.dropped_queue + total.not_written,
                    total.lost_in_transport
                );
                last_counts = Some(total);
            }
        }
    };
    let report = recorder.stop();
    let _ = exec.shutdown(kairos::time::Duration::from_secs(2));
    print_report(&output, &report);
    drop(transport);
    match (failure, &report.error) {
        (Some(failure), _) => {
            eprintln!(
                "kairos bag record: stopped: {failure}; the bag holds what was written before"
            );
            Ok(ExitCode::from(1))
        }
        (None, Some(e)) => {
            eprintln!("kairos bag record: {e}");
            Ok(ExitCode::from(1))
        }
        (None, None) => Ok(ExitCode::SUCCESS),
    }
}

fn total(
    counts: &std::collections::BTreeMap<String, kairos_bag::record::TopicCounts>,
) -> kairos_bag::record::TopicCounts {
    counts.values().fold(Default::default(), |a, b| a + *b)
}

/// rosbag2's default bag name: `rosbag2_` and the local time of the start.
fn default_output() -> PathBuf {
    let now = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    // 2026-12-02T04:10:11Z -> 2026_12_02-04_10_11
    let stamp = now
        .trim_end_matches('Z')
        .replace('-', "_")
        .replace('T', "-")
        .replace(':', "_");
    PathBuf::from(format!("rosbag2_{stamp}"))
}

fn print_report(output: &std::path::Path, report: &RecordReport) {
    for line in report.describe(output) {
        eprintln!("kairos bag record: {line}");
    }
}
