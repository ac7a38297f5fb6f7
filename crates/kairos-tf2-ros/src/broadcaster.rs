//! Broadcasters: transforms out on `/tf` and `/tf_static`, as tf2_ros sends them.
//!
//! What this module promises:
//! - **tf2_ros's topics and QoS.** [`TransformBroadcaster`] publishes
//!   `tf2_msgs/msg/TFMessage` on `/tf`, keep-last 100, reliable, volatile;
//!   [`StaticTransformBroadcaster`] on `/tf_static`, keep-last 1, reliable, transient
//!   local: a listener that starts later still receives the last message, so an rclcpp or
//!   rclpy listener and a kairos one hear the same transforms.
//! - **Static frames are never forgotten.** With keep-last 1, only the newest message
//!   reaches a late joiner, so the static broadcaster keeps every frame it ever sent (by
//!   `child_frame_id`, the newest transform of a frame replacing the older one) and sends
//!   the whole set each time, as tf2_ros's `StaticTransformBroadcaster` does.

use crate::convert::to_msg;
use kairos::graph::{GraphError, Node, Publisher, Qos};
use kairos_msgs::geometry_msgs::msg::TransformStamped as TransformStampedMsg;
use kairos_msgs::tf2_msgs::msg::TFMessage;
use kairos_tf2::TransformStamped;
use parking_lot::Mutex;

/// The topic of time-stamped transforms.
pub const TF_TOPIC: &str = "/tf";
/// The topic of static transforms.
pub const TF_STATIC_TOPIC: &str = "/tf_static";

/// `/tf`'s QoS, as tf2_ros's `DynamicBroadcasterQoS` and `DynamicListenerQoS`: the last
/// 100, reliable, volatile.
pub fn dynamic_qos() -> Qos {
    Qos::keep_last(100)
}

/// `/tf_static`'s QoS for a broadcaster, as tf2_ros's `StaticBroadcasterQoS`: the last 1,
/// reliable, transient local.
pub fn static_broadcaster_qos() -> Qos {
    Qos::keep_last(1).transient_local()
}

/// `/tf_static`'s QoS for a listener, as tf2_ros's `StaticListenerQoS`: the last 100,
/// reliable, transient local.
pub fn static_listener_qos() -> Qos {
    Qos::keep_last(100).transient_local()
}

/// Sends time-stamped transforms on `/tf`.
#[derive(Debug)]
pub struct TransformBroadcaster {
    publisher: Publisher<TFMessage>,
}

impl TransformBroadcaster {
    /// A broadcaster publishing on `node`'s `/tf`.
    ///
    /// # Errors
    ///
    /// As [`Node::create_publisher`].
    pub fn new(node: &Node) -> Result<TransformBroadcaster, GraphError> {
        Ok(TransformBroadcaster {
            publisher: node.create_publisher(TF_TOPIC, dynamic_qos())?,
        })
    }

    /// Sends one transform.
    pub fn send_transform(&self, transform: &TransformStamped) {
        self.send_transforms(std::slice::from_ref(transform));
    }

    /// Sends `transforms` in one message.
    pub fn send_transforms(&self, transforms: &[TransformStamped]) {
        self.publisher.publish(TFMessage {
            transforms: transforms.iter().map(to_msg).collect(),
        });
    }

    /// The publisher on `/tf` (its QoS, its counts, its events).
    pub fn publisher(&self) -> &Publisher<TFMessage> {
        &self.publisher
    }
}

/// Sends static transforms on `/tf_static`: every frame it was given so far, in each
/// message.
#[derive(Debug)]
pub struct StaticTransformBroadcaster {
    publisher: Publisher<TFMessage>,
    /// Every frame sent so far, in the order first sent, each with its newest transform.
    sent: Mutex<Vec<TransformStampedMsg>>,
}

impl StaticTransformBroadcaster {
    /// A broadcaster publishing on `node`'s `/tf_static`.
    ///
    /// # Errors
    ///
    /// As [`Node::create_publisher`].
    pub fn new(node: &Node) -> Result<StaticTransformBroadcaster, GraphError> {
        Ok(StaticTransformBroadcaster {
            publisher: node.create_publisher(TF_STATIC_TOPIC, static_broadcaster_qos())?,
            sent: Mutex::new(Vec::new()),
        })
    }

    /// Adds `transform` to the set (replacing the frame's previous transform) and sends
    /// the whole set.
    pub fn send_transform(&self, transform: &TransformStamped) {
        self.send_transforms(std::slice::from_ref(transform));
    }

    /// Adds each of `transforms` to the set and sends the whole set, in one message.
    pub fn send_transforms(&self, transforms: &[TransformStamped]) {
        // Under the lock until published: two threads sending at once publish their sets
        // in the order they updated them, so the last message holds every frame.
        let mut sent = self.sent.lock();
        for transform in transforms {
            let msg = to_msg(transform);
            match sent
                .iter_mut()
                .find(|s| s.child_frame_id == msg.child_frame_id)
            {
                Some(old) => *old = msg,
                None => sent.push(msg),
            }
        }
        self.publisher.publish(TFMessage {
            transforms: sent.clone(),
        });
    }

    /// How many frames the set holds.
    pub fn frames(&self) -> usize {
        self.sent.lock().len()
    }

    /// The publisher on `/tf_static`.
    pub fn publisher(&self) -> &Publisher<TFMessage> {
        &self.publisher
    }
}
