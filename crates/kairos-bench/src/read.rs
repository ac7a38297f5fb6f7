//! `kairos bench read <trace>`: how fast `kairos trace summary` and `kairos trace chains`
//! read a trace, against `babeltrace2 -o dummy <trace>`, in the same run, with the peak
//! resident memory of each. Two shapes of trace, reported separately because readers
//! scale differently with the number of streams:
//!
//! - many streams: the given trace tiled until it holds at least `--events` events,
//!   copies of it, each an independent trace whose clock offset puts it after the
//!   previous copy in time (each copy adds its streams to the merge);
//! - one stream per CPU (`--kernel-like`): a generated LTTng-kernel-like trace of
//!   `--events` events over `--cpus` per-CPU streams (scheduler, interrupt, system-call
//!   and timer events with the kernel tracer's compact/extended headers, 1 MiB packets).
//!
//! Either is written to a temporary folder removed afterwards.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use kairos_trace::read::TraceSet;
use kairos_trace::read::metadata::read_metadata_text;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The trace to tile and read (not with `--kernel-like`).
    #[arg(required_unless_present = "kernel_like")]
    pub trace: Option<PathBuf>,
    /// Tile the trace until it holds at least this many events (with `--kernel-like`:
    /// generate exactly this many).
    #[arg(long, default_value_t = 10_000_000)]
    pub events: u64,
    /// Generate a one-stream-per-CPU LTTng-kernel-like trace instead of tiling one.
    #[arg(long, conflicts_with = "trace")]
    pub kernel_like: bool,
    /// CPUs (streams) of the generated trace.
    #[arg(long, default_value_t = 2, requires = "kernel_like")]
    pub cpus: u32,
    /// Write the trace to this new folder and keep it (default: a temporary folder,
    /// removed afterwards).
    #[arg(long)]
    pub keep: Option<PathBuf>,
}

/// More copies would mean more stream files than a benchmark should open.
const MAX_COPIES: u64 = 200;

/// One timed child process.
struct Measured {
    elapsed: Duration,
    peak_rss_kib: i64,
}

pub fn run(args: Args) -> anyhow::Result<std::process::ExitCode> {
    let dir = match &args.keep {
        Some(d) if d.exists() => bail!("{} exists; --keep wants a new folder", d.display()),
        Some(d) => d.clone(),
        None => std::env::temp_dir().join(format!("kairos-bench-read-{}", std::process::id())),
    };
    let result = (|| {
        let total = match &args.trace {
            Some(trace) => tile_to(trace, args.events, &dir)?,
            None => {
                generate_kernel_like(&dir, args.events, args.cpus.max(1))?;
                let set = TraceSet::open(&dir)?;
                println!(
                    "trace: generated LTTng-kernel-like, one stream per CPU = {} events, {} streams, {:.0} MiB (in {})",
                    args.events,
                    set.stream_files().count(),
                    set.stream_bytes() as f64 / (1 << 20) as f64,
                    dir.display()
                );
                args.events
            }
        };
        compare(&dir, total)
    })();
    if args.keep.is_none() {
        let _ = fs::remove_dir_all(&dir);
    }
    result.map(|()| std::process::ExitCode::SUCCESS)
}

/// Tiles `trace` under `dir` to at least `events` events; returns how many it holds.
fn tile_to(trace: &Path, events: u64, dir: &Path) -> anyhow::Result<u64> {
    let set = TraceSet::open(trace)?;
    let (mut source_events, mut first, mut last) = (0u64, i64::MAX, i64::MIN);
    for ev in set
        .events_with(kairos_analyze::Builder::selection())?
        .flatten()
    {
        source_events += 1;
        first = first.min(ev.timestamp);
        last = last.max(ev.timestamp);
    }
    if source_events == 0 {
        bail!("{} holds no event to read", trace.display());
    }
    let copies = events.div_ceil(source_events).clamp(1, MAX_COPIES);
    if copies == MAX_COPIES {
        eprintln!(
            "kairos: note: tiling stops at {MAX_COPIES} copies; the trace is too small to reach {events} events"
        );
    }
    // Each copy starts a second after the previous one ended.
    let span_ns = i128::from(last.saturating_sub(first)) + 1_000_000_000;
    tile(&set, copies, span_ns, dir)?;
    let total = source_events * copies;
    let tiled = TraceSet::open(dir)?;
    println!(
        "trace: {} tiled {copies}x in time = {total} events, {} streams, {:.0} MiB (in {})",
        trace.display(),
        tiled.stream_files().count(),
        tiled.stream_bytes() as f64 / (1 << 20) as f64,
        dir.display()
    );
    Ok(total)
}

/// Runs the readers on the trace in `dir` and prints their figures side by side.
fn compare(dir: &Path, total: u64) -> anyhow::Result<()> {
    let exe = std::env::current_exe().context("finding the kairos executable")?;
    // Outside the trace folder, where it would be taken for a stream.
    let out = std::env::temp_dir().join(format!(
        "kairos-bench-read-summary-{}.json",
        std::process::id()
    ));
    let summary = measure(
        Command::new(&exe)
            .arg("trace")
            .arg("summary")
            .arg("--json")
            .arg(dir),
        Some(&out),
    );
    let json = fs::read(&out);
    let _ = fs::remove_file(&out);
    let (summary, json) = (summary?, json?);
    let json: serde_json::Value = serde_json::from_slice(&json)?;
    let seen = json["events"].as_u64().unwrap_or(0);
    if seen != total {
        bail!("kairos trace summary saw {seen} events, expected {total}");
    }
    let chains = measure(
        Command::new(&exe)
            .arg("trace")
            .arg("chains")
            .arg("--json")
            .arg(dir),
        None,
    )?;
    let bt = measure(
        Command::new("babeltrace2").arg("-o").arg("dummy").arg(dir),
        None,
    )
    .context("running babeltrace2 (apt-get install babeltrace2)")?;
    let rate = |m: &Measured| total as f64 / m.elapsed.as_secs_f64();
    println!(
        "{:<40} {:>10} {:>14} {:>12}",
        "reader", "seconds", "events/s", "peak RSS"
    );
    for (name, m) in [
        ("kairos trace summary", &summary),
        ("kairos trace chains", &chains),
        ("babeltrace2 -o dummy", &bt),
    ] {
        println!(
            "{name:<40} {:>10.2} {:>14.0} {:>9} MiB",
            m.elapsed.as_secs_f64(),
            rate(m),
            m.peak_rss_kib / 1024
        );
    }
    println!(
        "kairos trace summary reads {:.1}x as fast as babeltrace2",
        rate(&summary) / rate(&bt)
    );
    Ok(())
}

/// Copies each trace of `set` `copies` times under `dir`, each copy an independent trace:
/// plain-text metadata without the trace UUID (readers merge traces sharing one) and with
/// its clocks' offsets moved `span_ns` later per copy, and the stream files hard-linked
/// (copied where links are impossible).
fn tile(set: &TraceSet, copies: u64, span_ns: i128, dir: &Path) -> anyhow::Result<()> {
    for (t, trace) in set.traces.iter().enumerate() {
        let bytes = fs::read(trace.path.join("metadata"))?;
        let text = read_metadata_text(&bytes)?.text;
        // Packetized metadata's text has no `/* CTF 1.8 */` line; plain text needs one.
        let text = if text.trim_start().starts_with("/* CTF") {
            without_trace_uuid(&text)
        } else {
            format!("/* CTF 1.8 */\n{}", without_trace_uuid(&text))
        };
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

/// The generated trace's metadata: the shape of an LTTng 2.x kernel trace (packet
/// header and context, compact/extended event header on the monotonic clock, events
/// with the kernel tracer's field types).
const KERNEL_LIKE_METADATA: &str = r#"/* CTF 1.8 */
typealias integer { size = 8; align = 8; signed = false; } := uint8_t;
typealias integer { size = 16; align = 8; signed = false; } := uint16_t;
typealias integer { size = 32; align = 8; signed = false; } := uint32_t;
typealias integer { size = 64; align = 8; signed = false; } := uint64_t;
typealias integer { size = 64; align = 8; signed = false; } := unsigned long;
typealias integer { size = 5; align = 1; signed = false; } := uint5_t;
typealias integer { size = 27; align = 1; signed = false; } := uint27_t;
trace {
	major = 1;
	minor = 8;
	byte_order = le;
	packet.header := struct {
		uint32_t magic;
		uint32_t stream_id;
		uint64_t stream_instance_id;
	};
};
env {
	hostname = "bench";
	domain = "kernel";
	tracer_name = "lttng-modules";
	tracer_major = 2;
	tracer_minor = 12;
};
clock {
	name = "monotonic";
	description = "Monotonic Clock";
	freq = 1000000000;
	precision = 1;
	offset_s = 1700000000;
	offset = 0;
	absolute = FALSE;
};
typealias integer { size = 27; align = 1; signed = false; map = clock.monotonic.value; } := uint27_clock_monotonic_t;
typealias integer { size = 64; align = 8; signed = false; map = clock.monotonic.value; } := uint64_clock_monotonic_t;
struct packet_context {
	uint64_clock_monotonic_t timestamp_begin;
	uint64_clock_monotonic_t timestamp_end;
	uint64_t content_size;
	uint64_t packet_size;
	uint64_t packet_seq_num;
	unsigned long events_discarded;
	uint32_t cpu_id;
};
struct event_header_compact {
	enum : uint5_t { compact = 0 ... 30, extended = 31 } id;
	variant <id> {
		struct { uint27_clock_monotonic_t timestamp; } compact;
		struct { uint32_t id; uint64_clock_monotonic_t timestamp; } extended;
	} v;
} align(8);
stream {
	id = 0;
	event.header := struct event_header_compact;
	packet.context := struct packet_context;
};
event { name = "sched_switch"; id = 0; stream_id = 0; fields := struct {
	integer { size = 8; align = 8; signed = 0; encoding = UTF8; base = 10; } _prev_comm[16];
	integer { size = 32; align = 8; signed = 1; base = 10; } _prev_tid;
	integer { size = 32; align = 8; signed = 1; base = 10; } _prev_prio;
	integer { size = 64; align = 8; signed = 1; base = 10; } _prev_state;
	integer { size = 8; align = 8; signed = 0; encoding = UTF8; base = 10; } _next_comm[16];
	integer { size = 32; align = 8; signed = 1; base = 10; } _next_tid;
	integer { size = 32; align = 8; signed = 1; base = 10; } _next_prio;
}; };
event { name = "sched_waking"; id = 1; stream_id = 0; fields := struct {
	integer { size = 8; align = 8; signed = 0; encoding = UTF8; base = 10; } _comm[16];
	integer { size = 32; align = 8; signed = 1; base = 10; } _tid;
	integer { size = 32; align = 8; signed = 1; base = 10; } _prio;
	integer { size = 32; align = 8; signed = 1; base = 10; } _target_cpu;
}; };
event { name = "irq_handler_entry"; id = 2; stream_id = 0; fields := struct {
	integer { size = 32; align = 8; signed = 1; base = 10; } _irq;
	string _name;
}; };
event { name = "irq_handler_exit"; id = 3; stream_id = 0; fields := struct {
	integer { size = 32; align = 8; signed = 1; base = 10; } _irq;
	integer { size = 32; align = 8; signed = 1; base = 10; } _ret;
}; };
event { name = "syscall_entry_read"; id = 4; stream_id = 0; fields := struct {
	integer { size = 32; align = 8; signed = 0; base = 10; } _fd;
	integer { size = 64; align = 8; signed = 0; base = 16; } _buf;
	integer { size = 64; align = 8; signed = 0; base = 10; } _count;
}; };
event { name = "syscall_exit_read"; id = 5; stream_id = 0; fields := struct {
	integer { size = 64; align = 8; signed = 1; base = 10; } _ret;
	integer { size = 64; align = 8; signed = 0; base = 16; } _buf;
}; };
event { name = "timer_hrtimer_expire_entry"; id = 6; stream_id = 0; fields := struct {
	integer { size = 64; align = 8; signed = 0; base = 16; } _hrtimer;
	integer { size = 64; align = 8; signed = 1; base = 10; } _now;
	integer { size = 64; align = 8; signed = 0; base = 16; } _function;
}; };
event { name = "timer_hrtimer_expire_exit"; id = 7; stream_id = 0; fields := struct {
	integer { size = 64; align = 8; signed = 0; base = 16; } _hrtimer;
}; };
event { name = "rcu_utilization"; id = 8; stream_id = 0; fields := struct {
	string _s;
}; };
event { name = "lttng_statedump_process_state"; id = 40; stream_id = 0; fields := struct {
	integer { size = 32; align = 8; signed = 1; base = 10; } _tid;
	integer { size = 8; align = 8; signed = 0; encoding = UTF8; base = 10; } _name[16];
}; };
"#;

/// Bytes of one generated packet.
const PACKET_BYTES: usize = 1 << 20;
/// Packet header and context bytes.
const PACKET_HEAD: usize = 16 + 52;

/// Writes an LTTng-kernel-like trace of `events` events over `cpus` per-CPU streams
/// under `dir`: deterministic (a fixed-seed generator), every event class written
/// exactly as [`KERNEL_LIKE_METADATA`] declares it.
pub fn generate_kernel_like(dir: &Path, events: u64, cpus: u32) -> anyhow::Result<()> {
    use std::io::Write;
    fs::create_dir_all(dir)?;
    fs::write(dir.join("metadata"), KERNEL_LIKE_METADATA)?;
    let mut rng = fastrand::Rng::with_seed(14);
    for cpu in 0..cpus {
        let n = events / u64::from(cpus) + u64::from(u64::from(cpu) < events % u64::from(cpus));
        let mut out = std::io::BufWriter::new(File::create(dir.join(format!("channel0_{cpu}")))?);
        let mut now: u64 = 1_000_000_000 + u64::from(cpu) * 13;
        let mut body: Vec<u8> = Vec::with_capacity(PACKET_BYTES);
        let (mut begin, mut last) = (now, now);
        let mut seq = 0u64;
        let mut flush =
            |body: &mut Vec<u8>, begin: u64, end: u64, seq: &mut u64| -> std::io::Result<()> {
                let content = PACKET_HEAD + body.len();
                let mut head = Vec::with_capacity(PACKET_HEAD);
                head.extend(0xC1FC_1FC1u32.to_le_bytes());
                head.extend(0u32.to_le_bytes());
                head.extend(u64::from(cpu).to_le_bytes());
                for v in [
                    begin,
                    end,
                    content as u64 * 8,
                    PACKET_BYTES as u64 * 8,
                    *seq,
                    0,
                ] {
                    head.extend(v.to_le_bytes());
                }
                head.extend(cpu.to_le_bytes());
                out.write_all(&head)?;
                out.write_all(body)?;
                out.write_all(&vec![0u8; PACKET_BYTES - content])?;
                *seq += 1;
                body.clear();
                Ok(())
            };
        let mut ev = Vec::with_capacity(128);
        for i in 0..n {
            now += rng.u64(50..2_000);
            ev.clear();
            let pick = rng.u32(0..100);
            let id: u32 = match pick {
                0..15 => 0,
                15..25 => 1,
                25..30 => 2,
                30..35 => 3,
                35..50 => 4,
                50..65 => 5,
                65..75 => 6,
                75..85 => 7,
                _ => 8,
            };
            // One event in a thousand takes the extended header, as a statedump does.
            let id = if i % 1000 == 999 { 40 } else { id };
            if id < 31 {
                let word = id | (((now & 0x7FF_FFFF) as u32) << 5);
                ev.extend(word.to_le_bytes());
            } else {
                ev.push(31);
                ev.extend(id.to_le_bytes());
                ev.extend(now.to_le_bytes());
            }
            let comm = |ev: &mut Vec<u8>, name: &[u8]| {
                let mut c = [0u8; 16];
                c[..name.len()].copy_from_slice(name);
                ev.extend(c);
            };
            let tid = rng.i32(1..5000);
            match id {
                0 => {
                    comm(&mut ev, b"talker");
                    ev.extend(tid.to_le_bytes());
                    ev.extend(120i32.to_le_bytes());
                    ev.extend(1i64.to_le_bytes());
                    comm(&mut ev, b"swapper/0");
                    ev.extend((tid + 1).to_le_bytes());
                    ev.extend(120i32.to_le_bytes());
                }
                1 => {
                    comm(&mut ev, b"listener");
                    ev.extend(tid.to_le_bytes());
                    ev.extend(120i32.to_le_bytes());
                    ev.extend((cpu as i32).to_le_bytes());
                }
                2 => {
                    ev.extend(27i32.to_le_bytes());
                    ev.extend(b"eth0\0");
                }
                3 => {
                    ev.extend(27i32.to_le_bytes());
                    ev.extend(1i32.to_le_bytes());
                }
                4 => {
                    ev.extend(3u32.to_le_bytes());
                    ev.extend(0x7FFF_0000_1000u64.to_le_bytes());
                    ev.extend(4096u64.to_le_bytes());
                }
                5 => {
                    ev.extend(128i64.to_le_bytes());
                    ev.extend(0x7FFF_0000_1000u64.to_le_bytes());
                }
                6 => {
                    ev.extend(0xFFFF_8880_0000_1000u64.to_le_bytes());
                    ev.extend((now as i64).to_le_bytes());
                    ev.extend(0xFFFF_FFFF_8100_0000u64.to_le_bytes());
                }
                7 => ev.extend(0xFFFF_8880_0000_1000u64.to_le_bytes()),
                8 => ev.extend(b"Start context switch\0"),
                _ => {
                    ev.extend(tid.to_le_bytes());
                    comm(&mut ev, b"kworker/0:1");
                }
            }
            if PACKET_HEAD + body.len() + ev.len() > PACKET_BYTES {
                flush(&mut body, begin, last, &mut seq)?;
                // A packet's first event may be compact: the reader starts the clock at
                // timestamp_begin and the compact field carries the low bits on.
                begin = last;
            }
            body.extend_from_slice(&ev);
            last = now;
        }
        if !body.is_empty() {
            flush(&mut body, begin, last, &mut seq)?;
        }
        out.flush()?;
    }
    Ok(())
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
