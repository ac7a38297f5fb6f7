//! Chrome trace event JSON (opens in ui.perfetto.dev and chrome://tracing): callbacks as
//! slices on their process and thread, each publication as a short slice on the
//! publishing thread, and a flow arrow from each publication to the callback that
//! processed the message; log lines as instant marks on the thread that wrote them.

use serde_json::{Value, json};

use crate::model::Model;

fn us(ns: i64, origin: i64) -> f64 {
    (ns - origin) as f64 / 1000.0
}

/// The model as Chrome trace event JSON.
pub fn export(m: &Model) -> Value {
    let origin = m.first_ns.unwrap_or(0);
    let mut events = Vec::new();
    for p in &m.processes {
        events.push(json!({"ph": "M", "name": "process_name", "pid": p.pid, "tid": p.pid, "args": {"name": p.name}}));
    }
    for (i, c) in m.callbacks.iter().enumerate() {
        let label = m.callback_label(crate::model::CallbackId(i));
        for &(start, dur) in &c.runs {
            events.push(json!({
                "ph": "X", "cat": "callback", "name": label, "pid": c.pid, "tid": c.tid,
                "ts": us(start, origin), "dur": (dur as f64 / 1000.0).max(0.001),
            }));
        }
    }
    let mut flow_id = 0u64;
    for msg in &m.messages {
        let (Some(published), Some(tid)) = (msg.published, msg.publish_tid) else {
            continue;
        };
        let pid = msg.publisher.map_or(0, |p| m.publishers[p].pid);
        let end = msg.sent.unwrap_or(published).max(published + 1);
        let name = format!("publish {}", msg.topic);
        events.push(json!({
            "ph": "X", "cat": "publish", "name": name, "pid": pid, "tid": tid,
            "ts": us(published, origin), "dur": us(end, published).max(0.001),
        }));
        for d in &msg.deliveries {
            let (Some(start), Some(cb_tid), Some(s)) = (d.callback_start, d.tid, d.subscription)
            else {
                continue;
            };
            flow_id += 1;
            let sub_pid = m.subscriptions[s].pid;
            events.push(json!({"ph": "s", "cat": "message", "name": msg.topic, "id": flow_id, "pid": pid, "tid": tid, "ts": us(published, origin)}));
            events.push(json!({"ph": "f", "bp": "e", "cat": "message", "name": msg.topic, "id": flow_id, "pid": sub_pid, "tid": cb_tid, "ts": us(start, origin)}));
        }
    }
    for line in &m.log_lines {
        events.push(json!({
            "ph": "i", "s": "t", "cat": "log", "name": format!("[{}] {}", line.level(), line.message),
            "pid": line.pid, "tid": line.tid, "ts": us(line.at, origin),
            "args": {
                "logger": line.logger,
                "callback": line.callback.map(|c| m.callback_label(c)),
            },
        }));
    }
    json!({"traceEvents": events, "displayTimeUnit": "ns"})
}
