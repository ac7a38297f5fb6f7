//! ros2_tracing events (`ros2:*`, `dds:*`) and kairos events (`kairos:*`, plus the
//! `publisher_handle`/`seq` fields kairos adds to ros2_tracing's message events).
//!
//! A ROS 2 message is followed by the thread it is published on (`rcl_publish` then
//! `dds:write`, whose DDS source timestamp `rmw_take` reports on the subscriber side) and
//! by the thread that takes it (`rmw_take` then `callback_start`). A kairos message is
//! identified exactly by `(publisher_handle, seq)`. `rmw_take` with `taken = 0` found the
//! queue empty: it is counted, and creates no message.

use kairos_trace::read::EventRef;
use kairos_trace::schema::ClockKind;

use super::{At, Builder, Handle, MsgKey};
use crate::model::{
    CallbackId, ClockMark, ClockMarkKind, Delivery, DeliveryRef, LogLine, MessageId, Owner,
    QueueKind, SubscriptionId, Topic,
};

pub(super) fn event(b: &mut Builder, at: At, name: &str, ev: &EventRef<'_>) {
    let pid = at.pid;
    let h = |f: &str| ev.u64(f).unwrap_or(0);
    match name {
        "rcl_node_init" => {
            let name = ev.str("node_name").unwrap_or("?");
            let name = fully_qualified(ev.str("namespace").unwrap_or("/"), name);
            b.node(pid, h("node_handle"), name);
        }
        "rcl_publisher_init" => {
            let node = b.nodes.get(&Handle::new(pid, h("node_handle"))).copied();
            let topic = Topic::from(ev.str("topic_name").unwrap_or("?"));
            let p = b.publisher(
                pid,
                h("publisher_handle"),
                node,
                topic,
                ev.u64("queue_depth"),
            );
            b.publishers
                .insert(Handle::new(pid, h("rmw_publisher_handle")), p);
        }
        "rcl_subscription_init" => {
            let node = b.nodes.get(&Handle::new(pid, h("node_handle"))).copied();
            let topic = Topic::from(ev.str("topic_name").unwrap_or("?"));
            let s = b.subscription(
                pid,
                h("subscription_handle"),
                node,
                topic,
                ev.u64("queue_depth"),
            );
            b.subscriptions
                .insert(Handle::new(pid, h("rmw_subscription_handle")), s);
        }
        "rclcpp_subscription_init" => {
            if let Some(&s) = b
                .subscriptions
                .get(&Handle::new(pid, h("subscription_handle")))
            {
                b.subscriptions
                    .insert(Handle::new(pid, h("subscription")), s);
            }
        }
        "rclcpp_subscription_callback_added" => {
            let cb = b.callback(pid, h("callback"));
            if let Some(&s) = b.subscriptions.get(&Handle::new(pid, h("subscription"))) {
                b.set_owner(cb, Owner::Subscription(s));
            }
        }
        "rcl_timer_init" => {
            let t = b.timer(pid, h("timer_handle"));
            b.m.timers[t].period_ns = ev.i64("period");
        }
        "rclcpp_timer_callback_added" => {
            let t = b.timer(pid, h("timer_handle"));
            let cb = b.callback(pid, h("callback"));
            b.set_owner(cb, Owner::Timer(t));
        }
        "rclcpp_timer_link_node" => {
            let t = b.timer(pid, h("timer_handle"));
            b.m.timers[t].node = b.nodes.get(&Handle::new(pid, h("node_handle"))).copied();
        }
        "rclcpp_service_callback_added" => {
            let cb = b.callback(pid, h("callback"));
            b.set_owner(cb, Owner::Service);
        }
        "rclcpp_callback_register" => {
            let cb = b.callback(pid, h("callback"));
            b.m.callbacks[cb].symbol = ev.str("symbol").map(str::to_string);
        }
        "rcl_publish" => {
            let publisher = b
                .publishers
                .get(&Handle::new(pid, h("publisher_handle")))
                .copied();
            let topic =
                publisher.map_or_else(|| Topic::from("?"), |p| b.m.publishers[p].topic.clone());
            if let Some(msg) = b.publish(at, publisher, topic)
                && let Some(seq) = ev.u64("seq")
            {
                b.key(MsgKey::PubSeq(h("publisher_handle"), seq), msg);
            }
        }
        "rmw_publish" => {
            if let Some(seq) = ev.u64("seq")
                && let Some(&msg) = b.messages.get(&MsgKey::PubSeq(h("publisher_handle"), seq))
            {
                if let Some(m) = b.msg_mut(msg, at.ts) {
                    m.sent = Some(at.ts);
                }
                b.thread(at).publishing = None;
            }
        }
        // dds:write: the message left for transport, stamped with its source timestamp.
        "write" => {
            if let Some(msg) = b.thread(at).publishing.take()
                && let Some(ts) = ev.i64("timestamp")
                && let Some(m) = b.msg_mut(msg, at.ts)
            {
                m.sent = Some(at.ts);
                let topic = m.topic.clone();
                b.key(MsgKey::SourceTs(topic, ts), msg);
            }
        }
        "rmw_take" => take(b, at, ev),
        "callback_start" => {
            let cb = b.callback(pid, h("callback"));
            let consumed = consumable(b, at, cb);
            b.callback_start(at, cb, consumed);
        }
        "callback_end" => {
            let cb = b.callback(pid, h("callback"));
            b.callback_end(at, cb);
        }
        _ => {}
    }
}

/// `/ns/name` from a node's namespace and name, as `ros2 node list` prints it, so nodes of
/// one name in two namespaces stay apart.
fn fully_qualified(namespace: &str, name: &str) -> String {
    let namespace = namespace.trim_end_matches('/');
    if namespace.is_empty() {
        format!("/{name}")
    } else if namespace.starts_with('/') {
        format!("{namespace}/{name}")
    } else {
        format!("/{namespace}/{name}")
    }
}

pub(super) fn kairos_event(b: &mut Builder, at: At, name: &str, ev: &EventRef<'_>) {
    let pid = at.pid;
    let h = |f: &str| ev.u64(f).unwrap_or(0);
    match name {
        "clock_jump" | "stall" | "resume" => {
            let clock = ev
                .u64("clock")
                .and_then(|v| ClockKind::ALL.iter().find(|(k, _)| *k as u64 == v))
                .map_or("?", |(_, label)| label);
            let kind = match name {
                "clock_jump" => ClockMarkKind::Jump {
                    delta_ns: ev.i64("after").unwrap_or(0) - ev.i64("before").unwrap_or(0),
                },
                "stall" => ClockMarkKind::Stall,
                _ => ClockMarkKind::Resume {
                    stalled_ns: ev.i64("stalled_ns").unwrap_or(0),
                },
            };
            b.m.clock_marks.push(ClockMark {
                at: at.ts,
                pid,
                clock,
                kind,
            });
        }
        "log" => {
            let handle = h("callback");
            let callback = (handle != 0).then(|| b.callback(pid, handle));
            b.m.log_lines.push(LogLine {
                at: at.ts,
                pid,
                tid: at.tid,
                callback,
                logger: ev.str("logger").unwrap_or("?").to_owned(),
                severity: ev.i64("severity").unwrap_or(0) as i32,
                message: ev.str("message").unwrap_or("").to_owned(),
            });
        }
        "message_loss" => b.m.remote_losses += ev.u64("count").unwrap_or(0),
        "message_enqueue" | "message_drop" => {
            let Some(&s) = b
                .subscriptions
                .get(&Handle::new(pid, h("subscription_handle")))
            else {
                return;
            };
            let q = b.queue(QueueKind::Subscription, s.0);
            let depth = ev.u64("queue_depth");
            let msg = match ev.u64("seq") {
                Some(seq) if b.follow => Some(
                    match b.messages.get(&MsgKey::PubSeq(h("publisher_handle"), seq)) {
                        Some(&m) => m,
                        None => {
                            let topic = b.m.subscriptions[s].topic.clone();
                            b.orphan(at.ts, topic)
                        }
                    },
                ),
                _ => None,
            };
            if name == "message_enqueue" {
                if let Some(m) = msg {
                    b.deliver(
                        m,
                        at.ts,
                        Delivery {
                            subscription: Some(s),
                            enqueued: Some(at.ts),
                            ..Delivery::default()
                        },
                    );
                }
                b.queue_change(q, at.ts, 1, depth);
            } else {
                if let Some(m) = msg {
                    match pending_delivery(b, m, s) {
                        Some(d) => {
                            if let Some(del) = b.delivery_mut(d, at.ts) {
                                del.dropped = Some(at.ts);
                            }
                        }
                        None => {
                            b.deliver(
                                m,
                                at.ts,
                                Delivery {
                                    subscription: Some(s),
                                    dropped: Some(at.ts),
                                    ..Delivery::default()
                                },
                            );
                        }
                    }
                }
                b.queue_drop(q, at.ts, msg, depth);
            }
        }
        "timer_fire" => {
            let t = b.timer(pid, h("timer_handle"));
            if let (Some(s), Some(a)) = (ev.i64("scheduled"), ev.i64("actual")) {
                if b.opts.messages {
                    b.m.timers[t].scheduled.push((s, a));
                }
                if let Some(d) = &mut b.digest {
                    d.timer_scheduled(t, s, a, b.m.timers[t].period_ns);
                }
            }
        }
        _ => {}
    }
}

/// A delivery of `msg` to subscription `s` that is neither taken nor dropped yet.
fn pending_delivery(b: &Builder, msg: MessageId, s: SubscriptionId) -> Option<DeliveryRef> {
    let delivery = b
        .live
        .get(msg)?
        .deliveries
        .iter()
        .position(|d| d.subscription == Some(s) && d.taken.is_none() && d.dropped.is_none())?;
    Some(DeliveryRef {
        message: msg,
        delivery,
    })
}

fn take(b: &mut Builder, at: At, ev: &EventRef<'_>) {
    if ev.i64("taken") == Some(0) {
        b.m.empty_takes += 1;
        return;
    }
    // A take by a subscription that no rcl_subscription_init declared is the
    // middleware's own (DDS discovery); it is no ROS message.
    let Some(&s) = b.subscriptions.get(&Handle::new(
        at.pid,
        ev.u64("rmw_subscription_handle").unwrap_or(0),
    )) else {
        return;
    };
    if let Some(&q) = b.queues.get(&(QueueKind::Subscription, s.0)) {
        b.queue_change(q, at.ts, -1, None);
    }
    if !b.follow {
        return;
    }
    let topic = b.m.subscriptions[s].topic.clone();
    let key = match (ev.u64("publisher_handle"), ev.u64("seq")) {
        (Some(p), Some(seq)) => MsgKey::PubSeq(p, seq),
        _ => MsgKey::SourceTs(topic.clone(), ev.i64("source_timestamp").unwrap_or(0)),
    };
    let msg = match b.messages.get(&key) {
        Some(&m) => m,
        None => b.orphan(at.ts, topic),
    };
    let d = match pending_delivery(b, msg, s) {
        Some(d) => Some(d),
        None => b.deliver(
            msg,
            at.ts,
            Delivery {
                subscription: Some(s),
                ..Delivery::default()
            },
        ),
    };
    let Some(d) = d else { return };
    if let Some(del) = b.delivery_mut(d, at.ts) {
        del.taken = Some(at.ts);
    }
    b.thread(at).taken = Some(d);
}

/// The message taken on this thread that callback `cb` is about to process, if the
/// callback serves the subscription that took it.
fn consumable(b: &mut Builder, at: At, cb: CallbackId) -> Option<DeliveryRef> {
    let d = b.thread(at).taken?;
    let Some(sub) = b
        .live
        .get(d.message)
        .map(|m| m.deliveries[d.delivery].subscription)
    else {
        b.thread(at).taken = None;
        return None;
    };
    let serves = match b.m.callbacks[cb].owner {
        Owner::Subscription(s) => Some(s) == sub,
        Owner::Unknown => true,
        _ => false,
    };
    if serves {
        b.thread(at).taken = None;
        Some(d)
    } else {
        None
    }
}
