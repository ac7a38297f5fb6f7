//! A listener as a ROS 2 engineer writes one: subscribes `std_msgs/String` on `chatter`
//! (remap it with `--ros-args -r chatter:=...`), prints `heard: ...` for each message
//! and logs it. Ctrl-C stops it with its shutdown report.

use kairos::exec::Executor;
use kairos::graph::{Node, Qos};
use kairos_msgs::std_msgs::msg::String as StringMsg;
use std::io::Write;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let _transport = kairos_zenoh::init()?;
    let node = Node::new("listener")?;
    let logger = node.logger().clone();
    let subscription =
        node.create_subscription("chatter", Qos::keep_last(10), move |m: &StringMsg| {
            println!("heard: {}", m.data);
            let _ = std::io::stdout().flush();
            logger.info(format!("I heard '{}'", m.data));
        })?;
    println!(
        "listener {} listening on {}",
        node.fully_qualified_name(),
        subscription.topic()
    );
    let executor = Executor::single_threaded();
    executor.add_node(&node)?;
    executor.spin()?;
    Ok(())
}
