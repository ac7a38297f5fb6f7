//! A randomized reliability campaign against the runtime, and its soak mode.
//!
//! Each iteration builds a random graph from a seed (2-4 nodes, mutually exclusive and
//! reentrant groups, sync and async timers on steady or simulated time, services with
//! random latency, clients calling with `call`, `call_async(..).await` and `on_done`,
//! guard conditions, publishers and subscriptions), spins it on a single- or
//! multi-threaded executor (its workers sometimes polling for work before they sleep,
//! see `Executor::set_idle_spin`) for a few milliseconds (stepping the simulated clock from
//! another thread meanwhile), shuts it down at a random moment with a random deadline,
//! drops everything, and checks the promises:
//! - shutdown returns by its deadline (plus a generous margin for a loaded machine);
//! - no callback starts after `shutdown` has returned;
//! - every done callback runs exactly once, with the response or an error saying why;
//! - nothing is leaked: every callback's state is freed after teardown.
//!
//! `tests/exec_random.rs` runs a bounded number of seeded iterations on every test run;
//! `cargo run --release --example soak -- --minutes N` runs it for N minutes and prints
//! resident memory, heap bytes in use and thread counts over time. Every violation prints its seed; replay
//! one with `--seed S`.

use kairos::exec::{Executor, GroupKind};
use kairos::graph::{Client, Context, Node, Qos};
use kairos::time::{CancelToken, Clock, Duration};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Instant;

/// A small deterministic generator (SplitMix64): the same seed, the same graph.
#[derive(Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A value in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// What every callback of an iteration shares.
#[derive(Default)]
struct Probe {
    /// Set once `shutdown` has returned.
    shut_down: AtomicBool,
    started_after_shutdown: AtomicU64,
    callbacks: AtomicU64,
    dones_issued: AtomicU64,
    dones_run: AtomicU64,
}

impl Probe {
    fn enter(&self) {
        if self.shut_down.load(Ordering::SeqCst) {
            self.started_after_shutdown.fetch_add(1, Ordering::SeqCst);
        }
        self.callbacks.fetch_add(1, Ordering::Relaxed);
    }
}

/// What one iteration did, for the campaign's totals.
#[derive(Debug, Default, Clone, Copy)]
pub struct Iteration {
    pub callbacks: u64,
    pub still_running: usize,
    pub suspended: usize,
    pub parked: usize,
    pub queued_responses: usize,
}

type AddClient = Arc<Client<fn((u64, u64)) -> u64>>;

/// Runs iteration `seed`; `Err` says which promise broke.
pub fn iteration(seed: u64) -> Result<Iteration, String> {
    let mut rng = Rng::new(seed);
    let probe = Arc::new(Probe::default());
    // Every callback holds a clone; all must be gone after teardown.
    let witness = Arc::new(());
    let context = Context::new();
    let sim = context.sim_clock().map_err(|e| e.to_string())?;
    let workers = [1, 1, 2, 3, 4][rng.below(5) as usize];
    let exec = Executor::multi_threaded(workers).map_err(|e| e.to_string())?;
    let node_count = 2 + rng.below(3);
    let mut nodes = Vec::new();
    let mut keep: Vec<Box<dyn std::any::Any>> = Vec::new();
    let mut clients: Vec<AddClient> = Vec::new();
    let mut guards = Vec::new();

    for n in 0..node_count {
        let node = Node::new_in(&context, &format!("n{n}"), "/").map_err(|e| e.to_string())?;
        let on_sim = rng.chance(30);
        if on_sim {
            node.set_use_sim_time(true).map_err(|e| e.to_string())?;
        } else {
            node.set_clock(Clock::steady());
        }
        let kind = if rng.chance(50) {
            GroupKind::Reentrant
        } else {
            GroupKind::MutuallyExclusive
        };
        let second = node.create_callback_group("second", kind);
        let in_second = node.with_group(&second).map_err(|e| e.to_string())?;
        let pick = |rng: &mut Rng| if rng.chance(50) { &node } else { &in_second };

        let latency = rng.below(1500) as i64;
        let (p, w) = (probe.clone(), witness.clone());
        let service = pick(&mut rng)
            .create_service(&format!("add{n}"), move |(a, b): (u64, u64)| {
                p.enter();
                let _ = &w;
                if latency > 0 {
                    let _ = Clock::steady()
                        .sleep_for(Duration::from_micros(latency), &CancelToken::new());
                }
                a + b
            })
            .map_err(|e| e.to_string())?;
        keep.push(Box::new(service));

        let (p, w) = (probe.clone(), witness.clone());
        let sub = pick(&mut rng)
            .create_subscription::<u64, _>("/chatter", Qos::keep_last(4), move |_msg| {
                p.enter();
                let _ = &w;
            })
            .map_err(|e| e.to_string())?;
        keep.push(Box::new(sub));
        let publisher = Arc::new(
            node.create_publisher::<u64>("/chatter", Qos::keep_last(4))
                .map_err(|e| e.to_string())?,
        );

        let (p, w) = (probe.clone(), witness.clone());
        let guard = Arc::new(pick(&mut rng).create_guard_condition("guard", move || {
            p.enter();
            let _ = &w;
        }));
        guards.push(guard.clone());

        for t in 0..1 + rng.below(3) {
            let target = rng.below(node_count);
            let client: AddClient = Arc::new(
                pick(&mut rng)
                    .create_client(&format!("add{target}"))
                    .map_err(|e| e.to_string())?,
            );
            clients.push(client.clone());
            let period = Duration::from_micros(500 + rng.below(3000) as i64);
            let (p, w) = (probe.clone(), witness.clone());
            let owner = pick(&mut rng).clone();
            let mode = rng.below(5);
            let publisher = publisher.clone();
            let guard = guard.clone();
            let timer = if rng.chance(50) {
                owner.create_timer(period, move |_| {
                    p.enter();
                    let _ = &w;
                    match mode {
                        0 => {
                            publisher.publish(t);
                        }
                        1 => guard.trigger(),
                        2 => {
                            let _ = client.call((1, t), Duration::from_millis(20));
                        }
                        _ => {
                            p.dones_issued.fetch_add(1, Ordering::SeqCst);
                            let (p, w) = (p.clone(), w.clone());
                            client.call_async((2, t)).on_done(move |_result| {
                                let _ = &w;
                                p.dones_run.fetch_add(1, Ordering::SeqCst);
                            });
                        }
                    }
                })
            } else {
                let node_clock = owner.clock();
                owner.create_timer_async(period, move |_| {
                    let (p, w, client, node_clock) =
                        (p.clone(), w.clone(), client.clone(), node_clock.clone());
                    async move {
                        p.enter();
                        let _ = &w;
                        if mode < 3 {
                            let _ = client.call_async((3, t)).await;
                        } else {
                            // Short sleeps, and hour-long ones only a shutdown can end (on
                            // the system, steady or the node's own clock, simulated or not).
                            let (clock, span) = match (mode, t) {
                                (3, _) => (Clock::steady(), Duration::from_millis(2)),
                                (_, 0) => (Clock::system(), Duration::from_secs(3600)),
                                (_, 1) => (Clock::steady(), Duration::from_secs(3600)),
                                _ => (node_clock.clone(), Duration::from_secs(3600)),
                            };
                            let _ = clock.sleep_for_async(span, &CancelToken::new()).await;
                        }
                    }
                })
            }
            .map_err(|e| e.to_string())?;
            keep.push(Box::new(timer));
        }
        exec.add_node(&node).map_err(|e| e.to_string())?;
        nodes.push(node);
    }

    // Sometimes the workers poll for work before sleeping: none of the promises may depend
    // on a worker being asleep.
    let idle_spin = match rng.below(20) {
        0 => Executor::MAX_IDLE_SPIN,
        1..=6 => Duration::from_micros(rng.below(3_000) as i64),
        _ => Duration::ZERO,
    };
    exec.set_idle_spin(idle_spin).map_err(|e| e.to_string())?;
    let spin = exec.spin_thread().map_err(|e| e.to_string())?;
    // Drive: step simulated time and trigger guards for a few milliseconds.
    let run_for = std::time::Duration::from_micros(2_000 + rng.below(8_000));
    let start = Instant::now();
    while start.elapsed() < run_for {
        if rng.chance(50) {
            sim.step(Duration::from_millis(1));
        }
        if let Some(guard) = guards.get(rng.below(guards.len() as u64) as usize) {
            guard.trigger();
        }
        std::thread::yield_now();
    }
    let deadline = Duration::from_micros(rng.below(5_000) as i64);
    let before = Instant::now();
    let report = exec.shutdown(deadline);
    probe.shut_down.store(true, Ordering::SeqCst);
    let waited = before.elapsed();
    drop(spin);
    let margin = std::time::Duration::from_secs(2);
    if waited > deadline.to_std().unwrap_or_default() + margin {
        return Err(format!(
            "shutdown({deadline}) returned after {waited:?}: {report}"
        ));
    }
    let outcome = Iteration {
        callbacks: probe.callbacks.load(Ordering::Relaxed),
        still_running: report.still_running.len(),
        suspended: report.suspended.len(),
        parked: report.parked_entities,
        queued_responses: report.queued_responses,
    };

    // Teardown: every handle, then wait (bounded) for callbacks left running to return.
    drop(keep);
    drop(guards);
    drop(clients);
    drop(nodes);
    drop(exec);
    drop(context);
    drop(sim);
    let witness: Weak<()> = Arc::downgrade(&witness);
    let give_up = Instant::now() + std::time::Duration::from_secs(10);
    while witness.strong_count() > 1
        || probe.dones_run.load(Ordering::SeqCst) < probe.dones_issued.load(Ordering::SeqCst)
    {
        if Instant::now() > give_up {
            let issued = probe.dones_issued.load(Ordering::SeqCst);
            let run = probe.dones_run.load(Ordering::SeqCst);
            return Err(format!(
                "after teardown: {} callback references left, {run} of {issued} done callbacks ran ({report})",
                witness.strong_count() - 1
            ));
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    // A callback the report names as still running may reach its first line late; any
    // other start after shutdown returned is a broken promise.
    let late = probe.started_after_shutdown.load(Ordering::SeqCst);
    if late > report.still_running.len() as u64 {
        return Err(format!(
            "{late} callbacks started after shutdown returned ({report})"
        ));
    }
    Ok(outcome)
}

/// Counts the heap bytes in use, so the soak can tell a leak (the count grows) from the
/// allocator keeping freed pages (RSS grows, the count stays flat).
struct CountingAllocator;

static HEAP_IN_USE: AtomicU64 = AtomicU64::new(0);

// SAFETY: every method forwards to the system allocator with the caller's arguments
// unchanged, which upholds `GlobalAlloc`'s contract; the counting is plain atomics.
unsafe impl std::alloc::GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's (valid, non-zero-size) layout.
        let ptr = unsafe { std::alloc::System.alloc(layout) };
        if !ptr.is_null() {
            HEAP_IN_USE.fetch_add(layout.size() as u64, Ordering::Relaxed);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: `ptr` was allocated by `alloc` above with this `layout`.
        unsafe { std::alloc::System.dealloc(ptr, layout) };
        HEAP_IN_USE.fetch_sub(layout.size() as u64, Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr`/`layout` come from this allocator; `new_size` is the caller's.
        let new = unsafe { std::alloc::System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            HEAP_IN_USE.fetch_sub(layout.size() as u64, Ordering::Relaxed);
            HEAP_IN_USE.fetch_add(new_size as u64, Ordering::Relaxed);
        }
        new
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Heap bytes in use now (kB).
pub fn heap_kb() -> u64 {
    HEAP_IN_USE.load(Ordering::Relaxed) / 1024
}

/// Resident memory (kB) and thread count of this process, from /proc.
pub fn rss_and_threads() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|line| line.starts_with(name))
            .and_then(|line| line.split_whitespace().nth(1))
            .and_then(|value| value.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("Threads:"))
}

#[allow(dead_code)] // Also compiled into the `exec_random` test, which calls `iteration`.
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .map(|v| v.parse::<f64>().expect("a number"))
    };
    if let Some(seed) = value("--seed") {
        let seed = seed as u64;
        println!("seed {seed}: {:?}", iteration(seed));
        return;
    }
    let minutes = value("--minutes").unwrap_or(1.0);
    let report_every = std::time::Duration::from_secs_f64(value("--every").unwrap_or(30.0));
    let first_seed = value("--first-seed").unwrap_or(1.0) as u64;
    let until = Instant::now() + std::time::Duration::from_secs_f64(minutes * 60.0);
    let start = Instant::now();
    let mut next_report = start;
    let (mut done, mut violations, mut totals) = (0u64, 0u64, Iteration::default());
    println!("soak: {minutes} min of random graphs from seed {first_seed}");
    println!(
        "{:>8} {:>10} {:>10} {:>8} {:>8} {:>8} {:>11}",
        "elapsed", "iterations", "violations", "rss_kB", "heap_kB", "threads", "callbacks"
    );
    let mut seed = first_seed;
    while Instant::now() < until {
        match iteration(seed) {
            Ok(it) => {
                totals.callbacks += it.callbacks;
                totals.still_running += it.still_running;
                totals.suspended += it.suspended;
                totals.parked += it.parked;
                totals.queued_responses += it.queued_responses;
            }
            Err(why) => {
                violations += 1;
                println!("VIOLATION seed {seed}: {why}");
            }
        }
        done += 1;
        seed += 1;
        if Instant::now() >= next_report {
            let (rss, threads) = rss_and_threads();
            println!(
                "{:>7.0}s {done:>10} {violations:>10} {rss:>8} {:>8} {threads:>8} {:>11}",
                start.elapsed().as_secs_f64(),
                heap_kb(),
                totals.callbacks
            );
            next_report += report_every;
        }
    }
    let (rss, threads) = rss_and_threads();
    println!(
        "{:>7.0}s {done:>10} {violations:>10} {rss:>8} {:>8} {threads:>8} {:>11}",
        start.elapsed().as_secs_f64(),
        heap_kb(),
        totals.callbacks
    );
    println!(
        "done: {done} iterations, {violations} violations; shutdown reports named {} still-running and {} suspended callbacks, {} parked entities, {} queued responses",
        totals.still_running, totals.suspended, totals.parked, totals.queued_responses
    );
    if violations > 0 {
        std::process::exit(1);
    }
}
