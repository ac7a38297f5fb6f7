//! A topic: the subscriptions a publish reaches, and the last message kept for late
//! transient-local subscribers.
//!
//! # Ground rules
//! - The subscriber set (subscriptions and listeners) is copy-on-write: every change is
//!   made under `state`'s lock, which then publishes a new immutable [`Reach`] in `reach`.
//!   A volatile publish reads `reach` without a lock (one `arc-swap` load, no reference
//!   count touched) and delivers to what it read: a subscription created during that
//!   publish may or may not get the message, as for any publish that races a subscribe;
//!   one removed during it may still have the message queued, and is never run again.
//! - A latching (transient-local) publish takes `state`'s lock, delivers under it and
//!   keeps the message there, and a subscription registers under the same lock: a
//!   subscription created during such a publish gets that message exactly once, from the
//!   publish or from the latch.
//! - Listeners hear a message before any subscription gets it, outside the lock: the
//!   simulated clocks listen to `/clock`, so a callback that receives a `/clock` message
//!   already reads that time from its node clock (and a listener may wait for callbacks
//!   that publish on the same topic).

use super::pool::MessagePool;
use super::subscription::{Envelope, SubInner};
use arc_swap::ArcSwap;
use parking_lot::Mutex;
use std::sync::Arc;

/// Called with every message published on a topic, before delivery, outside the topic's
/// lock (the `/clock` topic drives the context's simulated clock this way).
pub(crate) type Listener<T> = Arc<dyn Fn(&T) + Send + Sync>;

pub(crate) struct Topic<T> {
    pub(crate) name: Arc<str>,
    /// What a publish reaches, replaced (under `state`'s lock) on every change.
    reach: ArcSwap<Reach<T>>,
    state: Mutex<TopicState<T>>,
    /// The boxes of messages its subscriptions are done with, for the next publish.
    pub(crate) pool: Arc<MessagePool<T>>,
}

/// One version of the subscriber set.
struct Reach<T> {
    subscriptions: Vec<Arc<SubInner<T>>>,
    listeners: Vec<Listener<T>>,
}

impl<T> Clone for Reach<T> {
    fn clone(&self) -> Self {
        Reach {
            subscriptions: self.subscriptions.clone(),
            listeners: self.listeners.clone(),
        }
    }
}

struct TopicState<T> {
    latched: Option<Envelope<T>>,
}

impl<T: Send + Sync + 'static> Topic<T> {
    pub(crate) fn new(name: &str) -> Self {
        Self {
            name: name.into(),
            reach: ArcSwap::from_pointee(Reach {
                subscriptions: Vec::new(),
                listeners: Vec::new(),
            }),
            state: Mutex::new(TopicState { latched: None }),
            pool: Arc::new(MessagePool::new()),
        }
    }

    /// Delivers `message` to every subscription; `latch` keeps it for late subscribers.
    pub(crate) fn publish(&self, message: Envelope<T>, latch: bool) -> usize {
        if latch {
            return self.publish_latched(message);
        }
        let reach = self.reach.load();
        deliver(&reach, message)
    }

    fn publish_latched(&self, message: Envelope<T>) -> usize {
        // Listeners first (see `deliver`), outside the lock: a listener may wait for
        // callbacks that publish on this topic.
        for listener in &self.reach.load().listeners {
            listener(&message.message);
        }
        // Under the lock, so that the latched message is the one subscriptions got last.
        let mut state = self.state.lock();
        let reach = self.reach.load_full();
        for subscription in &reach.subscriptions {
            subscription.deliver(message.clone());
        }
        state.latched = Some(message);
        reach.subscriptions.len()
    }

    /// Applies `change` to a copy of the subscriber set and publishes the copy; called
    /// under `state`'s lock (the guard is the proof).
    fn change(&self, _locked: &TopicState<T>, change: impl FnOnce(&mut Reach<T>)) {
        let mut next = Reach::clone(&self.reach.load());
        change(&mut next);
        self.reach.store(Arc::new(next));
    }

    /// Calls `listener` with every later message, and now with the latched one if any.
    pub(crate) fn listen(&self, listener: Listener<T>) {
        let latched = {
            let state = self.state.lock();
            self.change(&state, |reach| reach.listeners.push(listener.clone()));
            state.latched.clone()
        };
        if let Some(last) = latched {
            listener(&last.message);
        }
    }

    pub(crate) fn subscribe(&self, subscription: Arc<SubInner<T>>) {
        let state = self.state.lock();
        if subscription.qos.is_transient_local()
            && let Some(last) = &state.latched
        {
            subscription.deliver(last.clone());
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

    pub(crate) fn subscription_count(&self) -> usize {
        self.reach.load().subscriptions.len()
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
