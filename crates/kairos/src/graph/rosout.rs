//! `/rosout`: every node's log lines as `rcl_interfaces/msg/Log`, as rcl publishes them,
//! so `kairos topic echo /rosout`, `ros2 topic echo /rosout` and rqt_console read them.
//!
//! A node's `/rosout` publisher is made at its first line (rcl makes it with the node; a
//! node that never logs declares nothing here), with rcl's QoS: reliable, transient-local,
//! the last 1000 lines.

use super::node::{Node, NodeShared};
use super::publisher::Publisher;
use super::qos::Qos;
use crate::logging::{Record, Sink};
use kairos_interface::Message;
use kairos_interface::type_hash::TypeDescription;
use serde::{Deserialize, Serialize};
use std::sync::{OnceLock, Weak};

/// The topic log lines are published on.
pub const ROSOUT_TOPIC: &str = "/rosout";

/// The QoS of `/rosout` publishers (rcl's).
pub const ROSOUT_QOS: Qos = Qos::keep_last(1000).transient_local();

/// One log line (ROS's `rcl_interfaces/msg/Log`), as nodes publish it on `/rosout`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogMsg {
    /// When it was logged (system time).
    pub stamp: StampMsg,
    /// Its severity: 10 debug, 20 info, 30 warn, 40 error, 50 fatal.
    pub level: u8,
    /// The logger's name.
    pub name: String,
    /// The text.
    pub msg: String,
    /// The source file.
    pub file: String,
    /// The function or module.
    pub function: String,
    /// The line in `file`.
    pub line: u32,
}

/// `builtin_interfaces/msg/Time`, as a log line's stamp.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StampMsg {
    /// Whole seconds since the epoch.
    pub sec: i32,
    /// Nanoseconds past `sec`.
    pub nanosec: u32,
}

impl Message for LogMsg {
    const TYPE_NAME: &'static str = "rcl_interfaces/msg/Log";

    fn description() -> TypeDescription {
        kairos_interface::builtin::log()
    }
}

impl From<&Record<'_>> for LogMsg {
    fn from(record: &Record<'_>) -> Self {
        LogMsg {
            stamp: StampMsg {
                sec: i32::try_from(record.stamp_ns.div_euclid(1_000_000_000)).unwrap_or(i32::MAX),
                nanosec: record.stamp_ns.rem_euclid(1_000_000_000) as u32,
            },
            level: record.severity as u8,
            name: record.name.to_owned(),
            msg: record.message.to_owned(),
            file: record.file.to_owned(),
            function: record.function.to_owned(),
            line: record.line,
        }
    }
}

/// The sink of a node's logger: its `/rosout` publisher, made at the first line.
pub(crate) fn sink(node: Weak<NodeShared>) -> Sink {
    let publisher: OnceLock<Option<Publisher<LogMsg>>> = OnceLock::new();
    Box::new(move |record| {
        // Making the publisher must not log through this logger (it would re-enter here).
        let publisher = publisher.get_or_init(|| {
            let node = Node::from_shared(node.upgrade()?);
            match node.create_publisher::<LogMsg>(ROSOUT_TOPIC, ROSOUT_QOS) {
                Ok(publisher) => Some(publisher),
                Err(err) => {
                    crate::say::say(format_args!(
                        "kairos: node {} logs to the console only, not to {ROSOUT_TOPIC}: {err}",
                        node.fully_qualified_name()
                    ));
                    None
                }
            }
        });
        if let Some(publisher) = publisher {
            publisher.publish(LogMsg::from(record));
        }
    })
}
