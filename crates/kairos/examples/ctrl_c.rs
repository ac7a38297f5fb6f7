//! Ctrl-C ends a kairos program the way it ends an rclcpp one: the executors shut down,
//! the shutdown report is printed, the trace is flushed, and `main` goes on to exit 0.
//!
//! ```sh
//! KAIROS_TRACE=/tmp/traces cargo run --release -p kairos --example ctrl_c
//! # ... press Ctrl-C ...
//! babeltrace2 /tmp/traces
//! ```
//!
//! Nothing here asks for the handler: the first node installs it (opt out with
//! `kairos::signal::set_shutdown_on_signal(false)` or `KAIROS_SIGNAL_HANDLER=0`), and with
//! `KAIROS_TRACE` set the first node also starts the trace.

use kairos::exec::Executor;
use kairos::graph::{Node, Qos};
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let talker = Node::new("talker")?;
    let listener = Node::new("listener")?;
    let publisher = talker.create_publisher::<String>("chatter", Qos::keep_last(10))?;
    let heard = Arc::new(AtomicU64::new(0));
    let _subscription = {
        let heard = heard.clone();
        listener.create_subscription("chatter", Qos::keep_last(10), move |m: &String| {
            if heard.fetch_add(1, Ordering::Relaxed) == 0 {
                println!("heard the first message: {m}");
                let _ = std::io::stdout().flush();
            }
        })?
    };
    let _timer = talker.create_timer(std::time::Duration::from_millis(10), move |tick| {
        publisher.publish(format!("hello at {}", tick.actual));
    })?;
    let executor = Executor::multi_threaded(2)?;
    executor.add_node(&talker)?;
    executor.add_node(&listener)?;

    println!("spinning; press Ctrl-C to stop");
    std::io::stdout().flush()?;
    executor.spin()?;

    // Reached after Ctrl-C: the handler shut the executor down and printed its report.
    // `shutdown_requested` is what a loop that does not spin checks (rclcpp's `!ok()`).
    assert!(kairos::signal::shutdown_requested());
    println!(
        "spin returned after Ctrl-C; heard {} messages; exiting",
        heard.load(Ordering::Relaxed)
    );
    Ok(())
}
