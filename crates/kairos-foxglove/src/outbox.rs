//! A client's outbox: what waits to be written to one WebSocket client, bounded so that a
//! slow or stalled client costs a bounded amount of memory and never blocks whoever hands
//! it a message.
//!
//! What it promises:
//! - **Never blocks the sender.** `Outbox::push_message` takes a short lock, queues or
//!   drops, and returns; it is called on the transport's receive thread, which a client
//!   must never hold up.
//! - **Bounded.** Per subscription at most `queue_messages` messages; over all
//!   subscriptions at most `queue_bytes` bytes of payload (one message larger than the
//!   whole budget is dropped at once). Control messages (advertisements, status) are few
//!   and small; more than [`CONTROL_LIMIT`] waiting means the client does not read at all,
//!   and it is disconnected, as the Foxglove SDK does.
//! - **Nothing lost silently.** Every dropped message is counted per subscription
//!   (`Outbox::take_drops` hands out the counts not yet reported, for status messages
//!   and the log; `Outbox::dropped` is the running total).
//! - **Fair and in order.** Control messages go first (a client learns of a channel
//!   before its data). Data is taken round-robin over subscriptions, each in arrival order.
//!   A channel that goes (its last publisher left) is unadvertised after the messages
//!   already queued for it, not before: they were sent while it existed.
//! - **Latest wins for state.** The pending drop status and the server time are single
//!   slots, replaced by newer values rather than queued.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use tokio_tungstenite::tungstenite::Message;

/// The most control messages waiting before the client counts as gone.
pub const CONTROL_LIMIT: usize = 1024;

/// One message of a topic, shared by every client it is queued for.
#[derive(Debug)]
pub(crate) struct Sample {
    /// Receive time, nanoseconds, on the bridge's clock.
    pub log_time: u64,
    /// The bytes as the publisher sent them (CDR with its encapsulation header).
    pub payload: Vec<u8>,
}

/// What the writer sends next.
#[derive(Debug)]
pub(crate) enum Outgoing {
    /// A protocol message, encoded.
    Frame(Message),
    /// A message of the subscription `subscription`.
    Data {
        subscription: u32,
        sample: Arc<Sample>,
    },
}

#[derive(Debug)]
struct Queue {
    topic: Arc<str>,
    messages: VecDeque<Arc<Sample>>,
    dropped: u64,
    reported: u64,
    /// Set when the queue is retired: sent once the queue is empty, which then closes.
    last: Option<Message>,
    retired: bool,
}

#[derive(Debug, Default)]
struct State {
    control: VecDeque<Message>,
    status: Option<Message>,
    time: Option<Message>,
    queues: BTreeMap<u32, Queue>,
    /// The subscription served last (round-robin).
    cursor: u32,
    bytes: usize,
}

/// A client's outbox (see the module docs).
#[derive(Debug)]
pub(crate) struct Outbox {
    state: Mutex<State>,
    wake: tokio::sync::Notify,
    closed: AtomicBool,
    dropped: AtomicU64,
    queue_messages: usize,
    queue_bytes: usize,
}

impl Outbox {
    pub(crate) fn new(queue_messages: usize, queue_bytes: usize) -> Self {
        Self {
            state: Mutex::new(State::default()),
            wake: tokio::sync::Notify::new(),
            closed: AtomicBool::new(false),
            dropped: AtomicU64::new(0),
            queue_messages,
            queue_bytes,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding this lock leaves only queues behind; keep serving.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Opens the queue of subscription `id` (of `topic`).
    pub(crate) fn subscribe(&self, id: u32, topic: Arc<str>) {
        self.lock().queues.entry(id).or_insert(Queue {
            topic,
            messages: VecDeque::new(),
            dropped: 0,
            reported: 0,
            last: None,
            retired: false,
        });
    }

    /// Closes the queue of subscription `id`, discarding what waits in it (the client
    /// asked for no more).
    pub(crate) fn unsubscribe(&self, id: u32) {
        let mut state = self.lock();
        if let Some(queue) = state.queues.remove(&id) {
            let bytes: usize = queue.messages.iter().map(|s| s.payload.len()).sum();
            state.bytes -= bytes;
        }
    }

    /// Retires the queue of subscription `id` (its channel is gone): it takes no more,
    /// what waits in it is still sent, then `last` (the channel's unadvertisement), and
    /// the queue closes. `last` is sent at once when there is no such queue.
    pub(crate) fn retire(&self, id: u32, last: Option<Message>) {
        let mut state = self.lock();
        match state.queues.get_mut(&id) {
            Some(queue) => {
                queue.retired = true;
                queue.last = last;
            }
            None => state.control.extend(last),
        }
        drop(state);
        self.wake.notify_one();
    }

    /// Queues `sample` for subscription `id`, dropping (and counting) to stay within the
    /// bounds; never blocks. A subscription that is not open takes nothing.
    pub(crate) fn push_message(&self, id: u32, sample: &Arc<Sample>) {
        if self.is_closed() {
            return;
        }
        let size = sample.payload.len();
        let mut state = self.lock();
        let State { queues, bytes, .. } = &mut *state;
        let Some(queue) = queues.get_mut(&id).filter(|q| !q.retired) else {
            return;
        };
        let mut dropped = 0;
        while !queue.messages.is_empty()
            && (queue.messages.len() >= self.queue_messages || *bytes + size > self.queue_bytes)
        {
            if let Some(old) = queue.messages.pop_front() {
                *bytes -= old.payload.len();
                dropped += 1;
            }
        }
        if *bytes + size > self.queue_bytes {
            // Its own queue is empty and the others hold the budget (or the message alone
            // is larger than the budget): the newcomer goes.
            dropped += 1;
        } else {
            queue.messages.push_back(sample.clone());
            *bytes += size;
        }
        queue.dropped += dropped;
        drop(state);
        if dropped > 0 {
            self.dropped.fetch_add(dropped, Ordering::Relaxed);
        }
        self.wake.notify_one();
    }

    /// Queues a control message. Returns `false`, and closes the outbox, when the client
    /// has let [`CONTROL_LIMIT`] of them pile up (it does not read).
    pub(crate) fn push_control(&self, message: Message) -> bool {
        let mut state = self.lock();
        if state.control.len() >= CONTROL_LIMIT {
            drop(state);
            self.close();
            return false;
        }
        state.control.push_back(message);
        drop(state);
        self.wake.notify_one();
        true
    }

    /// Sets the drop status to send next, replacing one not sent yet.
    pub(crate) fn set_status(&self, message: Message) {
        self.lock().status = Some(message);
        self.wake.notify_one();
    }

    /// Sets the server time to send next, replacing one not sent yet.
    pub(crate) fn set_time(&self, message: Message) {
        self.lock().time = Some(message);
        self.wake.notify_one();
    }

    /// What to send next: control messages, then the status and the time, then data
    /// round-robin over subscriptions. `None` when nothing waits.
    pub(crate) fn pop(&self) -> Option<Outgoing> {
        self.pop_locked(self.lock())
    }

    fn pop_locked(&self, mut state: std::sync::MutexGuard<'_, State>) -> Option<Outgoing> {
        if let Some(message) = state.control.pop_front() {
            return Some(Outgoing::Frame(message));
        }
        if let Some(message) = state.status.take().or_else(|| state.time.take()) {
            return Some(Outgoing::Frame(message));
        }
        let cursor = state.cursor;
        let next = state
            .queues
            .range(cursor.saturating_add(1)..)
            .chain(state.queues.range(..=cursor))
            .find(|(_, q)| !q.messages.is_empty() || q.retired)
            .map(|(id, _)| *id)?;
        state.cursor = next;
        let queue = state.queues.get_mut(&next)?;
        let Some(sample) = queue.messages.pop_front() else {
            // Retired and drained: its last word, and it closes.
            let last = state.queues.remove(&next).and_then(|q| q.last);
            return match last {
                Some(message) => Some(Outgoing::Frame(message)),
                None => self.pop_locked(state),
            };
        };
        state.bytes -= sample.payload.len();
        Some(Outgoing::Data {
            subscription: next,
            sample,
        })
    }

    /// Waits until something may be waiting (a push or a close since the last wait).
    pub(crate) async fn ready(&self) {
        self.wake.notified().await;
    }

    /// The drops not reported yet, per topic (summed over its subscriptions), marked as
    /// reported.
    pub(crate) fn take_drops(&self) -> BTreeMap<Arc<str>, u64> {
        let mut state = self.lock();
        let mut drops = BTreeMap::new();
        for queue in state.queues.values_mut() {
            if queue.dropped > queue.reported {
                *drops.entry(queue.topic.clone()).or_insert(0) += queue.dropped - queue.reported;
                queue.reported = queue.dropped;
            }
        }
        drops
    }

    /// Every message dropped for this client so far.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Bytes of messages waiting now.
    pub(crate) fn queued_bytes(&self) -> usize {
        self.lock().bytes
    }

    /// Marks the client gone: nothing more is queued, and the writer stops.
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.wake.notify_one();
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(n: u8, size: usize) -> Arc<Sample> {
        Arc::new(Sample {
            log_time: u64::from(n),
            payload: vec![n; size],
        })
    }

    fn data(outbox: &Outbox) -> Option<(u32, u64)> {
        match outbox.pop()? {
            Outgoing::Data {
                subscription,
                sample,
            } => Some((subscription, sample.log_time)),
            Outgoing::Frame(_) => panic!("a frame where data was expected"),
        }
    }

    #[test]
    fn a_full_subscription_drops_its_oldest_and_counts_it() {
        let outbox = Outbox::new(3, 1 << 20);
        outbox.subscribe(1, "/a".into());
        for n in 0..5 {
            outbox.push_message(1, &sample(n, 10));
        }
        assert_eq!(outbox.dropped(), 2);
        let order: Vec<_> = std::iter::from_fn(|| data(&outbox)).collect();
        assert_eq!(
            order,
            [(1, 2), (1, 3), (1, 4)],
            "the newest three, in order"
        );
        assert_eq!(outbox.take_drops().get("/a"), Some(&2));
        assert!(outbox.take_drops().is_empty(), "reported once");
        assert_eq!(outbox.queued_bytes(), 0);
    }

    #[test]
    fn a_retired_subscription_sends_what_it_holds_then_its_last_word() {
        let outbox = Outbox::new(10, 1 << 20);
        outbox.subscribe(1, "/gone".into());
        outbox.subscribe(2, "/stays".into());
        outbox.push_message(1, &sample(0, 10));
        outbox.push_message(1, &sample(1, 10));
        outbox.push_message(2, &sample(2, 10));
        outbox.retire(1, Some(Message::text("unadvertise /gone")));
        outbox.push_message(1, &sample(3, 10)); // after the retirement: not taken
        let mut sent = Vec::new();
        while let Some(out) = outbox.pop() {
            sent.push(match out {
                Outgoing::Data { sample, .. } => format!("data {}", sample.log_time),
                Outgoing::Frame(m) => m.into_text().unwrap().to_string(),
            });
        }
        assert_eq!(
            sent,
            ["data 0", "data 2", "data 1", "unadvertise /gone"],
            "the retired queue drains before its last word; the other is served too"
        );
        assert_eq!(outbox.queued_bytes(), 0);
        assert_eq!(outbox.dropped(), 0);
        // No queue to retire: the last word goes at once.
        outbox.retire(7, Some(Message::text("unadvertise /never")));
        assert!(matches!(outbox.pop(), Some(Outgoing::Frame(_))));
    }

    #[test]
    fn the_byte_budget_holds_over_all_subscriptions() {
        let outbox = Outbox::new(100, 100);
        outbox.subscribe(1, "/big".into());
        outbox.subscribe(2, "/small".into());
        outbox.push_message(1, &sample(0, 60));
        outbox.push_message(1, &sample(1, 60)); // drops /big's first to fit
        assert_eq!(outbox.queued_bytes(), 60);
        outbox.push_message(2, &sample(2, 50)); // /small has nothing to give up: dropped
        outbox.push_message(2, &sample(3, 40)); // fits
        assert_eq!(outbox.queued_bytes(), 100);
        outbox.push_message(1, &sample(4, 1000)); // larger than the budget: /big empties, then it goes
        assert_eq!(outbox.queued_bytes(), 40);
        let drops = outbox.take_drops();
        assert_eq!(drops.get("/big"), Some(&3));
        assert_eq!(drops.get("/small"), Some(&1));
        assert_eq!(outbox.dropped(), 4);
        assert_eq!(data(&outbox), Some((2, 3)));
        assert_eq!(data(&outbox), None);
    }

    #[test]
    fn control_goes_first_and_data_round_robin() {
        let outbox = Outbox::new(10, 1 << 20);
        outbox.subscribe(1, "/a".into());
        outbox.subscribe(2, "/b".into());
        for n in 0..2 {
            outbox.push_message(1, &sample(n, 1));
            outbox.push_message(2, &sample(10 + n, 1));
        }
        assert!(outbox.push_control(Message::text("advertise")));
        assert!(matches!(outbox.pop(), Some(Outgoing::Frame(_))));
        let order: Vec<_> = std::iter::from_fn(|| data(&outbox)).collect();
        assert_eq!(order, [(1, 0), (2, 10), (1, 1), (2, 11)]);
    }

    #[test]
    fn status_and_time_keep_only_the_latest() {
        let outbox = Outbox::new(10, 100);
        outbox.set_status(Message::text("1 dropped"));
        outbox.set_status(Message::text("2 dropped"));
        outbox.set_time(Message::text("t1"));
        outbox.set_time(Message::text("t2"));
        let frames: Vec<String> = std::iter::from_fn(|| match outbox.pop()? {
            Outgoing::Frame(m) => Some(m.into_text().unwrap().as_str().to_owned()),
            Outgoing::Data { .. } => None,
        })
        .collect();
        assert_eq!(frames, ["2 dropped", "t2"]);
    }

    #[test]
    fn a_client_that_never_reads_is_closed_at_the_control_limit() {
        let outbox = Outbox::new(10, 100);
        for _ in 0..CONTROL_LIMIT {
            assert!(outbox.push_control(Message::text("x")));
        }
        assert!(!outbox.push_control(Message::text("x")));
        assert!(outbox.is_closed());
        outbox.subscribe(1, "/a".into());
        outbox.push_message(1, &sample(0, 1));
        assert_eq!(outbox.queued_bytes(), 0, "a closed outbox takes nothing");
    }

    #[test]
    fn unsubscribing_discards_what_waits_and_later_messages() {
        let outbox = Outbox::new(10, 100);
        outbox.subscribe(1, "/a".into());
        outbox.push_message(1, &sample(0, 30));
        outbox.unsubscribe(1);
        assert_eq!(outbox.queued_bytes(), 0);
        outbox.push_message(1, &sample(1, 30));
        assert_eq!(data(&outbox), None);
        assert_eq!(outbox.dropped(), 0, "not a drop: nobody wants it");
    }
}
