//! [`TransformListener`]: fills a [`Buffer`] from `/tf` and `/tf_static`.
//!
//! What this module promises:
//! - **tf2_ros's subscriptions.** `/tf` keep-last 100, reliable, volatile; `/tf_static`
//!   keep-last 100, reliable, transient local (so the static frames sent before the
//!   listener started arrive too). Every transform of a message is stored, static ones as
//!   static, and the buffer's waiting lookups are woken once per message.
//! - **Authority.** kairos delivers no sender identity with a message, so every
//!   transform is stored with the authority `default_authority` (tf2_ros's default when
//!   the sender is unknown).
//! - **Nothing dropped silently.** A transform the buffer refuses (invalid, older than
//!   the cache keeps) is counted ([`TransformListener::rejected`]) and logged as a
//!   warning of the node, with tf2's error and its fix.
//! - **The listener's callbacks are in its node handle's callback group.** A waiting
//!   lookup made in a callback is checked against that group and executor (see
//!   [`Buffer`]'s promises): create the listener on
//!   `node.with_group(&node.create_callback_group(..))` to look up with a timeout from
//!   callbacks of the node's default group on a multi-threaded executor.

use crate::broadcaster::{TF_STATIC_TOPIC, TF_TOPIC, dynamic_qos, static_listener_qos};
use crate::buffer::Buffer;
use crate::convert::from_msg;
use kairos::graph::{GraphError, Node, Subscription};
use kairos_msgs::tf2_msgs::msg::TFMessage;
use kairos_tf2::TransformStamped;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The authority transforms are stored with when the sender is not known.
pub const DEFAULT_AUTHORITY: &str = "default_authority";

/// Subscribes `/tf` and `/tf_static` and stores every transform in a [`Buffer`]; dropping
/// it unsubscribes.
pub struct TransformListener {
    buffer: Buffer,
    key: u64,
    counts: Arc<Counts>,
    _tf: Subscription<TFMessage>,
    _tf_static: Subscription<TFMessage>,
}

#[derive(Debug, Default)]
struct Counts {
    stored: AtomicU64,
    rejected: AtomicU64,
}

impl TransformListener {
    /// A listener on `node` (its subscriptions in the callback group of this node handle;
    /// see [`Node::with_group`]) filling `buffer`.
    ///
    /// # Errors
    ///
    /// As [`Node::create_subscription`].
    pub fn new(node: &Node, buffer: Buffer) -> Result<TransformListener, GraphError> {
        let counts = Arc::new(Counts::default());
        let subscribe = |topic: &str, qos, is_static: bool| {
            let (buffer, counts) = (buffer.clone(), counts.clone());
            node.create_subscription(topic, qos, move |msg: &TFMessage| {
                let transforms: Vec<TransformStamped> =
                    msg.transforms.iter().map(from_msg).collect();
                let errors = buffer.set_transforms(&transforms, DEFAULT_AUTHORITY, is_static);
                let stored = (transforms.len() - errors.len()) as u64;
                counts.stored.fetch_add(stored, Ordering::Relaxed);
                counts
                    .rejected
                    .fetch_add(errors.len() as u64, Ordering::Relaxed);
                for error in errors {
                    log::warn!(
                        "transform from {topic_name} not stored: {error}",
                        topic_name = if is_static { TF_STATIC_TOPIC } else { TF_TOPIC }
                    );
                }
            })
        };
        let tf = subscribe(TF_TOPIC, dynamic_qos(), false)?;
        let tf_static = subscribe(TF_STATIC_TOPIC, static_listener_qos(), true)?;
        let key = buffer.add_listener(vec![tf.completer(), tf_static.completer()]);
        Ok(TransformListener {
            buffer,
            key,
            counts,
            _tf: tf,
            _tf_static: tf_static,
        })
    }

    /// The buffer it fills.
    pub fn buffer(&self) -> &Buffer {
        &self.buffer
    }

    /// Transforms stored so far.
    pub fn stored(&self) -> u64 {
        self.counts.stored.load(Ordering::Relaxed)
    }

    /// Transforms received that the buffer refused (each logged with its reason).
    pub fn rejected(&self) -> u64 {
        self.counts.rejected.load(Ordering::Relaxed)
    }
}

impl Drop for TransformListener {
    fn drop(&mut self) {
        self.buffer.remove_listener(self.key);
    }
}

impl fmt::Debug for TransformListener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TransformListener")
            .field("stored", &self.stored())
            .field("rejected", &self.rejected())
            .finish_non_exhaustive()
    }
}
