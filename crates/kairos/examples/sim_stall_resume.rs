//! A node timer on a simulated clock with `StallPolicy::Fail` (issue 12, item 2).
//!
//! The simulator freezes: the timer's wait fails with `Stalled`, the timer counts that it
//! gave up (`CallbackTimer::stall_count`) and re-arms at the next sample. When the
//! simulator steps again the timer fires again, on its original grid.
//!
//! `cargo run --release --example sim_stall_resume` (the test `exec_promises` runs it too).

use kairos::exec::Executor;
use kairos::graph::{Context, Node};
use kairos::time::{Duration, SimClock, StallPolicy};
use std::sync::{Arc, Mutex};

/// What the example found.
#[derive(Debug)]
pub struct Outcome {
    /// The scheduled simulated times of every tick, in ms.
    pub ticks_ms: Vec<i64>,
    /// How often the timer gave up on a stall.
    pub stalls: u64,
}

pub fn run() -> Outcome {
    // A stall is noticed after 50 ms of real time without a sample.
    let sim = SimClock::with_stall_policy(StallPolicy::Fail, Duration::from_millis(50));
    let node = Node::new_in(&Context::new(), "robot", "/").expect("node");
    node.set_clock(sim.clock());
    let ticks = Arc::new(Mutex::new(Vec::new()));
    let log = ticks.clone();
    let timer = node
        .create_timer(Duration::from_millis(100), move |tick| {
            log.lock().unwrap().push(tick.scheduled.nanos() / 1_000_000)
        })
        .expect("timer");
    let exec = Executor::multi_threaded(2).expect("2 workers");
    exec.add_node(&node).expect("node added");
    let spin = exec.spin_thread().expect("spinning");

    sim.step(Duration::from_millis(300)); // ticks at 100, 200, 300 ms
    // The simulator goes quiet; the timer's wait fails once the stall is noticed.
    let give_up = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while timer.stall_count() == 0 {
        assert!(
            std::time::Instant::now() < give_up,
            "the stall was never noticed"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    sim.step(Duration::from_millis(300)); // resumes: ticks at 400, 500, 600 ms
    drop(spin);
    exec.shutdown(Duration::from_secs(5));
    let ticks_ms = ticks.lock().unwrap().clone();
    Outcome {
        ticks_ms,
        stalls: timer.stall_count(),
    }
}

#[allow(dead_code)] // Also compiled into the `exec_promises` test, which calls `run`.
fn main() {
    let outcome = run();
    println!("ticks (simulated ms): {:?}", outcome.ticks_ms);
    println!("the timer gave up {} time(s) on a stall", outcome.stalls);
}
