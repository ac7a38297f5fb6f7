//! Messages and services on the wire: the ROS type name, the RIHS01 type hash, and the
//! CDR payload.
//!
//! What this module promises: a payload is the CDR encapsulation header `00 01 00 00`
//! (plain CDR, little endian) followed by the message in XCDR1 little endian, as
//! rmw_zenoh writes and reads it; a payload that does not decode is a [`DecodeError`]
//! saying why, never a panic.
//!
//! The types of `.msg`/`.srv` files are generated with `kairos-msgs-gen`; a message can
//! also be declared by hand, deriving serde's traits on a struct whose fields are in the
//! order of the `.msg` file and implementing [`Message`] with its name and description.

use crate::type_hash::{Field, TypeDescription, TypeHash};
use byteorder::LittleEndian;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// The encapsulation header of a little-endian plain CDR payload.
pub const CDR_LE_HEADER: [u8; 4] = [0x00, 0x01, 0x00, 0x00];

/// A message type that can cross the process boundary.
pub trait Message: Serialize + DeserializeOwned + Send + Sync + 'static {
    /// The ROS type name, e.g. `std_msgs/msg/String`.
    const TYPE_NAME: &'static str;

    /// The type's fields, with the descriptions of the types they nest.
    fn description() -> TypeDescription;

    /// The RIHS01 hash of the type.
    fn type_hash() -> TypeHash {
        Self::description().hash()
    }
}

/// A service type: a request message and a response message.
pub trait ServiceType: Send + Sync + 'static {
    /// The ROS type name, e.g. `example_interfaces/srv/AddTwoInts`.
    const TYPE_NAME: &'static str;
    /// `<TYPE_NAME>_Request`.
    type Request: Message;
    /// `<TYPE_NAME>_Response`.
    type Response: Message;

    /// The service's description as rosidl builds it: request, response and the service
    /// event message that `ros2 service echo` shows.
    fn description() -> TypeDescription {
        service_description(
            Self::TYPE_NAME,
            Self::Request::description(),
            Self::Response::description(),
        )
    }

    fn type_hash() -> TypeHash {
        Self::description().hash()
    }
}

fn service_description(
    name: &str,
    request: TypeDescription,
    response: TypeDescription,
) -> TypeDescription {
    let event = TypeDescription::new(
        &format!("{name}_Event"),
        vec![
            Field::nested(
                "info",
                crate::service_msgs::msg::ServiceEventInfo::description(),
            ),
            Field::nested("request", request.clone()).bounded_sequence(1),
            Field::nested("response", response.clone()).bounded_sequence(1),
        ],
    );
    TypeDescription::new(
        name,
        vec![
            Field::nested("request_message", request),
            Field::nested("response_message", response),
            Field::nested("event_message", event),
        ],
    )
}

/// Something that wants every message and service type of a set of packages (the
/// generated `visit_interfaces` functions hand them over), e.g. to register codecs.
pub trait InterfaceVisitor {
    fn message<M: Message>(&mut self);
    fn service<S: ServiceType>(&mut self);
}

/// `pkg/msg/Type` -> `pkg::msg::dds_::Type_`, the type name in key expressions.
pub fn dds_type_name(ros_type: &str) -> Result<String, TypeNameError> {
    let parts: Vec<&str> = ros_type.split('/').collect();
    match parts.as_slice() {
        [pkg, kind, name] if !pkg.is_empty() && !kind.is_empty() && !name.is_empty() => {
            Ok(format!("{pkg}::{kind}::dds_::{name}_"))
        }
        _ => Err(TypeNameError(ros_type.to_owned())),
    }
}

/// `pkg::msg::dds_::Type_` -> `pkg/msg/Type`.
pub fn ros_type_name(dds_type: &str) -> Option<String> {
    let (pkg, rest) = dds_type.split_once("::")?;
    let (kind, rest) = rest.split_once("::dds_::")?;
    let name = rest.strip_suffix('_')?;
    Some(format!("{pkg}/{kind}/{name}"))
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a ROS type name; write it as package/msg/Type or package/srv/Type")]
pub struct TypeNameError(pub String);

/// Why a payload did not decode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("payload of {0} bytes is shorter than the 4-byte CDR encapsulation header")]
    TooShort(usize),
    #[error(
        "encapsulation {0:02x?} is not little-endian plain CDR (00 01 00 00); only that one is read"
    )]
    Encapsulation([u8; 4]),
    #[error("CDR does not decode as {type_name}: {reason}")]
    Cdr {
        type_name: &'static str,
        reason: String,
    },
}

/// The payload of `message`: header, then CDR.
pub fn encode<M: Message>(message: &M) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    out.extend_from_slice(&CDR_LE_HEADER);
    // Writing to a Vec cannot fail, and every type a `Message` holds is one CDR can write
    // (serde types CDR cannot express, such as maps of unknown length, are not messages).
    cdr_encoding::to_writer::<M, LittleEndian, _>(&mut out, message)
        .expect("a message is CDR-encodable");
    out
}

/// The message in `payload`.
pub fn decode<M: Message>(payload: &[u8]) -> Result<M, DecodeError> {
    let header: [u8; 4] = payload
        .get(..4)
        .and_then(|h| h.try_into().ok())
        .ok_or(DecodeError::TooShort(payload.len()))?;
    // The options bytes (2..4) may carry padding counts; only the representation matters.
    if header[..2] != CDR_LE_HEADER[..2] {
        return Err(DecodeError::Encapsulation(header));
    }
    cdr_encoding::from_bytes::<M, LittleEndian>(&payload[4..])
        .map(|(message, _)| message)
        .map_err(|e| DecodeError::Cdr {
            type_name: M::TYPE_NAME,
            reason: e.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dds_names_round_trip() {
        assert_eq!(
            dds_type_name("std_msgs/msg/String").unwrap(),
            "std_msgs::msg::dds_::String_"
        );
        assert_eq!(
            dds_type_name("example_interfaces/srv/AddTwoInts").unwrap(),
            "example_interfaces::srv::dds_::AddTwoInts_"
        );
        assert_eq!(
            ros_type_name("std_msgs::msg::dds_::String_").as_deref(),
            Some("std_msgs/msg/String")
        );
        assert!(dds_type_name("String").is_err());
        assert!(dds_type_name("a//b").is_err());
    }
}
