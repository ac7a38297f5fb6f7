//! `kairos bench read <trace>`: how fast `kairos trace summary` reads a trace, against
//! `babeltrace2 <trace> > /dev/null`, in the same run, with the peak resident memory of
//! each. The trace is first tiled until it holds at least `--events` events, so the
//! figures are about a long read, not start-up: copies of it, each an independent trace
//! whose clock offset puts it after the previous copy in time, in a temporary folder
//! removed afterwards. Each copy adds its streams to the merge, which costs babeltrace2's
//! muxer more per event as copies are added; the stream count is printed with the figures.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use kairos_trace::read::TraceSet;
use kairos_trace::read::metadata::read_metadata_text;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The trace to tile and read.
    pub trace: PathBuf,
    /// Tile the trace until it holds at least this many events.
    #[arg(long, default_value_t = 10_000_000)]
    pub events: u64,
}

/// More copies would mean more stream files than a benchmark should open.
const MAX_COPIES: u64 = 200;

/// One timed child process.
struct Measured {
    elapsed: Duration,
    peak_rss_kib: i64,
}

pub fn run(args: Args) -> anyhow::Result<std::process::ExitCode> {
    let set = TraceSet::open(&args.trace)?;
    let (mut source_events, mut first, mut last) = (0u64, i64::MAX, i64::MIN);
    for ev in set.events()?.flatten() {
        source_events += 1;
        first = first.min(ev.timestamp);
        last = last.max(ev.timestamp);
    }
    if source_events == 0 {
        bail!("{} holds no event to read", args.trace.display());
    }
    let copies = args.events.div_ceil(source_events).clamp(1, MAX_COPIES);
    if copies == MAX_COPIES {
        eprintln!(
            "kairos: note: tiling stops at {MAX_COPIES} copies; the trace is too small to reach {} events",
            args.events
        );
    }
    let dir = std::env::temp_dir().join(format!("kairos-bench-read-{}", std::process::id()));
    let result = (|| {
        // Each copy starts a second after the previous one ended.
        let span_ns = i128::from(last.saturating_sub(first)) + 1_000_000_000;
        tile(&set, copies, span_ns, &dir)?;
        let total = source_events * copies;
        let tiled = TraceSet::open(&dir)?;
        println!(
            "trace: {} tiled {copies}x in time = {total} events, {} streams, {:.0} MiB (in {})",
            args.trace.display(),
            tiled.stream_files().count(),
            tiled.stream_bytes() as f64 / (1 << 20) as f64,
            dir.display()
        );
        let exe = std::env::current_exe().context("finding the kairos executable")?;
        let out = dir.join("summary.json");
        let kairos = measure(
            Command::new(&exe)
                .arg("trace")
                .arg("summary")
                .arg("--json")
                .arg(&dir),
            Some(&out),
        )?;
        let summary: serde_json::Value = serde_json::from_slice(&fs::read(&out)?)?;
        let seen = summary["events"].as_u64().unwrap_or(0);
        if seen != total {
            bail!("kairos trace summary saw {seen} events, expected {total}");
        }
        let bt = measure(Command::new("babeltrace2").arg(&dir), None)
            .context("running babeltrace2 (apt-get install babeltrace2)")?;
        let rate = |m: &Measured| total as f64 / m.elapsed.as_secs_f64();
        println!(
            "{:<40} {:>10} {:>14} {:>12}",
            "reader", "seconds", "events/s", "peak RSS"
        );
        for (name, m) in [
            ("kairos trace summary", &kairos),
            ("babeltrace2 > /dev/null", &bt),
        ] {
            println!(
                "{name:<40} {:>10.2} {:>14.0} {:>9} MiB",
                m.elapsed.as_secs_f64(),
                rate(m),
                m.peak_rss_kib / 1024
            );
        }
        println!(
            "kairos reads {:.1}x as fast as babeltrace2",
            rate(&kairos) / rate(&bt)
        );
        Ok(())
    })();
    let _ = fs::remove_dir_all(&dir);
    result.map(|()| std::process::ExitCode::SUCCESS)
}

/// Copies each trace of `set` `copies` times under `dir`, each copy an independent trace:
/// plain-text metadata without the trace UUID (readers merge traces sharing one) and with
/// its clocks' offsets moved `span_ns` later per copy, and the stream files hard-linked
/// (copied where links are impossible).
fn tile(set: &TraceSet, copies: u64, span_ns: i128, dir: &Path) -> anyhow::Result<()> {
    for (t, trace) in set.traces.iter().enumerate() {
        let bytes = fs::read(trace.path.join("metadata"))?;
        let text = read_metadata_text(&bytes)?.text;
        let text = without_trace_uuid(&text);
        let streams: Vec<PathBuf> = set
            .stream_files()
            .filter(|p| p.parent() == Some(trace.path.as_path()))
            .map(Path::to_path_buf)
            .collect();
        for k in 0..copies {
            let copy = dir.join(format!("t{t}_{k}"));
            fs::create_dir_all(&copy)?;
            fs::write(
                copy.join("metadata"),
                shift_clocks(&text, span_ns * i128::from(k)),
            )?;
            for s in &streams {
                let to = copy.join(s.file_name().expect("a stream file has a name"));
                if fs::hard_link(s, &to).is_err() {
                    fs::copy(s, &to)?;
                }
            }
        }
    }
    Ok(())
}

fn without_trace_uuid(text: &str) -> String {
    let Some(start) = text.find("trace {") else {
        return text.to_string();
    };
    let block_end = text[start..].find("};").map_or(text.len(), |e| start + e);
    match text[start..block_end].find("uuid") {
        Some(u) => {
            let u = start + u;
            let end = text[u..].find(';').map_or(u, |e| u + e + 1);
            format!("{}{}", &text[..u], &text[end..])
        }
        None => text.to_string(),
    }
}

/// Moves every clock's `offset` (in cycles) `shift_ns` later.
fn shift_clocks(text: &str, shift_ns: i128) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    let mut rest = text;
    while let Some(i) = rest.find("clock {") {
        let (head, tail) = rest.split_at(i);
        out.push_str(head);
        let end = tail.find("};").map_or(tail.len(), |e| e + 2);
        out.push_str(&shift_clock_block(&tail[..end], shift_ns));
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

fn shift_clock_block(block: &str, shift_ns: i128) -> String {
    let number_after = |key: &str| -> Option<(usize, usize, i128)> {
        let mut from = 0;
        while let Some(i) = block[from..].find(key) {
            let at = from + i;
            let after = block[at + key.len()..].trim_start();
            if let Some(value) = after.strip_prefix('=') {
                let start = block.len() - value.len();
                let end = start + value.find(';')?;
                return Some((start, end, block[start..end].trim().parse().ok()?));
            }
            from = at + key.len();
        }
        None
    };
    let freq = number_after("freq").map_or(1_000_000_000, |(_, _, f)| f);
    let cycles = shift_ns * freq / 1_000_000_000;
    match number_after("offset") {
        Some((start, end, offset)) => {
            format!("{} {}{}", &block[..start], offset + cycles, &block[end..])
        }
        None => block.replacen("clock {", &format!("clock {{ offset = {cycles};"), 1),
    }
}

/// Runs `cmd` with stdout to `stdout_to` (or /dev/null) and returns its wall time and
/// peak resident set, which only `wait4` reports for exactly this child.
fn measure(cmd: &mut Command, stdout_to: Option<&Path>) -> anyhow::Result<Measured> {
    let stdout = match stdout_to {
        Some(p) => Stdio::from(File::create(p)?),
        None => Stdio::null(),
    };
    let started = Instant::now();
    let child = cmd.stdout(stdout).stderr(Stdio::null()).spawn()?;
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: `rusage` is plain old data; all-zero bytes are a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: wait4 only writes through the two pointers, which point to live locals;
    // `pid` is our own child, not yet reaped (the `Child` handle is never waited on).
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let elapsed = started.elapsed();
    if r != pid {
        bail!("wait4 failed: {}", std::io::Error::last_os_error());
    }
    if !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
        bail!("{cmd:?} failed (wait status {status})");
    }
    Ok(Measured {
        elapsed,
        peak_rss_kib: usage.ru_maxrss,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn clock_offsets_move_by_the_shift_in_cycles() {
        let text = "clock {\n\tname = a;\n\tfreq = 1000;\n\toffset_s = 3;\n\toffset = 10;\n};\nclock { name = b; };";
        let out = super::shift_clocks(text, 2_000_000_000);
        assert!(out.contains("offset = 2010;"), "{out}");
        assert!(out.contains("offset_s = 3;"), "{out}");
        assert!(
            out.contains("clock { offset = 2000000000; name = b;"),
            "{out}"
        );
    }

    #[test]
    fn only_the_trace_uuid_is_removed() {
        let text = "clock { uuid = \"c\"; };\ntrace {\n\tmajor = 1;\n\tuuid = \"t\";\n};";
        let out = super::without_trace_uuid(text);
        assert!(out.contains("uuid = \"c\""));
        assert!(!out.contains("uuid = \"t\""));
    }
}
