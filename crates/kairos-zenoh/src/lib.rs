//! kairos nodes across processes and hosts, on Zenoh, in ROS 2's rmw_zenoh wire format.
//!
//! A program calls [`init`] once; the environment then decides whether its nodes talk
//! beyond the process (`KAIROS_TRANSPORT=zenoh`, or `RMW_IMPLEMENTATION=rmw_zenoh_cpp` as a
//! ROS 2 launch sets it). Node code is the same either way: a message for a subscription in
//! the same process is still handed over as one `Arc`; one for another process goes
//! through Zenoh as rmw_zenoh would send it.
//!
//! - [`message`], [`type_hash`]: the `Message` trait, CDR payloads and RIHS01 type hashes,
//!   re-exported from `kairos-msgs` (which also ships the generated interface packages).
//! - [`msg`]: the first built-in types under their earlier names.
//! - [`interfaces`]: the shipped types by ROS name, for tools that take a type as text.
//! - [`sender_state`]: what a subscription remembers of each publisher (bounded).
//! - [`graph_key`], [`attachment`]: key expressions, liveliness tokens, attachments.
//! - [`transport`]: the zenoh session behind the graph's transport hook.
//! - [`matching`]: waiting until zenoh matches a publisher with a remote subscriber.
//! - [`qos`]: reliability, congestion control, history and transient-local on the wire.
//! - [`published`]: the graph's topics as their publishers announce them (type, hash,
//!   offered QoS), for tools that follow every topic.
//! - [`raw`]: subscriptions of any announced type, handing messages over undecoded (for
//!   recorders).
//! - [`config`]: rmw_zenoh's defaults and environment variables, ROS 2's security ones.
//! - [`access`]: a declaration the security configuration forbids is an error that says
//!   what to allow, not a silent nothing.
//! - [`access_report`]: what access control denied and dropped, answered by each process
//!   for `kairos node info`.
//! - [`parameter_services`]: ROS 2's parameter services for a node's parameters.
//! - [`shared_waits`]: blocked waits shared between kairos processes (deadlock checks).
//! - `liveliness`: manual-liveliness publishers whose lease lapsed, told to other
//!   kairos processes.
//! - [`type_description`]: ROS 2's `get_type_description` service, answered from the
//!   types the transport carries.
//! - [`shared_memory`]: large payloads between processes of one host through Zenoh's
//!   shared memory, when the configuration turns it on.
//! - `received`: how a received payload is decoded (large byte fields in shared memory
//!   become views of it).

#![warn(missing_docs)]

pub mod access;
pub mod access_report;
pub mod attachment;
pub mod config;
pub mod graph_cache;
pub mod graph_key;
pub mod interfaces;
pub mod late_join;
mod liveliness;
pub mod matching;
pub mod msg;
pub mod parameter_services;
pub mod published;
pub mod qos;
pub mod raw;
mod received;
mod report;
pub mod security_check;
pub mod sender_state;
pub mod settle;
pub mod shared_memory;
pub mod shared_waits;
pub mod transport;
pub mod type_description;

pub use kairos_msgs::{message, type_hash};
pub use transport::{TransportError, ZenohTransport};

use std::sync::Arc;

// The Rust examples of the README and of the guide's pages on kairos and kairos-zenoh,
// compiled as doctests here, the one library crate that sees both.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeDoctests;

#[cfg(doctest)]
#[doc = include_str!("../../../docs/guide/nodes-topics-services.md")]
struct GuideNodesDoctests;

#[cfg(doctest)]
#[doc = include_str!("../../../docs/guide/zenoh-and-ros2.md")]
struct GuideZenohDoctests;

/// Whether the environment asks for the Zenoh transport.
pub fn enabled() -> bool {
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    var("KAIROS_TRANSPORT").eq_ignore_ascii_case("zenoh")
        || var("RMW_IMPLEMENTATION") == "rmw_zenoh_cpp"
}

/// Installs the Zenoh transport on the process-wide context when the environment asks for
/// it (see [`enabled`]); returns it, or `None` when the process stays on its own.
pub fn init() -> Result<Option<Arc<ZenohTransport>>, TransportError> {
    if !enabled() {
        return Ok(None);
    }
    let transport = ZenohTransport::open()?;
    transport.install(&kairos::graph::Context::global())?;
    Ok(Some(transport))
}
