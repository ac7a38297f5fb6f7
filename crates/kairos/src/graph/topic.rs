//! A topic: the subscriptions a publish reaches, and the history of its transient-local
//! publishers kept for late joiners (see `graph::history`).
//!
//! # Ground rules
//! - The subscriber set (subscriptions and listeners) is copy-on-write: every change is
//!   made under `state`'s lock, which then publishes a new immutable [`Reach`] in `reach`.
//!   A volatile publish reads `reach` without a lock (one `arc-swap` load, no reference
//!   count touched) and delivers to what it read: a subscription created during that
//!   publish may or may not get the message, as for any publish that races a subscribe;
//!   one removed during it may still have the message queued, and is never run again.
//! - A latching (transient-local) publish takes `state`'s lock, delivers under it and
//!   keeps the message in its publisher's history there, and a subscription registers
//!   under the same lock: a subscription created during such a publish gets that message
//!   exactly once, from the publish or from the history.
//! - Listeners hear a message before any subscription gets it, outside the lock: the
//!   simulated clocks listen to `/clock`, so a callback that receives a `/clock` message
//!   already reads that time from its node clock (and a listener may wait for callbacks
//!   that publish on the same topic).
//! - One ROS type may reach a process as two Rust types: the runtime's `/rosout` line and
//!   the generated `rcl_interfaces/msg/Log`, or two crates' generated `std_msgs`. A topic
//!   of each is made, and the two are *twins*: a publish on one is converted through CDR
//!   (as a transport would carry it) and delivered on the other, with the publisher's
//!   handle and sequence number, so the trace links it. Twins are told in an order that
//!   keeps "listeners first": a twin with listeners hears before the others' subscriptions.
//!   A twin is never told while a topic's lock is held, so two twins publishing latched
//!   messages at once cannot wait on each other.

use super::history::History;
use super::pool::MessagePool;
use super::subscription::{Envelope, SubInner};
use arc_swap::ArcSwap;
use kairos_interface::Wire;
use parking_lot::Mutex;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Called with every message published on a topic, before delivery, outside the topic's
/// lock (the `/clock` topic drives the context's simulated clock this way).
pub(crate) type Listener<T> = Arc<dyn Fn(&T) + Send + Sync>;

pub(crate) struct Topic<T> {
    pub(crate) name: Arc<str>,
    /// How `T` is written as CDR, for its twins; `None` for in-process payloads, which
    /// have no twins.
    wire: Option<Wire>,
    /// What a publish reaches, replaced (under `state`'s lock) on every change.
    reach: ArcSwap<Reach<T>>,
    /// Whether `reach` holds anything, set with it: a publisher whose messages only leave
    /// the process reads this one word instead of the set.
    reaches_any: AtomicBool,
    state: Mutex<TopicState<T>>,
    /// The boxes of messages its subscriptions are done with, for the next publish.
    pub(crate) pool: Arc<MessagePool<T>>,
}

/// One version of the subscriber set.
struct Reach<T> {
    subscriptions: Vec<Arc<SubInner<T>>>,
    listeners: Vec<Listener<T>>,
    /// The topics of the same name and ROS type, of other Rust types.
    twins: Vec<Arc<dyn Twin>>,
}

impl<T> Clone for Reach<T> {
    fn clone(&self) -> Self {
        Reach {
            subscriptions: self.subscriptions.clone(),
            listeners: self.listeners.clone(),
            twins: self.twins.clone(),
        }
    }
}

/// A topic as its twins see it: messages arrive as CDR, in its own Rust type.
pub(crate) trait Twin: Send + Sync {
    /// Decodes `cdr` and delivers it on this topic only (not on to its own twins); `keep`
    /// is the history depth of a transient-local publisher.
    fn deliver_cdr(&self, cdr: &[u8], from: Origin, keep: Option<usize>) -> usize;
    /// Tells this topic of `twin`.
    fn add_twin(&self, twin: Arc<dyn Twin>);
    /// Whether anything listens here (see the ground rules: listeners hear first).
    fn has_listeners(&self) -> bool;
    /// Subscriptions of this topic alone.
    fn own_subscription_count(&self) -> usize;
    /// The kept history as CDR, in publish order with each publisher's depth, for a twin
    /// made after it was published.
    fn kept_cdr(&self) -> Vec<(Vec<u8>, Origin, usize)>;
    /// Forgets what `publisher` kept on this topic alone.
    fn forget_kept(&self, publisher: u64);
}

/// Who published a message a twin forwards, kept so the trace links the delivery.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Origin {
    publisher: u64,
    seq: u64,
    stamp: i64,
    expires: i64,
}

impl<T> From<&Envelope<T>> for Origin {
    fn from(envelope: &Envelope<T>) -> Self {
        Origin {
            publisher: envelope.publisher,
            seq: envelope.seq,
            stamp: envelope.stamp,
            expires: envelope.expires,
        }
    }
}

struct TopicState<T> {
    history: History<T>,
}

impl<T: Send + Sync + 'static> Topic<T> {
    pub(crate) fn new(name: &str, wire: Option<Wire>) -> Self {
        Self {
            name: name.into(),
            wire,
            reach: ArcSwap::from_pointee(Reach {
                subscriptions: Vec::new(),
                listeners: Vec::new(),
                twins: Vec::new(),
            }),
            reaches_any: AtomicBool::new(false),
            state: Mutex::new(TopicState {
                history: History::new(),
            }),
            pool: Arc::new(MessagePool::new()),
        }
    }

    /// Delivers `message` to every subscription, here and on the twins; `keep` (a
    /// transient-local publisher's history depth) keeps it for late subscribers.
    pub(crate) fn publish(&self, message: Envelope<T>, keep: Option<usize>) -> usize {
        let reach = self.reach.load();
        if reach.twins.is_empty() {
            if let Some(depth) = keep {
                drop(reach);
                return self.publish_latched(message, depth);
            }
            return deliver(&reach, message);
        }
        let twins = reach.twins.clone();
        drop(reach);
        self.publish_with_twins(message, keep, &twins)
    }

    fn publish_here(&self, message: Envelope<T>, keep: Option<usize>) -> usize {
        match keep {
            Some(depth) => self.publish_latched(message, depth),
            None => deliver(&self.reach.load(), message),
        }
    }

    /// A publish on a topic with twins: converted once, then told to each, in the order
    /// that keeps listeners first.
    fn publish_with_twins(
        &self,
        message: Envelope<T>,
        keep: Option<usize>,
        twins: &[Arc<dyn Twin>],
    ) -> usize {
        let origin = Origin::from(&message);
        let cdr = self.wire.and_then(|wire| wire.encode(&*message.message));
        let Some(cdr) = cdr else {
            return self.publish_here(message, keep);
        };
        let (first, rest): (Vec<_>, Vec<_>) = if self.has_listeners() {
            (Vec::new(), twins.iter().collect())
        } else {
            twins.iter().partition(|twin| twin.has_listeners())
        };
        let mut reached = 0;
        for twin in first {
            reached += twin.deliver_cdr(&cdr, origin, keep);
        }
        reached += self.publish_here(message, keep);
        for twin in rest {
            reached += twin.deliver_cdr(&cdr, origin, keep);
        }
        reached
    }

    fn publish_latched(&self, message: Envelope<T>, depth: usize) -> usize {
        // Listeners first (see `deliver`), outside the lock: a listener may wait for
        // callbacks that publish on this topic.
        for listener in &self.reach.load().listeners {
            listener(&message.message);
        }
        // Under the lock, so that the history ends with what subscriptions got last.
        let mut state = self.state.lock();
        let reach = self.reach.load_full();
        for subscription in &reach.subscriptions {
            subscription.deliver(message.clone());
        }
        state.history.keep(message, depth);
        reach.subscriptions.len()
    }

    /// Applies `change` to a copy of the subscriber set and publishes the copy; called
    /// under `state`'s lock (the guard is the proof).
    fn change(&self, _locked: &TopicState<T>, change: impl FnOnce(&mut Reach<T>)) {
        let mut next = Reach::clone(&self.reach.load());
        change(&mut next);
        let any =
            !(next.subscriptions.is_empty() && next.listeners.is_empty() && next.twins.is_empty());
        self.reach.store(Arc::new(next));
        self.reaches_any.store(any, Ordering::Release);
    }

    /// Calls `listener` with every later message, and now with the newest kept one if
    /// any.
    pub(crate) fn listen(&self, listener: Listener<T>) {
        let latched = {
            let state = self.state.lock();
            self.change(&state, |reach| reach.listeners.push(listener.clone()));
            state.history.newest().cloned()
        };
        if let Some(last) = latched {
            listener(&last.message);
        }
    }

    pub(crate) fn subscribe(&self, subscription: Arc<SubInner<T>>) {
        let state = self.state.lock();
        if subscription.qos.is_transient_local() {
            for kept in state.history.for_late_joiner(subscription.qos.depth()) {
                subscription.deliver(kept.clone());
            }
        }
        self.change(&state, |reach| reach.subscriptions.push(subscription));
    }

    pub(crate) fn unsubscribe(&self, subscription: &Arc<SubInner<T>>) {
        let state = self.state.lock();
        self.change(&state, |reach| {
            reach
                .subscriptions
                .retain(|s| !Arc::ptr_eq(s, subscription))
        });
    }

    /// Whether anything in this process hears the topic: a subscription, a listener or a
    /// twin. Read without a lock; a publish racing a change sees either side of it (see the
    /// ground rules).
    pub(crate) fn reaches_any(&self) -> bool {
        self.reaches_any.load(Ordering::Acquire)
    }

    /// Subscriptions a publish here reaches, on the twins too.
    pub(crate) fn subscription_count(&self) -> usize {
        let reach = self.reach.load();
        let twins: usize = reach.twins.iter().map(|t| t.own_subscription_count()).sum();
        reach.subscriptions.len() + twins
    }
}

impl<T> Topic<T> {
    /// Forgets what `publisher` kept for late joiners (it was dropped), here and on the
    /// twins.
    pub(crate) fn forget_publisher(&self, publisher: u64) {
        self.state.lock().history.forget(publisher);
        for twin in &self.reach.load().twins {
            twin.forget_kept(publisher);
        }
    }
}

impl<T: Send + Sync + 'static> Twin for Topic<T> {
    fn deliver_cdr(&self, cdr: &[u8], from: Origin, keep: Option<usize>) -> usize {
        let decoded = self.wire.map(|wire| wire.decode(cdr));
        let Some(Ok(message)) = decoded else {
            // Twins are made only for one ROS type with one hash, so this is a codec bug.
            debug_assert!(false, "a twin of {} did not decode", self.name);
            return 0;
        };
        let Ok(message) = message.downcast::<T>() else {
            return 0;
        };
        let envelope = Envelope {
            message,
            publisher: from.publisher,
            seq: from.seq,
            stamp: from.stamp,
            expires: from.expires,
        };
        // A twin made during a latched publish may hear of it twice: from the history it
        // copied and from the publish.
        if keep.is_some() && self.state.lock().history.contains(from) {
            return 0;
        }
        self.publish_here(envelope, keep)
    }

    fn add_twin(&self, twin: Arc<dyn Twin>) {
        let state = self.state.lock();
        self.change(&state, |reach| reach.twins.push(twin));
    }

    fn has_listeners(&self) -> bool {
        !self.reach.load().listeners.is_empty()
    }

    fn own_subscription_count(&self) -> usize {
        self.reach.load().subscriptions.len()
    }

    fn forget_kept(&self, publisher: u64) {
        self.state.lock().history.forget(publisher);
    }

    fn kept_cdr(&self) -> Vec<(Vec<u8>, Origin, usize)> {
        let Some(wire) = self.wire else {
            return Vec::new();
        };
        let state = self.state.lock();
        state
            .history
            .all()
            .into_iter()
            .filter_map(|(message, depth)| {
                let cdr = wire.encode(&*message.message)?;
                Some((cdr, Origin::from(message), depth))
            })
            .collect()
    }
}

/// Tells the listeners of `reach` about `message`, then delivers it to every
/// subscription. Listeners first: the simulated clocks listen to `/clock`, so a callback
/// that receives a `/clock` message already reads that time from its node clock.
fn deliver<T: Send + Sync + 'static>(reach: &Reach<T>, message: Envelope<T>) -> usize {
    let count = reach.subscriptions.len();
    for listener in &reach.listeners {
        listener(&message.message);
    }
    if let [only] = reach.subscriptions.as_slice() {
        // The common case: the envelope moves into the one queue, no clone.
        only.deliver(message);
        return count;
    }
    for subscription in &reach.subscriptions {
        subscription.deliver(message.clone());
    }
    count
}
