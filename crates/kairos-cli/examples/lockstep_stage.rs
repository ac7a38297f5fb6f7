//! A process of simulation-time nodes whose outputs show whether a replay was in lock step:
//! each node's messages carry the simulated time of the callback that sent them and what
//! the node had seen by then. Used by the lock-step replay tests and benchmark; run it as
//!
//! ```sh
//! KAIROS_TRANSPORT=zenoh cargo run --release -p kairos-cli --example lockstep_stage -- \
//!     stage:/input:/mid:5:300 fuse:/mid:/out
//! ```
//!
//! Each argument is a node `NAME:IN:OUT[:TIMER_MS[:COST_US]]`:
//! - every `std_msgs/String` on `IN` costs up to `COST_US` microseconds of real work (a
//!   busy loop, the amount a hash of the message's text picks), then the node publishes on
//!   `OUT` "NAME heard TEXT at T after K ticks" (T: the node's simulated time, in ns);
//! - with `TIMER_MS`, a timer of that period on the node's simulated clock publishes
//!   "NAME tick N at T after M messages" on `OUT`.
//!
//! Every node runs on simulation time (`/clock`), its callbacks in its own mutually
//! exclusive group; the process spins them on a two-thread executor. It prints `ready`
//! once every node exists, then spins until Ctrl-C.

use kairos::exec::Executor;
use kairos::graph::{Node, Qos};
use kairos_msgs::std_msgs::msg::String as StringMsg;
use std::hash::{Hash, Hasher};
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

struct Spec {
    name: String,
    input: String,
    output: String,
    timer_ms: u64,
    cost_us: u64,
}

fn parse(arg: &str) -> Result<Spec, String> {
    let parts: Vec<&str> = arg.split(':').collect();
    let number = |i: usize| -> Result<u64, String> {
        parts.get(i).map_or(Ok(0), |p| {
            p.parse()
                .map_err(|_| format!("{arg}: '{p}' is not a whole number"))
        })
    };
    if !(3..=5).contains(&parts.len()) {
        return Err(format!(
            "{arg}: a node is NAME:IN:OUT[:TIMER_MS[:COST_US]], e.g. stage:/input:/mid:5:300"
        ));
    }
    Ok(Spec {
        name: parts[0].to_owned(),
        input: parts[1].to_owned(),
        output: parts[2].to_owned(),
        timer_ms: number(3)?,
        cost_us: number(4)?,
    })
}

/// Real work of up to `max_us` microseconds, the same amount for the same text.
fn work(text: &str, max_us: u64) {
    if max_us == 0 {
        return;
    }
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    let end = Instant::now() + Duration::from_micros(hasher.finish() % max_us);
    while Instant::now() < end {
        std::hint::spin_loop();
    }
}

#[derive(Default)]
struct Seen {
    ticks: u64,
    messages: u64,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let specs = std::env::args()
        .skip(1)
        .map(|a| parse(&a))
        .collect::<Result<Vec<_>, _>>()?;
    if specs.is_empty() {
        return Err("give at least one node NAME:IN:OUT[:TIMER_MS[:COST_US]]".into());
    }
    let _transport = kairos_zenoh::init()?;
    let executor = Executor::multi_threaded(2)?;
    let mut keep: Vec<Box<dyn std::any::Any>> = Vec::new();
    for spec in specs {
        let node = Node::new(&spec.name)?;
        node.set_use_sim_time(true)?;
        let publisher =
            Arc::new(node.create_publisher::<StringMsg>(&spec.output, Qos::keep_last(1000))?);
        let seen = Arc::new(Mutex::new(Seen::default()));
        let (clock, name) = (node.clock(), spec.name.clone());
        let (heard_by, said) = (seen.clone(), publisher.clone());
        let cost = spec.cost_us;
        let subscription =
            node.create_subscription(&spec.input, Qos::keep_last(1000), move |m: &StringMsg| {
                work(&m.data, cost);
                let mut seen = heard_by.lock().expect("not poisoned");
                seen.messages += 1;
                let data = format!(
                    "{name} heard {} at {} after {} ticks",
                    m.data,
                    clock.now().nanos(),
                    seen.ticks
                );
                said.publish(StringMsg { data });
            })?;
        keep.push(Box::new(subscription));
        if spec.timer_ms > 0 {
            let (clock, name) = (node.clock(), spec.name.clone());
            let timer = node.create_timer(Duration::from_millis(spec.timer_ms), move |_| {
                let mut seen = seen.lock().expect("not poisoned");
                seen.ticks += 1;
                let data = format!(
                    "{name} tick {} at {} after {} messages",
                    seen.ticks,
                    clock.now().nanos(),
                    seen.messages
                );
                publisher.publish(StringMsg { data });
            })?;
            keep.push(Box::new(timer));
        }
        executor.add_node(&node)?;
        keep.push(Box::new(node));
    }
    println!("ready");
    std::io::stdout().flush()?;
    executor.spin()?;
    Ok(())
}
