//! What a topic keeps for late joiners: the last messages of each transient-local
//! publisher.
//!
//! # Promises
//! - Each transient-local publisher keeps its last `depth` messages (its history depth,
//!   keep-last; a keep-all publisher keeps up to its bound), as a DDS writer's history and
//!   zenoh-ext's advanced publisher cache do; a publisher's history goes with it.
//! - A late transient-local subscription of depth `d` gets, from each publisher, the last
//!   `min(d, that publisher's depth)` messages, oldest first, and the messages of several
//!   publishers in the order they were published: exactly what a subscription that had
//!   been there all along would have kept of them (had it kept `d` per publisher).
//! - A message is kept once: a twin that copies a topic's history and also hears the
//!   publish that races the copy keeps it once (see `graph::topic`'s twins).
//!
//! The history lives under the topic's lock; see `graph::topic`'s ground rules.

use super::subscription::Envelope;
use super::topic::Origin;
use std::collections::VecDeque;

/// The histories of a topic's transient-local publishers.
pub(crate) struct History<T> {
    publishers: Vec<Kept<T>>,
    /// Stamps messages in publish order across publishers.
    next_order: u64,
}

/// One publisher's history, oldest first, each message with its publish order.
struct Kept<T> {
    publisher: u64,
    depth: usize,
    messages: VecDeque<(u64, Envelope<T>)>,
}

impl<T> History<T> {
    pub(crate) fn new() -> Self {
        Self {
            publishers: Vec::new(),
            next_order: 0,
        }
    }

    /// Keeps `message` in its publisher's history of `depth` (at least 1), forgetting that
    /// publisher's oldest message beyond it.
    pub(crate) fn keep(&mut self, message: Envelope<T>, depth: usize) {
        let order = self.next_order;
        self.next_order += 1;
        let depth = depth.max(1);
        let at = match self
            .publishers
            .iter()
            .position(|kept| kept.publisher == message.publisher)
        {
            Some(at) => at,
            None => {
                self.publishers.push(Kept {
                    publisher: message.publisher,
                    depth,
                    messages: VecDeque::with_capacity(depth.min(64)),
                });
                self.publishers.len() - 1
            }
        };
        let kept = &mut self.publishers[at];
        kept.depth = depth;
        while kept.messages.len() >= depth {
            kept.messages.pop_front();
        }
        kept.messages.push_back((order, message));
    }

    /// Forgets the history of `publisher` (it was dropped).
    pub(crate) fn forget(&mut self, publisher: u64) {
        self.publishers.retain(|kept| kept.publisher != publisher);
    }

    /// Whether the message `origin` names is kept.
    pub(crate) fn contains(&self, origin: Origin) -> bool {
        self.publishers.iter().any(|kept| {
            kept.messages
                .iter()
                .any(|(_, message)| Origin::from(message) == origin)
        })
    }

    /// The newest message of any publisher.
    pub(crate) fn newest(&self) -> Option<&Envelope<T>> {
        self.publishers
            .iter()
            .filter_map(|kept| kept.messages.back())
            .max_by_key(|(order, _)| *order)
            .map(|(_, message)| message)
    }

    /// What a late subscription of `depth` gets: the last `depth` messages of each
    /// publisher, in publish order.
    pub(crate) fn for_late_joiner(&self, depth: usize) -> Vec<&Envelope<T>> {
        let mut chosen: Vec<&(u64, Envelope<T>)> = self
            .publishers
            .iter()
            .flat_map(|kept| {
                let skip = kept.messages.len().saturating_sub(depth);
                kept.messages.iter().skip(skip)
            })
            .collect();
        chosen.sort_unstable_by_key(|(order, _)| *order);
        chosen.into_iter().map(|(_, message)| message).collect()
    }

    /// Every kept message with its publisher's depth, in publish order (a new twin copies
    /// them all).
    pub(crate) fn all(&self) -> Vec<(&Envelope<T>, usize)> {
        let mut all: Vec<(u64, &Envelope<T>, usize)> = self
            .publishers
            .iter()
            .flat_map(|kept| {
                kept.messages
                    .iter()
                    .map(|(order, message)| (*order, message, kept.depth))
            })
            .collect();
        all.sort_unstable_by_key(|(order, _, _)| *order);
        all.into_iter()
            .map(|(_, message, depth)| (message, depth))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::subscription::NEVER;
    use std::sync::Arc;

    fn message(publisher: u64, seq: u64) -> Envelope<u64> {
        Envelope {
            message: Arc::new(publisher * 1000 + seq),
            publisher,
            seq,
            stamp: 0,
            expires: NEVER,
        }
    }

    fn values(messages: Vec<&Envelope<u64>>) -> Vec<u64> {
        messages.into_iter().map(|m| *m.message).collect()
    }

    #[test]
    fn each_publisher_keeps_its_last_depth_and_a_late_joiner_gets_them_in_publish_order() {
        let mut history = History::new();
        for seq in 1..=5 {
            history.keep(message(1, seq), 3);
            history.keep(message(2, seq), 2);
        }
        assert_eq!(
            values(history.for_late_joiner(10)),
            [1003, 1004, 2004, 1005, 2005]
        );
        assert_eq!(values(history.for_late_joiner(1)), [1005, 2005]);
        assert_eq!(*history.newest().unwrap().message, 2005);
        history.forget(2);
        assert_eq!(values(history.for_late_joiner(10)), [1003, 1004, 1005]);
        assert!(history.contains(Origin::from(&message(1, 4))));
        assert!(!history.contains(Origin::from(&message(1, 2))));
    }
}
