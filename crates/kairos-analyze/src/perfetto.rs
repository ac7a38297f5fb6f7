//! Chrome trace event JSON (opens in ui.perfetto.dev and chrome://tracing): callbacks as
//! slices on their process and thread, each publication as a short slice on the
//! publishing thread, and a flow arrow from each publication to the callback that
//! processed the message; log lines as instant marks on the thread that wrote them; each
//! action goal as an async span on its client's and its server's process (request to
//! result, accepted to end) with its steps (feedback, canceling, ...) as marks inside.
//!
//! Tracks carry the names of [`crate::labels`]: each process track its executable and its
//! nodes (`kairos: /pipeline/filter`), each thread track the nodes that ran on it and its
//! own name (`/pipeline/planner · kairos-exec1-w0`), the runtime's own threads prefixed
//! `runtime: ` and sorted after the user's (`process_name`, `thread_name` and
//! `thread_sort_index` metadata events, the JSON form of Perfetto's track descriptors).

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::labels::Labels;
use crate::model::{ActionRole, Model};

fn us(ns: i64, origin: i64) -> f64 {
    (ns - origin) as f64 / 1000.0
}

/// The model as Chrome trace event JSON.
pub fn export(m: &Model) -> Value {
    let origin = m.first_ns.unwrap_or(0);
    let mut events = Vec::new();
    let labels = Labels::of(m);
    for p in &m.processes {
        events.push(json!({"ph": "M", "name": "process_name", "pid": p.pid, "tid": p.pid, "args": {"name": labels.process(p.pid)}}));
    }
    for (pid, tid) in threads(m) {
        let label = labels.thread(pid, tid);
        events.push(json!({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": label.track()}}));
        events.push(json!({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid, "args": {"sort_index": i32::from(label.internal)}}));
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
    goal_spans(m, origin, &mut events);
    json!({"traceEvents": events, "displayTimeUnit": "ns"})
}

/// Every thread an event of the export is on: the threads that traced, those callbacks
/// ran on, published from or logged on.
fn threads(m: &Model) -> BTreeSet<(i64, i64)> {
    let mut all: BTreeSet<(i64, i64)> = m.threads.iter().map(|t| (t.pid, t.tid)).collect();
    all.extend(
        m.callbacks
            .iter()
            .filter(|c| !c.runs.is_empty())
            .map(|c| (c.pid, c.tid)),
    );
    all.extend(m.log_lines.iter().map(|l| (l.pid, l.tid)));
    all.extend(m.messages.iter().filter_map(|msg| {
        let tid = msg.publish_tid?;
        Some((msg.publisher.map_or(0, |p| m.publishers[p].pid), tid))
    }));
    all
}

/// Each goal's life at each of its ends: a nestable async span from the end's first step
/// to its last, named after the goal, and an instant for every step.
fn goal_spans(m: &Model, origin: i64, events: &mut Vec<Value>) {
    for goal in &m.goals {
        for role in [ActionRole::Client, ActionRole::Server] {
            let steps: Vec<_> = goal
                .steps
                .iter()
                .filter(|s| m.action_endpoints[s.endpoint].role == role)
                .collect();
            let (Some(first), Some(last)) = (steps.first(), steps.last()) else {
                continue;
            };
            let endpoint = &m.action_endpoints[first.endpoint];
            let side = match role {
                ActionRole::Client => "client",
                ActionRole::Server => "server",
            };
            let id = format!("{}-{side}", goal.id);
            let name = format!(
                "goal {} {} ({side})",
                &goal.id[..goal.id.len().min(8)],
                endpoint.action
            );
            let pid = endpoint.pid;
            events.push(json!({"ph": "b", "cat": "goal", "name": name, "id": id, "pid": pid, "tid": pid, "ts": us(first.at, origin), "args": {"goal_id": goal.id}}));
            for s in &steps {
                events.push(json!({"ph": "n", "cat": "goal", "name": s.event, "id": id, "pid": pid, "tid": pid, "ts": us(s.at, origin), "args": {"status": crate::goals::status_name(s.status)}}));
            }
            events.push(json!({"ph": "e", "cat": "goal", "name": name, "id": id, "pid": pid, "tid": pid, "ts": us(last.at.max(first.at), origin), "args": {"ended": last.event}}));
        }
    }
}
