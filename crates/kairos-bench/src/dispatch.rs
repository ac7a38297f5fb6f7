//! `kairos bench dispatch`: how many callbacks per second a single-threaded executor runs
//! when all are ready (empty callbacks): guard conditions, each triggered many times, so
//! every dispatch pops a ready entity, enters its group, runs it and re-queues it. Beside
//! it, the floor: the same number of empty boxed closures called from a `VecDeque`. Both
//! are measured `--repeat` times, alternately, and the best of each is shown (on a shared
//! machine the best run is the one least disturbed by other work).

use clap::Args as ClapArgs;
use kairos::exec::Executor;
use kairos::graph::{Context, Node};
use kairos::time::Duration;
use serde_json::json;
use std::collections::VecDeque;
use std::hint::black_box;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

#[derive(Debug, ClapArgs)]
pub struct Args {
    /// Ready entities (guard conditions).
    #[arg(long, default_value_t = 1_000)]
    pub entities: u64,
    /// Triggers per entity.
    #[arg(long, default_value_t = 500)]
    pub rounds: u64,
    /// Measurements of each, alternately; the best of each is shown.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..))]
    pub repeat: u64,
    #[arg(long)]
    pub json: bool,
}

fn kairos_rate(entities: u64, rounds: u64) -> anyhow::Result<f64> {
    let node = Node::new_in(&Context::new(), "dispatch", "/")?;
    let ran = Arc::new(AtomicU64::new(0));
    let guards: Vec<_> = (0..entities)
        .map(|i| {
            let ran = ran.clone();
            node.create_guard_condition(&format!("g{i}"), move || {
                ran.fetch_add(1, Ordering::Relaxed);
            })
        })
        .collect();
    let exec = Executor::single_threaded();
    exec.add_node(&node)?;
    exec.spin_all(Duration::from_secs(10))?;
    for guard in &guards {
        for _ in 0..rounds {
            guard.trigger();
        }
    }
    let total = entities * rounds;
    let start = Instant::now();
    while ran.load(Ordering::Relaxed) < total {
        exec.spin_all(Duration::from_secs(60))?;
    }
    Ok(total as f64 / start.elapsed().as_secs_f64())
}

fn baseline_rate(entities: u64, rounds: u64) -> f64 {
    let ran = Arc::new(AtomicU64::new(0));
    let callbacks: Vec<Box<dyn Fn()>> = (0..entities)
        .map(|_| {
            let ran = ran.clone();
            Box::new(move || {
                ran.fetch_add(1, Ordering::Relaxed);
            }) as Box<dyn Fn()>
        })
        .collect();
    let mut queue: VecDeque<(usize, u64)> = (0..callbacks.len()).map(|i| (i, rounds)).collect();
    let start = Instant::now();
    while let Some((index, left)) = queue.pop_front() {
        black_box(&callbacks[index])();
        if left > 1 {
            queue.push_back((index, left - 1));
        }
    }
    (entities * rounds) as f64 / start.elapsed().as_secs_f64()
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let (mut kairos, mut floor) = (0f64, 0f64);
    for _ in 0..args.repeat {
        kairos = kairos.max(kairos_rate(args.entities, args.rounds)?);
        floor = floor.max(baseline_rate(args.entities, args.rounds));
    }
    if args.json {
        let out = json!({
            "entities": args.entities,
            "rounds": args.rounds,
            "repeat": args.repeat,
            "callbacks_per_s": kairos,
            "baseline_calls_per_s": floor,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{} ready entities x {} triggers, empty callbacks, single-threaded executor, best of {}",
        args.entities, args.rounds, args.repeat
    );
    println!("{:<24} {:>14}", "", "callbacks/s");
    println!("{:<24} {:>14.0}", "kairos executor", kairos);
    println!("{:<24} {:>14.0}", "VecDeque of closures", floor);
    println!(
        "per dispatch: kairos {:.0} ns, floor {:.1} ns",
        1e9 / kairos,
        1e9 / floor
    );
    Ok(ExitCode::SUCCESS)
}
