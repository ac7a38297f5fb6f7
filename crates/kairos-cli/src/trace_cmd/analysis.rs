//! The analysis subcommands: each loads the model, runs one analysis and prints it as
//! text or, with `--json`, as JSON.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use kairos_analyze::{Digest, Options, flow, goals, html, logs, perfetto, summary};
use serde::Serialize;

use super::load::{load, load_streaming};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A trace folder, or a folder of traces such as an LTTng session folder.
    pub trace: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Args)]
pub struct FlowArgs {
    #[command(flatten)]
    pub common: Args,
    /// The topic the message was published on, e.g. /topic_a.
    #[arg(long)]
    pub topic: String,
    /// Which message of the topic (0-based, in publication order).
    #[arg(long, conflicts_with = "at")]
    pub index: Option<usize>,
    /// The first message published at or after this time: seconds since the epoch with
    /// up to nine decimals, as `dump` prints it (e.g. 1649361409.090125573).
    #[arg(long, value_parser = parse_seconds)]
    pub at: Option<i64>,
}

#[derive(Debug, clap::Args)]
pub struct GoalsArgs {
    #[command(flatten)]
    pub common: Args,
    /// Only the goals whose id starts with this (e.g. the 8 digits the table shows); their
    /// steps are listed one per line.
    #[arg(long)]
    pub goal: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct LogArgs {
    #[command(flatten)]
    pub common: Args,
    /// The lowest level shown: debug, info, warn, error or fatal.
    #[arg(long, default_value = "debug", value_parser = parse_level)]
    pub level: i32,
}

/// rcutils' severity of a level name, as `--log-level` takes it.
fn parse_level(text: &str) -> Result<i32, String> {
    match text.to_ascii_lowercase().as_str() {
        "debug" => Ok(10),
        "info" => Ok(20),
        "warn" | "warning" => Ok(30),
        "error" => Ok(40),
        "fatal" => Ok(50),
        _ => Err(format!(
            "`{text}` is not a log level: use debug, info, warn, error or fatal"
        )),
    }
}

#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    /// Where to write the Chrome/Perfetto trace JSON.
    #[arg(long)]
    pub perfetto: PathBuf,
    pub trace: PathBuf,
}

#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// Where to write the HTML page.
    #[arg(long)]
    pub html: PathBuf,
    pub trace: PathBuf,
}

fn print<T: Serialize + std::fmt::Display>(value: &T, json: bool) -> anyhow::Result<ExitCode> {
    let text = if json {
        serde_json::to_string_pretty(value)? + "\n"
    } else {
        value.to_string()
    };
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(ExitCode::SUCCESS),
    }
}

pub fn summary(a: Args) -> anyhow::Result<ExitCode> {
    // Followed as the trace is read (memory flat in its length), so the summary can
    // say how every taken message was linked to its publication.
    let (m, _) = load_streaming(&a.trace, Digest::counts_only())?;
    print(&summary::summary(&m), a.json)
}

pub fn log(a: LogArgs) -> anyhow::Result<ExitCode> {
    let m = load(&a.common.trace, Options { messages: false })?;
    print(&logs::report(&m, a.level), a.common.json)
}

pub fn goals(a: GoalsArgs) -> anyhow::Result<ExitCode> {
    let m = load(&a.common.trace, Options { messages: false })?;
    print(&goals::report(&m, a.goal.as_deref()), a.common.json)
}

pub fn callbacks(a: Args) -> anyhow::Result<ExitCode> {
    let (m, d) = load_streaming(&a.trace, Digest::default())?;
    print(&d.callbacks.report(&m), a.json)
}

pub fn timers(a: Args) -> anyhow::Result<ExitCode> {
    let (m, d) = load_streaming(&a.trace, Digest::default())?;
    print(&d.timers.report(&m), a.json)
}

pub fn queues(a: Args) -> anyhow::Result<ExitCode> {
    let (m, d) = load_streaming(&a.trace, Digest::default())?;
    print(&d.queues.report(&m), a.json)
}

pub fn chains(a: Args) -> anyhow::Result<ExitCode> {
    let (m, d) = load_streaming(&a.trace, Digest::default())?;
    print(&d.chains.report(&m), a.json)
}

pub fn flow(a: FlowArgs) -> anyhow::Result<ExitCode> {
    let pick = match (a.index, a.at) {
        (_, Some(ns)) => flow::Pick::At(ns),
        (Some(i), None) => flow::Pick::Index(i),
        (None, None) => flow::Pick::Index(0),
    };
    let digest = Digest::with_flow(flow::FlowAcc::new(&a.topic, pick));
    let (m, d) = load_streaming(&a.common.trace, digest)?;
    let found = d.flow.as_ref().expect("asked for").report(&m)?;
    print(&found, a.common.json)
}

pub fn export(a: ExportArgs) -> anyhow::Result<ExitCode> {
    let m = load(&a.trace, Options::default())?;
    let json = perfetto::export(&m);
    let file = std::fs::File::create(&a.perfetto)
        .with_context(|| format!("creating {}", a.perfetto.display()))?;
    serde_json::to_writer(std::io::BufWriter::new(file), &json)?;
    eprintln!(
        "wrote {} (open it in ui.perfetto.dev or chrome://tracing)",
        a.perfetto.display()
    );
    Ok(ExitCode::SUCCESS)
}

pub fn report(a: ReportArgs) -> anyhow::Result<ExitCode> {
    let (m, d) = load_streaming(&a.trace, Digest::default())?;
    let title = format!("kairos trace report: {}", a.trace.display());
    std::fs::write(&a.html, html::report_digest(&m, &d, &title))
        .with_context(|| format!("writing {}", a.html.display()))?;
    eprintln!("wrote {}", a.html.display());
    Ok(ExitCode::SUCCESS)
}

/// `seconds[.fraction]` since the epoch, exactly, in nanoseconds.
fn parse_seconds(text: &str) -> Result<i64, String> {
    let bad = || format!("`{text}` is not seconds like 1649361409.090125573");
    let (secs, frac) = text.split_once('.').unwrap_or((text, ""));
    if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let secs: i64 = secs.parse().map_err(|_| bad())?;
    let nanos: i64 = format!("{frac:0<9}").parse().map_err(|_| bad())?;
    secs.checked_mul(1_000_000_000)
        .and_then(|s| s.checked_add(nanos))
        .ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::parse_seconds;

    #[test]
    fn seconds_parse_to_exact_nanoseconds() {
        assert_eq!(
            parse_seconds("1649361409.090125573"),
            Ok(1_649_361_409_090_125_573)
        );
        assert_eq!(parse_seconds("12.5"), Ok(12_500_000_000));
        assert_eq!(parse_seconds("7"), Ok(7_000_000_000));
        assert!(parse_seconds("1.0000000001").is_err());
        assert!(parse_seconds("x").is_err());
    }
}
