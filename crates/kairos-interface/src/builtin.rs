//! The descriptions of the few ROS types this crate itself refers to: `builtin_interfaces`'
//! time, the service event information every service description nests, and
//! `rosgraph_msgs/msg/Clock`, which the runtime publishes simulation time as, and
//! `rcl_interfaces/msg/Log`, which it publishes log lines on `/rosout` as.
//!
//! They are written out here, not generated, because the generated packages sit above
//! this crate; `kairos-msgs`' tests check each against its generated twin.

use crate::type_hash::{Field, TypeDescription, type_id};

/// `builtin_interfaces/msg/Time`.
pub fn time() -> TypeDescription {
    TypeDescription::new(
        "builtin_interfaces/msg/Time",
        vec![
            Field::primitive("sec", type_id::INT32),
            Field::primitive("nanosec", type_id::UINT32),
        ],
    )
}

/// `service_msgs/msg/ServiceEventInfo`.
pub fn service_event_info() -> TypeDescription {
    TypeDescription::new(
        "service_msgs/msg/ServiceEventInfo",
        vec![
            Field::primitive("event_type", type_id::UINT8),
            Field::nested("stamp", time()),
            // `char` in a .msg file is uint8 to rosidl.
            Field::primitive("client_gid", type_id::UINT8).array(16),
            Field::primitive("sequence_number", type_id::INT64),
        ],
    )
}

/// `rosgraph_msgs/msg/Clock`.
pub fn clock() -> TypeDescription {
    TypeDescription::new(
        "rosgraph_msgs/msg/Clock",
        vec![Field::nested("clock", time())],
    )
}

/// `rcl_interfaces/msg/Log`.
pub fn log() -> TypeDescription {
    TypeDescription::new(
        "rcl_interfaces/msg/Log",
        vec![
            Field::nested("stamp", time()),
            Field::primitive("level", type_id::UINT8),
            Field::primitive("name", type_id::STRING),
            Field::primitive("msg", type_id::STRING),
            Field::primitive("file", type_id::STRING),
            Field::primitive("function", type_id::STRING),
            Field::primitive("line", type_id::UINT32),
        ],
    )
}
