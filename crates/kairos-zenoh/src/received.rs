//! How a received sample's payload is decoded, so a large byte field of a message that
//! came through shared memory is a view of it, not a copy (see `kairos_msgs::cdr::Bytes`).
//!
//! - A payload in shared memory is lent to the decoder as it is: its chunk of the pool is
//!   exactly the message, kept alive by reference, and it returns to the publisher's pool
//!   once the last message viewing it is dropped.
//! - Any other payload is decoded from the borrowed bytes, its fields copied once, as
//!   before. Lending zenoh's receive buffer would keep that whole buffer (a batch of up
//!   to 64 KiB, shared by several samples) for as long as a queued message lives, and
//!   lending a copy of the payload would copy a message without byte fields twice.

use kairos_msgs::cdr::SHARE_FROM;
use kairos_msgs::message::DecodeError;
use kairos_msgs::payload::{AnyMessage, Wire};
use zenoh::bytes::ZBytes;

/// The message in `payload`, as a subscription receives it.
pub(crate) fn decode(wire: &Wire, payload: &ZBytes) -> Result<AnyMessage, DecodeError> {
    // Under SHARE_FROM no field of it can be a view: lending it would only cost.
    if payload.len() >= SHARE_FROM && payload.as_shm().is_some() {
        return wire.decode_shared(&shared(payload.clone()));
    }
    wire.decode(&payload.to_bytes())
}

/// [`decode`], the message lent to `take` as the wire's `decode_to` lends it (for a
/// subscription to box in a box its topic recycles).
pub(crate) fn decode_to(
    wire: &Wire,
    payload: &ZBytes,
    take: &mut dyn FnMut(&mut dyn std::any::Any),
) -> Result<(), DecodeError> {
    if payload.len() >= SHARE_FROM && payload.as_shm().is_some() {
        return wire.decode_shared_to(&shared(payload.clone()), take);
    }
    wire.decode_to(&payload.to_bytes(), take)
}

/// `payload`, one chunk of a shared-memory pool, as bytes that keep it alive.
pub(crate) fn shared(payload: ZBytes) -> bytes::Bytes {
    bytes::Bytes::from_owner(InSharedMemory(payload))
}

/// A payload that is one chunk of a shared-memory pool, kept alive by reference.
struct InSharedMemory(ZBytes);

impl AsRef<[u8]> for InSharedMemory {
    fn as_ref(&self) -> &[u8] {
        self.0.as_shm().map_or(&[], |shm| shm)
    }
}
