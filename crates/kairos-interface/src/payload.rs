//! What a topic or service carries, and how it crosses the process boundary.
//!
//! What this module promises:
//! - Every [`Message`] is a [`Payload`] that crosses: its [`Wire`] (name, hash, CDR codec)
//!   travels with each publisher, subscription, service and client to the transport, so
//!   there is nothing to register and no table to forget.
//! - Any other type is carried only inside the process, and only because someone said so:
//!   `impl Payload for MyType {}` (no body) is the opt-in. Rust's own value types (numbers,
//!   `bool`, `String`, `()`, tuples, `Vec`, `Option`, `Result`, arrays, `Arc` of
//!   payloads) are opted in here. A type that is neither does not compile as a topic or
//!   service type, so nothing silently stays in the process because a step was missed.
//! - A service crosses when it is a [`ServiceType`], or when it is named by its request and
//!   response and both are the messages `<pkg/srv/S>_Request` and `<pkg/srv/S>_Response`
//!   (the shape generated services have).
//!
//! Values cross the graph's transport hook type-erased (`dyn Any`); a [`Wire`] is the
//! monomorphized codec that turns them into CDR and back, made where the type is known.

use crate::message::{
    DecodeError, Message, ServiceType, TypeNameError, dds_type_name, decode, encode, encode_into,
    encoded_len, service_description,
};
use crate::type_hash::{TypeDescription, TypeHash};
use std::any::Any;
use std::fmt;
use std::sync::Arc;

/// A message as it crosses the transport hook: shared, as subscriptions receive it.
pub type AnyMessage = Arc<dyn Any + Send + Sync>;
/// A service request or response as it crosses the transport hook: owned, as a service
/// callback takes it.
pub type AnyValue = Box<dyn Any + Send>;

/// A type a topic or service can carry. See the module docs: messages cross processes,
/// anything else stays in the process by its own opt-in (`impl Payload for MyType {}`).
pub trait Payload: Send + Sync + 'static {
    /// How values of this type cross the process boundary; `None` keeps them in it.
    fn wire() -> Option<Wire> {
        None
    }
}

impl<M: Message> Payload for M {
    fn wire() -> Option<Wire> {
        Some(Wire::of::<M>())
    }
}

macro_rules! in_process {
    ($($ty:ty),* $(,)?) => { $(impl Payload for $ty {})* };
}

in_process!(
    (),
    bool,
    char,
    u8,
    u16,
    u32,
    u64,
    u128,
    usize,
    i8,
    i16,
    i32,
    i64,
    i128,
    isize,
    f32,
    f64,
    String,
    &'static str,
    std::time::Duration,
);

impl<T: Payload> Payload for Vec<T> {}
impl<T: Payload> Payload for Option<T> {}
impl<T: Payload> Payload for Arc<T> {}
impl<T: Payload, const N: usize> Payload for [T; N] {}
impl<T: Payload, E: Payload> Payload for Result<T, E> {}
impl<A: Payload, B: Payload> Payload for (A, B) {}
impl<A: Payload, B: Payload, C: Payload> Payload for (A, B, C) {}
impl<A: Payload, B: Payload, C: Payload, D: Payload> Payload for (A, B, C, D) {}

/// Decodes a payload and lends the message to a taker (see [`Wire::decode_to`]).
type DecodeTo = fn(&[u8], &mut dyn FnMut(&mut dyn Any)) -> Result<(), DecodeError>;

/// How one message type crosses the wire: its ROS name, description and CDR codec, for
/// values that cross the transport hook as `dyn Any`.
#[derive(Clone, Copy)]
pub struct Wire {
    type_name: &'static str,
    description: fn() -> TypeDescription,
    encode: fn(&dyn Any) -> Option<Vec<u8>>,
    encoded_len: fn(&dyn Any) -> Option<usize>,
    encode_into: fn(&dyn Any, &mut [u8]) -> bool,
    decode: fn(&[u8]) -> Result<AnyMessage, DecodeError>,
    decode_to: DecodeTo,
    decode_value: fn(&[u8]) -> Result<AnyValue, DecodeError>,
}

impl Wire {
    /// The wire form of message type `M`.
    pub fn of<M: Message>() -> Self {
        Wire {
            type_name: M::TYPE_NAME,
            description: M::description,
            encode: |value| value.downcast_ref::<M>().map(encode),
            encoded_len: |value| value.downcast_ref::<M>().map(encoded_len),
            encode_into: |value, out| {
                value
                    .downcast_ref::<M>()
                    .is_some_and(|message| encode_into(message, out))
            },
            decode: |payload| decode::<M>(payload).map(|m| Arc::new(m) as AnyMessage),
            decode_to: |payload, take| {
                take(&mut Some(decode::<M>(payload)?));
                Ok(())
            },
            decode_value: |payload| decode::<M>(payload).map(|m| Box::new(m) as AnyValue),
        }
    }

    /// The ROS type name, e.g. `std_msgs/msg/String`.
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }

    /// The type's description (its fields and the types they nest).
    pub fn description(&self) -> TypeDescription {
        (self.description)()
    }

    /// The RIHS01 hash of the type (computed from its description on each call).
    pub fn type_hash(&self) -> TypeHash {
        self.description().hash()
    }

    /// The DDS type name key expressions use (`pkg::msg::dds_::Type_`).
    pub fn dds_type(&self) -> Result<String, TypeNameError> {
        dds_type_name(self.type_name)
    }

    /// The CDR payload of `value`; `None` if it is not of this type.
    pub fn encode(&self, value: &dyn Any) -> Option<Vec<u8>> {
        (self.encode)(value)
    }

    /// The length of `value`'s CDR payload; `None` if it is not of this type.
    pub fn encoded_len(&self, value: &dyn Any) -> Option<usize> {
        (self.encoded_len)(value)
    }

    /// Writes `value`'s CDR payload into `out`, [`Self::encoded_len`] bytes long; false if
    /// `value` is not of this type or `out` is too short.
    pub fn encode_into(&self, value: &dyn Any, out: &mut [u8]) -> bool {
        (self.encode_into)(value, out)
    }

    /// The message in `payload`, shared, as a subscription receives it.
    pub fn decode(&self, payload: &[u8]) -> Result<AnyMessage, DecodeError> {
        (self.decode)(payload)
    }

    /// The message in `payload`, shared, its large byte fields views into `payload` (see
    /// [`decode_shared`](crate::message::decode_shared)): what a transport hands a
    /// subscription.
    pub fn decode_shared(&self, payload: &bytes::Bytes) -> Result<AnyMessage, DecodeError> {
        crate::bytes_field::with_payload(payload, || (self.decode)(payload))
    }

    /// Decodes the message in `payload` and lends it to `take` as an `Option<M>` that
    /// holds it (`M` the wire's type), for `take` to move into a box of its own choosing:
    /// a subscription puts it in a box its topic recycles, so a stream of messages
    /// allocates no box per message. Whatever `take` leaves in the option is dropped.
    pub fn decode_to(
        &self,
        payload: &[u8],
        take: &mut dyn FnMut(&mut dyn Any),
    ) -> Result<(), DecodeError> {
        (self.decode_to)(payload, take)
    }

    /// [`decode_to`](Self::decode_to), the large byte fields views into `payload`, as
    /// [`decode_shared`](Self::decode_shared).
    pub fn decode_shared_to(
        &self,
        payload: &bytes::Bytes,
        take: &mut dyn FnMut(&mut dyn Any),
    ) -> Result<(), DecodeError> {
        crate::bytes_field::with_payload(payload, || (self.decode_to)(payload, take))
    }

    /// The message in `payload`, owned, as a service request or response.
    pub fn decode_value(&self, payload: &[u8]) -> Result<AnyValue, DecodeError> {
        (self.decode_value)(payload)
    }
}

impl fmt::Debug for Wire {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Wire")
            .field("type_name", &self.type_name)
            .finish_non_exhaustive()
    }
}

/// A service as callers name it: a [`ServiceType`] (what crosses processes, as rclcpp
/// and rclrs name services), or `fn(Request) -> Response` for a service known by its
/// request and response types (Rust values in the process, or generated request and
/// response messages, which cross as their service).
pub trait ServiceCall: Send + Sync + 'static {
    /// What a call sends.
    type Request: Payload;
    /// What a call gets back.
    type Response: Payload;

    /// How calls cross the process boundary; `None` keeps them in it.
    fn wire() -> Option<ServiceWire>;
}

impl<S: ServiceType> ServiceCall for S {
    type Request = S::Request;
    type Response = S::Response;

    fn wire() -> Option<ServiceWire> {
        Some(ServiceWire::of::<S>())
    }
}

impl<Req: Payload, Resp: Payload> ServiceCall for fn(Req) -> Resp {
    type Request = Req;
    type Response = Resp;

    fn wire() -> Option<ServiceWire> {
        ServiceWire::from_parts(Req::wire()?, Resp::wire()?)
    }
}

/// How one service type crosses the wire: its ROS name and hash, and the wire forms of its
/// request and response.
#[derive(Clone)]
pub struct ServiceWire {
    type_name: String,
    hash: TypeHash,
    /// The request message.
    pub request: Wire,
    /// The response message.
    pub response: Wire,
}

impl ServiceWire {
    /// The wire form of service type `S`.
    pub fn of<S: ServiceType>() -> Self {
        ServiceWire {
            type_name: S::TYPE_NAME.to_owned(),
            hash: S::type_hash(),
            request: Wire::of::<S::Request>(),
            response: Wire::of::<S::Response>(),
        }
    }

    /// The service whose request and response these are, if they are named as a service's
    /// are: `<pkg/srv/S>_Request` and `<pkg/srv/S>_Response`.
    pub fn from_parts(request: Wire, response: Wire) -> Option<Self> {
        let name = request.type_name.strip_suffix("_Request")?;
        // A `.srv` service, or one of the two services rosidl derives from an action.
        let is_service = name.contains("/srv/")
            || (name.contains("/action/")
                && (name.ends_with("_SendGoal") || name.ends_with("_GetResult")));
        if response.type_name.strip_suffix("_Response")? != name || !is_service {
            return None;
        }
        let description = service_description(name, request.description(), response.description());
        Some(ServiceWire {
            type_name: name.to_owned(),
            hash: description.hash(),
            request,
            response,
        })
    }

    /// The ROS type name, e.g. `example_interfaces/srv/AddTwoInts`.
    pub fn type_name(&self) -> &str {
        &self.type_name
    }

    /// The RIHS01 hash of the service.
    pub fn type_hash(&self) -> TypeHash {
        self.hash
    }

    /// The DDS type name key expressions use (`pkg::srv::dds_::Type_`).
    pub fn dds_type(&self) -> Result<String, TypeNameError> {
        dds_type_name(&self.type_name)
    }
}

impl fmt::Debug for ServiceWire {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServiceWire")
            .field("type_name", &self.type_name)
            .field("hash", &self.hash)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wire<T: Payload>() -> Option<Wire> {
        T::wire()
    }

    #[test]
    fn rust_values_stay_in_the_process() {
        assert!(wire::<u32>().is_none());
        assert!(wire::<(i64, i64)>().is_none());
        assert!(wire::<Result<i64, String>>().is_none());
        assert!(<fn(u32) -> u32 as ServiceCall>::wire().is_none());
    }
}
