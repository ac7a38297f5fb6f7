//! Exactness on traces built here for it, compared with babeltrace2 where babeltrace2 is
//! right: a 3.29 GHz clock (the merge order of two per-CPU streams that follows from its
//! conversion to nanoseconds), cycle counts large enough that babeltrace2's
//! floating-point conversion is off the exact quotient (the reader follows babeltrace2),
//! a packet context with extra fields in hexadecimal and a string, an empty string field
//! (which babeltrace2 2.0.4 shows as the previous string), and a clock offset beyond
//! 64-bit nanoseconds (warned once, naming the clock).

use std::path::{Path, PathBuf};

use kairos_trace::read::{Notice, TraceSet, text};

/// An LTTng-kernel-like trace: one stream per CPU, a packet context with `cpu_id` in
/// hexadecimal and a `name` string, events `{ uint32 n; string s; }`.
fn metadata(freq: u64, offset_s: i64, offset: u64) -> String {
    format!(
        r#"/* CTF 1.8 */
typealias integer {{ size = 8; align = 8; signed = false; }} := uint8_t;
typealias integer {{ size = 32; align = 8; signed = false; }} := uint32_t;
typealias integer {{ size = 64; align = 8; signed = false; }} := uint64_t;
trace {{ major = 1; minor = 8; byte_order = le; packet.header := struct {{ uint32_t magic; uint32_t stream_id; }}; }};
env {{ hostname = "gen"; domain = "kernel"; tracer_name = "lttng-modules"; }};
clock {{ name = tsc; freq = {freq}; offset_s = {offset_s}; offset = {offset}; }};
typealias integer {{ size = 64; align = 8; signed = false; map = clock.tsc.value; }} := clk64;
stream {{ id = 0;
  packet.context := struct {{ clk64 timestamp_begin; clk64 timestamp_end; uint64_t content_size; uint64_t packet_size; uint64_t packet_seq_num; uint64_t events_discarded; integer {{ size = 32; align = 8; signed = false; base = 16; }} cpu_id; string name; }};
  event.header := struct {{ uint32_t id; clk64 timestamp; }};
}};
event {{ name = "ev"; id = 0; stream_id = 0; fields := struct {{ uint32_t n; string s; }}; }};
"#
    )
}

/// One event: its clock value in cycles, its number and its string.
struct Ev {
    cycles: u64,
    n: u32,
    s: String,
}

/// Writes a one-packet stream file `chan_<cpu>`.
fn write_stream(dir: &Path, cpu: u32, events: &[Ev]) {
    let mut body = Vec::new();
    for e in events {
        body.extend(0u32.to_le_bytes());
        body.extend(e.cycles.to_le_bytes());
        body.extend(e.n.to_le_bytes());
        body.extend(e.s.as_bytes());
        body.push(0);
    }
    let name = format!("rte-worker-{cpu}\0");
    let head = 8 + 6 * 8 + 4 + name.len();
    let bits = ((head + body.len()) * 8) as u64;
    let mut packet = Vec::new();
    packet.extend(0xC1FC_1FC1u32.to_le_bytes());
    packet.extend(0u32.to_le_bytes());
    for v in [
        events[0].cycles,
        events[events.len() - 1].cycles,
        bits,
        bits,
        0,
        0,
    ] {
        packet.extend(v.to_le_bytes());
    }
    packet.extend((cpu + 1).to_le_bytes());
    packet.extend(name.as_bytes());
    packet.extend(body);
    std::fs::write(dir.join(format!("chan_{cpu}")), packet).unwrap();
}

/// A small deterministic generator, so the traces are the same every run.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % below
    }
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kairos-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Two CPUs' streams of `per_cpu` events each, interleaved in time; every third event
/// of a CPU has an empty string when `empties` is set.
fn write_trace(dir: &Path, md: &str, per_cpu: u32, empties: bool) -> Vec<Vec<Ev>> {
    std::fs::write(dir.join("metadata"), md).unwrap();
    let mut rng = Lcg(7);
    let mut all = Vec::new();
    for cpu in 0..2 {
        let mut cycles = 1_000_000_000_000 + u64::from(cpu) * 7;
        let events: Vec<Ev> = (0..per_cpu)
            .map(|n| {
                cycles += 1 + rng.next(5000);
                let s = if empties && n % 3 == 1 {
                    String::new()
                } else {
                    format!("name{n}")
                };
                Ev { cycles, n, s }
            })
            .collect();
        write_stream(dir, cpu, &events);
        all.push(events);
    }
    all
}

fn kairos_lines(dir: &Path) -> (Vec<String>, Vec<Notice>) {
    let set = TraceSet::open(dir).unwrap();
    let mut events = set.events().unwrap();
    let mut lines = Vec::new();
    for ev in events.by_ref() {
        let mut line = String::new();
        text::write_event(&mut line, &ev.unwrap());
        lines.push(line);
    }
    (lines, events.take_notices())
}

fn babeltrace_lines(dir: &Path) -> Vec<String> {
    let out = kairos_testkit::babeltrace2_output(&["--clock-seconds", "--no-delta"], dir);
    assert!(
        out.status.success(),
        "babeltrace2: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

const FREQ: u64 = 3_290_000_000;
const OFFSET_S: i64 = 1_700_000_000;
const OFFSET: u64 = 1_234_567_891;

#[test]
fn a_3_29_ghz_clock_converts_and_merges_as_babeltrace2_does() {
    let dir = temp_dir("ghz");
    let streams = write_trace(&dir, &metadata(FREQ, OFFSET_S, OFFSET), 2000, false);
    let (ours, _) = kairos_lines(&dir);
    let theirs = babeltrace_lines(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    // The test exercises the difference: converting offset and count together rounds
    // differently from converting each (offset 1,234,567,891 cycles = 0.375248599 s
    // and a remainder that rounds down separately).
    let ns = |c: u64| {
        let (f, o, c) = (u128::from(FREQ), u128::from(OFFSET), u128::from(c));
        OFFSET_S as u128 * 1_000_000_000 + o * 1_000_000_000 / f + c * 1_000_000_000 / f
    };
    let joint = |c: u64| {
        OFFSET_S as u128 * 1_000_000_000
            + (u128::from(OFFSET) + u128::from(c)) * 1_000_000_000 / u128::from(FREQ)
    };
    let all: Vec<&Ev> = streams.iter().flatten().collect();
    let differing = all
        .iter()
        .filter(|e| ns(e.cycles) != joint(e.cycles))
        .count();
    assert!(differing > 100, "only {differing} events round differently");
    // Every timestamp is the separately rounded sum, and the line order is
    // babeltrace2's, event for event.
    let first = &streams[0][0];
    let secs = ns(first.cycles);
    let expected = format!(
        "[{}.{:09}] gen ev: {{ cpu_id = 0x1, name = \"rte-worker-0\" }}, {{ n = 0, s = \"name0\" }}",
        secs / 1_000_000_000,
        secs % 1_000_000_000
    );
    assert!(ours.contains(&expected), "missing {expected}");
    assert_eq!(ours.len(), 4000);
    for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
        assert_eq!(a, b, "line {i}");
    }
    assert_eq!(ours.len(), theirs.len());
}

#[test]
fn extra_packet_context_fields_print_in_their_base_as_babeltrace2_prints_them() {
    let dir = temp_dir("packet-ctx");
    write_trace(&dir, &metadata(1_000_000_000, 1_600_000_000, 0), 50, false);
    let (ours, _) = kairos_lines(&dir);
    let theirs = babeltrace_lines(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        ours.iter()
            .any(|l| l.contains("{ cpu_id = 0x2, name = \"rte-worker-1\" }, { n = 0,")),
        "{ours:?}"
    );
    assert!(
        !ours.iter().any(|l| l.contains("timestamp_begin")),
        "reserved fields are packet properties, not printed"
    );
    assert_eq!(ours, theirs);
}

/// babeltrace2 2.0.4 shows an empty string field as the string of an earlier event of
/// the same class (it reuses event objects and does not clear a string that reads no
/// byte); the stream holds the empty string once, as a lone NUL. kairos prints what the
/// bytes hold. Every other line is babeltrace2's.
#[test]
fn an_empty_string_field_is_empty_where_babeltrace2_2_0_4_repeats_the_previous_one() {
    let dir = temp_dir("empty-string");
    let streams = write_trace(&dir, &metadata(1_000_000_000, 1_600_000_000, 0), 300, true);
    let (ours, _) = kairos_lines(&dir);
    let theirs = babeltrace_lines(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(ours.len(), 600);
    assert_eq!(ours.len(), theirs.len());
    // What the bytes hold, line by line: the event's number and its string.
    let written: std::collections::HashMap<(String, u32), &str> = streams
        .iter()
        .enumerate()
        .flat_map(|(cpu, evs)| {
            evs.iter()
                .map(move |e| ((format!("rte-worker-{cpu}"), e.n), e.s.as_str()))
        })
        .collect();
    let mut empties = 0;
    let mut babeltrace_wrong = 0;
    for (a, b) in ours.iter().zip(&theirs) {
        let cpu = a
            .split("name = \"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        let n: u32 = a
            .split("n = ")
            .nth(1)
            .unwrap()
            .split(',')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let s = written[&(cpu.to_string(), n)];
        assert!(a.ends_with(&format!("s = \"{s}\" }}")), "{a}");
        if s.is_empty() {
            empties += 1;
            if a != b {
                babeltrace_wrong += 1;
                assert!(b.contains(", s = \"name"), "{b}");
            }
        } else {
            assert_eq!(a, b);
        }
    }
    assert_eq!(empties, 200);
    eprintln!(
        "babeltrace2 repeated an earlier string on {babeltrace_wrong} of {empties} empty strings"
    );
}

#[test]
fn a_clock_offset_beyond_64_bit_nanoseconds_is_warned_once_naming_the_clock() {
    let dir = temp_dir("clock-overflow");
    write_trace(&dir, &metadata(1_000_000_000, 9_300_000_000, 0), 20, false);
    let (ours, notices) = kairos_lines(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(ours.len(), 40);
    let overflows: Vec<&Notice> = notices
        .iter()
        .filter(|n| matches!(n, Notice::ClockOverflow { .. }))
        .collect();
    assert_eq!(overflows.len(), 1, "{notices:?}");
    let text = overflows[0].to_string();
    assert!(text.contains("clock `tsc`"), "{text}");
    assert!(text.contains("offset_s"), "{text}");
    assert!(ours[0].starts_with("[9223372036.854775807]"), "{}", ours[0]);
}

/// babeltrace2 converts a clock's cycles to nanoseconds as `1e9 * cycles / freq` in
/// 64-bit floating point, truncated: for large counts that is off the exact quotient
/// (`cycles * 10^9 / freq` in integers) by up to hundreds of nanoseconds. The reader
/// converts as babeltrace2 does, so that its timestamps and merge order are babeltrace2's:
/// here every line is babeltrace2's, and most timestamps differ from the exact quotient,
/// which the raw cycle counts written below give.
#[test]
fn large_cycle_counts_convert_with_babeltrace2s_floating_point_arithmetic() {
    const SLOW: u64 = 2_399_999_999;
    let dir = temp_dir("fp-clock");
    std::fs::write(dir.join("metadata"), metadata(SLOW, 0, 0)).unwrap();
    let mut rng = Lcg(11);
    let mut cycles = 1u64 << 60;
    let events: Vec<Ev> = (0..500)
        .map(|n| {
            cycles += 1 + rng.next(1 << 20);
            Ev {
                cycles,
                n,
                s: format!("e{n}"),
            }
        })
        .collect();
    write_stream(&dir, 0, &events);
    let (ours, _) = kairos_lines(&dir);
    let theirs = babeltrace_lines(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(ours, theirs);
    let exact = |c: u64| {
        let ns = u128::from(c) * 1_000_000_000 / u128::from(SLOW);
        format!("[{}.{:09}]", ns / 1_000_000_000, ns % 1_000_000_000)
    };
    let off = ours
        .iter()
        .zip(&events)
        .filter(|(line, e)| !line.starts_with(&exact(e.cycles)))
        .count();
    assert!(
        off > 400,
        "only {off} of 500 timestamps differ from the exact quotient"
    );
}
