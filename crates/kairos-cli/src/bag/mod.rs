//! `kairos bag`: rosbag2 bags (MCAP and sqlite3, every rosbag2 version) from the command
//! line, read and recorded with `kairos-bag`.
//!
//! - `record`: the topics of a running system into a new bag (see [`record`]);
//! - `play`: a bag back to the running system at its recorded pace (see [`play`]);
//! - `reindex`: a folder's `metadata.yaml` rebuilt from its files (a killed recorder's);
//! - `info`: what `ros2 bag info` says of a bag: files, size, storage, duration, start and
//!   end, and each topic with its type, count and serialization format;
//! - `echo`: the messages in log-time order, decoded to JSON for the types kairos ships
//!   (size and hex otherwise), filtered by topic.
//!
//! A path that is not a bag, or a damaged file, is an error that names the file and says
//! what kairos reads; nothing is printed as if the bag were whole.

mod control;
mod play;
mod record;
mod recorder_control;
mod services;

use services::ControlServices;

use anyhow::Context;
use clap::{Args, Subcommand};
use kairos_bag::{Bag, BagMetadata, ReadFilter};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, UNIX_EPOCH};

#[derive(Debug, Subcommand)]
pub enum BagCmd {
    /// Record topics of the running system into a new bag (Ctrl-C stops).
    Record(record::RecordArgs),
    /// Play a bag to the running system at its recorded pace (Ctrl-C stops).
    Play(play::PlayArgs),
    /// What a bag holds: files, storage, duration, topics with types and counts.
    Info(InfoArgs),
    /// The messages of a bag in log-time order, as JSON where kairos knows the type.
    Echo(EchoArgs),
    /// Rebuild a bag folder's metadata.yaml from its files (after a recorder was killed).
    Reindex(ReindexArgs),
}

#[derive(Debug, Args)]
pub struct ReindexArgs {
    /// The bag folder.
    pub bag: PathBuf,
}

#[derive(Debug, Args)]
pub struct InfoArgs {
    /// A bag folder, its metadata.yaml, or a single .mcap or .db3 file.
    pub bag: PathBuf,
    /// Print the description as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct EchoArgs {
    /// A bag folder, its metadata.yaml, or a single .mcap or .db3 file.
    pub bag: PathBuf,
    /// Only these topics (repeatable); every topic by default.
    #[arg(long = "topic")]
    pub topics: Vec<String>,
    /// Stop after this many messages.
    #[arg(long)]
    pub count: Option<u64>,
    /// One JSON object per line (topic, type, times, sequence, data).
    #[arg(long)]
    pub json: bool,
}

pub fn run(cmd: BagCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        BagCmd::Record(args) => record::record(args),
        BagCmd::Play(args) => play::play(args),
        BagCmd::Info(args) => info(&args),
        BagCmd::Echo(args) => echo(&args),
        BagCmd::Reindex(args) => reindex(&args),
    }
}

fn reindex(args: &ReindexArgs) -> anyhow::Result<ExitCode> {
    let meta = Bag::reindex(&args.bag)
        .with_context(|| format!("cannot reindex the bag {}", args.bag.display()))?;
    println!(
        "kairos bag reindex: {} written: {} message(s) in {} file(s)",
        args.bag.join("metadata.yaml").display(),
        meta.message_count,
        meta.relative_file_paths.len()
    );
    Ok(ExitCode::SUCCESS)
}

fn open(path: &Path) -> anyhow::Result<Bag> {
    Bag::open(path).with_context(|| format!("cannot read the bag {}", path.display()))
}

fn info(args: &InfoArgs) -> anyhow::Result<ExitCode> {
    let bag = open(&args.bag)?;
    let meta = bag.info();
    let size = bag_size(&args.bag, meta);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&info_json(meta, size))?);
    } else {
        print!("{}", info_text(meta, size));
    }
    Ok(ExitCode::SUCCESS)
}

/// The bytes of the bag's storage files (a single file: that file).
fn bag_size(path: &Path, meta: &BagMetadata) -> u64 {
    if path.is_file() && !path.ends_with("metadata.yaml") {
        return path.metadata().map_or(0, |m| m.len());
    }
    let dir = if path.is_file() {
        path.parent().unwrap_or(Path::new("."))
    } else {
        path
    };
    meta.relative_file_paths
        .iter()
        .filter_map(|file| dir.join(file).metadata().ok())
        .map(|m| m.len())
        .sum()
}

fn info_json(meta: &BagMetadata, size: u64) -> serde_json::Value {
    let topics: Vec<_> = meta
        .topics
        .iter()
        .map(|t| {
            serde_json::json!({
                "name": t.name,
                "type": t.type_name,
                "count": t.message_count,
                "serialization_format": t.serialization_format,
                "type_description_hash": t.type_description_hash,
            })
        })
        .collect();
    serde_json::json!({
        "files": meta.relative_file_paths,
        "size_bytes": size,
        "storage": meta.storage_identifier,
        "version": meta.version,
        "ros_distro": meta.ros_distro,
        "duration_ns": meta.duration_ns,
        "start_ns": meta.starting_time_ns,
        "end_ns": meta.end_time_ns(),
        "messages": meta.message_count,
        "compression_format": meta.compression_format,
        "compression_mode": meta.compression_mode,
        "topics": topics,
    })
}

/// `ros2 bag info`'s layout.
fn info_text(meta: &BagMetadata, size: u64) -> String {
    let mut out = String::new();
    let line = |out: &mut String, label: &str, value: String| {
        out.push_str(&format!("{:<19}{value}\n", format!("{label}:")));
    };
    line(
        &mut out,
        "Files",
        meta.relative_file_paths.join("\n                   "),
    );
    line(&mut out, "Bag size", human_size(size));
    line(&mut out, "Storage id", meta.storage_identifier.clone());
    if !meta.ros_distro.is_empty() {
        line(&mut out, "ROS Distro", meta.ros_distro.clone());
    }
    line(
        &mut out,
        "Duration",
        format!(
            "{}.{:09}s",
            meta.duration_ns / 1_000_000_000,
            meta.duration_ns % 1_000_000_000
        ),
    );
    line(&mut out, "Start", stamp(meta.starting_time_ns));
    line(&mut out, "End", stamp(meta.end_time_ns()));
    // Service calls (introspection topics) are listed apart and not counted as messages,
    // as rosbag2 lists them.
    let (services, topics): (Vec<_>, Vec<_>) =
        meta.topics.iter().partition(|t| t.service().is_some());
    let events: u64 = services.iter().map(|t| t.message_count).sum();
    line(
        &mut out,
        "Messages",
        meta.message_count.saturating_sub(events).to_string(),
    );
    if !meta.compression_format.is_empty() {
        line(
            &mut out,
            "Compression",
            format!("{} ({})", meta.compression_format, meta.compression_mode),
        );
    }
    let topics: Vec<String> = topics
        .iter()
        .map(|t| {
            format!(
                "Topic: {} | Type: {} | Count: {} | Serialization Format: {}",
                t.name, t.type_name, t.message_count, t.serialization_format
            )
        })
        .collect();
    line(
        &mut out,
        "Topic information",
        topics.join("\n                   "),
    );
    line(&mut out, "Service", services.len().to_string());
    let services: Vec<String> = services
        .iter()
        .filter_map(|t| {
            let (service, service_type) = t.service()?;
            Some(format!(
                "Service: {service} | Type: {service_type} | Event Count: {} | Serialization Format: {}",
                t.message_count, t.serialization_format
            ))
        })
        .collect();
    out.push_str(&format!(
        "Service information: {}\n",
        services.join("\n                     ")
    ));
    out
}

/// A time since the epoch, as UTC and as seconds (`2020-04-02T22:23:55.112411371Z
/// (1585866235.112411371)`).
fn stamp(ns: u64) -> String {
    let at = UNIX_EPOCH + Duration::from_nanos(ns);
    format!(
        "{} ({}.{:09})",
        humantime::format_rfc3339_nanos(at),
        ns / 1_000_000_000,
        ns % 1_000_000_000
    )
}

fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

fn echo(args: &EchoArgs) -> anyhow::Result<ExitCode> {
    let bag = open(&args.bag)?;
    let known: Vec<&str> = bag.info().topics.iter().map(|t| t.name.as_str()).collect();
    if let Some(missing) = args.topics.iter().find(|t| !known.contains(&t.as_str())) {
        anyhow::bail!(
            "{} has no topic {missing}; its topics: {}",
            args.bag.display(),
            known.join(", ")
        );
    }
    let filter = if args.topics.is_empty() {
        ReadFilter::all()
    } else {
        ReadFilter::all().topics(args.topics.iter().cloned())
    };
    let limit = args.count.unwrap_or(u64::MAX);
    for message in bag
        .read(&filter)?
        .take(usize::try_from(limit).unwrap_or(usize::MAX))
    {
        let message = message.with_context(|| format!("reading {}", args.bag.display()))?;
        let data = match kairos_zenoh::interfaces::message_by_name(&message.type_name) {
            Some(tool) => tool
                .payload_to_json(&message.data)
                .unwrap_or_else(|e| serde_json::json!({ "undecodable": e.to_string() })),
            None => serde_json::json!({
                "size": message.data.len(),
                "hex": message.data.iter().map(|b| format!("{b:02x}")).collect::<String>(),
            }),
        };
        if args.json {
            let line = serde_json::json!({
                "topic": message.topic,
                "type": message.type_name,
                "log_time_ns": message.log_time,
                "publish_time_ns": message.publish_time,
                "sequence": message.sequence,
                "data": data,
            });
            println!("{line}");
        } else {
            println!(
                "{} {} ({}):\n{}\n---",
                stamp(message.log_time),
                message.topic,
                message.type_name,
                serde_json::to_string_pretty(&data)?
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
