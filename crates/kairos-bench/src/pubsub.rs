//! `kairos bench pubsub`: one publisher to one subscription on a single-threaded executor
//! spinning in another thread, small messages. Latency is publish to callback start, one
//! message in flight at a time (the executor thread sleeps between messages, so each
//! handoff includes its wake-up); throughput is a burst of messages, publish to last
//! callback. Beside it, the floor: the same handoffs through a bare `crossbeam-channel`
//! with a blocking receive. Where the machine has two CPUs, both contenders run with the
//! publisher pinned to one and the receiver to the other, so the scheduler's placement
//! (same core or not) does not decide the comparison.

use crate::stats::Summary;
use clap::Args as ClapArgs;
use kairos::exec::Executor;
use kairos::graph::{Context, Node, Qos};
use kairos::time::{Clock, Duration};
use serde_json::json;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

#[derive(Debug, ClapArgs)]
pub struct Args {
    /// Messages timed one at a time for latency.
    #[arg(long, default_value_t = 20_000)]
    pub samples: u64,
    /// Messages in the throughput burst.
    #[arg(long, default_value_t = 200_000)]
    pub burst: u64,
    #[arg(long)]
    pub json: bool,
    /// Also time the burst's two halves apart, each alone on its CPU: publishing the burst
    /// with nobody taking it, then taking it all with nobody publishing (ns per message).
    #[arg(long)]
    pub phases: bool,
}

/// A small message: its sequence number and when it was published (steady ns).
#[derive(Debug, Clone, Copy)]
struct Stamp {
    seq: u64,
    sent_ns: i64,
}

/// The in-process benchmark keeps its messages in the process.
impl kairos::graph::Payload for Stamp {}

fn now_ns() -> i64 {
    Clock::steady().now().nanos()
}

/// The two CPUs the publisher and the receiver are pinned to, if this process may use two.
/// Asked once, before anything is pinned: the calling thread stays pinned to the first
/// CPU afterwards, and a later ask would see only that one (the crossbeam floor then ran
/// sender and receiver on one CPU, taking turns: no handoff between cores at all).
type Cpus = Option<(usize, usize)>;

fn cpu_pair() -> Cpus {
    let allowed = rustix::thread::sched_getaffinity(None).ok()?;
    let mut cpus = (0..rustix::thread::CpuSet::MAX_CPU).filter(|&cpu| allowed.is_set(cpu));
    Some((cpus.next()?, cpus.next()?))
}

/// The one CPU the calling thread may run on, if it is pinned to one.
fn pinned_cpu() -> Option<usize> {
    let allowed = rustix::thread::sched_getaffinity(None).ok()?;
    let mut cpus = (0..rustix::thread::CpuSet::MAX_CPU).filter(|&cpu| allowed.is_set(cpu));
    let cpu = cpus.next()?;
    cpus.next().is_none().then_some(cpu)
}

/// Pins the calling thread to `cpu` (best effort: an unpinned run is still a valid run).
fn pin(cpu: Option<usize>) {
    if let Some(cpu) = cpu {
        let mut set = rustix::thread::CpuSet::new();
        set.set(cpu);
        let _ = rustix::thread::sched_setaffinity(None, &set);
    }
}

/// Waits (spinning, then yielding) until `counter` reaches `target`.
fn wait_for(counter: &AtomicU64, target: u64) {
    let mut spins = 0u32;
    while counter.load(Ordering::Acquire) < target {
        if spins < 64 {
            std::hint::spin_loop();
            spins += 1;
        } else {
            std::thread::yield_now();
        }
    }
}

struct Measured {
    name: &'static str,
    latency: Summary,
    msgs_per_s: f64,
    /// The CPUs the publishing and the receiving thread were pinned to (`None`: not one).
    placement: [Option<usize>; 2],
}

fn kairos_intra(cpus: Cpus, samples: u64, burst: u64) -> anyhow::Result<Measured> {
    pin(cpus.map(|c| c.0));
    let ctx = Context::new();
    let talker = Node::new_in(&ctx, "talker", "/")?;
    let listener = Node::new_in(&ctx, "listener", "/")?;
    let publisher =
        talker.create_publisher::<Stamp>("bench", Qos::keep_all(burst.max(1) as usize))?;
    let received = Arc::new(AtomicU64::new(0));
    let latencies = Arc::new(samples::Samples::new(samples as usize));
    let subscription = {
        let (received, latencies) = (received.clone(), latencies.clone());
        listener.create_subscription(
            "bench",
            Qos::keep_all(burst.max(1) as usize),
            move |m: Arc<Stamp>| {
                let latency = now_ns() - m.sent_ns;
                if m.seq < samples {
                    latencies.record(m.seq as usize, latency);
                }
                received.fetch_add(1, Ordering::Release);
            },
        )?
    };
    let exec = Executor::single_threaded();
    exec.add_node(&listener)?;
    let spinner = {
        let exec = exec.clone();
        std::thread::spawn(move || {
            pin(cpus.map(|c| c.1));
            (pinned_cpu(), exec.spin())
        })
    };
    for seq in 0..samples {
        publisher.publish(Stamp {
            seq,
            sent_ns: now_ns(),
        });
        wait_for(&received, seq + 1);
    }
    let start = Instant::now();
    for seq in samples..samples + burst {
        publisher.publish(Stamp {
            seq,
            sent_ns: now_ns(),
        });
    }
    wait_for(&received, samples + burst);
    let elapsed = start.elapsed().as_secs_f64();
    let report = exec.shutdown(Duration::from_secs(2));
    anyhow::ensure!(report.is_clean(), "executor did not stop: {report}");
    let (receiver_cpu, spun) = spinner
        .join()
        .map_err(|_| anyhow::anyhow!("spinner panicked"))?;
    spun?;
    let stats = subscription.stats();
    anyhow::ensure!(
        stats.dropped == 0,
        "the burst overflowed the queue: {stats:?}"
    );
    Ok(Measured {
        name: "kairos_intra",
        latency: Summary::of_nanos(&latencies.take()),
        msgs_per_s: burst as f64 / elapsed,
        placement: [pinned_cpu(), receiver_cpu],
    })
}

fn crossbeam_channel(cpus: Cpus, samples: u64, burst: u64) -> anyhow::Result<Measured> {
    pin(cpus.map(|c| c.0));
    let (tx, rx) = crossbeam_channel::unbounded::<Stamp>();
    let received = Arc::new(AtomicU64::new(0));
    let receiver = {
        let received = received.clone();
        std::thread::spawn(move || {
            pin(cpus.map(|c| c.1));
            let mut latencies = vec![0i64; samples as usize];
            while let Ok(m) = rx.recv() {
                let latency = now_ns() - m.sent_ns;
                if m.seq < samples {
                    latencies[m.seq as usize] = latency;
                }
                received.fetch_add(1, Ordering::Release);
            }
            (pinned_cpu(), latencies)
        })
    };
    for seq in 0..samples {
        tx.send(Stamp {
            seq,
            sent_ns: now_ns(),
        })?;
        wait_for(&received, seq + 1);
    }
    let start = Instant::now();
    for seq in samples..samples + burst {
        tx.send(Stamp {
            seq,
            sent_ns: now_ns(),
        })?;
    }
    wait_for(&received, samples + burst);
    let elapsed = start.elapsed().as_secs_f64();
    drop(tx);
    let (receiver_cpu, latencies) = receiver
        .join()
        .map_err(|_| anyhow::anyhow!("receiver panicked"))?;
    Ok(Measured {
        name: "crossbeam_channel",
        latency: Summary::of_nanos(&latencies),
        msgs_per_s: burst as f64 / elapsed,
        placement: [pinned_cpu(), receiver_cpu],
    })
}

/// Latency samples written by the callback thread, read once it has stopped.
mod samples {
    use std::sync::atomic::{AtomicI64, Ordering};

    #[derive(Debug)]
    pub(super) struct Samples(Vec<AtomicI64>);

    impl Samples {
        pub(super) fn new(len: usize) -> Self {
            Self((0..len).map(|_| AtomicI64::new(0)).collect())
        }

        pub(super) fn record(&self, index: usize, value: i64) {
            if let Some(slot) = self.0.get(index) {
                slot.store(value, Ordering::Relaxed);
            }
        }

        pub(super) fn take(&self) -> Vec<i64> {
            self.0
                .iter()
                .map(|slot| slot.load(Ordering::Relaxed))
                .collect()
        }
    }
}

/// The burst's halves apart: ns per message to publish (send) it all with nobody taking,
/// then to take (receive) it all with nobody publishing. The callback is the one of the
/// burst above (a clock read, a counter), so only the handoff differs between contenders.
struct Phases {
    name: &'static str,
    publish_ns: f64,
    take_ns: f64,
}

fn kairos_phases(cpus: Cpus, burst: u64) -> anyhow::Result<Phases> {
    pin(cpus.map(|c| c.0));
    let ctx = Context::new();
    let node = Node::new_in(&ctx, "phases", "/")?;
    let qos = Qos::keep_all(burst.max(1) as usize);
    let publisher = node.create_publisher::<Stamp>("phases", qos)?;
    let received = Arc::new(AtomicU64::new(0));
    let _subscription = {
        let received = received.clone();
        node.create_subscription("phases", qos, move |m: Arc<Stamp>| {
            std::hint::black_box(now_ns() - m.sent_ns);
            received.fetch_add(1, Ordering::Release);
        })?
    };
    let exec = Executor::single_threaded();
    exec.add_node(&node)?;
    let start = Instant::now();
    for seq in 0..burst {
        publisher.publish(Stamp {
            seq,
            sent_ns: now_ns(),
        });
    }
    let publish = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let spinner = {
        let exec = exec.clone();
        std::thread::spawn(move || {
            pin(cpus.map(|c| c.1));
            exec.spin()
        })
    };
    wait_for(&received, burst);
    let take = start.elapsed().as_secs_f64();
    let report = exec.shutdown(Duration::from_secs(2));
    anyhow::ensure!(report.is_clean(), "executor did not stop: {report}");
    spinner
        .join()
        .map_err(|_| anyhow::anyhow!("spinner panicked"))??;
    Ok(Phases {
        name: "kairos_intra",
        publish_ns: publish * 1e9 / burst as f64,
        take_ns: take * 1e9 / burst as f64,
    })
}

fn crossbeam_phases(cpus: Cpus, burst: u64) -> anyhow::Result<Phases> {
    pin(cpus.map(|c| c.0));
    let (tx, rx) = crossbeam_channel::unbounded::<Stamp>();
    let received = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    for seq in 0..burst {
        tx.send(Stamp {
            seq,
            sent_ns: now_ns(),
        })?;
    }
    let publish = start.elapsed().as_secs_f64();
    drop(tx);
    let start = Instant::now();
    let receiver = {
        let received = received.clone();
        std::thread::spawn(move || {
            pin(cpus.map(|c| c.1));
            while let Ok(m) = rx.recv() {
                std::hint::black_box(now_ns() - m.sent_ns);
                received.fetch_add(1, Ordering::Release);
            }
        })
    };
    wait_for(&received, burst);
    let take = start.elapsed().as_secs_f64();
    receiver
        .join()
        .map_err(|_| anyhow::anyhow!("receiver panicked"))?;
    Ok(Phases {
        name: "crossbeam_channel",
        publish_ns: publish * 1e9 / burst as f64,
        take_ns: take * 1e9 / burst as f64,
    })
}

/// The best of three runs of each contender, alternating (the least disturbed by other
/// load on a shared machine).
fn phases(cpus: Cpus, burst: u64) -> anyhow::Result<[Phases; 2]> {
    let mut best: Option<[Phases; 2]> = None;
    for _ in 0..3 {
        let run = [kairos_phases(cpus, burst)?, crossbeam_phases(cpus, burst)?];
        best = Some(match best {
            None => run,
            Some(best) => {
                let [a, b] = best;
                let [c, d] = run;
                let min = |x: Phases, y: Phases| Phases {
                    name: x.name,
                    publish_ns: x.publish_ns.min(y.publish_ns),
                    take_ns: x.take_ns.min(y.take_ns),
                };
                [min(a, c), min(b, d)]
            }
        });
    }
    best.ok_or_else(|| anyhow::anyhow!("no run"))
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let cpus = cpu_pair();
    let results = [
        kairos_intra(cpus, args.samples, args.burst)?,
        crossbeam_channel(cpus, args.samples, args.burst)?,
    ];
    if args.json {
        let rows: Vec<_> = results
            .iter()
            .map(|r| json!({"name": r.name, "p50_us": r.latency.p50_us, "p99_us": r.latency.p99_us, "msgs_per_s": r.msgs_per_s, "publisher_cpu": r.placement[0], "receiver_cpu": r.placement[1]}))
            .collect();
        let mut out = json!({"samples": args.samples, "burst": args.burst, "results": rows});
        if args.phases {
            let halves: Vec<_> = phases(cpus, args.burst)?
                .iter()
                .map(|p| json!({"name": p.name, "publish_ns": p.publish_ns, "take_ns": p.take_ns}))
                .collect();
            out["phases"] = json!(halves);
        }
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "publish -> callback start, one message in flight ({} samples); burst of {} for throughput",
        args.samples, args.burst
    );
    match cpus {
        Some((publisher, receiver)) => println!(
            "publisher pinned to CPU {publisher}, receiver (executor, channel) to CPU {receiver}"
        ),
        None => println!("fewer than two CPUs allowed: nothing pinned"),
    }
    println!("{} {:>12}", Summary::header(), "msgs_per_s");
    for r in &results {
        println!("{} {:>12.0}", r.latency.row(r.name), r.msgs_per_s);
    }
    let (k, floor) = (&results[0], &results[1]);
    println!(
        "kairos / crossbeam floor: p50 {:.2}x, p99 {:.2}x, throughput {:.2}x",
        k.latency.p50_us / floor.latency.p50_us,
        k.latency.p99_us / floor.latency.p99_us,
        k.msgs_per_s / floor.msgs_per_s
    );
    if args.phases {
        println!(
            "burst halves apart, best of 3 ({} messages): ns per message",
            args.burst
        );
        println!("{:<20} {:>10} {:>10}", "", "publish", "take");
        for p in phases(cpus, args.burst)? {
            println!("{:<20} {:>10.1} {:>10.1}", p.name, p.publish_ns, p.take_ns);
        }
    }
    Ok(ExitCode::SUCCESS)
}
