//! 60 s of robot time in 10 ms lock-step steps, on a busy machine (issue 24).
//!
//! The program a user writes: a node on simulation time (`set_use_sim_time`, or its own
//! `SimClock` under each stall policy), a 1 s node timer, a multi-threaded executor
//! spinning in a background `spin()` on a thread the program starts and does not wait
//! for, and 6,000 steps of 10 ms. Every run must count 60 ticks and no missed period.
//! Two CPU-bound threads run beside it with `--load`.
//!
//! `cargo run --release -p kairos --example lockstep_busy -- --runs 20 --load`

use kairos::exec::Executor;
use kairos::graph::{Context, Node};
use kairos::time::{Duration, SimClock, StallPolicy};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Which clock the node's timer reads.
#[derive(Debug, Clone, Copy)]
enum Setup {
    UseSimTime,
    OwnClock(StallPolicy),
}

/// One run: (ticks, missed periods, settle timeouts).
fn run(setup: Setup) -> (u64, u64, u64) {
    let context = Context::new();
    let robot = Node::new_in(&context, "robot", "/").expect("node");
    let sim = match setup {
        Setup::UseSimTime => {
            robot.set_use_sim_time(true).expect("sim time");
            context.sim_clock().expect("sim clock")
        }
        Setup::OwnClock(policy) => {
            let sim = SimClock::with_stall_policy(policy, Duration::from_secs(1));
            robot.set_clock(sim.clock());
            sim
        }
    };
    let ticks = Arc::new(AtomicU64::new(0));
    let count = ticks.clone();
    let timer = robot
        .create_timer(Duration::from_secs(1), move |_| {
            count.fetch_add(1, Ordering::Relaxed);
        })
        .expect("timer");
    let exec = Arc::new(Executor::multi_threaded(2).expect("workers"));
    exec.add_node(&robot).expect("node added");
    let spinner = exec.clone();
    let spin = std::thread::spawn(move || spinner.spin());
    for _ in 0..6000 {
        sim.step(Duration::from_millis(10));
    }
    let outcome = (
        ticks.load(Ordering::Relaxed),
        timer.missed_count(),
        sim.settle_timeouts(),
    );
    exec.cancel();
    let _ = spin.join();
    exec.shutdown(Duration::from_secs(5));
    outcome
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let runs = args
        .iter()
        .position(|a| a == "--runs")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(10);
    let stop = Arc::new(AtomicBool::new(false));
    let load: Vec<_> = if args.iter().any(|a| a == "--load") {
        (0..2)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let mut x = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(1));
                    }
                })
            })
            .collect()
    } else {
        Vec::new()
    };
    println!(
        "{runs} runs of 6,000 x 10 ms steps, 1 s timer, background spin(){}",
        if load.is_empty() {
            ""
        } else {
            ", two busy threads beside"
        }
    );
    for setup in [
        Setup::UseSimTime,
        Setup::OwnClock(StallPolicy::Wait),
        Setup::OwnClock(StallPolicy::FallbackToSteady),
        Setup::OwnClock(StallPolicy::Fail),
    ] {
        let outcomes: Vec<_> = (0..runs).map(|_| run(setup)).collect();
        let exact = outcomes.iter().filter(|o| **o == (60, 0, 0)).count();
        let ticks: Vec<u64> = outcomes.iter().map(|o| o.0).collect();
        println!("{setup:?}: {exact}/{runs} runs with 60 ticks and none missed; ticks {ticks:?}");
    }
    stop.store(true, Ordering::Relaxed);
    for thread in load {
        let _ = thread.join();
    }
}
