//! Registering a QoS event callback: a guard condition of the node that tells the callback
//! the total and the change since its last call, and at once what came before it was
//! registered.

use super::counters::Counter;
use super::{
    DeadlineMissed, EndpointEvents, IncompatibleQos, IncompatibleType, LivelinessChanged,
    LivelinessLost, Matched, MessageLost, QosEventHandler,
};
use crate::exec::GuardCondition;
use crate::graph::node::Node;
use std::sync::Arc;

impl EndpointEvents {
    pub(crate) fn on_deadline_missed(
        self: &Arc<Self>,
        node: &Node,
        callback: impl Fn(DeadlineMissed) + Send + Sync + 'static,
    ) -> QosEventHandler {
        self.on_count(
            node,
            "deadline missed",
            |e| &e.deadline,
            callback,
            |_, t, c| DeadlineMissed {
                total_count: t,
                total_count_change: c,
            },
        )
    }

    pub(crate) fn on_liveliness_lost(
        self: &Arc<Self>,
        node: &Node,
        callback: impl Fn(LivelinessLost) + Send + Sync + 'static,
    ) -> QosEventHandler {
        self.on_count(
            node,
            "liveliness lost",
            |e| &e.liveliness_lost,
            callback,
            |_, t, c| LivelinessLost {
                total_count: t,
                total_count_change: c,
            },
        )
    }

    pub(crate) fn on_message_lost(
        self: &Arc<Self>,
        node: &Node,
        callback: impl Fn(MessageLost) + Send + Sync + 'static,
    ) -> QosEventHandler {
        self.on_count(
            node,
            "message lost",
            |e| &e.message_lost,
            callback,
            |_, t, c| MessageLost {
                total_count: t,
                total_count_change: c,
            },
        )
    }

    pub(crate) fn on_incompatible_qos(
        self: &Arc<Self>,
        node: &Node,
        callback: impl Fn(IncompatibleQos) + Send + Sync + 'static,
    ) -> QosEventHandler {
        fn counter(e: &EndpointEvents) -> &Counter {
            &e.incompatible.counter
        }
        self.on_count(node, "incompatible qos", counter, callback, |e, t, c| {
            IncompatibleQos {
                total_count: t,
                total_count_change: c,
                last_policy: *e.incompatible.last_policy.lock(),
            }
        })
    }

    pub(crate) fn on_incompatible_type(
        self: &Arc<Self>,
        node: &Node,
        callback: impl Fn(IncompatibleType) + Send + Sync + 'static,
    ) -> QosEventHandler {
        self.on_count(
            node,
            "incompatible type",
            |e| &e.other_type,
            callback,
            |_, t, c| IncompatibleType {
                total_count: t,
                total_count_change: c,
            },
        )
    }

    /// Registers `callback` for the events `counter` counts: a guard condition of `node`
    /// that tells it the total and the change since its last call, `status` made of them.
    fn on_count<S: 'static>(
        self: &Arc<Self>,
        node: &Node,
        label: &str,
        counter: fn(&EndpointEvents) -> &Counter,
        callback: impl Fn(S) + Send + Sync + 'static,
        status: fn(&EndpointEvents, u64, u64) -> S,
    ) -> QosEventHandler {
        let me = Arc::downgrade(self);
        let guard = node.create_guard_condition(&format!("qos event: {label}"), move || {
            if let Some(me) = me.upgrade() {
                let (total, change) = counter(&me).take();
                if change > 0 {
                    callback(status(&me, total, change));
                }
            }
        });
        counter(self).listener.set(&guard);
        pending_now(counter(self).total() > 0, &guard);
        QosEventHandler { _guard: guard }
    }

    pub(crate) fn on_liveliness_changed(
        self: &Arc<Self>,
        node: &Node,
        callback: impl Fn(LivelinessChanged) + Send + Sync + 'static,
    ) -> QosEventHandler {
        let me = Arc::downgrade(self);
        let guard = node.create_guard_condition("qos event: liveliness changed", move || {
            if let Some(me) = me.upgrade() {
                let alive = &me.alive_publishers;
                let now = *alive.now.lock();
                let before = std::mem::replace(&mut *alive.reported.lock(), now);
                if now != before {
                    callback(LivelinessChanged {
                        alive_count: now.0,
                        not_alive_count: now.1,
                        alive_count_change: now.0 as i64 - before.0 as i64,
                        not_alive_count_change: now.1 as i64 - before.1 as i64,
                    });
                }
            }
        });
        self.alive_publishers.listener.set(&guard);
        let now = *self.alive_publishers.now.lock();
        pending_now(now != *self.alive_publishers.reported.lock(), &guard);
        QosEventHandler { _guard: guard }
    }

    pub(crate) fn on_matched(
        self: &Arc<Self>,
        node: &Node,
        callback: impl Fn(Matched) + Send + Sync + 'static,
    ) -> QosEventHandler {
        let me = Arc::downgrade(self);
        let guard = node.create_guard_condition("qos event: matched", move || {
            if let Some(me) = me.upgrade() {
                let now = *me.matched.now.lock();
                let before = std::mem::replace(&mut *me.matched.reported.lock(), now);
                if now != before {
                    callback(Matched {
                        total_count: now.0,
                        total_count_change: now.0 - before.0,
                        current_count: now.1,
                        current_count_change: now.1 as i64 - before.1 as i64,
                    });
                }
            }
        });
        self.matched.listener.set(&guard);
        let now = *self.matched.now.lock();
        pending_now(now != *self.matched.reported.lock(), &guard);
        QosEventHandler { _guard: guard }
    }
}

/// Events counted before the callback was registered are told to it at once.
fn pending_now(any: bool, guard: &GuardCondition) {
    if any {
        guard.inner.trigger_coalesced();
    }
}
