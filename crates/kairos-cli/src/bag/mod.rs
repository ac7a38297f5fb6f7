//! `kairos bag`: rosbag2 bags (MCAP and sqlite3, every rosbag2 version) from the command
//! line, read and recorded with `kairos-bag`.
//!
//! - `record`: the topics of a running system into a new bag (see [`record`]);
//! - `play`: a bag back to the running system at its recorded pace (see [`play`]);
//! - `burst`: a bag's first messages at once, then paused, as `ros2 bag burst`;
//! - `reindex`: a folder's `metadata.yaml` rebuilt from its files (a killed recorder's);
//! - `info`: what `ros2 bag info` says of a bag, in its layout (`kairos_bag::info`), with
//!   its `--topic-name`, `--verbose` and `--sort`;
//! - `echo`: the messages in log-time order, decoded to JSON for the types kairos ships
//!   (size and hex otherwise), filtered by topic.
//!
//! A path that is not a bag, or a damaged file, is an error that names the file and says
//! what kairos reads; nothing is printed as if the bag were whole.

mod play;
mod record;

use anyhow::Context;
use clap::builder::TypedValueParser;
use clap::{Args, Subcommand};
use kairos_bag::{Bag, ReadFilter, info};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, UNIX_EPOCH};

#[derive(Debug, Subcommand)]
pub enum BagCmd {
    /// Record topics of the running system into a new bag (Ctrl-C stops).
    Record(record::RecordArgs),
    /// Play a bag to the running system at its recorded pace (Ctrl-C stops).
    Play(play::PlayArgs),
    /// Send a bag's first messages at once, then stay paused (as `ros2 bag burst`).
    Burst(play::BurstArgs),
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
    #[arg(long, conflicts_with_all = ["topic_name", "verbose"])]
    pub json: bool,
    /// Only the topics' names.
    #[arg(short = 't', long)]
    pub topic_name: bool,
    /// Each topic's and service's size, and each service's requests and responses (reads
    /// every message).
    #[arg(short, long)]
    pub verbose: bool,
    /// The order of topics and services: name, type or count.
    #[arg(long, default_value = "name", value_parser = sort_choices())]
    pub sort: info::SortBy,
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
        BagCmd::Burst(args) => play::burst(args),
        BagCmd::Info(args) => info(&args),
        BagCmd::Echo(args) => echo(&args),
        BagCmd::Reindex(args) => reindex(&args),
    }
}

/// `--sort`'s values, listed in `--help` and in the error for any other.
fn sort_choices() -> impl TypedValueParser<Value = info::SortBy> {
    clap::builder::PossibleValuesParser::new(info::SortBy::CHOICES)
        .map(|s| s.parse().expect("one of the choices"))
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
    let size = info::bag_size(&bag);
    if args.json {
        let summary = info::summary(meta, size);
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else if args.verbose {
        if args.topic_name {
            println!(
                "Warning! You have set both the '-t' and '-v' parameters. The '-t' parameter will be ignored."
            );
        }
        let contents =
            info::Contents::of(&bag).with_context(|| format!("reading {}", args.bag.display()))?;
        println!(
            "{}",
            info::describe_verbose(meta, size, args.sort, &contents)
        );
    } else if args.topic_name {
        for name in info::topic_names(meta, args.sort) {
            println!("{name}");
        }
    } else {
        println!("{}", info::describe(meta, size, args.sort));
    }
    Ok(ExitCode::SUCCESS)
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
