//! A received sample's payload as one [`bytes::Bytes`], so a large byte field of the
//! message decoded from it is a view, not a copy (see `kairos_msgs::cdr::Bytes`).
//!
//! A payload in one block (shared memory, or a sample within one receive buffer) is kept
//! alive by reference, without a copy; one in pieces (a large sample reassembled from the
//! network) is joined once, as decoding needs it in one block anyway.

use kairos_msgs::cdr::SHARE_FROM;
use zenoh::bytes::ZBytes;

/// `payload` as one block, or `None` if it is too small for any field of it to be a view
/// (then decoding from the borrowed bytes costs less than keeping the payload).
pub(crate) fn shareable(payload: &ZBytes) -> Option<bytes::Bytes> {
    if payload.len() < SHARE_FROM {
        return None;
    }
    let mut slices = payload.slices();
    Some(match (slices.next(), slices.next()) {
        (Some(_), None) => bytes::Bytes::from_owner(OneBlock(payload.clone())),
        _ => bytes::Bytes::from(payload.to_bytes().into_owned()),
    })
}

/// A payload of one slice, which `bytes::Bytes` keeps alive (a reference count, no copy).
struct OneBlock(ZBytes);

impl AsRef<[u8]> for OneBlock {
    fn as_ref(&self) -> &[u8] {
        self.0.slices().next().unwrap_or_default()
    }
}
