//! A node configured from its command line, as a ROS 2 node is: `--ros-args` with remaps,
//! parameters and parameter files, read by the process-wide context (issue 28).
//!
//! ```text
//! cargo run --release -p kairos --example ros_args -- --ros-args \
//!     -r __ns:=/robot -r chatter:=news -p rate:=2.5 --params-file params.yaml
//! ```
//! prints the node's name, where its topic went and its parameters; bad ROS arguments
//! end it with the error and exit status 2.

use kairos::graph::{NameKind, Node, ParameterValue, Parameters, Qos};

fn main() {
    let node = match Node::new("talker") {
        Ok(node) => node,
        Err(err) => {
            eprintln!("ros_args: {err}");
            std::process::exit(2);
        }
    };
    let publisher = node
        .create_publisher::<String>("chatter", Qos::keep_last(10))
        .expect("publisher");
    let parameters = Parameters::for_node(&node).unwrap_or_else(|err| {
        eprintln!("ros_args: {err}");
        std::process::exit(2);
    });
    for (name, default) in [
        ("rate", ParameterValue::Double(1.0)),
        ("frame", ParameterValue::String("base".into())),
        ("limits.speed", ParameterValue::Double(0.5)),
    ] {
        if let Err(err) = parameters.declare(name, default, Default::default()) {
            eprintln!("ros_args: {err}");
            std::process::exit(2);
        }
    }
    println!("node {}", node.fully_qualified_name());
    println!("topic {}", publisher.topic());
    println!(
        "service {}",
        node.resolve_name(NameKind::Service, "~/reset")
            .expect("name")
    );
    for name in parameters.names() {
        println!(
            "param {name} = {:?}",
            parameters.get(&name).expect("declared")
        );
    }
    println!("clock {}", node.clock().kind());
}
