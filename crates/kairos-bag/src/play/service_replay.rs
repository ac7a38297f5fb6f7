//! Playing a service's recorded calls as calls (`ros2 bag play
//! --publish-service-requests`): the requests of a service's introspection events in the
//! bag are sent to the service again, as a client would send them, instead of the events
//! being published.
//!
//! What it promises:
//! - **One send per recorded call.** A call recorded on the client's side
//!   (`REQUEST_SENT`) is sent from that event; a call whose client was not introspected is
//!   known only by the server's `REQUEST_RECEIVED`, and is sent from that one. A client
//!   that has any `REQUEST_SENT` in the bag is taken from those only, so a call recorded
//!   on both sides goes once. Response events are not sent.
//! - **Nothing dropped silently.** A request event without the request (introspection
//!   with metadata only), or an event that does not decode (whatever its kind), is
//!   counted in [`ServiceReplayCounts::without_request`] and the replay goes on; each
//!   answer that came, and each call that failed (no server, a server error, no answer
//!   within the transport's query timeout), is counted too.
//! - **Not waited on.** A request leaves at its recorded time and its answer is not
//!   waited for, so a slow service does not delay the topics played beside it.

use kairos::time::{CancelToken, Clock, Duration as KDuration, Time};
use kairos_zenoh::interfaces::{EventKind, ServiceSender, ServiceTool};
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// What happened to one service's recorded calls, so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServiceReplayCounts {
    /// Requests sent to the service.
    pub sent: u64,
    /// Of those, answered.
    pub answered: u64,
    /// Of those, failed: no server, or an error instead of an answer.
    pub failed: u64,
    /// Request events that could not be sent, recorded without their request (metadata
    /// only), and events not decodable as the service's event type.
    pub without_request: u64,
}

#[derive(Debug, Default)]
struct Counts {
    sent: AtomicU64,
    answered: AtomicU64,
    failed: AtomicU64,
    without_request: AtomicU64,
}

/// One service's recorded calls, sent again.
#[derive(Debug)]
pub(super) struct ServiceReplay {
    pub(super) service: String,
    tool: Arc<ServiceTool>,
    pub(super) sender: ServiceSender,
    /// The clients with a `REQUEST_SENT` in the bag (their calls are sent from those).
    introspected_clients: HashSet<[u8; 16]>,
    counts: Arc<Counts>,
}

impl ServiceReplay {
    /// A replay of `service`'s calls; [`learn`](Self::learn) each of its recorded events
    /// before replaying any.
    pub(super) fn new(service: String, tool: Arc<ServiceTool>, sender: ServiceSender) -> Self {
        Self {
            service,
            tool,
            sender,
            introspected_clients: HashSet::new(),
            counts: Arc::default(),
        }
    }

    /// Notes the client of `event` (an event payload of the bag) if the event is its own
    /// `REQUEST_SENT`: that client's calls are then sent from those events only.
    pub(super) fn learn(&mut self, event: &[u8]) {
        if let Ok(call) = self.tool.recorded_call(event) {
            if call.info.kind == EventKind::RequestSent {
                self.introspected_clients.insert(call.info.client_gid);
            }
        }
    }

    /// Sends the request of `event` (an event payload), if it is the one to send of its
    /// call.
    pub(super) fn replay(&self, event: &[u8]) {
        let call = match self.tool.recorded_call(event) {
            Ok(call) => call,
            Err(why) => {
                log::warn!(
                    "kairos bag play: a {} event is skipped: {why}",
                    self.service
                );
                self.counts.without_request.fetch_add(1, Ordering::Relaxed);
                return;
            }
        };
        let introspected = self.introspected_clients.contains(&call.info.client_gid);
        if !sends(call.info.kind, introspected) {
            return;
        }
        let Some(request) = call.request else {
            self.counts.without_request.fetch_add(1, Ordering::Relaxed);
            return;
        };
        self.counts.sent.fetch_add(1, Ordering::Relaxed);
        let counts = self.counts.clone();
        self.sender.send(
            request,
            Box::new(move |answer| {
                let counter = match answer {
                    Ok(()) => &counts.answered,
                    Err(_) => &counts.failed,
                };
                counter.fetch_add(1, Ordering::Relaxed);
            }),
        );
    }

    /// Waits until every request sent has its answer or its failure, until `end` (on the
    /// monotonic clock) at the latest, or until `stop`.
    pub(super) fn wait_answers(&self, end: Time, stop: &CancelToken) {
        let steady = Clock::steady();
        loop {
            let c = self.counts();
            let now = steady.now();
            if c.answered + c.failed >= c.sent || now >= end || stop.is_cancelled() {
                return;
            }
            let next = now + KDuration::from_millis(10);
            let _ = steady.sleep_until(if next < end { next } else { end }, stop);
        }
    }

    pub(super) fn counts(&self) -> ServiceReplayCounts {
        ServiceReplayCounts {
            sent: self.counts.sent.load(Ordering::Relaxed),
            answered: self.counts.answered.load(Ordering::Relaxed),
            failed: self.counts.failed.load(Ordering::Relaxed),
            without_request: self.counts.without_request.load(Ordering::Relaxed),
        }
    }
}

/// Whether an event of `kind` is the one a call is sent again from: its client's
/// `REQUEST_SENT`, or the server's `REQUEST_RECEIVED` when the client (`introspected`:
/// it has a `REQUEST_SENT` in the bag) was not recorded on its side.
fn sends(kind: EventKind, introspected: bool) -> bool {
    match kind {
        EventKind::RequestSent => true,
        EventKind::RequestReceived => !introspected,
        EventKind::ResponseSent | EventKind::ResponseReceived => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_recorded_on_both_sides_is_sent_once_and_a_response_never() {
        use EventKind::*;
        // Recorded on both sides: the client's event only.
        assert!(sends(RequestSent, true));
        assert!(!sends(RequestReceived, true));
        // Only the server was introspected: its event.
        assert!(sends(RequestReceived, false));
        for kind in [ResponseSent, ResponseReceived] {
            assert!(!sends(kind, true) && !sends(kind, false));
        }
    }
}
