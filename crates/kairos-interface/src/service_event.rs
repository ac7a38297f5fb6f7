//! Service introspection's messages: what a service or client publishes on
//! `<service>/_service_event` when introspection is on, as ROS 2 (since Iron) does.
//!
//! What this module promises:
//! - Every generated service `pkg/srv/S` has its event message `pkg/srv/S_Event`
//!   (`SEvent`: a `service_msgs/msg/ServiceEventInfo`, at most one request, at most one
//!   response), with the name, fields and RIHS01 hash rosidl gives it, so `ros2 service
//!   echo`, rosbag2 and any rmw_zenoh peer read kairos's events and kairos reads theirs.
//! - A generated request type knows its service's event type ([`ServiceRequest`]), so a
//!   service or client named only by its request and response types (a closure's
//!   argument) can still publish events.

use crate::message::{DecodeError, Message, decode_as};

/// What a service's event topic adds to its name: events of `/add` are published on
/// `/add/_service_event`.
pub const SERVICE_EVENT_SUFFIX: &str = "/_service_event";

/// Which of the four moments of a call an event reports (`ServiceEventInfo.event_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum EventKind {
    /// A client sent a request (`REQUEST_SENT`).
    RequestSent = 0,
    /// A server received a request (`REQUEST_RECEIVED`).
    RequestReceived = 1,
    /// A server sent its response (`RESPONSE_SENT`).
    ResponseSent = 2,
    /// A client received the response (`RESPONSE_RECEIVED`).
    ResponseReceived = 3,
}

impl EventKind {
    /// The kind `ServiceEventInfo.event_type` holds, if it is one of the four.
    pub fn from_u8(event_type: u8) -> Option<Self> {
        match event_type {
            0 => Some(Self::RequestSent),
            1 => Some(Self::RequestReceived),
            2 => Some(Self::ResponseSent),
            3 => Some(Self::ResponseReceived),
            _ => None,
        }
    }
}

/// The facts of one event, as `service_msgs/msg/ServiceEventInfo` carries them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventInfo {
    /// Which moment of the call.
    pub kind: EventKind,
    /// When, on the clock introspection was configured with: `(sec, nanosec)`.
    pub stamp: (i32, u32),
    /// The calling client's id: the same 16 bytes in the client's and the server's events.
    pub client_gid: [u8; 16],
    /// The request's sequence number, as the client numbered it.
    pub sequence_number: i64,
}

impl EventInfo {
    /// The facts at the head of any service's event payload (a `<pkg/srv/S>_Event`
    /// begins with its `ServiceEventInfo`), read without knowing the service's type: what
    /// a bag tool needs to count a service's requests and responses. `Ok(None)` when the
    /// event type is none of the four.
    pub fn from_event_payload(payload: &[u8]) -> Result<Option<EventInfo>, DecodeError> {
        #[derive(serde::Deserialize)]
        struct Head {
            event_type: u8,
            stamp: (i32, u32),
            client_gid: [u8; 16],
            sequence_number: i64,
        }
        let head: Head = decode_as(payload, "service_msgs/msg/ServiceEventInfo")?;
        Ok(EventKind::from_u8(head.event_type).map(|kind| EventInfo {
            kind,
            stamp: head.stamp,
            client_gid: head.client_gid,
            sequence_number: head.sequence_number,
        }))
    }

    /// Whether the event reports a request (sent or received) rather than a response.
    pub fn is_request(&self) -> bool {
        matches!(
            self.kind,
            EventKind::RequestSent | EventKind::RequestReceived
        )
    }
}

/// A service's event message, `<pkg/srv/S>_Event`.
pub trait ServiceEvent: Message {
    /// The service's request message.
    type Request: Message;
    /// The service's response message.
    type Response: Message;

    /// The event: `info`, with the request or response when introspection shows contents
    /// (`None` when it shows metadata only, or for the other half of the call).
    fn new(
        info: EventInfo,
        request: Option<Self::Request>,
        response: Option<Self::Response>,
    ) -> Self;

    /// The event's facts; `None` when its event type is none of the four (a bag holds
    /// whatever was recorded).
    fn info(&self) -> Option<EventInfo>;

    /// The request the event carries, if any.
    fn into_request(self) -> Option<Self::Request>;
}

/// A service's request message that knows its service: what a server or client of it
/// publishes as its events.
///
/// Both messages are `Clone`, as every generated message is: an event with contents holds
/// a copy of the request or response while the callback or caller keeps its own.
pub trait ServiceRequest: Message + Clone {
    /// The service's response message.
    type Response: Message + Clone;
    /// The service's event message.
    type Event: ServiceEvent<Request = Self, Response = Self::Response>;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `<Type>_Event` payload: its info, then an empty request and response sequence.
    fn event_payload(event_type: u8, gid: [u8; 16], seq: i64) -> Vec<u8> {
        #[derive(serde::Serialize)]
        struct Event {
            event_type: u8,
            stamp: (i32, u32),
            client_gid: [u8; 16],
            sequence_number: i64,
            request: Vec<u64>,
            response: Vec<u64>,
        }
        let event = Event {
            event_type,
            stamp: (7, 9),
            client_gid: gid,
            sequence_number: seq,
            request: vec![],
            response: vec![],
        };
        let mut payload = vec![0, 1, 0, 0];
        payload
            .extend(cdr_encoding::to_vec::<_, byteorder::LittleEndian>(&event).expect("encodes"));
        payload
    }

    #[test]
    fn an_events_info_reads_without_its_service_type() {
        let info = EventInfo::from_event_payload(&event_payload(2, [5; 16], 42))
            .expect("decodes")
            .expect("a known kind");
        assert_eq!(
            info,
            EventInfo {
                kind: EventKind::ResponseSent,
                stamp: (7, 9),
                client_gid: [5; 16],
                sequence_number: 42,
            }
        );
        assert!(!info.is_request());
        assert_eq!(
            EventInfo::from_event_payload(&event_payload(9, [0; 16], 1)).expect("decodes"),
            None,
            "an event type none of the four"
        );
        assert!(EventInfo::from_event_payload(&[0, 1, 0, 0, 1]).is_err());
    }
}
