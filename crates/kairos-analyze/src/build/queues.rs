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

#[cfg(test)]
mod tests {
    use super::*;

    fn message(sent: i64, deliveries: Vec<Delivery>) -> Message {
        Message {
            topic: Topic::from("/t"),
            publisher: None,
            published: Some(sent),
            sent: Some(sent),
            source_timestamp: None,
            publish_tid: None,
            dropped_by_publisher: None,
            cause: None,
            cause_link: None,
            deliveries,
            bag: None,
        }
    }

    fn taken(subscription: usize, at: i64) -> Delivery {
        Delivery {
            subscription: Some(SubscriptionId(subscription)),
            taken: Some(at),
            ..Delivery::default()
        }
    }

    #[test]
    fn a_queue_is_made_once_per_side_and_endpoint() {
        let mut b = Builder::new(Options::default());
        let q = b.queue(QueueKind::Subscription, 3);
        assert_eq!(b.queue(QueueKind::Subscription, 3), q);
        let other = b.queue(QueueKind::Publisher, 3);
        assert_ne!(
            other, q,
            "a publisher's queue is not its namesake subscription's"
        );
        assert_eq!(b.m.queues.len(), 2);
        assert_eq!(b.m.queues[other].kind, QueueKind::Publisher);
    }

    #[test]
    fn depth_follows_the_deltas_unless_the_trace_says_it_and_drops_are_not_takes() {
        let mut b = Builder::new(Options::default());
        let q = b.queue(QueueKind::Subscription, 0);
        b.queue_change(q, 10, 1, None);
        b.queue_change(q, 20, 1, None);
        // The trace's own depth wins over the running count.
        b.queue_change(q, 30, 1, Some(5));
        b.queue_drop(q, 40, Some(MessageId(7)), None);
        b.queue_change(q, 50, -1, None);
        let queue = &b.m.queues[q];
        assert_eq!(
            queue.depth,
            vec![(10, 1), (20, 2), (30, 5), (40, 4), (50, 3)]
        );
        assert_eq!(queue.current, 3);
        assert_eq!(
            (queue.enqueued, queue.dequeued),
            (3, 1),
            "a drop is no take"
        );
        assert_eq!(queue.drops.len(), 1);
        assert_eq!(
            (queue.drops[0].at, queue.drops[0].message),
            (40, Some(MessageId(7)))
        );
        assert_eq!(queue.max_depth(), 5);
    }

    #[test]
    fn an_empty_queue_never_goes_below_zero() {
        let mut b = Builder::new(Options::default());
        let q = b.queue(QueueKind::Publisher, 0);
        b.queue_change(q, 1, -1, None);
        assert_eq!(b.m.queues[q].depth, vec![(1, 0)]);
    }

    #[test]
    fn without_message_records_the_counts_stay_and_the_depth_series_goes() {
        let mut b = Builder::new(Options { messages: false });
        let q = b.queue(QueueKind::Subscription, 0);
        b.queue_change(q, 1, 1, None);
        b.queue_change(q, 2, -1, None);
        let queue = &b.m.queues[q];
        assert!(queue.depth.is_empty());
        assert_eq!((queue.enqueued, queue.dequeued, queue.current), (1, 1, 0));
    }

    #[test]
    fn a_ros2_subscriptions_depth_is_inferred_from_sends_and_takes() {
        let mut b = Builder::new(Options::default());
        // Two messages sent before either is taken: the queue held two at once.
        b.m.messages.push(message(100, vec![taken(0, 300)]));
        b.m.messages
            .push(message(200, vec![taken(0, 400), taken(1, 250)]));
        b.infer_ros2_queues();
        let q0 = b.queues[&(QueueKind::Subscription, 0)];
        let q1 = b.queues[&(QueueKind::Subscription, 1)];
        assert!(b.m.queues[q0].inferred && b.m.queues[q1].inferred);
        assert_eq!(
            b.m.queues[q0].depth,
            vec![(100, 1), (200, 2), (300, 1), (400, 0)]
        );
        assert_eq!(b.m.queues[q1].depth, vec![(200, 1), (250, 0)]);
    }

    #[test]
    fn a_traced_queue_is_not_inferred_again() {
        let mut b = Builder::new(Options::default());
        let q = b.queue(QueueKind::Subscription, 0);
        b.queue_change(q, 50, 1, None);
        let mut delivery = taken(0, 300);
        delivery.enqueued = Some(50);
        b.m.messages
            .push(message(100, vec![delivery, taken(0, 400)]));
        b.infer_ros2_queues();
        assert_eq!(b.m.queues.len(), 1);
        assert!(!b.m.queues[q].inferred);
        assert_eq!(b.m.queues[q].depth, vec![(50, 1)]);
    }
}
