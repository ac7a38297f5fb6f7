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

/// A message type: it crosses the process boundary as CDR, under its ROS name and hash.
pub trait Message: Serialize + DeserializeOwned + Send + Sync + 'static {
    /// The ROS type name, e.g. `std_msgs/msg/String`.
    const TYPE_NAME: &'static str;

    /// The type's `.msg` text as its package defines it, comments included (what rosbag2
    /// stores as a bag's schema); empty when not known (a type written by hand, or the
    /// request and response of a service).
    const DEFINITION: &'static str = "";

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
    type Request: crate::ServiceRequest<Response = Self::Response>;
    /// `<TYPE_NAME>_Response`.
    type Response: Message + Clone;

    /// The service's description as rosidl builds it: request, response and the service
    /// event message that `ros2 service echo` shows.
    fn description() -> TypeDescription {
        service_description(
            Self::TYPE_NAME,
            Self::Request::description(),
            Self::Response::description(),
        )
    }

    /// The RIHS01 hash of the service (of its description).
    fn type_hash() -> TypeHash {
        Self::description().hash()
    }
}

/// The description rosidl builds for service `name` from its request and response: the
/// one a service's RIHS01 hash is taken of.
pub fn service_description(
    name: &str,
    request: TypeDescription,
    response: TypeDescription,
) -> TypeDescription {
    let event = service_event_description(name, request.clone(), response.clone());
    TypeDescription::new(
        name,
        vec![
            Field::nested("request_message", request),
            Field::nested("response_message", response),
            Field::nested("event_message", event),
        ],
    )
}

/// The description of service `name`'s event message, `<name>_Event`: what introspection
/// publishes on `<service>/_service_event`.
pub fn service_event_description(
    name: &str,
    request: TypeDescription,
    response: TypeDescription,
) -> TypeDescription {
    TypeDescription::new(
        &format!("{name}_Event"),
        vec![
            Field::nested("info", crate::builtin::service_event_info()),
            Field::nested("request", request).bounded_sequence(1),
            Field::nested("response", response).bounded_sequence(1),
        ],
    )
}

/// A goal's id: the 16 bytes of its `unique_identifier_msgs/msg/UUID`.
pub type GoalUuid = [u8; 16];

/// An action type: a goal, its result, and the feedback sent while it runs, with the
/// services and message rosidl derives from them to carry it (ROS 2's actions design):
/// a client sends a goal with `_action/send_goal` ([`SendGoal`](Self::SendGoal)), asks
/// for its result with `_action/get_result` ([`GetResult`](Self::GetResult)), hears
/// feedback on `_action/feedback` ([`FeedbackMessage`](Self::FeedbackMessage)); cancel and
/// status use `action_msgs`'s `CancelGoal` and `GoalStatusArray`, the same for every
/// action.
pub trait ActionType: Send + Sync + 'static {
    /// The ROS type name, e.g. `example_interfaces/action/Fibonacci`.
    const TYPE_NAME: &'static str;
    /// `<TYPE_NAME>_Goal`.
    type Goal: Message;
    /// `<TYPE_NAME>_Result` (its default is the result of a goal the server does not know;
    /// a result is cloned for each client that asks for it).
    type Result: Message + Default + Clone;
    /// `<TYPE_NAME>_Feedback`.
    type Feedback: Message;
    /// `<TYPE_NAME>_SendGoal`: a goal id and the goal; accepted or not, and when.
    type SendGoal: ServiceType;
    /// `<TYPE_NAME>_GetResult`: a goal id; the goal's final status and its result.
    type GetResult: ServiceType;
    /// `<TYPE_NAME>_FeedbackMessage`: a goal id and one feedback.
    type FeedbackMessage: Message;

    /// A send-goal request for goal `id`.
    fn send_goal_request(
        id: GoalUuid,
        goal: Self::Goal,
    ) -> <Self::SendGoal as ServiceType>::Request;
    /// A send-goal request's goal id and goal.
    fn split_send_goal_request(
        request: <Self::SendGoal as ServiceType>::Request,
    ) -> (GoalUuid, Self::Goal);
    /// A send-goal response: accepted or not, and when (`(sec, nanosec)`).
    fn send_goal_response(
        accepted: bool,
        stamp: (i32, u32),
    ) -> <Self::SendGoal as ServiceType>::Response;
    /// A send-goal response's verdict and stamp.
    fn split_send_goal_response(
        response: <Self::SendGoal as ServiceType>::Response,
    ) -> (bool, (i32, u32));
    /// A get-result request for goal `id`.
    fn get_result_request(id: GoalUuid) -> <Self::GetResult as ServiceType>::Request;
    /// The goal id a get-result request asks about.
    fn get_result_request_id(request: &<Self::GetResult as ServiceType>::Request) -> GoalUuid;
    /// A get-result response: the goal's status (`action_msgs/msg/GoalStatus` codes) and
    /// result.
    fn get_result_response(
        status: i8,
        result: Self::Result,
    ) -> <Self::GetResult as ServiceType>::Response;
    /// A get-result response's status and result.
    fn split_get_result_response(
        response: <Self::GetResult as ServiceType>::Response,
    ) -> (i8, Self::Result);
    /// The feedback message of goal `id`.
    fn feedback_message(id: GoalUuid, feedback: Self::Feedback) -> Self::FeedbackMessage;
    /// A feedback message's goal id and feedback.
    fn split_feedback_message(message: Self::FeedbackMessage) -> (GoalUuid, Self::Feedback);

    /// The action's description as rosidl builds it: its three messages, its two
    /// services and its feedback message.
    fn description() -> TypeDescription {
        TypeDescription::new(
            Self::TYPE_NAME,
            vec![
                Field::nested("goal", Self::Goal::description()),
                Field::nested("result", Self::Result::description()),
                Field::nested("feedback", Self::Feedback::description()),
                Field::nested("send_goal_service", Self::SendGoal::description()),
                Field::nested("get_result_service", Self::GetResult::description()),
                Field::nested("feedback_message", Self::FeedbackMessage::description()),
            ],
        )
    }

    /// The RIHS01 hash of the action (of its description).
    fn type_hash() -> TypeHash {
        Self::description().hash()
    }
}

/// Something that wants every message and service type of a set of packages (the
/// generated `visit_interfaces` functions hand them over), e.g. to build a table of them
/// by name.
pub trait InterfaceVisitor {
    /// Called with each message type.
    fn message<M: Message>(&mut self);
    /// Called with each service type.
    fn service<S: ServiceType>(&mut self);
    /// Called with each action type (after its messages and services).
    fn action<A: ActionType>(&mut self) {
        let _ = std::marker::PhantomData::<A>;
    }
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

/// A type name that is not `package/kind/Type`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a ROS type name; write it as package/msg/Type or package/srv/Type")]
pub struct TypeNameError(pub String);

/// Why a payload did not decode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The payload is shorter than its header.
    #[error("payload of {0} bytes is shorter than the 4-byte CDR encapsulation header")]
    TooShort(usize),
    /// The header names another representation.
    #[error(
        "encapsulation {0:02x?} is not little-endian plain CDR (00 01 00 00); only that one is read"
    )]
    Encapsulation([u8; 4]),
    /// The CDR after the header is not a value of the type.
    #[error("CDR does not decode as {type_name}: {reason}")]
    Cdr {
        /// The type it was read as.
        type_name: &'static str,
        /// What the CDR reader said.
        reason: String,
    },
}

/// The payload of `message`: header, then CDR.
pub fn encode<M: Message>(message: &M) -> Vec<u8> {
    // Sized first: a large payload is written once, not copied at each doubling.
    let mut out = Vec::with_capacity(encoded_len(message));
    out.extend_from_slice(&CDR_LE_HEADER);
    // Writing to a Vec cannot fail, and every type a `Message` holds is one CDR can write
    // (serde types CDR cannot express, such as maps of unknown length, are not messages).
    cdr_encoding::to_writer::<M, LittleEndian, _>(&mut out, message)
        .expect("a message is CDR-encodable");
    out
}

/// The length of `message`'s payload (header and CDR), without writing it: so the payload
/// can be written once, straight into a buffer of that size (shared memory, for one).
pub fn encoded_len<M: Message>(message: &M) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(CDR_LE_HEADER.len());
    cdr_encoding::to_writer::<M, LittleEndian, _>(&mut count, message)
        .expect("a message is CDR-encodable");
    count.0
}

/// Writes `message`'s payload into `out`, which must be [`encoded_len`] bytes long; false
/// (and `out` partly written) if it is shorter.
pub fn encode_into<M: Message>(message: &M, out: &mut [u8]) -> bool {
    let Some((header, mut rest)) = out.split_first_chunk_mut::<4>() else {
        return false;
    };
    *header = CDR_LE_HEADER;
    cdr_encoding::to_writer::<M, LittleEndian, _>(&mut rest, message).is_ok()
}

/// The message in `payload`.
pub fn decode<M: Message>(payload: &[u8]) -> Result<M, DecodeError> {
    decode_as(payload, M::TYPE_NAME)
}

/// The value of type `T` at the head of `payload`, read as `type_name`; bytes after it are
/// ignored (a message's leading fields can be read without knowing the rest).
pub(crate) fn decode_as<T: serde::de::DeserializeOwned>(
    payload: &[u8],
    type_name: &'static str,
) -> Result<T, DecodeError> {
    let header: [u8; 4] = payload
        .get(..4)
        .and_then(|h| h.try_into().ok())
        .ok_or(DecodeError::TooShort(payload.len()))?;
    // The options bytes (2..4) may carry padding counts; only the representation matters.
    if header[..2] != CDR_LE_HEADER[..2] {
        return Err(DecodeError::Encapsulation(header));
    }
    cdr_encoding::from_bytes::<T, LittleEndian>(&payload[4..])
        .map(|(value, _)| value)
        .map_err(|e| DecodeError::Cdr {
            type_name,
            reason: e.to_string(),
        })
}

/// The message in `payload`, its large byte fields ([`Bytes`](crate::cdr::Bytes) of
/// [`SHARE_FROM`](crate::cdr::SHARE_FROM) bytes or more) views into `payload` rather than
/// copies: the decode a transport uses for what it received, so a 16 MiB image in shared
/// memory reaches its subscriber without a copy.
pub fn decode_shared<M: Message>(payload: &bytes::Bytes) -> Result<M, DecodeError> {
    crate::bytes_field::with_payload(payload, || decode::<M>(payload))
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
