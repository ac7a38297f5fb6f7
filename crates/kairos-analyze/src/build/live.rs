//! The messages the builder is still following, by [`MessageId`].
//!
//! Ground rules: only the builder touches this store. A message is created here when it
//! is first seen and stays until it is retired with the whole tree it belongs to (the
//! root message no callback caused, and every message the callbacks of its deliveries
//! published, recursively). A tree is retired when nothing happened to any of its
//! messages for a horizon of trace time, or when the store holds too many messages; a
//! store without a horizon keeps every message until the trace ends. Ids are given in
//! creation order, so the store is a window of consecutive ids: retired slots are empty
//! and the window's front moves past them.

use std::collections::VecDeque;

use crate::message_graph::MessageGraph;
use crate::model::{DeliveryRef, Message, MessageId};

/// A message and what the builder knows about its place in a tree.
#[derive(Debug)]
pub(crate) struct Slot {
    pub msg: Message,
    /// The tree's root (itself for a root).
    pub root: MessageId,
    /// When the message was first seen.
    pub created: i64,
    /// For a root: the trace time of the latest change to any message of its tree.
    pub tree_last: i64,
    /// The messages published by the callbacks of this message's deliveries.
    pub children: Vec<(usize, MessageId)>,
    /// The builder's lookup keys that name this message, removed when it retires.
    pub keys: Vec<super::Key>,
}

/// The window of messages not yet retired.
#[derive(Debug, Default)]
pub(crate) struct Live {
    base: u64,
    slots: VecDeque<Option<Slot>>,
}

impl Live {
    /// The id the next message gets.
    pub fn next_id(&self) -> MessageId {
        MessageId(self.base + self.slots.len() as u64)
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Adds a message created at `at`, caused by `cause` when that message is still here.
    pub fn push(&mut self, msg: Message, at: i64) -> MessageId {
        let id = self.next_id();
        let parent = msg.cause.filter(|c| self.get(c.message).is_some());
        let root = match parent {
            Some(c) => {
                let slot = self.slot_mut(c.message).expect("checked above");
                slot.children.push((c.delivery, id));
                slot.root
            }
            None => id,
        };
        self.slots.push_back(Some(Slot {
            msg,
            root,
            created: at,
            tree_last: at,
            children: Vec::new(),
            keys: Vec::new(),
        }));
        self.touch(id, at);
        id
    }

    fn slot(&self, id: MessageId) -> Option<&Slot> {
        let i = id.0.checked_sub(self.base)?;
        self.slots.get(usize::try_from(i).ok()?)?.as_ref()
    }

    pub fn slot_mut(&mut self, id: MessageId) -> Option<&mut Slot> {
        let i = id.0.checked_sub(self.base)?;
        self.slots.get_mut(usize::try_from(i).ok()?)?.as_mut()
    }

    pub fn get(&self, id: MessageId) -> Option<&Message> {
        self.slot(id).map(|s| &s.msg)
    }

    /// The message, marked as changed at `at` (which keeps its tree live).
    pub fn get_mut(&mut self, id: MessageId, at: i64) -> Option<&mut Message> {
        self.touch(id, at);
        self.slot_mut(id).map(|s| &mut s.msg)
    }

    /// Marks the message's tree as changed at `at`.
    pub fn touch(&mut self, id: MessageId, at: i64) {
        if let Some(root) = self.slot(id).map(|s| s.root)
            && let Some(r) = self.slot_mut(root)
        {
            r.tree_last = r.tree_last.max(at);
        }
    }

    /// The children of delivery `delivery` of message `id`.
    pub fn children(&self, id: MessageId, delivery: usize) -> impl Iterator<Item = MessageId> {
        self.slot(id)
            .into_iter()
            .flat_map(move |s| s.children.iter().filter(move |c| c.0 == delivery))
            .map(|c| c.1)
    }

    /// The oldest root still here, when it and its tree are ready to retire: unchanged
    /// since `quiet_since`, or `force`. Empty slots at the front are dropped on the way.
    pub fn ready_root(&mut self, quiet_since: i64, force: bool) -> Option<MessageId> {
        while let Some(None) = self.slots.front() {
            self.slots.pop_front();
            self.base += 1;
        }
        let front = self.slots.front()?.as_ref()?;
        (front.tree_last <= quiet_since || force).then_some(MessageId(self.base))
    }

    /// When the oldest message still here was first seen.
    pub fn oldest_created(&mut self) -> Option<i64> {
        while let Some(None) = self.slots.front() {
            self.slots.pop_front();
            self.base += 1;
        }
        Some(self.slots.front()?.as_ref()?.created)
    }

    /// Every message of the tree rooted at `root`, root first.
    pub fn tree(&self, root: MessageId) -> Vec<MessageId> {
        let mut out = vec![root];
        let mut i = 0;
        while i < out.len() {
            if let Some(s) = self.slot(out[i]) {
                out.extend(s.children.iter().map(|c| c.1));
            }
            i += 1;
        }
        out
    }

    /// Takes a message out of the store.
    pub fn remove(&mut self, id: MessageId) -> Option<Slot> {
        let i = usize::try_from(id.0.checked_sub(self.base)?).ok()?;
        self.slots.get_mut(i)?.take()
    }

    /// Takes every message out, in id order (the store must never have retired one).
    pub fn drain_all(&mut self) -> impl Iterator<Item = Message> + '_ {
        self.slots.drain(..).flatten().map(|s| s.msg)
    }
}

/// One finished tree of the messages a streaming builder followed.
#[derive(Debug)]
pub(crate) struct Tree<'a> {
    live: &'a Live,
    root: MessageId,
}

impl<'a> Tree<'a> {
    pub(crate) fn new(live: &'a Live, root: MessageId) -> Self {
        Self { live, root }
    }

    /// The tree's messages, its root first.
    pub(crate) fn ids(&self) -> Vec<MessageId> {
        self.live.tree(self.root)
    }
}

impl MessageGraph for Tree<'_> {
    fn message(&self, id: MessageId) -> Option<&Message> {
        self.live.get(id)
    }

    fn children(&self, d: DeliveryRef) -> Vec<MessageId> {
        self.live.children(d.message, d.delivery).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(cause: Option<DeliveryRef>) -> Message {
        Message {
            topic: "/t".into(),
            publisher: None,
            published: None,
            sent: None,
            source_timestamp: None,
            publish_tid: None,
            dropped_by_publisher: None,
            cause,
            cause_link: None,
            deliveries: Vec::new(),
            bag: None,
        }
    }

    fn caused_by(message: MessageId) -> Option<DeliveryRef> {
        Some(DeliveryRef {
            message,
            delivery: 0,
        })
    }

    #[test]
    fn a_tree_retires_whole_once_quiet_and_the_window_moves_past_it() {
        let mut live = Live::default();
        let root = live.push(message(None), 10);
        let child = live.push(message(caused_by(root)), 20);
        let grandchild = live.push(message(caused_by(child)), 30);
        let other = live.push(message(None), 15);
        assert_eq!(live.tree(root), [root, child, grandchild]);
        assert_eq!(live.children(root, 0).collect::<Vec<_>>(), [child]);
        // A change to the grandchild keeps the whole tree live.
        live.get_mut(grandchild, 50);
        assert_eq!(live.ready_root(40, false), None, "changed at 50");
        assert_eq!(live.ready_root(50, false), Some(root));
        for id in live.tree(root) {
            live.remove(id);
        }
        assert_eq!(live.ready_root(50, false), Some(other), "the window moved");
        assert_eq!(live.oldest_created(), Some(15));
        assert!(live.get(child).is_none(), "retired");
        assert_eq!(live.next_id(), MessageId(4), "ids are never given again");
    }

    #[test]
    fn a_cause_already_retired_makes_a_new_root_and_force_retires_a_busy_tree() {
        let mut live = Live::default();
        let gone = live.push(message(None), 0);
        live.remove(gone);
        let orphan = live.push(message(caused_by(gone)), 5);
        assert_eq!(live.tree(orphan), [orphan]);
        live.touch(orphan, 1_000);
        assert_eq!(live.ready_root(10, false), None);
        assert_eq!(live.ready_root(10, true), Some(orphan));
    }
}
