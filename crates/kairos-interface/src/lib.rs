//! What a kairos message, service or action type is, and how it crosses the process
//! boundary; the crate below the runtime (`kairos`) and the generated interface packages
//! (`kairos-msgs`).
//!
//! - [`message`]: the [`Message`], [`ServiceType`] and [`ActionType`] traits, and CDR
//!   payloads as rmw_zenoh writes them.
//! - [`type_hash`]: type descriptions and RIHS01 type hashes, computed as rosidl does.
//! - [`payload`]: [`Payload`], what a topic or service carries, and [`Wire`], the codec a
//!   publisher, subscription, service or client hands to the transport.
//! - [`cdr`]: serde helpers for the field shapes serde has no CDR form for by itself, and
//!   [`cdr::Bytes`], a `uint8[]` field that a received message can hold without a copy.
//! - [`loan`]: a large byte field written in place, in the buffer its payload is sent
//!   from (loaned messages).
//! - [`service_event`]: the messages service introspection publishes, and how a request
//!   type names its service's.
//! - [`builtin`]: the descriptions of the ROS types this crate itself refers to.

#![warn(missing_docs)]

pub mod builtin;
mod bytes_field;
pub mod cdr;
pub mod loan;
pub mod message;
pub mod payload;
pub mod service_event;
pub mod type_hash;

pub use message::{
    ActionType, DecodeError, GoalUuid, InterfaceVisitor, Message, ServiceType, decode,
    decode_shared, encode,
};
pub use payload::{AnyMessage, AnyValue, Payload, ServiceCall, ServiceWire, Wire};
pub use service_event::{ServiceEvent, ServiceRequest};
pub use type_hash::{TypeDescription, TypeHash};

/// The serde the generated types derive with (so a user crate needs no serde of its own).
pub use serde;
