//! Queues: the depth of each subscription's and publisher's queue over time, its drops,
//! and the queues inferred for ROS 2 traces that trace no queue events.

use super::*;

impl Builder {
    pub(super) fn queue(&mut self, kind: QueueKind, endpoint: usize) -> usize {
        if let Some(&q) = self.queues.get(&(kind, endpoint)) {
            return q;
        }
        let i = self.m.queues.len();
        self.m.queues.push(Queue {
            kind,
            endpoint,
            depth: Vec::new(),
            enqueued: 0,
            dequeued: 0,
            drops: Vec::new(),
            inferred: false,
            current: 0,
        });
        self.queues.insert((kind, endpoint), i);
        i
    }

    /// Records a queue change; `depth` is the depth after it when the trace says so.
    pub(super) fn queue_change(&mut self, q: usize, at: i64, delta: i64, depth: Option<u64>) {
        let queue = &mut self.m.queues[q];
        let next = depth.unwrap_or_else(|| queue.current.saturating_add_signed(delta));
        queue.current = next;
        if delta > 0 {
            queue.enqueued += 1;
        } else if delta < 0 {
            queue.dequeued += 1;
        }
        if self.opts.messages {
            queue.depth.push((at, next));
        }
        if let Some(d) = &mut self.digest {
            d.queue_depth(q, at, next);
        }
    }

    pub(super) fn queue_drop(
        &mut self,
        q: usize,
        at: i64,
        message: Option<MessageId>,
        depth: Option<u64>,
    ) {
        if self.digest.is_none() {
            self.m.queues[q].drops.push(QueueDrop { at, message });
        }
        if let Some(d) = &mut self.digest {
            d.queue_drop(q, QueueDrop { at, message });
        }
        self.queue_change(q, at, -1, depth);
        let queue = &mut self.m.queues[q];
        queue.dequeued -= 1;
    }

    /// ros2_tracing records no enqueue: a subscription's depth is inferred from when each
    /// message it took was sent and taken.
    pub(super) fn infer_ros2_queues(&mut self) {
        let mut changes: HashMap<usize, Vec<(i64, i64)>> = HashMap::default();
        for msg in &self.m.messages {
            for d in &msg.deliveries {
                if let (Some(s), None, Some(sent), Some(taken)) =
                    (d.subscription, d.enqueued, msg.sent, d.taken)
                {
                    let c = changes.entry(s.0).or_default();
                    c.push((sent, 1));
                    c.push((taken, -1));
                }
            }
        }
        let mut subs: Vec<usize> = changes.keys().copied().collect();
        subs.sort_unstable();
        for s in subs {
            if self.queues.contains_key(&(QueueKind::Subscription, s)) {
                continue;
            }
            let mut c = changes.remove(&s).unwrap_or_default();
            c.sort_unstable();
            let q = self.queue(QueueKind::Subscription, s);
            self.m.queues[q].inferred = true;
            for (at, delta) in c {
                self.queue_change(q, at, delta, None);
            }
        }
    }
}
