//! Lifecycle publishers: publishers that publish only while their node is active.

use kairos::graph::{Payload, Publisher};
use kairos::logging::Logger;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Whether a managed entity may act, set by its node's transitions: open while the node is
/// `Activating` or `Active`. [`LifecyclePublisher`] is one; an entity kairos does not
/// type (a Python publisher) asks [`LifecycleNode::activation`](crate::LifecycleNode::activation)
/// for one and checks it before each publish.
pub struct Activation {
    active: AtomicBool,
    /// Messages not published because the node was not active.
    dropped: AtomicU64,
    /// Whether this inactive period was reported already.
    reported: AtomicBool,
    topic: String,
    logger: Logger,
}

impl Activation {
    pub(crate) fn new(topic: String, logger: Logger, active: bool) -> Arc<Self> {
        Arc::new(Activation {
            active: AtomicBool::new(active),
            dropped: AtomicU64::new(0),
            reported: AtomicBool::new(false),
            topic,
            logger,
        })
    }

    pub(crate) fn set_active(&self, active: bool) {
        if active {
            self.reported.store(false, Ordering::Relaxed);
        }
        self.active.store(active, Ordering::Release);
    }

    /// Whether the entity may act now.
    pub fn is_active(&self) -> bool {
        self.active.load(Ordering::Acquire)
    }

    /// Counts a publish that did not happen because the node was not active, and reports
    /// the first of each inactive period on the node's logger.
    pub fn refuse(&self) {
        self.dropped.fetch_add(1, Ordering::Relaxed);
        if !self.reported.swap(true, Ordering::Relaxed) {
            self.logger.warn(format_args!(
                "a message on '{}' was not published: the node is not active (activate it first; every such message is counted)",
                self.topic
            ));
        }
    }

    /// Publishes refused so far.
    pub fn refused(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

impl fmt::Debug for Activation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Activation")
            .field("topic", &self.topic)
            .field("active", &self.is_active())
            .finish()
    }
}

/// A publisher managed by a [`LifecycleNode`](crate::LifecycleNode): it publishes while
/// the node is active (and while `on_activate` runs, so activation may publish a first
/// message); otherwise a publish sends nothing, is counted
/// ([`dropped_while_inactive`](Self::dropped_while_inactive)) and is reported on the
/// node's logger once per inactive period: never dropped silently.
pub struct LifecyclePublisher<T: Payload> {
    publisher: Publisher<T>,
    gate: Arc<Activation>,
}

impl<T: Payload> LifecyclePublisher<T> {
    pub(crate) fn new(publisher: Publisher<T>, gate: Arc<Activation>) -> Self {
        LifecyclePublisher { publisher, gate }
    }

    /// Publishes `message` if the node is active; how many subscriptions of this process
    /// took it (0 when it was not published).
    pub fn publish(&self, message: T) -> usize {
        if self.gate.is_active() {
            return self.publisher.publish(message);
        }
        self.gate.refuse();
        0
    }

    /// Whether a publish now would publish.
    pub fn is_activated(&self) -> bool {
        self.gate.is_active()
    }

    /// Messages not published because the node was not active.
    pub fn dropped_while_inactive(&self) -> u64 {
        self.gate.refused()
    }

    /// The topic's resolved name.
    pub fn topic(&self) -> &str {
        &self.gate.topic
    }
}

impl<T: Payload> fmt::Debug for LifecyclePublisher<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LifecyclePublisher")
            .field("topic", &self.gate.topic)
            .field("activated", &self.is_activated())
            .finish()
    }
}
