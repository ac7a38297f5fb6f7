//! ROS 2's type description service between two kairos contexts, each with its own zenoh
//! session (a router on a loopback port of the test's own): a node in one process asks a
//! node in another for the description of a type by name and hash, and hashes the answer
//! again to the same RIHS01 hash, for shipped messages, a service type, and a user's own
//! message; a wrong hash or an unknown type is a refusal with a reason.

use kairos::exec::Executor;
use kairos::graph::{Context, Message, Node, Qos, ServiceType};
use kairos_msgs::example_interfaces::srv::{AddTwoInts, AddTwoIntsRequest, AddTwoIntsResponse};
use kairos_msgs::sensor_msgs::msg::Image;
use kairos_msgs::type_description_interfaces::srv::{
    GetTypeDescription, GetTypeDescriptionRequest, GetTypeDescriptionResponse,
};
use kairos_msgs::type_hash::{Field, TypeDescription, type_id};
use kairos_testkit::zenoh_session::{loopback_config, router_on_free_port};
use kairos_zenoh::ZenohTransport;
use kairos_zenoh::type_description::{from_message, serve};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(30);

/// A user's own message type, unknown to ROS 2.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Waypoint {
    x: f64,
    y: f64,
    label: String,
    stamp: kairos_msgs::builtin_interfaces::msg::Time,
}

impl Message for Waypoint {
    const TYPE_NAME: &'static str = "my_robot_msgs/msg/Waypoint";
    fn description() -> TypeDescription {
        TypeDescription::new(
            Self::TYPE_NAME,
            vec![
                Field::primitive("x", type_id::DOUBLE),
                Field::primitive("y", type_id::DOUBLE),
                Field::primitive("label", type_id::STRING),
                Field::nested(
                    "stamp",
                    kairos_msgs::builtin_interfaces::msg::Time::description(),
                ),
            ],
        )
    }
}

fn carried(port: u16) -> (Context, Arc<ZenohTransport>) {
    let transport =
        ZenohTransport::open_with(loopback_config("peer", Some(port), 0), 0).expect("a session");
    let context = Context::new();
    transport.install(&context).expect("install the transport");
    (context, transport)
}

#[test]
fn a_node_describes_the_types_it_carries_to_another_process() {
    let (_router, port) = router_on_free_port();
    let (a, ta) = carried(port);
    let (b, _tb) = carried(port);

    let robot = Node::new_in(&a, "robot", "/fleet").unwrap();
    let _images = robot
        .create_publisher::<Image>("/camera/image", Qos::keep_last(1))
        .unwrap();
    let _waypoints = robot
        .create_subscription("/waypoints", Qos::keep_last(1), |_: Arc<Waypoint>| {})
        .unwrap();
    let _adder = robot
        .create_service("/add_two_ints", |r: AddTwoIntsRequest| AddTwoIntsResponse {
            sum: r.a + r.b,
        })
        .unwrap();
    let _described = serve(&robot, ta.types()).unwrap();
    let exec = Executor::single_threaded();
    exec.add_node(&robot).unwrap();
    let spin = exec.clone();
    let spinner = std::thread::spawn(move || spin.spin());

    let tool = Node::new_in(&b, "tool", "/").unwrap();
    let client = tool
        .create_client::<GetTypeDescription>("/fleet/robot/get_type_description")
        .unwrap();
    assert!(client.wait_for_service(WAIT), "no get_type_description");
    let ask = |type_name: &str, type_hash: String| -> GetTypeDescriptionResponse {
        client
            .call(
                GetTypeDescriptionRequest {
                    type_name: type_name.into(),
                    type_hash,
                    include_type_sources: true,
                },
                WAIT,
            )
            .expect("an answer")
    };

    for (name, hash) in [
        (Image::TYPE_NAME, Image::type_hash()),
        (Waypoint::TYPE_NAME, Waypoint::type_hash()),
        (AddTwoInts::TYPE_NAME, AddTwoInts::type_hash()),
    ] {
        let answer = ask(name, hash.to_string());
        assert!(answer.successful, "{name}: {}", answer.failure_reason);
        let description = from_message(&answer.type_description).expect("a whole description");
        assert_eq!(description.type_name, name);
        assert_eq!(
            description.hash(),
            hash,
            "{name}: the description sent hashes to the requested hash"
        );
    }
    let image = ask(Image::TYPE_NAME, String::new());
    let referenced: Vec<&str> = image
        .type_description
        .referenced_type_descriptions
        .iter()
        .map(|d| d.type_name.as_str())
        .collect();
    assert_eq!(
        referenced,
        ["builtin_interfaces/msg/Time", "std_msgs/msg/Header"],
        "nested types, sorted as rosidl lists them"
    );

    let wrong = ask(Image::TYPE_NAME, Waypoint::type_hash().to_string());
    assert!(!wrong.successful);
    assert!(
        wrong
            .failure_reason
            .contains(&Image::type_hash().to_string()),
        "{}",
        wrong.failure_reason
    );
    let unknown = ask("nav_msgs/msg/Path", String::new());
    assert!(!unknown.successful);
    assert!(
        unknown.failure_reason.contains("nav_msgs/msg/Path"),
        "{}",
        unknown.failure_reason
    );
    exec.cancel();
    spinner.join().unwrap().unwrap();
}
