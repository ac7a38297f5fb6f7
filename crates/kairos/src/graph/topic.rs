//! A topic: the subscriptions a publish reaches, and the last message kept for late
//! transient-local subscribers. Registration and delivery share one lock, so a subscription
//! created during a publish gets that message exactly once, from the publish or the latch.

use super::subscription::{Envelope, SubInner};
use parking_lot::Mutex;
use std::sync::Arc;

/// Called with every message published on a topic, after delivery, outside the topic's
/// lock (the `/clock` topic drives the context's simulated clock this way).
pub(crate) type Listener<T> = Arc<dyn Fn(&T) + Send + Sync>;

pub(crate) struct Topic<T> {
    pub(crate) name: Arc<str>,
    state: Mutex<TopicState<T>>,
}

struct TopicState<T> {
    subscriptions: Vec<Arc<SubInner<T>>>,
    latched: Option<Envelope<T>>,
    listeners: Vec<Listener<T>>,
}

impl<T: Send + Sync + 'static> Topic<T> {
    pub(crate) fn new(name: &str) -> Self {
        Self {
            name: name.into(),
            state: Mutex::new(TopicState {
                subscriptions: Vec::new(),
                latched: None,
                listeners: Vec::new(),
            }),
        }
    }

    /// Delivers `message` to every subscription; `latch` keeps it for late subscribers.
    pub(crate) fn publish(&self, message: Envelope<T>, latch: bool) -> usize {
        let mut state = self.state.lock();
        for subscription in &state.subscriptions {
            subscription.deliver(message.clone());
        }
        let reached = state.subscriptions.len();
        let listeners = (!state.listeners.is_empty()).then(|| state.listeners.clone());
        if latch {
            state.latched = Some(message.clone());
        }
        drop(state);
        for listener in listeners.iter().flatten() {
            listener(&message.message);
        }
        reached
    }

    /// Calls `listener` with every later message, and now with the latched one if any.
    pub(crate) fn listen(&self, listener: Listener<T>) {
        let latched = {
            let mut state = self.state.lock();
            state.listeners.push(listener.clone());
            state.latched.clone()
        };
        if let Some(last) = latched {
            listener(&last.message);
        }
    }

    pub(crate) fn subscribe(&self, subscription: Arc<SubInner<T>>) {
        let mut state = self.state.lock();
        if subscription.qos.is_transient_local()
            && let Some(last) = &state.latched
        {
            subscription.deliver(last.clone());
        }
        state.subscriptions.push(subscription);
    }

    pub(crate) fn unsubscribe(&self, subscription: &Arc<SubInner<T>>) {
        self.state
            .lock()
            .subscriptions
            .retain(|s| !Arc::ptr_eq(s, subscription));
    }

    pub(crate) fn subscription_count(&self) -> usize {
        self.state.lock().subscriptions.len()
    }
}
