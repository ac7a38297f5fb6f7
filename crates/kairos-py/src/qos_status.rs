//! The QoS event status of a Python publisher or subscription, which rcl's event handles
//! (`kairos/impl/rcl_events.py`, rclpy's `_rclpy.EventHandle`) read through the entity's
//! `handle`: the same counts kairos's event callbacks report, read when asked.

use crate::typed::policy_name;
use kairos::graph::{PublisherEvents, SubscriptionEvents};
use pyo3::PyResult;

/// Where an entity's QoS event status comes from.
#[derive(Clone, Debug)]
pub(crate) enum QosEventSource {
    Publisher(PublisherEvents),
    Subscription(SubscriptionEvents),
}

impl QosEventSource {
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            QosEventSource::Publisher(_) => "publisher",
            QosEventSource::Subscription(_) => "subscription",
        }
    }

    /// The status of `event` now, as `(count, second count, policy)`: the total for a
    /// counted event, `(total, current)` for `matched`, `(alive, not alive)` for
    /// `liveliness_changed`, and the last policy for `incompatible_qos`.
    pub(crate) fn status(&self, event: &str) -> PyResult<(u64, u64, &'static str)> {
        let none = "INVALID";
        let status = match self {
            QosEventSource::Publisher(events) => {
                let e = events.qos_events();
                match event {
                    "deadline" => (e.offered_deadline_missed, 0, none),
                    "liveliness_lost" => (e.liveliness_lost, 0, none),
                    "incompatible_qos" => (
                        e.offered_incompatible_qos,
                        0,
                        policy_name(e.incompatible_policy),
                    ),
                    "incompatible_type" => (e.incompatible_type, 0, none),
                    "matched" => (e.matched_total, e.matched_now, none),
                    _ => return Err(unknown(event, self.kind())),
                }
            }
            QosEventSource::Subscription(events) => {
                let e = events.qos_events();
                match event {
                    "deadline" => (e.requested_deadline_missed, 0, none),
                    "liveliness_changed" => (e.alive_count, e.not_alive_count, none),
                    "incompatible_qos" => (
                        e.requested_incompatible_qos,
                        0,
                        policy_name(e.incompatible_policy),
                    ),
                    "incompatible_type" => (e.incompatible_type, 0, none),
                    "message_lost" => (e.message_lost, 0, none),
                    "matched" => (e.matched_total, e.matched_now, none),
                    _ => return Err(unknown(event, self.kind())),
                }
            }
        };
        Ok(status)
    }
}

fn unknown(event: &str, kind: &str) -> pyo3::PyErr {
    pyo3::exceptions::PyValueError::new_err(format!("a {kind} has no QoS event {event:?}"))
}
