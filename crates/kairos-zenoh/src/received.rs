//! A received sample's payload as one [`bytes::Bytes`], so a large byte field of the
//! message decoded from it is a view, not a copy (see `kairos_msgs::cdr::Bytes`).
//!
//! - A payload in shared memory is kept alive by reference, without a copy: its chunk of
//!   the pool is exactly the message, and it returns to the publisher's pool once the
//!   last message viewing it is dropped.
//! - Any other payload is copied once into a buffer of its own, as decoding into owned
//!   fields did before. A view of zenoh's receive buffer would keep that whole buffer
//!   (a batch of up to 64 KiB, shared by several samples) for as long as a queued
//!   message lives: a deep queue of 5 KiB messages would hold a dozen times their size.
//!   A payload in pieces (reassembled from fragments) is joined by the same one copy; it
//!   took two before.

use kairos_msgs::cdr::SHARE_FROM;
use zenoh::bytes::ZBytes;

/// `payload` as one block, or `None` if it is too small for any field of it to be a view
/// (then decoding from the borrowed bytes costs less than a buffer of its own).
pub(crate) fn shareable(payload: &ZBytes) -> Option<bytes::Bytes> {
    if payload.len() < SHARE_FROM {
        return None;
    }
    Some(match payload.as_shm() {
        Some(_) => bytes::Bytes::from_owner(InSharedMemory(payload.clone())),
        None => bytes::Bytes::from(payload.to_bytes().into_owned()),
    })
}

/// A payload that is one chunk of a shared-memory pool, kept alive by reference.
struct InSharedMemory(ZBytes);

impl AsRef<[u8]> for InSharedMemory {
    fn as_ref(&self) -> &[u8] {
        self.0.as_shm().map_or(&[], |shm| shm)
    }
}
