//! The names and QoS of an action's five entities (ROS 2's actions design; rcl_action's
//! default profiles).

use kairos::graph::{GraphError, NameKind, Node, Qos};

/// The resolved names of action `name`'s services and topics.
pub(crate) struct ActionNames {
    pub(crate) action: String,
    pub(crate) send_goal: String,
    pub(crate) cancel_goal: String,
    pub(crate) get_result: String,
    pub(crate) feedback: String,
    pub(crate) status: String,
}

impl ActionNames {
    /// `name` resolved against `node` (namespace, `~`, remaps), then its five entities.
    pub(crate) fn resolve(node: &Node, name: &str) -> Result<Self, GraphError> {
        let action = node.resolve_name(NameKind::Service, name)?;
        let entity = |suffix: &str| format!("{action}/_action/{suffix}");
        Ok(ActionNames {
            send_goal: entity("send_goal"),
            cancel_goal: entity("cancel_goal"),
            get_result: entity("get_result"),
            feedback: entity("feedback"),
            status: entity("status"),
            action,
        })
    }
}

/// `_action/status`: the last status array, kept for late clients.
pub(crate) const STATUS_QOS: Qos = Qos::keep_last(1).transient_local();

/// `_action/feedback`: rcl_action's default topic profile.
pub(crate) const FEEDBACK_QOS: Qos = Qos::keep_last(10);
