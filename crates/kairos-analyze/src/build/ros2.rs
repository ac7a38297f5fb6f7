//! ros2_tracing events (`ros2:*`, `dds:*`) and kairos events (`kairos:*`, plus the
//! `publisher_handle`/`seq` fields kairos adds to ros2_tracing's message events).
//!
//! A ROS 2 message is followed by the thread it is published on (`rcl_publish` then
//! `dds:write`, whose DDS source timestamp `rmw_take` reports on the subscriber side) and
//! by the thread that takes it (`rmw_take` then `callback_start`). A kairos message is
//! identified exactly by `(publisher_handle, seq)`. `rmw_take` with `taken = 0` found the
//! queue empty: it is counted, and creates no message.

use kairos_trace::read::EventRef;
use kairos_trace::read::Value;
use kairos_trace::schema::ClockKind;
use std::sync::Arc;

use super::{At, Builder, Handle, MsgKey};
use crate::model::{
    AccessDenial, ActionRole, BagOrigin, CallbackId, ClockMark, ClockMarkKind, Delivery,
    DeliveryRef, Link, LogLine, MessageId, MessageLink, Owner, PublisherId, QueueKind,
    SubscriptionId, TfLookup, Topic,
};

pub(super) fn event(b: &mut Builder, at: At, name: &str, ev: &EventRef<'_>) {
    let pid = at.pid;
    let h = |f: &str| ev.u64(f).unwrap_or(0);
    match name {
        "rcl_node_init" => {
            let name = ev.str("node_name").unwrap_or("?");
            let name = fully_qualified(ev.str("namespace").unwrap_or("/"), name);
            let node = b.node(pid, h("node_handle"), name);
            b.node_declared(pid, h("node_handle"), node);
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
            if node.is_none() {
                b.await_node(pid, h("node_handle"), true, p.0);
            }
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
            if node.is_none() {
                b.await_node(pid, h("node_handle"), false, s.0);
            }
            b.subscriptions
                .insert(Handle::new(pid, h("rmw_subscription_handle")), s);
        }
        "rclcpp_subscription_init" => {
            if let Some(&s) = b
                .subscriptions
                .get(&Handle::new(pid, h("subscription_handle")))
            {
                let rclcpp = Handle::new(pid, h("subscription"));
                b.subscriptions.insert(rclcpp, s);
                for cb in b.pending_callbacks.remove(&rclcpp).unwrap_or_default() {
                    b.set_owner(cb, Owner::Subscription(s));
                }
            }
        }
        "rclcpp_subscription_callback_added" => {
            let cb = b.callback(pid, h("callback"));
            let rclcpp = Handle::new(pid, h("subscription"));
            match b.subscriptions.get(&rclcpp) {
                Some(&s) => b.set_owner(cb, Owner::Subscription(s)),
                // rclcpp adds an intra-process subscription's callback before it says
                // which subscription that is.
                None => b.pending_callbacks.entry(rclcpp).or_default().push(cb),
            }
        }
        // rmw declares its own subscriptions too (graph discovery), with no rcl init.
        "rmw_subscription_init" => {
            b.rmw_subscriptions
                .insert(Handle::new(pid, h("rmw_subscription_handle")));
        }
        "message_link_periodic_async" | "message_link_partial_sync" => {
            let handles = |f: &str| -> Vec<u64> {
                match ev.field(f) {
                    Some(Value::Array(v)) => v.iter().filter_map(Value::as_u64).collect(),
                    _ => Vec::new(),
                }
            };
            let kind = if name == "message_link_periodic_async" {
                MessageLink::PeriodicAsync
            } else {
                MessageLink::PartialSync
            };
            b.message_link(kind, pid, &handles("subs"), &handles("pubs"));
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
            let handle = h("publisher_handle");
            if let Some((intra_handle, msg)) = b.thread(at).intra.take()
                && intra_handle == handle
                && b.live.get(msg).is_some()
            {
                // The inter-process half of a publication already published
                // intra-process: one message, also handed to transport.
                b.thread(at).publishing = Some(msg);
                return;
            }
            let publisher = publisher_of(b, at, handle, "rcl_publish");
            let topic =
                publisher.map_or_else(|| Topic::from("?"), |p| b.m.publishers[p].topic.clone());
            if let Some(msg) = b.publish(at, publisher, topic.clone()) {
                if let Some(seq) = ev.u64("seq") {
                    b.key(MsgKey::PubSeq(handle, seq), msg);
                } else {
                    b.unstamped(msg, topic, at.ts);
                }
            }
        }
        "rclcpp_intra_publish" => {
            let handle = h("publisher_handle");
            let publisher = publisher_of(b, at, handle, "rclcpp_intra_publish");
            let topic =
                publisher.map_or_else(|| Topic::from("?"), |p| b.m.publishers[p].topic.clone());
            if let Some(msg) = b.publish(at, publisher, topic) {
                b.thread(at).publishing = None;
                b.thread(at).intra = Some((handle, msg));
                b.key(MsgKey::Addr(pid, h("message")), msg);
            }
        }
        // ros2_tracing 6+: the intra-process message stored in a subscription's ring
        // buffer, at a slot; `overwritten` drops the message the slot held.
        "rclcpp_ring_buffer_enqueue" => {
            let key = MsgKey::Ring(pid, h("buffer"), h("index"));
            if ev.u64("overwritten").unwrap_or(0) != 0
                && let Some(&old) = b.messages.get(&key)
            {
                ring_overwritten(b, at, old);
            }
            if let Some((_, msg)) = b.thread(at).intra {
                b.key(key, msg);
            }
        }
        "rclcpp_ring_buffer_dequeue" => {
            let key = MsgKey::Ring(pid, h("buffer"), h("index"));
            let msg = b.messages.get(&key).copied();
            dispatch(b, at, None, msg, Link::MessageAddress, Some(key));
        }
        "rmw_publish" => {
            if let Some(seq) = ev.u64("seq") {
                if let Some(&msg) = b.messages.get(&MsgKey::PubSeq(h("publisher_handle"), seq)) {
                    if let Some(m) = b.msg_mut(msg, at.ts) {
                        m.sent = Some(at.ts);
                    }
                    b.thread(at).publishing = None;
                }
                return;
            }
            let Some(msg) = b.thread(at).publishing else {
                return;
            };
            if let Some(m) = b.msg_mut(msg, at.ts) {
                m.sent = Some(at.ts);
            }
            // ros2_tracing 6+ records the source timestamp here.
            if let Some(ts) = ev.i64("timestamp") {
                b.stamp(msg, ts, at.ts);
            }
        }
        // dds:write: the message left for transport, stamped with its source timestamp.
        "write" => {
            if let Some(msg) = b.thread(at).publishing.take()
                && let Some(ts) = ev.i64("timestamp")
            {
                if let Some(m) = b.msg_mut(msg, at.ts) {
                    m.sent = Some(at.ts);
                }
                b.stamp(msg, ts, at.ts);
            }
        }
        // CARET: `dds_write` hands the message to DDS; `dds_bind_addr_to_stamp` (after
        // `dds_bind_addr_to_addr` with Fast DDS, on the same thread) gives its stamp.
        "dds_write" => {
            if let Some(msg) = b.thread(at).publishing
                && let Some(m) = b.msg_mut(msg, at.ts)
            {
                m.sent = Some(at.ts);
            }
        }
        "dds_bind_addr_to_stamp" => {
            if let Some(msg) = b.thread(at).publishing.take()
                && let Some(ts) = ev.i64("source_stamp")
            {
                b.stamp(msg, ts, at.ts);
            }
        }
        "rmw_take" => take(b, at, ev),
        // CARET: the message handed to a subscription's callback, with its stamp.
        "dispatch_subscription_callback" => {
            let stamp = ev
                .i64("source_stamp")
                .or_else(|| ev.i64("source_timestamp"));
            dispatch_stamped(b, at, h("callback"), stamp);
        }
        // Older CARET: `take_type_erased` gives the stamp, `dispatch` the callback.
        "take_type_erased" => b.thread(at).taken_stamp = ev.i64("source_stamp"),
        "dispatch" => {
            let stamp = b.thread(at).taken_stamp.take();
            dispatch_stamped(b, at, h("callback"), stamp);
        }
        "dispatch_intra_process_subscription_callback" | "dispatch_intra_process" => {
            let cb = b.callback(pid, h("callback"));
            let key = MsgKey::Addr(pid, h("message"));
            let msg = b.messages.get(&key).copied();
            dispatch(b, at, Some(cb), msg, Link::MessageAddress, None);
        }
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

/// The publisher `rcl_publish` (or `rclcpp_intra_publish`) names by `handle`. A handle
/// no init event declared is rcl's copy of a node's `/rosout` publisher (declared at a
/// stack address every node of the process shares): it is attributed to the `/rosout`
/// publisher of the node whose callback runs on this thread, or of the process's only
/// node; any other undeclared handle is counted in [`Model::undeclared`](crate::model::Model).
fn publisher_of(b: &mut Builder, at: At, handle: u64, event: &str) -> Option<PublisherId> {
    let key = Handle::new(at.pid, handle);
    if let Some(&p) = b.publishers.get(&key) {
        return Some(p);
    }
    if let Some(&p) = b.rosout.get(&key) {
        return p;
    }
    let node = b
        .thread(at)
        .stack
        .last()
        .map(|f| f.callback)
        .and_then(|cb| b.m.callback_node(cb))
        .or_else(|| b.m.only_node(at.pid));
    let rosout = node.and_then(|n| {
        b.m.publishers
            .iter()
            .position(|p| p.node == Some(n) && &*p.topic == "/rosout")
            .map(PublisherId)
    });
    // An unknown handle names a publisher rcl made for logging only when its process
    // declared `/rosout` publishers; it keeps the attribution of its first publish.
    let is_rosout =
        b.m.publishers
            .iter()
            .any(|p| p.pid == at.pid && &*p.topic == "/rosout");
    if is_rosout {
        b.rosout.insert(key, rosout);
        if rosout.is_some() {
            return rosout;
        }
    }
    b.undeclared_handle(key, event);
    None
}

/// A message dispatched to a callback with the source timestamp it was taken with.
fn dispatch_stamped(b: &mut Builder, at: At, callback: u64, stamp: Option<i64>) {
    let cb = b.callback(at.pid, callback);
    let Owner::Subscription(s) = b.m.callbacks[cb].owner else {
        return;
    };
    let topic = b.m.subscriptions[s].topic.clone();
    let (msg, link) = match stamp {
        Some(stamp) => find_stamped(b, &topic, s, stamp),
        None => (None, Link::SourceTimestamp),
    };
    if msg.is_none()
        && let Some(stamp) = stamp
    {
        b.take_before_publish(MsgKey::SourceTs(topic, stamp), at.pid, at.ts);
    }
    dispatch(b, at, Some(cb), msg, link, None);
}

/// The message carrying source timestamp `stamp` on `topic`: exactly, or inferred
/// when no publication of the topic recorded stamps.
fn find_stamped(
    b: &mut Builder,
    topic: &Topic,
    s: SubscriptionId,
    stamp: i64,
) -> (Option<MessageId>, Link) {
    if let Some(&m) = b.messages.get(&MsgKey::SourceTs(topic.clone(), stamp)) {
        return (Some(m), Link::SourceTimestamp);
    }
    match b.nearest_publish(topic, s, stamp) {
        Some(m) => (Some(m), Link::NearestPublish),
        None => (None, Link::SourceTimestamp),
    }
}

/// A message (`msg`, None when its publication is not in the trace) handed to callback
/// `cb` (or, for a ring buffer, to the callback that starts next on this thread).
fn dispatch(
    b: &mut Builder,
    at: At,
    cb: Option<CallbackId>,
    msg: Option<MessageId>,
    link: Link,
    ring: Option<MsgKey>,
) {
    let s = cb.and_then(|cb| match b.m.callbacks[cb].owner {
        Owner::Subscription(s) => Some(s),
        _ => None,
    });
    if let Some(s) = s {
        b.m.subscriptions[s].takes.taken += 1;
    }
    if !b.follow {
        return;
    }
    let topic = s.map_or_else(
        || {
            msg.and_then(|m| b.live.get(m))
                .map_or_else(|| Topic::from("?"), |m| m.topic.clone())
        },
        |s| b.m.subscriptions[s].topic.clone(),
    );
    let (msg, link) = match msg.filter(|&m| b.live.get(m).is_some()) {
        Some(m) => (m, Some(link)),
        None => (b.orphan(at.ts, topic), None),
    };
    if let Some(key) = ring
        && b.messages.get(&key) == Some(&msg)
    {
        b.messages.remove(&key);
    }
    let d = b.deliver(
        msg,
        at.ts,
        Delivery {
            subscription: s,
            link,
            taken: Some(at.ts),
            ..Delivery::default()
        },
    );
    b.thread(at).taken = d;
}

/// A ring-buffer slot overwritten before its message was taken: that message is dropped.
fn ring_overwritten(b: &mut Builder, at: At, msg: MessageId) {
    let _ = b.deliver(
        msg,
        at.ts,
        Delivery {
            link: Some(Link::MessageAddress),
            dropped: Some(at.ts),
            ..Delivery::default()
        },
    );
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
        "tf_lookup" => {
            let handle = h("callback");
            let callback = (handle != 0).then(|| b.callback(pid, handle));
            let text = |field| ev.str(field).unwrap_or("?").to_owned();
            b.m.tf_lookups.push(TfLookup {
                at: at.ts,
                pid,
                callback,
                operation: text("operation"),
                target: text("target_frame"),
                source: text("source_frame"),
                time: ev.i64("time").unwrap_or(0),
                waited: ev.i64("waited").unwrap_or(0),
                outcome: text("outcome"),
            });
        }
        "bag_play" => {
            let (Some(seq), true) = (ev.u64("seq"), b.follow) else {
                return;
            };
            let key = MsgKey::PubSeq(h("publisher_handle"), seq);
            if let Some(&msg) = b.messages.get(&key)
                && let Some(m) = b.msg_mut(msg, at.ts)
            {
                m.bag = Some(BagOrigin {
                    log_time: ev.i64("log_time").unwrap_or(0),
                    late: ev.i64("late").filter(|&late| late >= 0),
                });
            }
        }
        "bag_write" => {
            let (Some(seq), true) = (ev.u64("seq"), b.follow) else {
                return;
            };
            let Some(&s) = b
                .subscriptions
                .get(&Handle::new(pid, h("subscription_handle")))
            else {
                return;
            };
            let key = MsgKey::PubSeq(h("publisher_handle"), seq);
            let Some(&msg) = b.messages.get(&key) else {
                return;
            };
            let delivery = b.live.get(msg).and_then(|m| {
                m.deliveries
                    .iter()
                    .position(|d| d.subscription == Some(s) && d.written.is_none())
            });
            if let Some(delivery) = delivery
                && let Some(d) = b.delivery_mut(
                    DeliveryRef {
                        message: msg,
                        delivery,
                    },
                    at.ts,
                )
            {
                d.written = Some(at.ts);
            }
        }
        "message_loss" => b.m.remote_losses += ev.u64("count").unwrap_or(0),
        "access_denied" => {
            let text = |field| ev.str(field).unwrap_or("").to_owned();
            b.m.access_denials.push(AccessDenial {
                at: at.ts,
                pid,
                kind: text("kind"),
                name: text("name"),
                enclave: text("enclave"),
                rule: text("rule"),
                refused: ev.i64("refused").unwrap_or(1) != 0,
            });
        }
        "action_server_init" | "action_client_init" => {
            let (handle, role) = match name {
                "action_server_init" => (h("server_handle"), ActionRole::Server),
                _ => (h("client_handle"), ActionRole::Client),
            };
            let node = b.nodes.get(&Handle::new(pid, h("node_handle"))).copied();
            let action = Arc::from(ev.str("action_name").unwrap_or("?"));
            b.action_endpoint(pid, handle, Some((node, action)), role);
        }
        "goal" => {
            let step = (
                at.ts,
                ev.str("event").unwrap_or("?").to_owned(),
                ev.i64("status").unwrap_or(0) as i32,
            );
            b.goal_step(pid, h("handle"), ev.str("goal_id").unwrap_or("?"), step);
        }
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
                            let key = MsgKey::PubSeq(h("publisher_handle"), seq);
                            b.take_before_publish(key, pid, at.ts);
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
                            link: b.link_if_published(m, Link::Sequence),
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
                                    link: b.link_if_published(m, Link::Sequence),
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
    // A take by a subscription that no rcl_subscription_init declared creates no
    // message (its topic is unknown); it is counted.
    let handle = Handle::new(at.pid, ev.u64("rmw_subscription_handle").unwrap_or(0));
    let s = b.subscriptions.get(&handle).copied();
    if ev.i64("taken") == Some(0) {
        b.m.empty_takes += 1;
        if let Some(s) = s {
            b.m.subscriptions[s].takes.empty += 1;
        }
        return;
    }
    let Some(s) = s else {
        if b.rmw_subscriptions.contains(&handle) {
            b.m.middleware_takes += 1;
        } else {
            b.undeclared_handle(handle, "rmw_take");
        }
        return;
    };
    b.m.subscriptions[s].takes.taken += 1;
    if let Some(&q) = b.queues.get(&(QueueKind::Subscription, s.0)) {
        b.queue_change(q, at.ts, -1, None);
    }
    if !b.follow {
        return;
    }
    let topic = b.m.subscriptions[s].topic.clone();
    let (msg, link, key) = match (ev.u64("publisher_handle"), ev.u64("seq")) {
        (Some(p), Some(seq)) => {
            let key = MsgKey::PubSeq(p, seq);
            (b.messages.get(&key).copied(), Link::Sequence, Some(key))
        }
        _ => match ev.i64("source_timestamp") {
            Some(stamp) => {
                let (m, l) = find_stamped(b, &topic, s, stamp);
                (m, l, Some(MsgKey::SourceTs(topic.clone(), stamp)))
            }
            None => (None, Link::SourceTimestamp, None),
        },
    };
    let msg = match msg {
        Some(m) => m,
        None => {
            if let Some(key) = key {
                b.take_before_publish(key, at.pid, at.ts);
            }
            b.orphan(at.ts, topic)
        }
    };
    // kairos traces record the enqueue: the delivery exists already.
    let d = match pending_delivery(b, msg, s) {
        Some(d) => Some(d),
        None => b.deliver(
            msg,
            at.ts,
            Delivery {
                subscription: Some(s),
                link: b.link_if_published(msg, link),
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
/// callback serves the subscription that took it. A message dequeued from an
/// intra-process ring buffer names no subscription: the callback that starts next on
/// the thread says which, when it serves one of the message's topic.
fn consumable(b: &mut Builder, at: At, cb: CallbackId) -> Option<DeliveryRef> {
    let d = b.thread(at).taken?;
    let Some((sub, topic, link)) = b.live.get(d.message).map(|m| {
        let del = &m.deliveries[d.delivery];
        (del.subscription, m.topic.clone(), del.link)
    }) else {
        b.thread(at).taken = None;
        return None;
    };
    let serves = match (b.m.callbacks[cb].owner, sub) {
        (Owner::Subscription(s), Some(sub)) => s == sub,
        (Owner::Subscription(s), None) if b.m.subscriptions[s].topic == topic => {
            b.m.subscriptions[s].takes.taken += 1;
            b.count_link(s, link);
            if let Some(del) = b.delivery_mut(d, at.ts) {
                del.subscription = Some(s);
            }
            true
        }
        (Owner::Unknown, _) => true,
        _ => false,
    };
    if serves {
        b.thread(at).taken = None;
        Some(d)
    } else {
        None
    }
}
