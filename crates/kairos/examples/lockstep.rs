//! 60 s of robot time in lock-step with a node timer (issue 12, item 3).
//!
//! A node on simulation time has a 1 s timer; its executor spins on another thread
//! (`Executor::spin_thread`, which returns once the spin has begun). Each one-second step,
//! made either with `SimClock::step` or by publishing on `/clock`, returns only after the
//! timer callback it made due has run, so every run counts exactly 60 ticks.
//!
//! `cargo run --release --example lockstep` (the test `exec_promises` runs it too).

use kairos::exec::Executor;
use kairos::graph::{ClockMsg, Context, Node, Qos};
use kairos::time::{ClockKind, Duration, Time};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// How the simulated time is advanced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drive {
    /// `SimClock::step(1 s)`.
    Step,
    /// A `ClockMsg` published on `/clock` by a simulator node.
    ClockTopic,
}

/// Runs `steps` one-second steps with a 1 s node timer on an executor of `workers`
/// threads; returns how many times the timer ran.
pub fn run(drive: Drive, workers: usize, steps: i64) -> u64 {
    let context = Context::new();
    let robot = Node::new_in(&context, "robot", "/").expect("node");
    robot.set_use_sim_time(true).expect("sim time");
    let ticks = Arc::new(AtomicU64::new(0));
    let count = ticks.clone();
    let _timer = robot
        .create_timer(Duration::from_secs(1), move |_| {
            count.fetch_add(1, Ordering::Relaxed);
        })
        .expect("timer");
    let exec = Executor::multi_threaded(workers).expect("workers");
    exec.add_node(&robot).expect("node added");
    let spin = exec.spin_thread().expect("spinning");
    let sim = context.sim_clock().expect("sim clock");
    let simulator = Node::new_in(&context, "simulator", "/").expect("node");
    let clock = simulator
        .create_publisher::<ClockMsg>("/clock", Qos::keep_last(1))
        .expect("publisher");
    for second in 1..=steps {
        match drive {
            Drive::Step => sim.step(Duration::from_secs(1)),
            Drive::ClockTopic => {
                clock.publish(ClockMsg {
                    clock: Time::new(ClockKind::Sim, second * 1_000_000_000),
                });
            }
        }
    }
    let ran = ticks.load(Ordering::Relaxed);
    drop(spin);
    exec.shutdown(Duration::from_secs(5));
    ran
}

#[allow(dead_code)] // Also compiled into the `exec_promises` test, which calls `run`.
fn main() {
    for drive in [Drive::Step, Drive::ClockTopic] {
        let runs: Vec<u64> = (0..10).map(|_| run(drive, 2, 60)).collect();
        println!("{drive:?}: ticks in 10 runs of 60 one-second steps: {runs:?}");
    }
}
