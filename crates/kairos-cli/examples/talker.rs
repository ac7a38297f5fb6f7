//! A talker as a ROS 2 engineer writes one: a node whose name, namespace, topic and
//! parameters come from its command line (`--ros-args`), publishing `std_msgs/String` on
//! `chatter` at `rate_hz` and logging each message (console and `/rosout`). Started by
//! `kairos launch examples/launch/talker_listener.launch.yaml`, or on its own:
//!
//! ```sh
//! KAIROS_TRANSPORT=zenoh cargo run --release -p kairos-cli --example talker -- \
//!     --ros-args -r chatter:=/news -p rate_hz:=2.0
//! ```
//!
//! Ctrl-C (SIGINT) stops it: its executor shuts down, prints its report, and it exits 0.

use kairos::exec::Executor;
use kairos::graph::{Node, ParameterValue, Parameters, Qos};
use kairos_msgs::std_msgs::msg::String as StringMsg;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let _transport = kairos_zenoh::init()?;
    let node = Node::new("talker")?;
    let parameters = Parameters::for_node(&node)?;
    parameters.declare("rate_hz", ParameterValue::Double(10.0), Default::default())?;
    parameters.declare(
        "prefix",
        ParameterValue::String("hello".into()),
        Default::default(),
    )?;
    let (Ok(ParameterValue::Double(rate)), Ok(ParameterValue::String(prefix))) =
        (parameters.get("rate_hz"), parameters.get("prefix"))
    else {
        return Err("rate_hz must be a double and prefix a string".into());
    };
    if !(rate > 0.0 && rate <= 1000.0) {
        return Err(format!("rate_hz {rate}: give a rate in (0, 1000] Hz").into());
    }
    let publisher = node.create_publisher::<StringMsg>("chatter", Qos::keep_last(10))?;
    println!(
        "talker {} publishing on {} at {rate} Hz",
        node.fully_qualified_name(),
        publisher.topic()
    );
    let logger = node.logger().clone();
    let count = AtomicU64::new(0);
    let _timer = node.create_timer(Duration::from_secs_f64(1.0 / rate), move |_| {
        let n = count.fetch_add(1, Ordering::Relaxed) + 1;
        let data = format!("{prefix} {n}");
        logger.info(format!("publishing '{data}'"));
        publisher.publish(StringMsg { data });
    })?;
    let executor = Executor::single_threaded();
    executor.add_node(&node)?;
    executor.spin()?;
    Ok(())
}
