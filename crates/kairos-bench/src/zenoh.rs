//! `kairos bench zenoh`: publish -> callback latency and throughput between two processes
//! on loopback, through kairos (Node/Publisher/Subscription over the Zenoh transport) and
//! through raw zenoh publisher/subscriber with no kairos in between, in one run, for
//! payloads from 64 B to 16 MiB, beside the machine's floor for a large payload: one
//! `memcpy` of its size, back to back and paced as the latency samples are (a publisher
//! that idles between images copies from and into memory the cache no longer holds).
//!
//! The parent runs a router on a free loopback port and publishes; a child process
//! subscribes and measures. Latency is one way: both processes read the same
//! `CLOCK_MONOTONIC`. Latency samples are paced (one message in flight; large payloads
//! are paced slower and sampled fewer times, see [`plan`]); throughput is a burst, counted
//! at the receiver (zenoh drops under congestion, as rmw_zenoh's default publishers do,
//! so `received` says how many arrived). With `--shm`, both processes turn on Zenoh's
//! shared memory (as a user does in rmw_zenoh's configuration): kairos writes a large
//! payload straight into it, and the raw baseline allocates its buffer there too, as a
//! zenoh user would.
//!
//! With `--rmw-baseline`, a third side sends the samples rmw_zenoh sends: raw zenoh with
//! rmw_zenoh's 33-byte attachment (sequence number, source timestamp, publisher gid) on
//! every put, read back at the receiver. It splits kairos's distance from raw zenoh into
//! what any rmw_zenoh-compatible implementation pays on the wire and what kairos adds.
//! With `--hop-baseline`, another side adds what every executor adds: the same samples,
//! each handed from zenoh's thread to a thread of its own, which runs the callback (as
//! rmw_zenoh_cpp queues each sample for the executor's take). It splits what kairos adds
//! into the cost of running callbacks on an executor's thread, which rclcpp pays too, and
//! the rest.
//! Each side also reports its publisher's CPU time per burst message (the publishing
//! thread's own clock, `CLOCK_THREAD_CPUTIME_ID`), a cost that a noisy machine disturbs
//! less than a rate.

use anyhow::{Context as _, anyhow, bail};
use clap::{Args as ClapArgs, ValueEnum};
use kairos::graph::{Context, Node, Qos};
use kairos_zenoh::attachment::Attachment;
use kairos_zenoh::msg::Bytes;
use kairos_zenoh::type_hash::{Field, TypeDescription, type_id};
use kairos_zenoh::{Message, ZenohTransport};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::io::{BufRead, BufReader};
use std::process::{Command, ExitCode, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use zenoh::Wait;

use crate::stats::Summary;

#[derive(Debug, ClapArgs)]
pub struct Args {
    /// Paced messages per case for latency.
    #[arg(long, default_value_t = 1000)]
    pub samples: u32,
    /// Back-to-back messages per case for throughput.
    #[arg(long, default_value_t = 2000)]
    pub burst: u32,
    #[arg(long)]
    pub json: bool,
    /// Publish reliable keep-all (congestion control Block, as rmw_zenoh maps it) instead
    /// of the default keep-last (Drop): nothing is dropped, the publisher waits instead.
    #[arg(long)]
    pub keep_all: bool,
    /// Rounds per payload size: kairos and raw Zenoh take turns this many times, and each
    /// ratio printed is the median of the rounds' ratios (a noisy machine hits both sides
    /// of one round alike, but not two runs minutes apart).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=50))]
    pub rounds: u32,
    /// Payload sizes in bytes, comma-separated (suffixes K and M: 64K, 16M).
    #[arg(long, value_delimiter = ',', value_parser = parse_size, default_value = "64,64K,1M,4M,16M")]
    pub sizes: Vec<usize>,
    /// Turn on Zenoh's shared memory in both processes (same host: large payloads are not
    /// copied through TCP).
    #[arg(long)]
    pub shm: bool,
    /// The kairos subscriber's executor polls for this long after each message before it
    /// sleeps (`Executor::set_idle_spin`; 0 to 1,000,000 us): latency for a busy core.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub idle_spin_us: u64,
    /// Publish loaned messages: kairos fills each payload in a loan (`Publisher::loan`,
    /// written in place in shared memory with `--shm`), raw zenoh in its own shared-memory
    /// buffer, and both clocks start once the payload is filled, as a camera whose frame
    /// is in the transport's buffer.
    #[arg(long)]
    pub loaned: bool,
    /// Add a third side: raw zenoh carrying rmw_zenoh's attachment on every sample, as
    /// any rmw_zenoh-compatible publisher must (ratios against it are printed too).
    #[arg(long)]
    pub rmw_baseline: bool,
    /// Add a side that also hands each sample to a callback thread of its own, as any
    /// executor does (raw zenoh with rmw_zenoh's attachment, as `--rmw-baseline`'s side);
    /// ratios against it are printed too.
    #[arg(long)]
    pub hop_baseline: bool,
    /// Add a side: kairos over mutual TLS, with SROS2 identities from a keystore made for
    /// the run and the TLS settings `kairos security generate-configs` writes; the ratio
    /// printed against it is kairos over TCP / kairos over TLS (below 1: TLS costs).
    #[arg(long)]
    pub tls: bool,
    /// Internal: the keystore of the TLS side.
    #[arg(long, hide = true)]
    pub tls_dir: Option<std::path::PathBuf>,
    /// Internal: the router's TLS port.
    #[arg(long, hide = true, default_value_t = 0)]
    pub tls_port: u16,
    /// Internal: run as the subscribing child of this side.
    #[arg(long, hide = true, value_enum)]
    child: Option<Side>,
    #[arg(long, hide = true, default_value_t = 0)]
    pub port: u16,
    #[arg(long, hide = true, default_value_t = 64)]
    pub size: usize,
}

/// The benchmark message: sequence number, send time, payload.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct BenchMsg {
    seq: u32,
    stamp_ns: i64,
    data: Bytes,
}

impl Message for BenchMsg {
    const TYPE_NAME: &'static str = "kairos_msgs/msg/Bench";
    fn description() -> TypeDescription {
        TypeDescription::new(
            Self::TYPE_NAME,
            vec![
                Field::primitive("seq", type_id::UINT32),
                Field::primitive("stamp_ns", type_id::INT64),
                Field::primitive("data", type_id::UINT8).sequence(),
            ],
        )
    }
}

const TOPIC: &str = "/kairos_bench";

/// Zenoh's default threshold for shared memory, which kairos keeps.
const SHM_THRESHOLD: usize = 3072;

/// Payloads from this size on are "large": sampled fewer times, paced slower.
const LARGE: usize = 1 << 20;

fn parse_size(text: &str) -> Result<usize, String> {
    let text = text.trim();
    let (digits, unit) = match text.strip_suffix(['K', 'k']) {
        Some(d) => (d, 1 << 10),
        None => match text.strip_suffix(['M', 'm']) {
            Some(d) => (d, 1 << 20),
            None => (text, 1),
        },
    };
    digits
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(unit))
        .filter(|n| (16..=(256 << 20)).contains(n))
        .ok_or_else(|| format!("'{text}' is not a size from 16 to 256M bytes (e.g. 64, 64K, 16M)"))
}

/// How one payload size is measured: paced samples, the pace, the burst.
#[derive(Debug, Clone, Copy)]
struct Plan {
    samples: u32,
    pace: kairos::time::Duration,
    burst: u32,
}

/// Small payloads keep the requested counts and a 1 ms pace. A large one is sampled at
/// most 100 times, paced so a sample is sent every 1 ms plus its size at 500 MB/s, and its
/// burst is cut to 256 MiB in all (at least 8 messages): a 16 MiB case takes ~4 s.
fn plan(size: usize, args: &Args) -> Plan {
    if size < LARGE {
        return Plan {
            samples: args.samples,
            pace: kairos::time::Duration::from_millis(1),
            burst: args.burst,
        };
    }
    let budget = ((256usize << 20) / size).max(8) as u32;
    Plan {
        samples: args.samples.min(100),
        pace: kairos::time::Duration::from_micros(1000 + (size / 500) as i64),
        burst: args.burst.min(budget),
    }
}

/// The floor for a payload of `size`: p50 of one copy of it into another buffer, done
/// back to back (`hot`: both buffers stay in the cache) and done once per `pace` as the
/// latency samples are (`paced`: what the same copy costs a publisher that idles between
/// messages, when other work has had the cache meanwhile).
#[derive(Debug, Clone, Copy)]
struct Floor {
    hot_us: f64,
    paced_us: f64,
}

fn memcpy_floor(size: usize, pace: Duration) -> Floor {
    let source = vec![0x5au8; size];
    // The target starts at the source's offset within a page: on some CPUs (AMD Zen 3,
    // glibc 2.36) a copy whose target is 1-31 bytes past the source modulo 4 KiB runs
    // 15x slower, which two buffers allocated one after the other can hit. The floor is
    // the machine's fast copy.
    let mut spare = vec![0u8; size + 4096];
    let skew = (source.as_ptr() as usize).wrapping_sub(spare.as_ptr() as usize) % 4096;
    let target = &mut spare[skew..skew + size];
    // A copy of a few bytes takes about as long as reading the clock, and may read as
    // 0 ns: small copies are timed 4 KiB at a time, so the floor is never 0.
    let copies = (4096 / size.max(1)).max(1);
    let mut p50 = |runs: usize, pause: Option<Duration>| {
        let mut nanos: Vec<f64> = (0..runs)
            .map(|_| {
                if let Some(pause) = pause {
                    std::thread::sleep(pause);
                }
                let start = mono_ns();
                for _ in 0..copies {
                    target.copy_from_slice(std::hint::black_box(&source));
                    std::hint::black_box(&mut *target);
                }
                (mono_ns() - start).max(1) as f64 / copies as f64
            })
            .collect();
        nanos.sort_unstable_by(f64::total_cmp);
        nanos[nanos.len() / 2] / 1e3
    };
    let large = size >= LARGE;
    Floor {
        hot_us: p50(if large { 50 } else { 2000 }, None),
        paced_us: p50(if large { 30 } else { 200 }, Some(pace)),
    }
}

fn mono_ns() -> i64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// The CPU time the calling thread has used, in ns.
fn thread_cpu_ns() -> i64 {
    clock_ns(libc::CLOCK_THREAD_CPUTIME_ID)
}

fn clock_ns(clock: libc::clockid_t) -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; both clocks this file reads
    // (CLOCK_MONOTONIC, CLOCK_THREAD_CPUTIME_ID) always exist on Linux.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

/// The session configuration of `side`: TCP to the router's `port`, or for the TLS side
/// mutual TLS to its `tls_port` with the keystore's `/bench` identity.
fn side_config(side: Side, args: &Args) -> anyhow::Result<zenoh::Config> {
    if side != Side::KairosTls {
        return peer_config(args.port, args.shm);
    }
    let mut config = peer_config(args.tls_port, args.shm)?;
    let dir = args
        .tls_dir
        .as_deref()
        .context("the TLS side needs --tls-dir")?;
    let enclave = kairos_security::Keystore::open(dir)?.enclave("/bench")?;
    kairos_zenoh::config::secure(&mut config, &enclave);
    for (key, value) in [
        (
            "connect/endpoints",
            format!(r#"["tls/127.0.0.1:{}"]"#, args.tls_port),
        ),
        ("listen/endpoints", r#"["tls/127.0.0.1:0"]"#.to_owned()),
    ] {
        config
            .insert_json5(key, &value)
            .map_err(|e| anyhow!("{key}: {e}"))?;
    }
    Ok(config)
}

fn peer_config(port: u16, shm: bool) -> anyhow::Result<zenoh::Config> {
    let mut config = zenoh::Config::default();
    for (key, value) in [
        ("mode", r#""peer""#.to_owned()),
        ("connect/endpoints", format!(r#"["tcp/127.0.0.1:{port}"]"#)),
        ("listen/endpoints", r#"["tcp/127.0.0.1:0"]"#.to_owned()),
        ("scouting/multicast/enabled", "false".to_owned()),
        ("transport/shared_memory/enabled", shm.to_string()),
        (
            "transport/shared_memory/transport_optimization/pool_size",
            kairos_zenoh::config::SHM_POOL_BYTES.to_string(),
        ),
    ] {
        config
            .insert_json5(key, &value)
            .map_err(|e| anyhow!("{key}: {e}"))?;
    }
    Ok(config)
}

fn key() -> String {
    kairos_zenoh::graph_key::data_key(
        0,
        TOPIC,
        &kairos_zenoh::message::dds_type_name(BenchMsg::TYPE_NAME).expect("a ROS type name"),
        &BenchMsg::type_hash().to_string(),
    )
}

/// Who publishes and subscribes in a case (the child is started with its value name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
#[value(rename_all = "snake_case")]
enum Side {
    /// kairos nodes over the Zenoh transport.
    Kairos,
    /// zenoh's own publisher and subscriber, nothing else on the sample.
    Raw,
    /// zenoh's own, carrying and reading rmw_zenoh's attachment.
    RawRmw,
    /// As [`Side::RawRmw`], each sample handed to a thread of its own for its callback.
    RawRmwHop,
    /// kairos nodes over the Zenoh transport on mutual TLS links.
    KairosTls,
}

const SIDES: [Side; 5] = [
    Side::Kairos,
    Side::Raw,
    Side::RawRmw,
    Side::RawRmwHop,
    Side::KairosTls,
];

impl Side {
    /// The name the results give it.
    fn name(self) -> &'static str {
        match self {
            Side::Kairos => "kairos_zenoh",
            Side::Raw => "zenoh_raw",
            Side::RawRmw => "zenoh_raw_rmw",
            Side::RawRmwHop => "zenoh_raw_rmw_hop",
            Side::KairosTls => "kairos_zenoh_tls",
        }
    }

    /// Whether kairos nodes publish and subscribe on this side.
    fn is_kairos(self) -> bool {
        matches!(self, Side::Kairos | Side::KairosTls)
    }

    /// Whether its samples carry rmw_zenoh's attachment.
    fn attached(self) -> bool {
        matches!(self, Side::RawRmw | Side::RawRmwHop)
    }

    /// What a ratio against it, a baseline past raw zenoh, is called: in the JSON, and
    /// in the summary line.
    fn baseline(self) -> Option<(&'static str, &'static str)> {
        match self {
            Side::Kairos | Side::Raw => None,
            Side::RawRmw => Some(("vs_rmw_attachment", "raw zenoh with rmw_zenoh's attachment")),
            Side::RawRmwHop => Some((
                "vs_rmw_hop",
                "raw zenoh with rmw_zenoh's attachment and a callback thread",
            )),
            Side::KairosTls => Some(("vs_tls", "kairos over mutual TLS")),
        }
    }
}

/// The sides of each round, kairos first, raw zenoh second.
fn sides(args: &Args) -> Vec<Side> {
    SIDES
        .into_iter()
        .filter(|side| match side {
            Side::Kairos | Side::Raw => true,
            Side::RawRmw => args.rmw_baseline,
            Side::RawRmwHop => args.hop_baseline,
            Side::KairosTls => args.tls,
        })
        .collect()
}

struct Case {
    name: &'static str,
    size: usize,
    round: u32,
    latency: Summary,
    msgs_per_s: f64,
    received: u32,
    burst: u32,
    /// Samples that arrived in shared memory, at the receiver.
    in_shm: u64,
    /// CPU time the subscribing process spent from "ready" to its report (all threads).
    sub_cpu_ms: f64,
    /// CPU time of the publishing thread per burst message.
    pub_cpu_ns: f64,
    /// How often the kairos subscriber's executor went to sleep for lack of work.
    executor_sleeps: Option<u64>,
    /// The kairos subscriber's executor's idle spin window, as it read it.
    executor_idle_spin_us: Option<i64>,
}

pub fn run(mut args: Args) -> anyhow::Result<ExitCode> {
    if let Some(side) = args.child {
        return child(side, &args);
    }
    // The TLS side's identities, for the run only.
    let keystore = tempfile::tempdir()?;
    if args.tls {
        let store = kairos_security::Keystore::create(keystore.path(), Default::default())?;
        for enclave in ["/zenohd", "/bench"] {
            store.create_enclave(enclave, Default::default(), false)?;
        }
        args.tls_dir = Some(store.dir().to_owned());
        args.tls_port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let mut router = zenoh::Config::default();
    router
        .insert_json5("mode", r#""router""#)
        .map_err(|e| anyhow!("{e}"))?;
    router
        .insert_json5("listen/endpoints", &format!(r#"["tcp/127.0.0.1:{port}"]"#))
        .map_err(|e| anyhow!("{e}"))?;
    router
        .insert_json5("scouting/multicast/enabled", "false")
        .map_err(|e| anyhow!("{e}"))?;
    router
        .insert_json5("transport/shared_memory/enabled", &args.shm.to_string())
        .map_err(|e| anyhow!("{e}"))?;
    if let Some(dir) = &args.tls_dir {
        let enclave = kairos_security::Keystore::open(dir)?.enclave("/zenohd")?;
        kairos_zenoh::config::secure(&mut router, &enclave);
        router
            .insert_json5(
                "listen/endpoints",
                &format!(
                    r#"["tcp/127.0.0.1:{port}", "tls/127.0.0.1:{}"]"#,
                    args.tls_port
                ),
            )
            .map_err(|e| anyhow!("{e}"))?;
    }
    let _router = zenoh::open(router).wait().map_err(|e| anyhow!("{e}"))?;

    let mut cases = Vec::new();
    let mut floors = Vec::new();
    for &size in &args.sizes {
        let pace = plan(size, &args).pace;
        floors.push(memcpy_floor(
            size,
            Duration::from_nanos(pace.as_nanos().max(0) as u64),
        ));
        for round in 0..args.rounds {
            for side in sides(&args) {
                cases.push(run_case(side, size, round, port, &args)?);
            }
        }
    }
    let sides = sides(&args);
    let ratios: Vec<Ratios> = cases
        .chunks(sides.len() * args.rounds as usize)
        .zip(&floors)
        .map(|(rounds, floor)| Ratios::of(rounds, &sides, *floor))
        .collect();
    if args.json {
        let rows: Vec<_> = cases
            .iter()
            .map(|c| json!({"name": c.name, "round": c.round, "payload_bytes": c.size, "p50_us": c.latency.p50_us, "p99_us": c.latency.p99_us, "msgs_per_s": c.msgs_per_s, "received": c.received, "burst": c.burst, "received_in_shm": c.in_shm, "subscriber_cpu_ms": c.sub_cpu_ms, "publisher_cpu_ns_per_msg": c.pub_cpu_ns, "executor_sleeps": c.executor_sleeps, "executor_idle_spin_us": c.executor_idle_spin_us}))
            .collect();
        let floors: Vec<_> = args
            .sizes
            .iter()
            .zip(&floors)
            .map(|(size, floor)| json!({"payload_bytes": size, "memcpy_p50_us": floor.hot_us, "memcpy_paced_p50_us": floor.paced_us}))
            .collect();
        let ratios: Vec<_> = ratios
            .iter()
            .map(|r| {
                let mut ratio = json!({"payload_bytes": r.size, "p50": r.p50.median(), "p99": r.p99.median(), "throughput": r.throughput.median(), "p50_per_memcpy": r.per_memcpy.median(), "p50_per_paced_memcpy": r.per_paced_memcpy.median()});
                for against in &r.baselines {
                    ratio[against.json_key] = json!({"p50": against.p50.median(), "throughput": against.throughput.median()});
                }
                ratio
            })
            .collect();
        let out = json!({"samples": args.samples, "burst": args.burst, "rounds": args.rounds, "keep_all": args.keep_all, "shm": args.shm, "loaned": args.loaned, "idle_spin_us": args.idle_spin_us, "rmw_baseline": args.rmw_baseline, "hop_baseline": args.hop_baseline, "tls": args.tls, "results": rows, "memcpy": floors, "kairos_per_raw_median": ratios});
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "publish -> callback between two processes on loopback (up to {} paced samples; bursts of up to {}; {}; shared memory {}; {}; kairos executor's idle spin {} us)",
        args.samples,
        args.burst,
        if args.keep_all {
            "reliable keep-all: congestion control Block"
        } else {
            "keep-last: congestion control Drop"
        },
        if args.shm { "on" } else { "off" },
        if args.loaned {
            "loaned messages: the clock starts once the payload is filled"
        } else {
            "owned messages: the clock starts before the payload is copied for the transport"
        },
        args.idle_spin_us
    );
    println!(
        "{:<12} {} {:>12} {:>13} {:>7} {:>11} {:>11}",
        "payload",
        Summary::header(),
        "msgs_per_s",
        "received",
        "in_shm",
        "sub_cpu_ms",
        "pub_ns/msg"
    );
    for c in &cases {
        let round = if args.rounds > 1 {
            format!(" r{}", c.round + 1)
        } else {
            String::new()
        };
        println!(
            "{:<12} {} {:>12.0} {:>13} {:>7} {:>11.0} {:>11.0}",
            format!("{}{round}", c.size),
            c.latency.row(c.name),
            c.msgs_per_s,
            format!("{}/{}", c.received, c.burst),
            c.in_shm,
            c.sub_cpu_ms,
            c.pub_cpu_ns
        );
    }
    let of = if args.rounds > 1 {
        format!(" (median of {} rounds, lowest-highest)", args.rounds)
    } else {
        String::new()
    };
    for (r, floor) in ratios.iter().zip(&floors) {
        println!(
            "{} B: kairos / raw zenoh{of}: p50 {}, p99 {}, throughput {}; kairos p50 / one memcpy: {} back to back ({:.1} us), {} paced ({:.1} us)",
            r.size,
            r.p50,
            r.p99,
            r.throughput,
            r.per_memcpy,
            floor.hot_us,
            r.per_paced_memcpy,
            floor.paced_us,
        );
        for against in &r.baselines {
            println!(
                "{} B: kairos / {}{of}: p50 {}, throughput {}",
                r.size, against.name, against.p50, against.throughput
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The ratios of one payload size, one per round.
struct Ratios {
    size: usize,
    p50: Spread,
    p99: Spread,
    throughput: Spread,
    per_memcpy: Spread,
    per_paced_memcpy: Spread,
    /// p50 and throughput against each baseline past raw zenoh that was measured.
    baselines: Vec<Against>,
}

/// kairos against one baseline past raw zenoh ([`Side::baseline`]).
struct Against {
    json_key: &'static str,
    name: &'static str,
    p50: Spread,
    throughput: Spread,
}

impl Ratios {
    /// From the cases of one size, round after round, each in the order of `sides`
    /// (kairos, raw, then the baselines asked for).
    fn of(rounds: &[Case], sides: &[Side], floor: Floor) -> Self {
        let against = |baseline: usize, f: &dyn Fn(&Case, &Case) -> f64| {
            Spread(
                rounds
                    .chunks(sides.len())
                    .map(|round| f(&round[0], &round[baseline]))
                    .collect(),
            )
        };
        let spread = |f: &dyn Fn(&Case, &Case) -> f64| against(1, f);
        let p50 = |k: &Case, raw: &Case| k.latency.p50_us / raw.latency.p50_us;
        let throughput = |k: &Case, raw: &Case| k.msgs_per_s / raw.msgs_per_s;
        Ratios {
            baselines: sides
                .iter()
                .enumerate()
                .filter_map(|(i, side)| {
                    let (json_key, name) = side.baseline()?;
                    Some(Against {
                        json_key,
                        name,
                        p50: against(i, &p50),
                        throughput: against(i, &throughput),
                    })
                })
                .collect(),
            size: rounds[0].size,
            p50: spread(&p50),
            p99: spread(&|k, raw| k.latency.p99_us / raw.latency.p99_us),
            throughput: spread(&throughput),
            per_memcpy: spread(&|k, _| k.latency.p50_us / floor.hot_us),
            per_paced_memcpy: spread(&|k, _| k.latency.p50_us / floor.paced_us),
        }
    }
}

/// One ratio over the rounds.
struct Spread(Vec<f64>);

impl Spread {
    fn median(&self) -> f64 {
        let mut v = self.0.clone();
        v.sort_by(f64::total_cmp);
        let mid = v.len() / 2;
        if v.len() % 2 == 0 {
            (v[mid - 1] + v[mid]) / 2.0
        } else {
            v[mid]
        }
    }
}

impl std::fmt::Display for Spread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:.2}x", self.median())?;
        if self.0.len() > 1 {
            let (low, high) = self
                .0
                .iter()
                .fold((f64::MAX, f64::MIN), |(l, h), &x| (l.min(x), h.max(x)));
            write!(f, " ({low:.2}-{high:.2})")?;
        }
        Ok(())
    }
}

fn run_case(side: Side, size: usize, round: u32, port: u16, args: &Args) -> anyhow::Result<Case> {
    let plan = plan(size, args);
    let mut child = Command::new(std::env::current_exe()?)
        .args(["bench", "zenoh", "--child"])
        .arg(
            side.to_possible_value()
                .expect("no side is skipped")
                .get_name(),
        )
        .args(["--port", &port.to_string(), "--size", &size.to_string()])
        .args(["--samples", &plan.samples.to_string()])
        .args(["--burst", &plan.burst.to_string()])
        .args(["--idle-spin-us", &args.idle_spin_us.to_string()])
        .args(args.shm.then_some("--shm"))
        .args(["--tls-port", &args.tls_port.to_string()])
        .args(
            args.tls_dir
                .iter()
                .flat_map(|d| [std::ffi::OsStr::new("--tls-dir"), d.as_os_str()]),
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .context("start the subscribing child")?;
    let stdout = child.stdout.take().expect("piped stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let result = (|| {
        let ready = rx.recv_timeout(Duration::from_secs(30))?;
        if ready != "ready" {
            bail!("the child said {ready:?}");
        }
        let pub_cpu_ns = publish(side, size, port, plan, args)?;
        let report = rx.recv_timeout(Duration::from_secs(60))?;
        let report: serde_json::Value = serde_json::from_str(&report)?;
        let lat: Vec<i64> = serde_json::from_value(report["lat_ns"].clone())?;
        let received = report["burst_received"].as_u64().unwrap_or(0) as u32;
        let in_shm = report["in_shm"].as_u64().unwrap_or(0);
        let secs = report["burst_secs"].as_f64().unwrap_or(0.0);
        let sub_cpu_ms = report["cpu_ms"].as_f64().unwrap_or(0.0);
        let executor_sleeps = report["executor_sleeps"].as_u64();
        let executor_idle_spin_us = report["executor_idle_spin_us"].as_i64();
        Ok(Case {
            round,
            name: side.name(),
            size,
            latency: Summary::of_nanos(&lat),
            msgs_per_s: if secs > 0.0 {
                received as f64 / secs
            } else {
                0.0
            },
            received,
            burst: plan.burst,
            in_shm,
            sub_cpu_ms,
            pub_cpu_ns,
            executor_sleeps,
            executor_idle_spin_us,
        })
    })();
    let _ = child.kill();
    let _ = child.wait();
    result
}

/// Sends the paced samples, then the burst, from this process; returns the publishing
/// thread's CPU time per burst message, in ns.
fn publish(side: Side, size: usize, port: u16, plan: Plan, args: &Args) -> anyhow::Result<f64> {
    let config = if side == Side::KairosTls {
        side_config(side, args)?
    } else {
        peer_config(port, args.shm)?
    };
    let transport = ZenohTransport::open_with(config, 0)?;
    let payload = vec![0xa5u8; size.saturating_sub(16)];
    let clock = kairos::time::Clock::steady();
    let cancel = kairos::time::CancelToken::new();
    let total = plan.samples + plan.burst;
    // Paced: one message in flight; then back to back. Returns the CPU time per burst
    // message.
    let send_all = |send: &dyn Fn(u32)| -> anyhow::Result<f64> {
        let mut next = clock.now();
        for seq in 0..plan.samples {
            next = next + plan.pace;
            clock.sleep_until(next, &cancel)?;
            send(seq);
        }
        let cpu = thread_cpu_ns();
        for seq in plan.samples..total {
            send(seq);
        }
        Ok((thread_cpu_ns() - cpu) as f64 / f64::from(plan.burst.max(1)))
    };
    let zerr = |e: zenoh::Error| anyhow!("{e}");
    let probe = transport
        .session()
        .declare_publisher(key())
        .congestion_control(if args.keep_all {
            zenoh::qos::CongestionControl::Block
        } else {
            zenoh::qos::CongestionControl::Drop
        })
        .wait()
        .map_err(zerr)?;
    let deadline = Instant::now() + Duration::from_secs(30);
    while !probe.matching_status().wait().map_err(zerr)?.matching() {
        if Instant::now() > deadline {
            bail!("the subscribing child did not match within 30 s");
        }
        std::thread::yield_now();
    }
    let cpu_per_msg = if side.is_kairos() {
        // As the raw side gets its pool before its clock starts: kairos sends large
        // payloads as bytes while the pool is still starting, never waiting for it.
        if args.shm && !transport.wait_shared_memory(Duration::from_secs(30)) {
            bail!("the shared-memory pool did not start within 30 s");
        }
        let context = Context::new();
        transport.install(&context)?;
        let node = Node::new_in(&context, "bench_talker", "/")?;
        let qos = if args.keep_all {
            Qos::keep_all(100)
        } else {
            Qos::keep_last(100)
        };
        let publisher = node.create_publisher::<BenchMsg>(TOPIC, qos)?;
        // One buffer behind every message (a clone is a reference count), as the raw side
        // copies from one buffer: both read the same bytes from the same place each time.
        let data = Bytes::from(Bytes::from(payload).into_shared());
        send_all(&|seq| {
            if args.loaned {
                let template = BenchMsg {
                    seq,
                    stamp_ns: 0,
                    data: Bytes::new(),
                };
                let mut loan = publisher.loan(template, |m| &mut m.data, data.len());
                loan.data.copy_from_slice(&data);
                loan.stamp_ns = mono_ns();
                publisher.publish_loaned(loan);
                return;
            }
            // The message is built first, as the raw side fills its buffer first: the
            // clock starts at the publish.
            let data = data.clone();
            publisher.publish(BenchMsg {
                seq,
                stamp_ns: mono_ns(),
                data,
            });
        })?
    } else {
        // What a zenoh user writes: each message's bytes built in a buffer of their own,
        // in the session's shared memory when it has one and the payload is as large as
        // zenoh's threshold for it (kairos's too).
        let provider = if args.shm && size >= SHM_THRESHOLD {
            transport.session().get_shm_provider().wait()
        } else {
            None
        };
        let fill = |b: &mut [u8], seq: u32, early: Option<i64>| {
            b[..4].copy_from_slice(&seq.to_le_bytes());
            b[16..].copy_from_slice(&payload);
            let stamp = early.unwrap_or_else(mono_ns);
            b[8..16].copy_from_slice(&stamp.to_le_bytes());
        };
        // What rmw_zenoh puts beside each sample, for the side that carries it.
        let gid: [u8; 16] =
            std::array::from_fn(|i| (std::process::id() >> (i % 4 * 8)) as u8 ^ i as u8);
        send_all(&|seq| {
            // The clock starts at the publish, as on the kairos side: before the buffer is
            // taken and the payload copied into it (kairos's publish does both); loaned,
            // once it is filled.
            let early = (!args.loaned).then(mono_ns);
            let shm = provider.as_ref().and_then(|p| {
                p.alloc(size.max(16))
                    .with_policy::<zenoh::shm::GarbageCollect<zenoh::shm::Defragment>>()
                    .wait()
                    .ok()
            });
            let bytes = match shm {
                Some(mut b) => {
                    fill(&mut b, seq, early);
                    zenoh::bytes::ZBytes::from(b)
                }
                None => {
                    let mut b = vec![0u8; size.max(16)];
                    fill(&mut b, seq, early);
                    zenoh::bytes::ZBytes::from(b)
                }
            };
            let put = probe.put(bytes);
            let _ = if side.attached() {
                let attachment = Attachment {
                    sequence_number: i64::from(seq) + 1,
                    source_timestamp: kairos_zenoh::attachment::now_ns(),
                    gid,
                };
                put.attachment(attachment.to_bytes()).wait()
            } else {
                put.wait()
            };
        })?
    };
    transport.close(Duration::from_secs(5))?;
    Ok(cpu_per_msg)
}

/// The subscribing child: records latencies and the burst, then prints one JSON line.
fn child(side: Side, args: &Args) -> anyhow::Result<ExitCode> {
    let samples = args.samples as usize;
    let total = args.samples + args.burst;
    let record = Arc::new(Recorder::new(samples));
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let transport = ZenohTransport::open_with(side_config(side, args)?, 0)?;
    let in_shm = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let on_message = {
        let record = record.clone();
        move |seq: u32, stamp: i64| {
            if record.note(seq, stamp, total) {
                let _ = done_tx.send(());
            }
        }
    };
    let mut kairos_exec = None;
    let _keep: Box<dyn std::any::Any> = if side.is_kairos() {
        let context = Context::new();
        transport.install(&context)?;
        let node = Node::new_in(&context, "bench_listener", "/")?;
        let on_message = on_message.clone();
        let sub =
            node.create_subscription(TOPIC, Qos::keep_last(10_000), move |m: Arc<BenchMsg>| {
                on_message(m.seq, m.stamp_ns)
            })?;
        let exec = kairos::exec::Executor::single_threaded();
        exec.set_idle_spin(kairos::time::Duration::from_micros(
            args.idle_spin_us as i64,
        ))?;
        exec.add_node(&node)?;
        let spin = exec.clone();
        std::thread::spawn(move || spin.spin());
        kairos_exec = Some(exec.clone());
        Box::new((sub, node, exec, context))
    } else {
        let in_shm = in_shm.clone();
        let take = move |sample: &zenoh::sample::Sample| {
            let b = sample.payload().to_bytes();
            if b.len() >= 16 {
                let seq = u32::from_le_bytes(b[..4].try_into().unwrap());
                let stamp = i64::from_le_bytes(b[8..16].try_into().unwrap());
                on_message(seq, stamp);
            }
        };
        // The hop side's callback thread, fed a queue as deep as the kairos subscription's
        // (a sample that finds it full is dropped, as keep-last drops one).
        let hop = (side == Side::RawRmwHop).then(|| {
            let (tx, rx) = crossbeam_channel::bounded::<zenoh::sample::Sample>(10_000);
            let take = take.clone();
            std::thread::spawn(move || {
                for sample in rx {
                    take(&sample);
                }
            });
            tx
        });
        let read_attachment = side.attached();
        let sub = transport
            .session()
            .declare_subscriber(key())
            .callback(move |sample| {
                if sample.payload().as_shm().is_some() {
                    in_shm.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
                // As an rmw_zenoh-compatible subscriber reads it (sequence number, time,
                // publisher): a sample without it is not taken.
                if read_attachment
                    && sample
                        .attachment()
                        .is_none_or(|a| Attachment::from_bytes(&a.to_bytes()).is_err())
                {
                    return;
                }
                match &hop {
                    Some(queue) => {
                        let _ = queue.try_send(sample);
                    }
                    None => take(&sample),
                }
            })
            .wait()
            .map_err(|e| anyhow!("{e}"))?;
        Box::new(sub)
    };
    println!("ready");
    let cpu_at_ready = process_cpu_ms();
    // Done at the last message, or when the burst stalls (dropped messages never come).
    let give_up = Instant::now() + Duration::from_secs(60);
    let mut last_count = 0;
    while Instant::now() < give_up {
        match done_rx.recv_timeout(Duration::from_secs(3)) {
            Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let count = {
                    let s = record.inner.lock().unwrap();
                    s.lat_ns.len() + s.burst_received as usize
                };
                if count > 0 && count == last_count {
                    break;
                }
                last_count = count;
            }
        }
    }
    let mut report = record.report();
    report["cpu_ms"] = json!(process_cpu_ms() - cpu_at_ready);
    report["executor_sleeps"] = json!(kairos_exec.as_ref().map(|exec| exec.stats().sleeps));
    report["executor_idle_spin_us"] =
        json!(kairos_exec.map(|exec| exec.idle_spin().as_nanos() / 1000));
    report["in_shm"] = json!(if side.is_kairos() {
        transport.shared_memory().received
    } else {
        in_shm.load(std::sync::atomic::Ordering::Relaxed)
    });
    println!("{report}");
    Ok(ExitCode::SUCCESS)
}

/// This process's CPU time (user and system, all threads) in ms, from `/proc/self/stat`
/// (in its 10 ms ticks).
fn process_cpu_ms() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command's closing parenthesis, from the state (field 3) on:
    // utime and stime are fields 14 and 15.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let ticks: u64 = after
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|t| t.parse::<u64>().ok())
        .sum();
    ticks as f64 * 10.0
}

struct Recorder {
    inner: Mutex<RecorderState>,
    samples: usize,
}

struct RecorderState {
    lat_ns: Vec<i64>,
    burst_first: Option<i64>,
    burst_last: i64,
    burst_received: u32,
}

impl Recorder {
    fn new(samples: usize) -> Self {
        Self {
            inner: Mutex::new(RecorderState {
                lat_ns: Vec::with_capacity(samples),
                burst_first: None,
                burst_last: 0,
                burst_received: 0,
            }),
            samples,
        }
    }

    /// True at the last message.
    fn note(&self, seq: u32, stamp: i64, total: u32) -> bool {
        let now = mono_ns();
        let mut s = self.inner.lock().unwrap();
        if (seq as usize) < self.samples {
            s.lat_ns.push(now - stamp);
        } else {
            s.burst_first.get_or_insert(stamp);
            s.burst_last = now;
            s.burst_received += 1;
        }
        seq + 1 == total
    }

    fn report(&self) -> serde_json::Value {
        let s = self.inner.lock().unwrap();
        let secs = s
            .burst_first
            .map_or(0.0, |first| (s.burst_last - first) as f64 / 1e9);
        json!({"lat_ns": s.lat_ns, "burst_received": s.burst_received, "burst_secs": secs})
    }
}
