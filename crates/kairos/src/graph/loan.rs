//! Loaned messages: a large message written where the transport sends it from, as
//! rclcpp's `borrow_loaned_message` offers for the middlewares that lend.
//!
//! A camera driver asks its publisher for a [`Loan`] of an image whose pixels (a
//! `uint8[]` field) are bytes of the transport's buffer, fills them, and publishes the
//! loan: the payload is written around the pixels, and nothing copies them. Over Zenoh
//! with shared memory on, the buffer is a chunk of the session's pool, and subscribers of
//! the same host map it: a 16 MiB image crosses processes with no copy at all.
//!
//! What this module promises:
//! - a loan always succeeds: where the transport lends nothing (no transport, shared
//!   memory off, a payload under its threshold, the pool full), the field is a zeroed
//!   buffer of the heap, and publishing the loan is publishing the message (one copy into
//!   the transport, as for any message). [`Loan::in_place`] says which it got, and
//!   [`Publisher::loan_stats`] counts both;
//! - the message's other fields may change between the loan and the publish; a loan whose
//!   message no longer fits its buffer (its lent field resized or replaced, a string before
//!   it grown) is published with one copy and counted, never sent wrong (see
//!   `kairos_interface::loan`);
//! - this process's subscriptions get the message as from any publish, its lent field a
//!   view of the payload that was sent (no copy either); the sequence number, QoS events
//!   and trace events are those of any publish;
//! - a loan dropped unpublished gives its buffer back to the transport.

use super::publisher::Publisher;
use kairos_interface::Message;
use kairos_interface::cdr::Bytes;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU64, Ordering};

/// A message whose large byte field is lent by its publisher's transport: made by
/// [`Publisher::loan`], sent by [`Publisher::publish_loaned`]. It reads and writes as the
/// message (`loan.data[..]`, `loan.header.stamp = ...`).
pub struct Loan<T> {
    message: T,
    field: fn(&mut T) -> &mut Bytes,
    in_place: bool,
}

impl<T> Loan<T> {
    /// Whether the field's bytes are the transport's buffer, written in place (else they
    /// are a buffer of the heap, copied when published).
    pub fn in_place(&self) -> bool {
        self.in_place
    }

    /// The message, its field still lent (a clone of it, or of the field, is a copy).
    pub fn into_inner(self) -> T {
        self.message
    }
}

impl<T> Deref for Loan<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.message
    }
}

impl<T> DerefMut for Loan<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.message
    }
}

impl<T: fmt::Debug> fmt::Debug for Loan<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Loan")
            .field("in_place", &self.in_place)
            .field("message", &self.message)
            .finish()
    }
}

/// How a publisher's loaned messages went out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoanStats {
    /// Sent from the buffer they were written in: no copy.
    pub in_place: u64,
    /// Published with one copy: the transport lent no buffer, or the message no longer
    /// fit the one it lent.
    pub copied: u64,
}

#[derive(Debug, Default)]
pub(crate) struct LoanCounts {
    in_place: AtomicU64,
    copied: AtomicU64,
}

impl<T: Message> Publisher<T> {
    /// A message to fill in place: `message` with its byte field `field` (an image's
    /// `data`) made `len` bytes of the buffer the transport will send it from. The other
    /// fields are `message`'s; the lent bytes hold whatever the buffer held: write them
    /// all. See the module docs for what a loan promises.
    ///
    /// # Examples
    ///
    /// ```
    /// use kairos::graph::{Context, Node, Qos};
    /// use kairos_interface::cdr::Bytes;
    /// # #[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
    /// # struct Image { width: u32, data: Bytes }
    /// # impl kairos::graph::Message for Image {
    /// #     const TYPE_NAME: &'static str = "doc/msg/Image";
    /// #     fn description() -> kairos_interface::TypeDescription {
    /// #         use kairos_interface::type_hash::{Field, TypeDescription, type_id};
    /// #         TypeDescription::new(Self::TYPE_NAME, vec![
    /// #             Field::primitive("width", type_id::UINT32),
    /// #             Field::primitive("data", type_id::UINT8).sequence()])
    /// #     }
    /// # }
    ///
    /// let node = Node::new_in(&Context::new(), "camera", "/")?;
    /// let publisher = node.create_publisher::<Image>("image", Qos::keep_last(1))?;
    /// let template = Image { width: 640, data: Bytes::new() };
    /// let mut image = publisher.loan(template, |m| &mut m.data, 640 * 480);
    /// image.data.fill(0x80); // the camera writes its frame here
    /// publisher.publish_loaned(image);
    /// # Ok::<(), kairos::graph::GraphError>(())
    /// ```
    pub fn loan(&self, message: T, field: fn(&mut T) -> &mut Bytes, len: usize) -> Loan<T> {
        let mut message = message;
        let in_place = self.remote.as_deref().is_some_and(|remote| {
            kairos_interface::loan::lend(&mut message, field, len, |capacity| remote.lend(capacity))
        });
        if !in_place {
            *field(&mut message) = Bytes::from(vec![0; len]);
        }
        Loan {
            message,
            field,
            in_place,
        }
    }

    /// Publishes a loaned message (see [`Publisher::loan`]); returns how many
    /// subscriptions in this process it reached.
    pub fn publish_loaned(&self, loan: Loan<T>) -> usize {
        let Loan {
            mut message, field, ..
        } = loan;
        let written = self
            .remote
            .as_deref()
            .and_then(|_| kairos_interface::loan::write_around(&mut message, field));
        let (Some(remote), Some(written)) = (self.remote.as_deref(), written) else {
            self.loans.copied.fetch_add(1, Ordering::Relaxed);
            return self.publish(message);
        };
        let seq = self.published.fetch_add(1, Ordering::Relaxed) + 1;
        let range = written.field();
        match remote.publish_lent(written, seq) {
            Ok(sent) => {
                self.loans.in_place.fetch_add(1, Ordering::Relaxed);
                *field(&mut message) = Bytes::from(sent.slice(range));
                self.publish_here(self.topic.pool.boxed(message), seq)
            }
            Err(written) => {
                self.loans.copied.fetch_add(1, Ordering::Relaxed);
                *field(&mut message) = Bytes::from(written.into_bytes().slice(range));
                let message = self.topic.pool.boxed(message);
                let reached = self.publish_here(message.clone(), seq);
                remote.publish(&*message, seq);
                reached
            }
        }
    }

    /// How this publisher's loaned messages went out so far.
    pub fn loan_stats(&self) -> LoanStats {
        LoanStats {
            in_place: self.loans.in_place.load(Ordering::Relaxed),
            copied: self.loans.copied.load(Ordering::Relaxed),
        }
    }
}
