//! The attachment every sample, query and reply carries: who sent it and which one it is.
//!
//! What this module promises: the bytes are those rmw_zenoh writes with zenoh-ext's
//! serializer for `(i64 sequence number, i64 source timestamp, [u8; 16] gid)`: two
//! little-endian i64, then the array as a sequence, i.e. its length as a LEB128 varint
//! (`0x10`) and the 16 bytes, 33 bytes in all. ROS 2 drops a sample without it, so every
//! kairos publisher, client and service attaches one; an attachment that does not parse is
//! an [`AttachmentError`].

/// An entity's global id: XXH3-128 of its liveliness key (see [`crate::graph_key`]).
pub type Gid = [u8; 16];

/// What a sample, query or reply says of its sender, as rmw_zenoh attaches it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attachment {
    /// Per publisher (or client), from 1.
    pub sequence_number: i64,
    /// Nanoseconds since the UNIX epoch when the message was sent.
    pub source_timestamp: i64,
    /// The sending publisher's (or client's) global id.
    pub gid: Gid,
}

/// The encoded size.
pub const ATTACHMENT_LEN: usize = 8 + 8 + 1 + 16;

/// An attachment that is not rmw_zenoh's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AttachmentError {
    /// There is none.
    #[error("the sample has no attachment (ROS 2 drops such samples; the sender is not rmw_zenoh)")]
    Missing,
    /// It has the wrong number of bytes.
    #[error(
        "attachment of {0} bytes; rmw_zenoh's is {ATTACHMENT_LEN} (seq, timestamp, 16-byte gid)"
    )]
    Length(usize),
    /// The gid's length prefix is not 16.
    #[error("attachment gid length byte is {0}, not 16")]
    GidLength(u8),
}

impl Attachment {
    /// The 33 bytes rmw_zenoh writes.
    pub fn to_bytes(&self) -> [u8; ATTACHMENT_LEN] {
        let mut out = [0u8; ATTACHMENT_LEN];
        out[..8].copy_from_slice(&self.sequence_number.to_le_bytes());
        out[8..16].copy_from_slice(&self.source_timestamp.to_le_bytes());
        // LEB128 of 16 is one byte.
        out[16] = 16;
        out[17..].copy_from_slice(&self.gid);
        out
    }

    /// Reads the 33 bytes of [`to_bytes`](Self::to_bytes).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, AttachmentError> {
        if bytes.len() != ATTACHMENT_LEN {
            return Err(AttachmentError::Length(bytes.len()));
        }
        if bytes[16] != 16 {
            return Err(AttachmentError::GidLength(bytes[16]));
        }
        let i64_at = |at: usize| i64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
        Ok(Self {
            sequence_number: i64_at(0),
            source_timestamp: i64_at(8),
            gid: bytes[17..].try_into().unwrap(),
        })
    }
}

/// Nanoseconds since the UNIX epoch now (the attachment's source timestamp; wall time,
/// as ROS 2 stamps it: it is recorded, never waited on).
pub fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_seq_stamp_leb128_len_gid() {
        let gid: Gid = core::array::from_fn(|i| i as u8 + 0xa0);
        let a = Attachment {
            sequence_number: 1,
            source_timestamp: 0x0102030405060708,
            gid,
        };
        let bytes = a.to_bytes();
        let mut expected = vec![1, 0, 0, 0, 0, 0, 0, 0, 8, 7, 6, 5, 4, 3, 2, 1, 0x10];
        expected.extend_from_slice(&gid);
        assert_eq!(bytes.as_slice(), expected.as_slice());
        assert_eq!(Attachment::from_bytes(&bytes), Ok(a));
    }

    #[test]
    fn malformed_attachments_are_errors() {
        assert_eq!(
            Attachment::from_bytes(&[0; 17]),
            Err(AttachmentError::Length(17))
        );
        let mut bytes = [0u8; ATTACHMENT_LEN];
        bytes[16] = 15;
        assert_eq!(
            Attachment::from_bytes(&bytes),
            Err(AttachmentError::GidLength(15))
        );
    }
}
