//! Payloads are byte for byte the ones ROS 2 writes. The recorded vectors are messages
//! ROS 2 serialized itself, read out of the test bags of ros2/rosbag2 (Oct 2024):
//! - `rosbag2_cpp/test/rosbag2_cpp/bags/topics_and_services.mcap`: the first message of
//!   `/parameter_events` (`rcl_interfaces/msg/ParameterEvent`, announcing `use_sim_time`)
//!   and of `/add_two_ints/_service_event` (`example_interfaces/srv/AddTwoInts_Event`);
//! - `rosbag2_tests/resources/mcap/bag_with_topics_and_service_events/*.mcap`: the first
//!   message of `/test_topic1` (`test_msgs/msg/Strings`, its defaults) and of
//!   `/test_service1/_service_event` (`test_msgs/srv/BasicTypes_Event`).
//!
//! Each is decoded into the generated type, checked field by field, and encoded again to
//! the same bytes.

use kairos_msgs::message::{DecodeError, decode, encode, encode_into, encoded_len};
use kairos_msgs::type_hash::{Field, TypeDescription};
use kairos_msgs::{Message, ServiceType};
use kairos_msgs::{builtin_interfaces, example_interfaces, rcl_interfaces, service_msgs};
use serde::{Deserialize, Serialize};

#[allow(dead_code)]
use kairos_msgs as generated;

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex"))
        .collect()
}

fn round_trip<M: Message + PartialEq + std::fmt::Debug>(recorded: &[u8]) -> M {
    let message: M = decode(recorded).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        encode(&message),
        recorded,
        "{message:?} re-encodes differently"
    );
    assert_sized_write_matches(&message);
    message
}

/// Writing into a buffer of the announced length (as into shared memory) gives the bytes
/// `encode` gives; a buffer one byte short is refused.
fn assert_sized_write_matches<M: Message + std::fmt::Debug>(message: &M) {
    let bytes = encode(message);
    assert_eq!(encoded_len(message), bytes.len(), "{message:?}");
    let mut out = vec![0xeeu8; bytes.len()];
    assert!(encode_into(message, &mut out));
    assert_eq!(out, bytes, "{message:?} written into a sized buffer");
    let mut short = vec![0u8; bytes.len() - 1];
    assert!(!encode_into(message, &mut short));
}

#[test]
fn a_recorded_parameter_event_decodes_and_encodes_to_the_same_bytes() {
    let recorded = hex(
        "0001000057222e65c5913507160000002f696e74726f7370656374696f6e5f636c69656e7400\
         0000010000000d0000007573655f73696d5f74696d6500010000000000000000000000000000\
         0000000000000000010000000000000000000000000000000000000000000000000000000000\
         000000000000",
    );
    let event: rcl_interfaces::msg::ParameterEvent = round_trip(&recorded);
    assert_eq!(event.node, "/introspection_client");
    assert_eq!(event.new_parameters.len(), 1);
    let parameter = &event.new_parameters[0];
    assert_eq!(parameter.name, "use_sim_time");
    assert_eq!(
        parameter.value.r#type,
        rcl_interfaces::msg::ParameterType::PARAMETER_BOOL
    );
    assert!(!parameter.value.bool_value);
    assert!(event.changed_parameters.is_empty() && event.deleted_parameters.is_empty());
}

#[test]
fn a_recorded_add_two_ints_event_decodes_and_encodes_to_the_same_bytes() {
    use example_interfaces::srv::AddTwoIntsRequest;
    let recorded = hex(
        "000100000100000057222e657efd7a25010feb7d3836ae8a00000000000013040000000001000000\
         0000000001000000000000000100000000000000030000000000000000000000",
    );
    let event: example_interfaces::srv::AddTwoIntsEvent = round_trip(&recorded);
    assert_eq!(
        event.info.event_type,
        service_msgs::msg::ServiceEventInfo::REQUEST_RECEIVED
    );
    assert_eq!(event.info.sequence_number, 1);
    assert_eq!(event.request, [AddTwoIntsRequest { a: 1, b: 3 }]);
    assert!(event.response.is_empty());
    assert_eq!(
        event.info.stamp,
        builtin_interfaces::msg::Time {
            sec: 0x652e_2257,
            nanosec: 0x257a_fd7e
        }
    );
}

#[test]
fn recorded_test_msgs_strings_are_the_defaults_in_ros2_bytes() {
    let recorded = hex(
        "0001000001000000000000000d00000048656c6c6f20776f726c6421000000000d00000048656c6c\
         6f27776f726c6421000000000d00000048656c6c6f22776f726c6421000000000d00000048656c6c\
         6f27776f726c6421000000000d00000048656c6c6f22776f726c64210000000001000000000000000d\
         00000048656c6c6f20776f726c6421000000000d00000048656c6c6f27776f726c6421000000000d00\
         000048656c6c6f22776f726c6421000000000d00000048656c6c6f27776f726c6421000000000d0000\
         0048656c6c6f22776f726c642100",
    );
    let strings: generated::test_msgs::msg::Strings = round_trip(&recorded);
    // The bag's publisher sent a default-constructed message: the generated Default must
    // be the same message, quotes and escapes included.
    assert_eq!(strings, Default::default());
    assert_eq!(strings.string_value_default4, "Hello'world!");
    assert_eq!(strings.bounded_string_value_default5, "Hello\"world!");
    assert_eq!(
        generated::test_msgs::msg::Strings::STRING_CONST,
        "Hello world!"
    );
}

#[test]
fn a_recorded_basic_types_event_decodes_and_encodes_to_the_same_bytes() {
    use generated::test_msgs::srv::{BasicTypes, BasicTypesRequest};
    let recorded = hex(
        "0001000000000000acf54965eaf01710010feb7dd37a3779000003000000090300000000010000000000\
         0000010000000000000000000000000000000000000000000000000000000000000000000000000000\
         0000000000000000000000000000000000010000000000000000000000",
    );
    let event: generated::test_msgs::srv::BasicTypesEvent = round_trip(&recorded);
    assert_eq!(
        event.info.event_type,
        service_msgs::msg::ServiceEventInfo::REQUEST_SENT
    );
    assert_eq!(event.request.len(), 1);
    assert_eq!(event.request[0], BasicTypesRequest::default());
    assert!(event.response.is_empty());
    assert_eq!(
        BasicTypes::TYPE_NAME,
        "test_msgs/srv/BasicTypes",
        "the service type behind the event"
    );
}

// The vectors below were checked by hand against the CDR rules (XCDR1, little endian,
// alignment counted from the end of the 4-byte encapsulation header).

#[test]
fn string_payload_is_header_length_bytes_nul() {
    use kairos_msgs::std_msgs::msg::String as StringMsg;
    let bytes = encode(&StringMsg { data: "hi".into() });
    assert_eq!(bytes, [0, 1, 0, 0, 3, 0, 0, 0, b'h', b'i', 0]);
    assert_eq!(decode::<StringMsg>(&bytes).unwrap().data, "hi");
}

#[test]
fn int64_fields_align_to_eight_from_the_body() {
    use example_interfaces::srv::AddTwoIntsRequest;
    let bytes = encode(&AddTwoIntsRequest { a: 2, b: -3 });
    let mut expected = vec![0, 1, 0, 0];
    expected.extend_from_slice(&2i64.to_le_bytes());
    expected.extend_from_slice(&(-3i64).to_le_bytes());
    assert_eq!(bytes, expected);
    let clock = encode(&kairos_msgs::rosgraph_msgs::msg::Clock {
        clock: builtin_interfaces::msg::Time { sec: 5, nanosec: 7 },
    });
    assert_eq!(clock, [0, 1, 0, 0, 5, 0, 0, 0, 7, 0, 0, 0]);
}

#[test]
fn fixed_arrays_have_no_length_and_byte_sequences_have_one() {
    use kairos_msgs::nav_msgs::msg::Odometry;
    use kairos_msgs::sensor_msgs::msg::Image;
    let mut odometry = Odometry::default();
    odometry.pose.covariance[35] = 1.5;
    odometry.child_frame_id = "b".into();
    let bytes = encode(&odometry);
    // header (stamp 8, frame_id "" = 4 + 1 NUL), pad to 4, child_frame_id 4 + 2, pad to 8,
    // pose (7 doubles + 36 doubles), twist (6 doubles + 36 doubles), no lengths.
    assert_eq!(bytes.len(), 4 + 8 + 5 + 3 + 6 + 2 + (7 + 36 + 6 + 36) * 8);
    assert_eq!(decode::<Odometry>(&bytes).unwrap(), odometry);
    let image = Image {
        data: vec![1, 2, 3].into(),
        ..Default::default()
    };
    let bytes = encode(&image);
    assert_eq!(&bytes[bytes.len() - 7..], [3, 0, 0, 0, 1, 2, 3]);
    assert_sized_write_matches(&image);
    assert_sized_write_matches(&odometry);
    assert_eq!(decode::<Image>(&bytes).unwrap(), image);
}

#[test]
fn default_values_come_from_the_definitions() {
    let q = kairos_msgs::geometry_msgs::msg::Quaternion::default();
    assert_eq!((q.x, q.y, q.z, q.w), (0.0, 0.0, 0.0, 1.0));
    let descriptor = rcl_interfaces::msg::ParameterDescriptor::default();
    assert!(!descriptor.read_only);
    assert_eq!(
        kairos_msgs::sensor_msgs::msg::NavSatStatus::STATUS_NO_FIX,
        -1
    );
}

#[test]
fn bad_payloads_are_typed_errors() {
    use kairos_msgs::std_msgs::msg::String as StringMsg;
    assert_eq!(decode::<StringMsg>(&[0, 1]), Err(DecodeError::TooShort(2)));
    assert!(matches!(
        decode::<StringMsg>(&[0, 0, 0, 0, 1, 0, 0, 0, 0]),
        Err(DecodeError::Encapsulation(_))
    ));
    assert!(matches!(
        decode::<StringMsg>(&[0, 1, 0, 0, 200, 0, 0, 0, b'x']),
        Err(DecodeError::Cdr { .. })
    ));
}

#[test]
fn bytes_are_a_cdr_uint8_sequence() {
    use kairos_msgs::cdr::Bytes;
    use kairos_msgs::type_hash::type_id;
    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Blob {
        tag: u8,
        data: Bytes,
    }
    impl Message for Blob {
        const TYPE_NAME: &'static str = "test_msgs/msg/Blob";
        fn description() -> TypeDescription {
            TypeDescription::new(
                Self::TYPE_NAME,
                vec![
                    Field::primitive("tag", type_id::UINT8),
                    Field::primitive("data", type_id::UINT8).sequence(),
                ],
            )
        }
    }
    let blob = Blob {
        tag: 9,
        data: Bytes::from(vec![1, 2, 3]),
    };
    let bytes = encode(&blob);
    assert_eq!(bytes, [0, 1, 0, 0, 9, 0, 0, 0, 3, 0, 0, 0, 1, 2, 3]);
    assert_sized_write_matches(&blob);
    assert_eq!(decode::<Blob>(&bytes).unwrap(), blob);
}

#[test]
fn service_types_name_their_request_and_response() {
    use example_interfaces::srv::AddTwoInts;
    assert_eq!(
        <AddTwoInts as ServiceType>::Request::TYPE_NAME,
        "example_interfaces/srv/AddTwoInts_Request"
    );
    assert_eq!(
        <AddTwoInts as ServiceType>::Response::TYPE_NAME,
        "example_interfaces/srv/AddTwoInts_Response"
    );
}

/// A generated message carries its `.msg` file's text, comments included (what rosbag2
/// stores as a bag's schema), and so do a service's request and response.
#[test]
fn a_generated_message_carries_its_definition_text() {
    use kairos_msgs::Message;
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/interfaces");
    for (definition, file) in [
        (
            kairos_msgs::std_msgs::msg::String::DEFINITION,
            "std_msgs/msg/String.msg",
        ),
        (
            kairos_msgs::geometry_msgs::msg::TransformStamped::DEFINITION,
            "geometry_msgs/msg/TransformStamped.msg",
        ),
    ] {
        let text = std::fs::read_to_string(format!("{root}/{file}")).expect(file);
        assert_eq!(definition, text, "{file}");
    }
    // A service's request and response carry the text before and after its `---`.
    let srv = std::fs::read_to_string(format!("{root}/example_interfaces/srv/AddTwoInts.srv"))
        .expect("AddTwoInts.srv");
    let (request, response) = srv.split_once("---\n").expect("a --- line");
    assert_eq!(
        kairos_msgs::example_interfaces::srv::AddTwoIntsRequest::DEFINITION,
        request
    );
    assert_eq!(
        kairos_msgs::example_interfaces::srv::AddTwoIntsResponse::DEFINITION,
        response
    );
    assert!(request.contains("int64 a") && response.contains("int64 sum"));
    // Its event message carries the whole `.srv` text: the schema rosbag2 stores for a
    // `_service_event` topic.
    assert_eq!(
        kairos_msgs::example_interfaces::srv::AddTwoIntsEvent::DEFINITION,
        srv
    );
}
