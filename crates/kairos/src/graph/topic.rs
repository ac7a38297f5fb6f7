//! A topic: the subscriptions a publish reaches, and the last message kept for late
//! transient-local subscribers. Registration and delivery share one lock, so a subscription
//! created during a publish gets that message exactly once, from the publish or the latch.

use super::subscription::{Envelope, SubInner};
use parking_lot::Mutex;
use std::sync::Arc;

pub(crate) struct Topic<T> {
    pub(crate) name: Arc<str>,
    state: Mutex<TopicState<T>>,
}

struct TopicState<T> {
    subscriptions: Vec<Arc<SubInner<T>>>,
    latched: Option<Envelope<T>>,
}

impl<T: Send + Sync + 'static> Topic<T> {
    pub(crate) fn new(name: &str) -> Self {
        Self {
            name: name.into(),
            state: Mutex::new(TopicState {
                subscriptions: Vec::new(),
                latched: None,
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
        if latch {
            state.latched = Some(message);
        }
        reached
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
