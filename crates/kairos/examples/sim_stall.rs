//! Choosing what a `use_sim_time` node does when the simulator stops publishing `/clock`,
//! per node, as rclcpp users set it per node.
//!
//! ```sh
//! cargo run --release -p kairos --example sim_stall
//! ```
//!
//! A "simulator" publishes one `/clock` sample, then freezes. Three nodes of the same
//! graph each sleep 50 ms of simulated time, with different stall policies (stall timeout
//! 100 ms of steady time):
//! - `Fail`: the sleep returns `Stalled`, with a message saying what to do;
//! - `FallbackToSteady`: simulated time keeps moving at rate 1, the sleep completes;
//! - `Wait` (ROS's behaviour, the default): the sleep waits for the simulator, and a
//!   cancel (here: after the stall is reported) is its way out.

use kairos::graph::{ClockMsg, Context, Node, NodeOptions, Qos, SimStall};
use kairos::time::{
    CancelToken, ClockChange, ClockKind, JumpThreshold, StallPolicy, Time, WaitError,
};
use std::sync::mpsc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let graph = Context::new();
    let stall_after = std::time::Duration::from_millis(100);
    let node = |name: &str, policy| {
        let options = NodeOptions::new()
            .use_sim_time(true)
            .sim_stall(SimStall::new(policy, stall_after));
        Node::with_options(&graph, name, options)
    };
    let failing = node("failing", StallPolicy::Fail)?;
    let falling_back = node("falling_back", StallPolicy::FallbackToSteady)?;
    let waiting = node("waiting", StallPolicy::Wait)?;

    let simulator = Node::new_in(&graph, "simulator", "/")?;
    let clock = simulator.create_publisher::<ClockMsg>("/clock", Qos::keep_last(1))?;
    clock.publish(ClockMsg {
        clock: Time::new(ClockKind::Sim, 12_000_000_000),
    });
    println!("simulator published /clock = 12 s, then froze");

    let nap = std::time::Duration::from_millis(50);
    let result = failing.clock().sleep_for(nap, &CancelToken::new());
    match &result {
        Err(WaitError::Stalled { .. }) => println!("fail:                {}", result.unwrap_err()),
        other => return Err(format!("Fail policy: expected Stalled, got {other:?}").into()),
    }

    falling_back.clock().sleep_for(nap, &CancelToken::new())?;
    println!(
        "fallback_to_steady: slept 50 ms of simulated time; the node clock reads {}",
        falling_back.clock().now()
    );

    // Wait: the sleep stays until the simulator comes back; cancel it once the stall is
    // reported to the node clock's jump handlers.
    let (stalled_tx, stalled_rx) = mpsc::channel();
    let _handler = waiting.clock().create_jump_handler(
        JumpThreshold::ALL,
        || {},
        move |jump| {
            if jump.change == ClockChange::SimStalled {
                let _ = stalled_tx.send(());
            }
        },
    );
    let cancel = CancelToken::new();
    let sleeper = {
        let (clock, cancel) = (waiting.clock(), cancel.clone());
        std::thread::spawn(move || clock.sleep_for(nap, &cancel))
    };
    stalled_rx.recv_timeout(std::time::Duration::from_secs(10))?;
    cancel.cancel();
    match sleeper.join().expect("the sleeping thread does not panic") {
        Err(WaitError::Cancelled) => {
            println!(
                "wait:                still waiting for the simulator when the stall was reported; cancelled"
            )
        }
        other => return Err(format!("Wait policy: expected Cancelled, got {other:?}").into()),
    }
    Ok(())
}
