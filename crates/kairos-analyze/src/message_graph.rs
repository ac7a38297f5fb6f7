//! Messages as a graph: each message, and the messages the callbacks it reached
//! published. The chains and flow analyses walk it; a whole model or one finished tree of
//! a streaming read provides it.

use std::collections::HashMap;

use crate::model::{DeliveryRef, Message, MessageId, Model};

/// Messages and the messages their deliveries' callbacks published.
pub trait MessageGraph {
    /// The message, if the graph holds it.
    fn message(&self, id: MessageId) -> Option<&Message>;
    /// The messages published by the callback of delivery `d`, in id order.
    fn children(&self, d: DeliveryRef) -> Vec<MessageId>;
}

/// A whole model's messages as a graph.
#[derive(Debug)]
pub struct ModelGraph<'a> {
    m: &'a Model,
    children: HashMap<DeliveryRef, Vec<MessageId>>,
}

impl<'a> ModelGraph<'a> {
    /// Links every message of `m` to the delivery that caused it.
    pub fn new(m: &'a Model) -> Self {
        let mut children: HashMap<DeliveryRef, Vec<MessageId>> = HashMap::new();
        for (i, msg) in m.messages.iter().enumerate() {
            if let Some(c) = msg.cause {
                children.entry(c).or_default().push(MessageId(i as u64));
            }
        }
        Self { m, children }
    }

    /// Every message's id, in order.
    pub fn ids(&self) -> impl Iterator<Item = MessageId> + use<> {
        (0..self.m.messages.len() as u64).map(MessageId)
    }
}

impl MessageGraph for ModelGraph<'_> {
    fn message(&self, id: MessageId) -> Option<&Message> {
        self.m.messages.get(id.0 as usize)
    }

    fn children(&self, d: DeliveryRef) -> Vec<MessageId> {
        self.children.get(&d).cloned().unwrap_or_default()
    }
}
