//! ROS 1 tracetools events (`roscpp:*`).
//!
//! The publisher queues a message (`publisher_message_queued`, by buffer address), writes
//! it to each subscriber link (`subscriber_link_message_write`) or drops it
//! (`subscriber_link_message_dropped`). The subscriber queues what it receives
//! (`subscription_message_queued`), drops on overflow (`subscription_message_dropped`)
//! and runs the callback (`subscriber_callback_start/end`). The trace has no id that
//! crosses the connection, so a received message is linked to the oldest message written
//! on that topic and not yet received (TCP keeps order on a connection).

use kairos_trace::read::EventRef;

use super::{At, Builder, Handle, Key, MsgKey};
use crate::model::{
    Delivery, Endpoint, Link, NodeId, Owner, PublisherId, QueueKind, SubscriptionId, Topic,
};

pub(super) fn event(b: &mut Builder, at: At, name: &str, ev: &EventRef<'_>) {
    let pid = at.pid;
    let h = |f: &str| ev.u64(f).unwrap_or(0);
    let topic = || -> Topic { Topic::from(ev.str("topic").or(ev.str("name")).unwrap_or("?")) };
    match name {
        "init_node" => {
            let node = ev.str("node_name").unwrap_or("?").to_string();
            b.node(pid, 0, node);
        }
        "new_connection" => match ev.str("channel_type") {
            Some("TransportPublisherLink") => {
                ros1_subscription_for_topic(b, pid, &topic());
            }
            Some("TransportSubscriberLink") => {
                ros1_publisher(b, pid, &topic());
            }
            _ => {}
        },
        "subscriber_callback_added" => {
            let s = ros1_subscription(b, pid, h("queue_ref"), None);
            let cb = b.callback(pid, h("callback_ref"));
            b.set_owner(cb, Owner::Subscription(s));
        }
        "ptr_name_info" => {
            let cb = b.callback(pid, h("callback_ref"));
            b.m.callbacks[cb].symbol = ev.str("function_name").map(symbol_of);
        }
        "publisher_message_queued" => {
            let t = topic();
            let p = ros1_publisher(b, pid, &t);
            let q = b.queue(QueueKind::Publisher, p.0);
            b.queue_change(q, at.ts, 1, None);
            if let Some(msg) = b.publish(at, Some(p), t) {
                b.thread(at).publishing = None;
                b.key(MsgKey::Ros1Buf(pid, h("buffer_ref")), msg);
            }
        }
        "subscriber_link_message_write" | "subscriber_link_message_dropped" => {
            let msg = b
                .messages
                .get(&MsgKey::Ros1Buf(pid, h("message_ref")))
                .copied();
            let publisher = msg.and_then(|m| b.live.get(m)?.publisher);
            let Some(p) = publisher else { return };
            let q = b.queue(QueueKind::Publisher, p.0);
            if name == "subscriber_link_message_write" {
                b.queue_change(q, at.ts, -1, None);
                if let Some(m) = msg
                    && let Some(x) = b.msg_mut(m, at.ts)
                {
                    x.sent.get_or_insert(at.ts);
                    let t = x.topic.clone();
                    b.ros1_in_flight.entry(t).or_default().push_back(m);
                }
            } else {
                if let Some(m) = msg
                    && let Some(x) = b.msg_mut(m, at.ts)
                {
                    x.dropped_by_publisher = Some(at.ts);
                }
                b.queue_drop(q, at.ts, msg, None);
            }
        }
        "subscription_message_queued" | "subscription_message_dropped" => {
            let t = topic();
            let s = ros1_subscription(b, pid, h("queue_ref"), Some(&t));
            let q = b.queue(QueueKind::Subscription, s.0);
            let msg_ref = h("message_ref");
            if name == "subscription_message_queued" {
                b.queue_change(q, at.ts, 1, None);
                if b.follow {
                    let in_flight = loop {
                        match b.ros1_in_flight.get_mut(&t).and_then(|f| f.pop_front()) {
                            Some(m) if b.live.get(m).is_none() => continue,
                            other => break other,
                        }
                    };
                    let (m, link) = match in_flight {
                        Some(m) => (m, Some(Link::TransportOrder)),
                        None => (b.orphan(at.ts, t), None),
                    };
                    let d = b.deliver(
                        m,
                        at.ts,
                        Delivery {
                            subscription: Some(s),
                            link,
                            enqueued: Some(at.ts),
                            ..Delivery::default()
                        },
                    );
                    if let Some(d) = d {
                        b.ros1_received.insert(Handle::new(pid, msg_ref), d);
                        if let Some(slot) = b.live.slot_mut(m) {
                            slot.keys.push(Key::Ros1Received(Handle::new(pid, msg_ref)));
                        }
                    }
                }
            } else {
                let md = b.ros1_received.get(&Handle::new(pid, msg_ref)).copied();
                if let Some(d) = md
                    && let Some(del) = b.delivery_mut(d, at.ts)
                {
                    del.dropped = Some(at.ts);
                }
                b.queue_drop(q, at.ts, md.map(|d| d.message), None);
            }
        }
        "subscriber_callback_start" => {
            let s = ros1_subscription(b, pid, h("queue_ref"), ev.str("topic"));
            let cb = b.callback(pid, h("callback_ref"));
            if b.m.callbacks[cb].owner == Owner::Unknown {
                b.set_owner(cb, Owner::Subscription(s));
            }
            let q = b.queue(QueueKind::Subscription, s.0);
            b.queue_change(q, at.ts, -1, None);
            b.m.subscriptions[s].takes.taken += 1;
            // Taking the message and starting its callback are one event in ROS 1.
            let consumed = b.ros1_received.remove(&Handle::new(pid, h("message_ref")));
            b.callback_start(at, cb, consumed);
        }
        "subscriber_callback_end" => {
            let cb = b.callback(pid, h("callback_ref"));
            b.callback_end(at, cb);
        }
        _ => {}
    }
}

/// The node of a ROS 1 process (one per process).
fn node_of(b: &Builder, pid: i64) -> Option<NodeId> {
    b.nodes.get(&Handle::new(pid, 0)).copied()
}

fn ros1_publisher(b: &mut Builder, pid: i64, topic: &str) -> PublisherId {
    if let Some(&p) = b.ros1_publishers.get(&(pid, topic.to_string())) {
        return p;
    }
    let node = node_of(b, pid);
    let i = PublisherId(b.m.publishers.len());
    b.m.publishers
        .push(Endpoint::new(pid, node, Topic::from(topic), None));
    b.ros1_publishers.insert((pid, topic.to_string()), i);
    i
}

/// The subscription of a process's callback queue entry, created on first sight; its
/// topic is filled in when an event names it.
fn ros1_subscription(
    b: &mut Builder,
    pid: i64,
    queue_ref: u64,
    topic: Option<&str>,
) -> SubscriptionId {
    let s = match b.subscriptions.get(&Handle::new(pid, queue_ref)) {
        Some(&s) => s,
        None => {
            let node = node_of(b, pid);
            b.subscription(pid, queue_ref, node, Topic::from("?"), None)
        }
    };
    if let Some(t) = topic
        && &*b.m.subscriptions[s].topic == "?"
    {
        b.m.subscriptions[s].topic = Topic::from(t);
    }
    s
}

/// Makes sure a process that subscribes to `topic` (seen from its connection) has a
/// subscription on it.
fn ros1_subscription_for_topic(b: &mut Builder, pid: i64, topic: &str) {
    if b.m
        .subscriptions
        .iter()
        .any(|e| e.pid == pid && (&*e.topic == topic || &*e.topic == "?"))
    {
        return;
    }
    let node = node_of(b, pid);
    b.m.subscriptions
        .push(Endpoint::new(pid, node, Topic::from(topic), None));
}

/// `/path/lib(_ZSymbol+0x12) [0x...]` -> `_ZSymbol`.
fn symbol_of(function_name: &str) -> String {
    function_name
        .split_once('(')
        .and_then(|(_, rest)| rest.split(['+', ')']).next())
        .filter(|s| !s.is_empty())
        .unwrap_or(function_name)
        .to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn symbol_is_cut_out_of_a_backtrace_line() {
        assert_eq!(
            super::symbol_of("/lib/rosout(_ZN6Rosout4cbE+0) [0x55]"),
            "_ZN6Rosout4cbE"
        );
        assert_eq!(super::symbol_of("plain"), "plain");
    }
}
