//! [`Bytes`], the Rust type of a `uint8[]` (or `byte[]`, `char[]`) field: an image's
//! pixels, a point cloud's points, a compressed frame.
//!
//! What it promises:
//! - on the wire it is the CDR of `sequence<uint8>` (a u32 length, then the bytes, in one
//!   block), whatever it holds;
//! - a received message's large byte field does not copy its bytes: decoded with
//!   [`decode_shared`](crate::message::decode_shared) (as the transport decodes every
//!   sample), a field of [`SHARE_FROM`] bytes or more is a view into the payload it is
//!   given, kept alive for as long as the message is (kairos-zenoh lends a payload that came
//!   through shared memory: the pool's chunk itself). Smaller fields
//!   are copied: a copy of a few hundred bytes costs less than keeping a whole payload;
//! - it reads as a `[u8]` and writes as one: writing into a view copies it first (copy on
//!   write), so no other holder of the message ever sees the change;
//! - a field a publisher lent (see [`crate::loan`]) is bytes of the transport's buffer,
//!   the payload's own: writing into it writes the payload in place, and it is the only
//!   handle on them (a clone is a copy).
//!
//! Why a type of its own rather than `Vec<u8>`: the one copy a 16 MiB image would take
//! from the received buffer into a `Vec` costs as much as the whole transfer through
//! shared memory. Why a view holds the whole payload: that is what the transport can keep
//! alive (one reference count); a subscriber that keeps messages for long keeps their
//! payloads, which for shared memory is the publisher's pool (its publishes then fall back
//! to the network, counted in `fallbacks`).

use crate::loan::Lent;
use serde::de::{SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::cell::RefCell;
use std::fmt;
use std::ops::{Deref, DerefMut};

/// The size from which a decoded byte field is a view into the received payload rather
/// than a copy (where the decoder was given one, see [`decode_shared`](crate::message::decode_shared)).
pub const SHARE_FROM: usize = 4096;

/// A `uint8[]` field: owned bytes, a view into a received payload, or bytes lent by a
/// publisher for a message written in place.
///
/// Build one from a `Vec<u8>`, a slice or a [`bytes::Bytes`] (`data: pixels.into()`);
/// read it as a `[u8]` (`msg.data.len()`, `&msg.data[..4]`); grow or shrink it through
/// [`Bytes::to_mut`].
#[derive(Default)]
pub struct Bytes(Repr);

enum Repr {
    Owned(Vec<u8>),
    Shared(bytes::Bytes),
    Lent(Lent),
}

impl Clone for Bytes {
    fn clone(&self) -> Self {
        match &self.0 {
            Repr::Owned(vec) => Bytes(Repr::Owned(vec.clone())),
            Repr::Shared(view) => Bytes(Repr::Shared(view.clone())),
            // Lent bytes have one holder: the clone is a copy of its own.
            Repr::Lent(lent) => Bytes(Repr::Owned(lent.as_slice().to_vec())),
        }
    }
}

impl Default for Repr {
    fn default() -> Self {
        Repr::Owned(Vec::new())
    }
}

impl Bytes {
    /// No bytes.
    pub const fn new() -> Self {
        Bytes(Repr::Owned(Vec::new()))
    }

    /// The bytes, as a `Vec` to grow or shrink; a view, or lent bytes, are copied into
    /// one first (lent bytes then no longer go out in place, see [`crate::loan`]).
    pub fn to_mut(&mut self) -> &mut Vec<u8> {
        match &self.0 {
            Repr::Owned(_) => {}
            Repr::Shared(view) => self.0 = Repr::Owned(view.to_vec()),
            Repr::Lent(lent) => self.0 = Repr::Owned(lent.as_slice().to_vec()),
        }
        match &mut self.0 {
            Repr::Owned(vec) => vec,
            Repr::Shared(_) | Repr::Lent(_) => unreachable!("made owned above"),
        }
    }

    /// The bytes as a `Vec` (a view, or lent bytes, are copied).
    pub fn into_vec(self) -> Vec<u8> {
        match self.0 {
            Repr::Owned(vec) => vec,
            Repr::Shared(view) => view.to_vec(),
            Repr::Lent(lent) => lent.as_slice().to_vec(),
        }
    }

    /// The bytes as a [`bytes::Bytes`], without a copy (lent bytes become a view of the
    /// buffer they were lent from, which lives as long as the view).
    pub fn into_shared(self) -> bytes::Bytes {
        match self.0 {
            Repr::Owned(vec) => vec.into(),
            Repr::Shared(view) => view,
            Repr::Lent(lent) => bytes::Bytes::from_owner(lent),
        }
    }

    /// Whether these bytes are a view into a received payload (shared memory, or the
    /// transport's receive buffer) rather than a buffer of their own.
    pub fn is_view(&self) -> bool {
        matches!(self.0, Repr::Shared(_))
    }

    /// Whether these bytes were lent by a publisher (see [`crate::loan`]): written in
    /// place in the buffer the message will be sent from.
    pub fn is_lent(&self) -> bool {
        matches!(self.0, Repr::Lent(_))
    }

    pub(crate) fn lent(lent: Lent) -> Self {
        Bytes(Repr::Lent(lent))
    }

    pub(crate) fn as_lent(&self) -> Option<&Lent> {
        match &self.0 {
            Repr::Lent(lent) => Some(lent),
            _ => None,
        }
    }

    pub(crate) fn as_lent_mut(&mut self) -> Option<&mut Lent> {
        match &mut self.0 {
            Repr::Lent(lent) => Some(lent),
            _ => None,
        }
    }

    pub(crate) fn take_lent(&mut self) -> Option<Lent> {
        match std::mem::take(&mut self.0) {
            Repr::Lent(lent) => Some(lent),
            other => {
                self.0 = other;
                None
            }
        }
    }
}

impl Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &self.0 {
            Repr::Owned(vec) => vec,
            Repr::Shared(view) => view,
            Repr::Lent(lent) => lent.as_slice(),
        }
    }
}

impl DerefMut for Bytes {
    fn deref_mut(&mut self) -> &mut [u8] {
        if self.is_lent() {
            // Written in place: these bytes are the payload's own.
            return self.as_lent_mut().expect("lent").as_mut_slice();
        }
        self.to_mut()
    }
}

impl AsRef<[u8]> for Bytes {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl From<Vec<u8>> for Bytes {
    fn from(vec: Vec<u8>) -> Self {
        Bytes(Repr::Owned(vec))
    }
}

impl From<&[u8]> for Bytes {
    fn from(slice: &[u8]) -> Self {
        Bytes(Repr::Owned(slice.to_vec()))
    }
}

impl<const N: usize> From<[u8; N]> for Bytes {
    fn from(array: [u8; N]) -> Self {
        Bytes(Repr::Owned(array.to_vec()))
    }
}

impl From<bytes::Bytes> for Bytes {
    fn from(view: bytes::Bytes) -> Self {
        Bytes(Repr::Shared(view))
    }
}

impl From<Bytes> for Vec<u8> {
    fn from(bytes: Bytes) -> Self {
        bytes.into_vec()
    }
}

impl FromIterator<u8> for Bytes {
    fn from_iter<I: IntoIterator<Item = u8>>(iter: I) -> Self {
        Bytes(Repr::Owned(iter.into_iter().collect()))
    }
}

impl<'a> IntoIterator for &'a Bytes {
    type Item = &'a u8;
    type IntoIter = std::slice::Iter<'a, u8>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl fmt::Debug for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl PartialEq for Bytes {
    fn eq(&self, other: &Bytes) -> bool {
        **self == **other
    }
}

impl Eq for Bytes {}

impl PartialEq<[u8]> for Bytes {
    fn eq(&self, other: &[u8]) -> bool {
        **self == *other
    }
}

impl PartialEq<&[u8]> for Bytes {
    fn eq(&self, other: &&[u8]) -> bool {
        **self == **other
    }
}

impl<const N: usize> PartialEq<[u8; N]> for Bytes {
    fn eq(&self, other: &[u8; N]) -> bool {
        **self == other[..]
    }
}

impl PartialEq<Vec<u8>> for Bytes {
    fn eq(&self, other: &Vec<u8>) -> bool {
        **self == other[..]
    }
}

impl std::hash::Hash for Bytes {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (**self).hash(state)
    }
}

impl Serialize for Bytes {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(self)
    }
}

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_bytes(BytesVisitor)
    }
}

struct BytesVisitor;

impl<'de> Visitor<'de> for BytesVisitor {
    type Value = Bytes;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a byte sequence")
    }
    fn visit_borrowed_bytes<E: serde::de::Error>(self, v: &'de [u8]) -> Result<Bytes, E> {
        if v.len() >= SHARE_FROM
            && let Some(view) = PAYLOAD.with_borrow(|payload| view_of(payload.as_ref()?, v))
        {
            return Ok(Bytes(Repr::Shared(view)));
        }
        Ok(Bytes::from(v))
    }
    fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<Bytes, E> {
        Ok(Bytes::from(v))
    }
    fn visit_byte_buf<E: serde::de::Error>(self, v: Vec<u8>) -> Result<Bytes, E> {
        Ok(Bytes::from(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Bytes, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 20));
        while let Some(b) = seq.next_element::<u8>()? {
            out.push(b);
        }
        Ok(Bytes::from(out))
    }
}

thread_local! {
    /// The payload being decoded on this thread by [`with_payload`], if any: byte fields
    /// found inside it become views of it.
    static PAYLOAD: RefCell<Option<bytes::Bytes>> = const { RefCell::new(None) };
}

/// `slice` as a view of `payload`, if it lies inside it.
fn view_of(payload: &bytes::Bytes, slice: &[u8]) -> Option<bytes::Bytes> {
    let (start, end) = (
        payload.as_ptr() as usize,
        payload.as_ptr() as usize + payload.len(),
    );
    let at = slice.as_ptr() as usize;
    (at >= start && at + slice.len() <= end).then(|| payload.slice_ref(slice))
}

/// Runs `decode` with `payload` as the buffer byte fields may view.
pub(crate) fn with_payload<T>(payload: &bytes::Bytes, decode: impl FnOnce() -> T) -> T {
    /// Clears the payload however `decode` ends (a panic included), so no later decode on
    /// this thread takes views of a buffer it was not given.
    struct Clear(Option<bytes::Bytes>);
    impl Drop for Clear {
        fn drop(&mut self) {
            let previous = self.0.take();
            PAYLOAD.with_borrow_mut(|payload| *payload = previous);
        }
    }
    let previous = PAYLOAD.with_borrow_mut(|slot| slot.replace(payload.clone()));
    let _clear = Clear(previous);
    decode()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;
    use crate::message::{decode, decode_shared, encode};
    use crate::type_hash::{Field, TypeDescription, type_id};

    /// A message with a byte field between two others, so its bytes sit mid-payload.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    struct Frame {
        seq: u32,
        data: Bytes,
        tail: u16,
    }

    impl Message for Frame {
        const TYPE_NAME: &'static str = "kairos_test/msg/Frame";
        fn description() -> TypeDescription {
            TypeDescription::new(
                Self::TYPE_NAME,
                vec![
                    Field::primitive("seq", type_id::UINT32),
                    Field::primitive("data", type_id::UINT8).sequence(),
                    Field::primitive("tail", type_id::UINT16),
                ],
            )
        }
    }

    /// The same message as a `Vec<u8>` written with `cdr::bytes`, as before `Bytes`.
    #[derive(Debug, Serialize)]
    struct VecFrame {
        seq: u32,
        #[serde(with = "crate::cdr::bytes")]
        data: Vec<u8>,
        tail: u16,
    }

    fn frame(len: usize) -> Frame {
        Frame {
            seq: 7,
            data: (0..len).map(|i| (i * 13 + 5) as u8).collect(),
            tail: 0xbeef,
        }
    }

    fn inside(payload: &[u8], field: &[u8]) -> bool {
        let (start, at) = (payload.as_ptr() as usize, field.as_ptr() as usize);
        at >= start && at + field.len() <= start + payload.len()
    }

    #[test]
    fn the_wire_form_is_a_uint8_sequence_whatever_it_holds() {
        for len in [0, 1, 3, SHARE_FROM - 1, SHARE_FROM, 70_000] {
            let message = frame(len);
            let old = VecFrame {
                seq: message.seq,
                data: message.data.to_vec(),
                tail: message.tail,
            };
            let mut expected = crate::message::CDR_LE_HEADER.to_vec();
            cdr_encoding::to_writer::<_, byteorder::LittleEndian, _>(&mut expected, &old).unwrap();
            assert_eq!(encode(&message), expected, "{len} bytes, owned");
            // A received (viewed) field writes the same bytes again.
            let payload = bytes::Bytes::from(expected.clone());
            let viewed: Frame = decode_shared(&payload).unwrap();
            assert_eq!(encode(&viewed), expected, "{len} bytes, viewed");
        }
    }

    #[test]
    fn a_large_field_decoded_from_a_shared_payload_is_a_view_of_it() {
        for len in [SHARE_FROM - 1, SHARE_FROM, 1 << 20] {
            let payload = bytes::Bytes::from(encode(&frame(len)));
            let got: Frame = decode_shared(&payload).unwrap();
            assert_eq!(got, frame(len));
            let large = len >= SHARE_FROM;
            assert_eq!(got.data.is_view(), large, "{len} bytes");
            assert_eq!(inside(&payload, &got.data), large, "{len} bytes");
            // The view keeps the payload alive after every other handle is gone.
            drop(payload);
            assert_eq!(got, frame(len));
        }
    }

    #[test]
    fn a_plain_decode_copies_even_after_a_shared_one_on_the_same_thread() {
        let payload = bytes::Bytes::from(encode(&frame(1 << 16)));
        let _: Frame = decode_shared(&payload).unwrap();
        let got: Frame = decode(&payload).unwrap();
        assert!(!got.data.is_view());
        assert!(!inside(&payload, &got.data));
    }

    #[test]
    fn a_failed_shared_decode_leaves_no_payload_behind() {
        let mut bytes = encode(&frame(1 << 16));
        bytes.truncate(bytes.len() - 1); // the u16 after the field is cut short
        let payload = bytes::Bytes::from(bytes);
        assert!(decode_shared::<Frame>(&payload).is_err());
        let whole = encode(&frame(1 << 16));
        let got: Frame = decode(&whole).unwrap();
        assert!(!got.data.is_view());
        assert!(PAYLOAD.with_borrow(Option::is_none));
    }

    #[test]
    fn writing_into_a_view_copies_it_first_and_no_other_holder_sees_the_change() {
        let payload = bytes::Bytes::from(encode(&frame(1 << 16)));
        let received: Frame = decode_shared(&payload).unwrap();
        let mut mine = received.clone();
        assert!(mine.data.is_view());
        mine.data[0] ^= 0xff;
        mine.data.to_mut().push(1);
        assert!(!mine.data.is_view());
        assert_eq!(
            received,
            frame(1 << 16),
            "the other holder's message changed"
        );
        assert_eq!(decode::<Frame>(&payload).unwrap(), frame(1 << 16));
        assert_eq!(mine.data.len(), (1 << 16) + 1);
        assert_eq!(mine.data[0], frame(1 << 16).data[0] ^ 0xff);
    }

    #[test]
    fn self_describing_formats_read_and_write_a_list_of_numbers() {
        let message = frame(3);
        let json = serde_json::to_string(&message).unwrap();
        assert_eq!(json, r#"{"seq":7,"data":[5,18,31],"tail":48879}"#);
        let back: Frame = serde_json::from_str(&json).unwrap();
        assert_eq!(back, message);
    }

    #[test]
    fn it_reads_compares_and_converts_as_a_byte_vector_would() {
        let bytes = Bytes::from(vec![1u8, 2, 3]);
        assert_eq!(bytes, [1u8, 2, 3]);
        assert_eq!(bytes, vec![1u8, 2, 3]);
        assert_eq!(bytes, &[1u8, 2, 3][..]);
        assert_eq!(format!("{bytes:?}"), "[1, 2, 3]");
        assert_eq!(bytes.iter().sum::<u8>(), 6);
        assert_eq!(Vec::from(bytes.clone()), vec![1, 2, 3]);
        assert_eq!(
            bytes.clone().into_shared(),
            bytes::Bytes::from_static(&[1, 2, 3])
        );
        assert_eq!(Bytes::default(), Bytes::new());
        assert!(Bytes::new().is_empty());
    }
}
