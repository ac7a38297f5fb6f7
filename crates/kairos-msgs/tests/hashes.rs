//! The RIHS01 hashes kairos computes for the shipped types (and for rosidl's own test
//! package) are the ones ROS 2 computes: each expected value below was written by ROS 2
//! itself (a rosbag2 recording, a liveliness token of a running node) or published next to
//! the type by a project that captured it from a ROS 2 Jazzy install; the comment on each
//! says where it was found.

use kairos_msgs::{Message, ServiceType};

#[allow(dead_code)]
use kairos_msgs as generated;

fn hash<M: Message>() -> String {
    M::type_hash().to_string()
}

/// The RIHS01 hash of a service type.
fn service_hash<S: ServiceType>() -> String {
    S::type_hash().to_string()
}

/// The hash of the `<Service>_Event` message rosidl generates with each service.
fn event_hash<S: ServiceType>() -> String {
    let description = S::description();
    let event = description.fields[2]
        .nested
        .as_ref()
        .expect("a service's third member is its event message");
    assert_eq!(event.type_name, format!("{}_Event", S::TYPE_NAME));
    let generated = <<S::Request as kairos_msgs::ServiceRequest>::Event as Message>::type_hash();
    assert_eq!(
        generated,
        event.hash(),
        "the generated {}_Event hashes as the service's description nests it",
        S::TYPE_NAME
    );
    event.hash().to_string()
}

#[test]
fn hashes_match_the_values_ros2_publishes() {
    use kairos_msgs::*;
    let cases: Vec<(&str, String, &str)> = vec![
        // rmw_zenoh docs/design.md, the talker's key expression and liveliness token; also
        // quoted in the Zenoh issue (10).
        (
            "std_msgs/msg/String",
            hash::<std_msgs::msg::String>(),
            "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18",
        ),
        // Issue 10 (from rmw_zenoh's design.md and rosidl's generated sources).
        (
            "builtin_interfaces/msg/Time",
            hash::<builtin_interfaces::msg::Time>(),
            "RIHS01_b106235e25a4c5ed35098aa0a61a3ee9c9b18d197f398b0e4206cea9acf9c197",
        ),
        (
            "rosgraph_msgs/msg/Clock",
            hash::<rosgraph_msgs::msg::Clock>(),
            "RIHS01_692f7a66e93a3c83e71765d033b60349ba68023a8c689a79e48078bcb5c58564",
        ),
        // rosidl_generator_c's get_type_description__struct.h for Jazzy (public generated
        // sources: find_string "GetTypeDescription_Request_").
        (
            "type_description_interfaces/srv/GetTypeDescription",
            type_description_interfaces::srv::GetTypeDescription::type_hash().to_string(),
            "RIHS01_69b9c19c1021405984cc60dbbb1edceb147a6538b411d812ba6afabeed962cd5",
        ),
        (
            "type_description_interfaces/srv/GetTypeDescription_Request",
            hash::<type_description_interfaces::srv::GetTypeDescriptionRequest>(),
            "RIHS01_470f56ccbcf13d55c78c8b735fb12da03e639e5acded994426c89d94778d9e28",
        ),
        (
            "type_description_interfaces/srv/GetTypeDescription_Response",
            hash::<type_description_interfaces::srv::GetTypeDescriptionResponse>(),
            "RIHS01_648c49d976240861a482f961c5621ddd0d2135d8cce6f297a76d4f6376d93b75",
        ),
        // rmw_zenoh docs/design.md, the add_two_ints service key expression.
        (
            "example_interfaces/srv/AddTwoInts",
            example_interfaces::srv::AddTwoInts::type_hash().to_string(),
            "RIHS01_e118de6bf5eeb66a2491b5bda11202e7b68f198d6f67922cf30364858239c81a",
        ),
        // ros2/rosbag2 rosbag2_cpp/test/rosbag2_cpp/bags/topics_and_services.mcap: the
        // schema records ROS 2 wrote while recording /rosout, /parameter_events and
        // /add_two_ints/_service_event (ros2/rosbag2 @ Oct 2024).
        (
            "rcl_interfaces/msg/Log",
            hash::<rcl_interfaces::msg::Log>(),
            "RIHS01_e28ce254ca8abc06abf92773b74602cdbf116ed34fbaf294fb9f81da9f318eac",
        ),
        (
            "rcl_interfaces/msg/ParameterEvent",
            hash::<rcl_interfaces::msg::ParameterEvent>(),
            "RIHS01_043e627780fcad87a22d225bc2a037361dba713fca6a6b9f4b869a5aa0393204",
        ),
        (
            "example_interfaces/srv/AddTwoInts_Event",
            event_hash::<example_interfaces::srv::AddTwoInts>(),
            "RIHS01_32c1d140259c71e5c355115942bcb31df98b4330e4d906b1b75ccb1c9b3ce6c8",
        ),
        // ros2/rosbag2 rosbag2_tests/resources/mcap/bag_with_topics_and_service_events/
        // metadata.yaml (bounded strings, quoted defaults, a string constant; a service
        // event of every primitive type).
        (
            "test_msgs/msg/Strings",
            hash::<generated::test_msgs::msg::Strings>(),
            "RIHS01_eee55533636293ac7c94c62432eedb5777eb849847d2a17b4dcead8c4a20ab32",
        ),
        (
            "test_msgs/srv/BasicTypes_Event",
            event_hash::<generated::test_msgs::srv::BasicTypes>(),
            "RIHS01_5b9988a4805a06ae22dff12903a774ccda710e9514926b826ffc884e3a9a982e",
        ),
        // A rosbag2 metadata.yaml recorded on Jazzy, quoted in a public dataset README
        // (find_string "type_description_hash: RIHS01_": the /tf topic of a Jazzy bag).
        (
            "tf2_msgs/msg/TFMessage",
            hash::<tf2_msgs::msg::TFMessage>(),
            "RIHS01_e369d0f05a23ae52508854b66f6aa0437f3449d652e8cbf22d5abe85d020f087",
        ),
        // `ros2 topic info -v` output on Jazzy ("Topic type hash:"), in a public project's
        // notes on its simulator's /cmd_vel and /odom topics.
        (
            "geometry_msgs/msg/Twist",
            hash::<geometry_msgs::msg::Twist>(),
            "RIHS01_9c45bf16fe0983d80e3cfe750d6835843d265a9a6c46bd2e609fcddde6fb8d2a",
        ),
        (
            "nav_msgs/msg/Odometry",
            hash::<nav_msgs::msg::Odometry>(),
            "RIHS01_3cc97dc7fb7502f8714462c526d369e35b603cfc34d946e3f2eda2766dfec6e0",
        ),
        // Key expressions of an rmw_zenoh peer on a microcontroller, checked against a
        // Jazzy graph (public firmware: /imu/data, /imu/mag).
        (
            "sensor_msgs/msg/Imu",
            hash::<sensor_msgs::msg::Imu>(),
            "RIHS01_7d9a00ff131080897a5ec7e26e315954b8eae3353c3f995c55faf71574000b5b",
        ),
        (
            "sensor_msgs/msg/MagneticField",
            hash::<sensor_msgs::msg::MagneticField>(),
            "RIHS01_e80f32f56a20486c9923008fc1a1db07bbb273cbbf6a5b3bfa00835ee00e4dff",
        ),
        // Reference values "captured live from Jazzy" in a public ROS client's fixtures
        // (ros-editions/jazzy), and golden hashes of the same types in other public clients.
        (
            "std_msgs/msg/Header",
            hash::<std_msgs::msg::Header>(),
            "RIHS01_f49fb3ae2cf070f793645ff749683ac6b06203e41c891e17701b1cb597ce6a01",
        ),
        (
            "std_msgs/msg/Int32",
            hash::<std_msgs::msg::Int32>(),
            "RIHS01_b6578ded3c58c626cfe8d1a6fb6e04f706f97e9f03d2727c9ff4e74b1cef0deb",
        ),
        // A message without fields: rosidl adds `uint8 structure_needs_at_least_one_member`.
        (
            "std_msgs/msg/Empty",
            hash::<std_msgs::msg::Empty>(),
            "RIHS01_20b625256f32d5dbc0d04fee44f43c41e51c70d3502f84b4a08e7a9c26a96312",
        ),
        // Default values (w = 1) must not enter the hash.
        (
            "geometry_msgs/msg/Quaternion",
            hash::<geometry_msgs::msg::Quaternion>(),
            "RIHS01_8a765f66778c8ff7c8ab94afcc590a2ed5325a1d9a076ffff38fbce36f458684",
        ),
        (
            "sensor_msgs/msg/LaserScan",
            hash::<sensor_msgs::msg::LaserScan>(),
            "RIHS01_64c191398013af96509d518dac71d5164f9382553fce5c1f8cca5be7924bd828",
        ),
        (
            "sensor_msgs/msg/Image",
            hash::<sensor_msgs::msg::Image>(),
            "RIHS01_d31d41a9a4c4bc8eae9be757b0beed306564f7526c88ea6a4588fb9582527d47",
        ),
        (
            "sensor_msgs/msg/CompressedImage",
            hash::<sensor_msgs::msg::CompressedImage>(),
            "RIHS01_15640771531571185e2efc8a100baf923961a4d15d5569652e6cb6691e8e371a",
        ),
        (
            "sensor_msgs/msg/BatteryState",
            hash::<sensor_msgs::msg::BatteryState>(),
            "RIHS01_4bee5dfce981c98faa6828b868307a0a73f992ed0789f374ee96c8f840e69741",
        ),
        // The five key expressions of an action `fibonacci` on ROS 2 Jazzy, as recorded in
        // the wire golden tests of an independent Swift implementation (SwiftROS2Wire,
        // ActionWireTests.swift): each names a message type and its hash (for the three
        // services, the request's), so the messages rosidl derives from an action (goal id
        // and goal, goal id alone, goal id and feedback) are checked field by field.
        (
            "example_interfaces/action/Fibonacci_SendGoal_Request",
            hash::<example_interfaces::action::FibonacciSendGoalRequest>(),
            "RIHS01_3d088942b413247db536576f0286768c6be8fcd5d0c9a5d544f359fba090a238",
        ),
        (
            "example_interfaces/action/Fibonacci_GetResult_Request",
            hash::<example_interfaces::action::FibonacciGetResultRequest>(),
            "RIHS01_c8a4f5e7d13b81286ee1043e2ecd084281cecf1ff06aaa799464f5f15479f003",
        ),
        (
            "example_interfaces/action/Fibonacci_FeedbackMessage",
            hash::<example_interfaces::action::FibonacciFeedbackMessage>(),
            "RIHS01_c1de71afd52e49a89c53d8262366884185bc0a02f78ce051c4e46b0a7fe59bb2",
        ),
        (
            "action_msgs/srv/CancelGoal_Request",
            hash::<action_msgs::srv::CancelGoalRequest>(),
            "RIHS01_3d3c84653c1f96918086887e1dcb236faec88b81a5b14fd4cf4840065bcdf8af",
        ),
        (
            "action_msgs/msg/GoalStatusArray",
            hash::<action_msgs::msg::GoalStatusArray>(),
            "RIHS01_6c1684b00f177d37438febe6e709fc4e2b0d4248dca4854946f9ed8b30cda83e",
        ),
        // The service hashes (request, response and event together) that name the three
        // services in rmw_zenoh's key expressions: `ros2 action info -v` of a Jazzy
        // `fibonacci` server prints the cancel service's, and zenoh-ros2-sdk's action
        // client tests lock all three as known-good values.
        (
            "example_interfaces/action/Fibonacci_SendGoal",
            service_hash::<example_interfaces::action::FibonacciSendGoal>(),
            "RIHS01_d1a57fb2a4afe8c21e34fb10db206f16ce6729b28531141472df92277c55b557",
        ),
        (
            "example_interfaces/action/Fibonacci_GetResult",
            service_hash::<example_interfaces::action::FibonacciGetResult>(),
            "RIHS01_1b0de0d5d29dc955d92f546706568428632771db13ec84c15ec1c1a59f424a57",
        ),
        (
            "action_msgs/srv/CancelGoal",
            service_hash::<action_msgs::srv::CancelGoal>(),
            "RIHS01_573d8b0a534451d7bc2ac8c5ffde8ac14b8593b7001175d0cd6516dcbeb8689a",
        ),
        // lifecycle_msgs, as rosidl_generator_c writes them into the generated type support
        // of a Kilted build (micro-ROS's, in hpmicro/hpm_sdk: transition_event__description.c,
        // change_state__description.c).
        (
            "lifecycle_msgs/msg/State",
            hash::<lifecycle_msgs::msg::State>(),
            "RIHS01_dd2d02b82f3ebc858e53c431b1e6e91f3ffc71436fc81d0715214ac6ee2107a0",
        ),
        (
            "lifecycle_msgs/msg/Transition",
            hash::<lifecycle_msgs::msg::Transition>(),
            "RIHS01_c65d7b31ea134cba4f54fc867b817979be799f7452035cd35fac9b7421fb3424",
        ),
        (
            "lifecycle_msgs/msg/TransitionEvent",
            hash::<lifecycle_msgs::msg::TransitionEvent>(),
            "RIHS01_d5f8873a2f0146498f812d7885c7327ce27e463d36811d8792f35ee38c0d6c38",
        ),
        (
            "lifecycle_msgs/srv/ChangeState",
            service_hash::<lifecycle_msgs::srv::ChangeState>(),
            "RIHS01_356fe34f0475a43acf54542013af4167b0e729f77ea22ffb045c6ad8e20668e5",
        ),
    ];
    let wrong: Vec<String> = cases
        .iter()
        .filter(|(_, computed, published)| computed != published)
        .map(|(name, computed, published)| {
            format!("{name}: computed {computed}, ROS 2 has {published}")
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(cases.len() >= 12);
}

/// `kairos-interface` writes out the few descriptions it needs below the generated
/// packages; each must be its generated twin, or every service hash would be wrong.
#[test]
fn the_descriptions_written_out_below_the_packages_are_the_generated_ones() {
    use kairos_msgs::type_hash::TypeDescription;
    let pairs: [(TypeDescription, TypeDescription); 4] = [
        (
            kairos_interface::builtin::time(),
            kairos_msgs::builtin_interfaces::msg::Time::description(),
        ),
        (
            kairos_interface::builtin::service_event_info(),
            kairos_msgs::service_msgs::msg::ServiceEventInfo::description(),
        ),
        (
            kairos_interface::builtin::clock(),
            kairos_msgs::rosgraph_msgs::msg::Clock::description(),
        ),
        (
            kairos_interface::builtin::log(),
            kairos_msgs::rcl_interfaces::msg::Log::description(),
        ),
    ];
    for (written, generated) in pairs {
        assert_eq!(written, generated, "{}", generated.type_name);
    }
}

/// A service named by its request and response crosses as that service: same name, same
/// hash as the generated service type.
#[test]
fn a_service_named_by_its_request_and_response_is_that_service() {
    use kairos_msgs::example_interfaces::srv::{AddTwoInts, AddTwoIntsRequest, AddTwoIntsResponse};
    use kairos_msgs::payload::{ServiceCall, ServiceWire, Wire};
    let by_parts = <fn(AddTwoIntsRequest) -> AddTwoIntsResponse as ServiceCall>::wire()
        .expect("generated request and response messages cross");
    assert_eq!(by_parts.type_name(), AddTwoInts::TYPE_NAME);
    assert_eq!(by_parts.type_hash(), AddTwoInts::type_hash());
    assert_eq!(
        ServiceWire::of::<AddTwoInts>().type_hash(),
        AddTwoInts::type_hash()
    );
    // A request and response of two different services name no service.
    use kairos_msgs::std_srvs::srv::TriggerResponse;
    assert!(
        ServiceWire::from_parts(
            Wire::of::<AddTwoIntsRequest>(),
            Wire::of::<TriggerResponse>()
        )
        .is_none()
    );
    // The services an action is carried on cross by their parts too (a server made with
    // `create_service` for them is reachable from other processes).
    use kairos_msgs::example_interfaces::action::{
        FibonacciGetResult, FibonacciGetResultRequest, FibonacciGetResultResponse, FibonacciGoal,
        FibonacciResult,
    };
    let get_result = ServiceWire::from_parts(
        Wire::of::<FibonacciGetResultRequest>(),
        Wire::of::<FibonacciGetResultResponse>(),
    )
    .expect("an action's get_result service crosses");
    assert_eq!(get_result.type_hash(), FibonacciGetResult::type_hash());
    assert!(
        ServiceWire::from_parts(Wire::of::<FibonacciGoal>(), Wire::of::<FibonacciResult>())
            .is_none(),
        "an action's goal and result are no service"
    );
}
