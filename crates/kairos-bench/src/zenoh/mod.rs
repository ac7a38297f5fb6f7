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
//!
//! Here: the arguments, the sides, the plan of a case and the run with its report;
//! `publish` is the parent's side of one case, `child` the subscriber's, `floor` the
//! `memcpy` floor and the clocks, `ratios` what the report compares.

use anyhow::{Context as _, anyhow, bail};
use clap::{Args as ClapArgs, ValueEnum};
use kairos::graph::{Context, Message, Node, Qos};
use kairos_zenoh::ZenohTransport;
use kairos_zenoh::attachment::Attachment;
use kairos_zenoh::msg::Bytes;
use kairos_zenoh::type_hash::{Field, TypeDescription, type_id};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::io::{BufRead, BufReader};
use std::process::{Command, ExitCode, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use zenoh::Wait;

use crate::stats::Summary;

mod child;
mod floor;
mod publish;
mod ratios;

use child::child;
use floor::{Floor, memcpy_floor, mono_ns, thread_cpu_ns};
use publish::run_case;
use ratios::Ratios;

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
    /// Paced samples that arrived (of the plan's samples).
    samples_received: u32,
    msgs_per_s: f64,
    /// Burst messages that arrived (of `burst`).
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
            .map(|c| json!({"name": c.name, "round": c.round, "payload_bytes": c.size, "p50_us": c.latency.p50_us, "p99_us": c.latency.p99_us, "msgs_per_s": c.msgs_per_s, "samples_received": c.samples_received, "received": c.received, "burst": c.burst, "received_in_shm": c.in_shm, "subscriber_cpu_ms": c.sub_cpu_ms, "publisher_cpu_ns_per_msg": c.pub_cpu_ns, "executor_sleeps": c.executor_sleeps, "executor_idle_spin_us": c.executor_idle_spin_us}))
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
