//! The ROS message and service types a robot needs first, declared as any user type is:
//! serde derives in `.msg` field order, and a [`Message`] impl giving name and description.

use crate::message::{Message, ServiceType};
use crate::type_hash::{Field, TypeDescription, type_id};
use serde::{Deserialize, Serialize};

/// `std_msgs/msg/String`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StringMsg {
    pub data: String,
}

impl Message for StringMsg {
    const TYPE_NAME: &'static str = "std_msgs/msg/String";
    fn description() -> TypeDescription {
        TypeDescription::new(
            Self::TYPE_NAME,
            vec![Field::primitive("data", type_id::STRING)],
        )
    }
}

/// `builtin_interfaces/msg/Time`: seconds and nanoseconds since the clock's epoch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Time {
    pub sec: i32,
    pub nanosec: u32,
}

impl Message for Time {
    const TYPE_NAME: &'static str = "builtin_interfaces/msg/Time";
    fn description() -> TypeDescription {
        TypeDescription::new(
            Self::TYPE_NAME,
            vec![
                Field::primitive("sec", type_id::INT32),
                Field::primitive("nanosec", type_id::UINT32),
            ],
        )
    }
}

/// `rosgraph_msgs/msg/Clock`: the simulated time on `/clock`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Clock {
    pub clock: Time,
}

impl Message for Clock {
    const TYPE_NAME: &'static str = "rosgraph_msgs/msg/Clock";
    fn description() -> TypeDescription {
        TypeDescription::new(
            Self::TYPE_NAME,
            vec![Field::nested("clock", Time::description())],
        )
    }
}

/// `example_interfaces/srv/AddTwoInts`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AddTwoInts;

/// `example_interfaces/srv/AddTwoInts_Request`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AddTwoIntsRequest {
    pub a: i64,
    pub b: i64,
}

/// `example_interfaces/srv/AddTwoInts_Response`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AddTwoIntsResponse {
    pub sum: i64,
}

impl Message for AddTwoIntsRequest {
    const TYPE_NAME: &'static str = "example_interfaces/srv/AddTwoInts_Request";
    fn description() -> TypeDescription {
        TypeDescription::new(
            Self::TYPE_NAME,
            vec![
                Field::primitive("a", type_id::INT64),
                Field::primitive("b", type_id::INT64),
            ],
        )
    }
}

impl Message for AddTwoIntsResponse {
    const TYPE_NAME: &'static str = "example_interfaces/srv/AddTwoInts_Response";
    fn description() -> TypeDescription {
        TypeDescription::new(
            Self::TYPE_NAME,
            vec![Field::primitive("sum", type_id::INT64)],
        )
    }
}

impl ServiceType for AddTwoInts {
    const TYPE_NAME: &'static str = "example_interfaces/srv/AddTwoInts";
    type Request = AddTwoIntsRequest;
    type Response = AddTwoIntsResponse;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{decode, encode};

    // The published hashes (rmw_zenoh design.md, and the issue).
    #[test]
    fn type_hashes_match_rosidl() {
        assert_eq!(
            StringMsg::type_hash().to_string(),
            "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18"
        );
        assert_eq!(
            Time::type_hash().to_string(),
            "RIHS01_b106235e25a4c5ed35098aa0a61a3ee9c9b18d197f398b0e4206cea9acf9c197"
        );
        assert_eq!(
            Clock::type_hash().to_string(),
            "RIHS01_692f7a66e93a3c83e71765d033b60349ba68023a8c689a79e48078bcb5c58564"
        );
        assert_eq!(
            AddTwoInts::type_hash().to_string(),
            "RIHS01_e118de6bf5eeb66a2491b5bda11202e7b68f198d6f67922cf30364858239c81a"
        );
    }

    #[test]
    fn string_payload_is_header_length_bytes_nul() {
        let bytes = encode(&StringMsg { data: "hi".into() });
        assert_eq!(bytes, [0, 1, 0, 0, 3, 0, 0, 0, b'h', b'i', 0]);
        assert_eq!(decode::<StringMsg>(&bytes).unwrap().data, "hi");
    }

    #[test]
    fn int64_fields_align_to_eight_from_the_body() {
        let bytes = encode(&AddTwoIntsRequest { a: 2, b: -3 });
        let mut expected = vec![0, 1, 0, 0];
        expected.extend_from_slice(&2i64.to_le_bytes());
        expected.extend_from_slice(&(-3i64).to_le_bytes());
        assert_eq!(bytes, expected);
        let clock = encode(&Clock {
            clock: Time { sec: 5, nanosec: 7 },
        });
        assert_eq!(clock, [0, 1, 0, 0, 5, 0, 0, 0, 7, 0, 0, 0]);
    }

    #[test]
    fn bad_payloads_are_typed_errors() {
        use crate::message::DecodeError;
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
}

/// A `uint8[]` field, carried as one block of bytes (the CDR of `sequence<uint8>`: a u32
/// length and the bytes) rather than element by element.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bytes(pub Vec<u8>);

impl Serialize for Bytes {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(&self.0)
    }
}

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Bytes;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a byte sequence")
            }
            fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<Bytes, E> {
                Ok(Bytes(v.to_vec()))
            }
            fn visit_byte_buf<E: serde::de::Error>(self, v: Vec<u8>) -> Result<Bytes, E> {
                Ok(Bytes(v))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Bytes, A::Error> {
                let mut out = Vec::new();
                while let Some(b) = seq.next_element::<u8>()? {
                    out.push(b);
                }
                Ok(Bytes(out))
            }
        }
        deserializer.deserialize_bytes(Visitor)
    }
}

#[cfg(test)]
mod bytes_tests {
    use super::*;
    use crate::message::{decode, encode};
    use crate::type_hash::{Field, TypeDescription, type_id};

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

    #[test]
    fn bytes_are_a_cdr_uint8_sequence() {
        let blob = Blob {
            tag: 9,
            data: Bytes(vec![1, 2, 3]),
        };
        let bytes = encode(&blob);
        assert_eq!(bytes, [0, 1, 0, 0, 9, 0, 0, 0, 3, 0, 0, 0, 1, 2, 3]);
        assert_eq!(decode::<Blob>(&bytes).unwrap(), blob);
    }
}
