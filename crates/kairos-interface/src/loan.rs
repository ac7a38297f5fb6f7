//! Loaned messages: a message's large byte field written in place, in the buffer its
//! payload is sent from (a chunk of shared memory), so publishing it copies nothing.
//!
//! A camera driver that fills a 16 MiB image into a `Vec` and publishes it pays one copy
//! of 16 MiB into the transport's buffer: on a 2-core machine, 1.2 ms when the cache holds
//! both, 2.5 ms when it does not. Lent, the image is filled where the payload already is,
//! and the publish writes only the few bytes of the other fields around it.
//!
//! What this module promises:
//! - a lent field ([`Bytes::is_lent`]) is the only handle on its bytes: they are read and
//!   written through it alone, a clone of it is a copy, and the buffer lives as long as it;
//! - [`write_around`] writes the rest of the payload around the lent bytes without touching
//!   them, or writes nothing that matters and says so: when the message no longer fits the
//!   place it was lent (the field was replaced or resized, a field before it changed
//!   length, the payload outgrew the buffer), it returns `None` and the message is sent as
//!   any other, encoded with one copy. A loan never makes a wrong payload;
//! - fields other than the lent one may change between the loan and the publish (a
//!   header's stamp, a sequence number): they are written at the publish;
//! - lent bytes hold whatever the buffer held before (it is not zeroed, which would cost
//!   what a copy costs): a publisher writes all of them.

use crate::bytes_field::Bytes;
use crate::message::{CDR_LE_HEADER, Message, encoded_len};
use byteorder::LittleEndian;
use std::any::Any;
use std::ops::Range;
use std::ptr::NonNull;

/// Memory a transport lends for a message's payload to be written in place.
///
/// # Safety
///
/// An implementation promises that [`as_mut_ptr`](Self::as_mut_ptr) points to
/// [`capacity`](Self::capacity) initialized bytes, valid for reads and writes for as long
/// as the value lives, that nothing but the holder of the value reads or writes while it
/// lives, and whose address does not change when the value moves.
pub unsafe trait LentBuffer: Send + Sync + 'static {
    /// The start of the buffer.
    fn as_mut_ptr(&mut self) -> *mut u8;
    /// How many bytes it has.
    fn capacity(&self) -> usize;
    /// The buffer as its own type, to tell whose it is.
    fn as_any(&self) -> &dyn Any;
    /// The buffer as its own type again, to send it.
    fn into_any(self: Box<Self>) -> Box<dyn Any + Send>;
}

/// The bytes `start..start + len` of a lent buffer, owned with it: what a lent
/// [`Bytes`] holds.
pub(crate) struct Lent {
    buffer: Box<dyn LentBuffer>,
    base: NonNull<u8>,
    start: usize,
    len: usize,
}

// SAFETY: `base` points into `buffer`, which `Lent` owns alone and which is `Send + Sync`
// itself; the bytes are read through `&self` and written through `&mut self` only.
unsafe impl Send for Lent {}
// SAFETY: as for `Send`: shared access only reads.
unsafe impl Sync for Lent {}

impl Lent {
    pub(crate) fn as_slice(&self) -> &[u8] {
        // SAFETY: `start + len <= capacity` (checked where a `Lent` is made), the buffer is
        // alive and initialized and nothing else touches it (the `LentBuffer` contract),
        // and `&self` excludes a writer through `as_mut_slice`.
        unsafe { std::slice::from_raw_parts(self.base.as_ptr().add(self.start), self.len) }
    }

    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as in `as_slice`, and `&mut self` makes this the only access.
        unsafe { std::slice::from_raw_parts_mut(self.base.as_ptr().add(self.start), self.len) }
    }
}

impl AsRef<[u8]> for Lent {
    fn as_ref(&self) -> &[u8] {
        self.as_slice()
    }
}

/// Lends `message`'s byte field (the one `field` returns) `len` bytes of a buffer from
/// `buffer_of`, placed where the field's bytes lie in the message's payload. `buffer_of` is
/// asked for a capacity that holds the payload; returns false, the message unchanged, when
/// it gives no buffer (or one too small), or `len` is 0 (nothing to lend).
pub fn lend<M: Message>(
    message: &mut M,
    field: fn(&mut M) -> &mut Bytes,
    len: usize,
    buffer_of: impl FnOnce(usize) -> Option<Box<dyn LentBuffer>>,
) -> bool {
    if len == 0 {
        return false;
    }
    let previous = std::mem::take(field(message));
    // The bytes before the field keep their length whatever its length; those after it
    // can move by their alignment, at most 7 bytes.
    let Some(capacity) = encoded_len(message)
        .checked_add(len)
        .and_then(|n| n.checked_add(8))
    else {
        *field(message) = previous;
        return false;
    };
    let Some(mut buffer) = buffer_of(capacity).filter(|b| b.capacity() >= capacity) else {
        *field(message) = previous;
        return false;
    };
    let Some(base) = NonNull::new(buffer.as_mut_ptr()) else {
        *field(message) = previous;
        return false;
    };
    // Placed at the start first, only to find where the payload puts the field's bytes.
    *field(message) = Bytes::lent(Lent {
        buffer,
        base,
        start: 0,
        len,
    });
    let Some((at, _)) = locate(message, base.as_ptr(), len).filter(|&(_, t)| t <= capacity) else {
        *field(message) = previous;
        return false;
    };
    if let Some(lent) = field(message).as_lent_mut() {
        lent.start = at;
    }
    true
}

/// A payload written around its lent bytes, ready to send: the buffer, the payload's
/// length (from the buffer's start), and where the lent bytes lie in it.
pub struct Written {
    buffer: Box<dyn LentBuffer>,
    /// Where the buffer starts, as it was lent (a `&self` cannot ask the buffer).
    base: NonNull<u8>,
    len: usize,
    field: Range<usize>,
}

// SAFETY: `base` points into `buffer`, owned here alone, `Send + Sync` itself; it is only
// read through.
unsafe impl Send for Written {}
// SAFETY: as for `Send`.
unsafe impl Sync for Written {}

impl Written {
    /// The payload's length: its bytes are the buffer's first `len`.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the payload is empty (it never is: it has at least its header).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Where the lent field's bytes lie in the payload.
    pub fn field(&self) -> Range<usize> {
        self.field.clone()
    }

    /// The buffer, to tell whose it is.
    pub fn buffer(&self) -> &dyn LentBuffer {
        &*self.buffer
    }

    /// The buffer, to send it.
    pub fn into_buffer(self) -> Box<dyn LentBuffer> {
        self.buffer
    }

    /// The payload as shared bytes (the buffer kept alive by them), for a transport that
    /// cannot send the buffer as it is: it is then encoded from them, with one copy.
    pub fn into_bytes(self) -> bytes::Bytes {
        struct Payload(Written);
        impl AsRef<[u8]> for Payload {
            fn as_ref(&self) -> &[u8] {
                // SAFETY: the payload is the buffer's first `len` bytes (`len <= capacity`,
                // as `write_around` wrote them); the buffer is owned here and no longer
                // written.
                unsafe { std::slice::from_raw_parts(self.0.base.as_ptr(), self.0.len) }
            }
        }
        bytes::Bytes::from_owner(Payload(self))
    }
}

impl std::fmt::Debug for Written {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Written")
            .field("len", &self.len)
            .field("field", &self.field)
            .finish_non_exhaustive()
    }
}

/// Writes `message`'s payload around its lent field (the one `field` returns), which must
/// still lie where [`lend`] placed it; takes the buffer out of the field, left empty.
/// `None`, the message unchanged but for bytes of the buffer outside the field, when it no
/// longer fits (see the module docs): send it encoded instead.
pub fn write_around<M: Message>(
    message: &mut M,
    field: fn(&mut M) -> &mut Bytes,
) -> Option<Written> {
    let (base, start, len, capacity) = {
        let lent = field(message).as_lent()?;
        (lent.base, lent.start, lent.len, lent.buffer.capacity())
    };
    let mut out = InPlace {
        base: base.as_ptr(),
        capacity,
        pos: CDR_LE_HEADER.len(),
        field: start..start + len,
        field_written: false,
    };
    out.put(&CDR_LE_HEADER, 0).ok()?;
    cdr_encoding::to_writer::<M, LittleEndian, _>(&mut out, &*message).ok()?;
    if !out.field_written {
        return None;
    }
    let total = out.pos;
    let lent = field(message).take_lent()?;
    Some(Written {
        buffer: lent.buffer,
        base: lent.base,
        len: total,
        field: start..start + len,
    })
}

/// Where the bytes at `base` (`len` of them) land in `message`'s payload, and the
/// payload's length; `None` if they are not written.
fn locate<M: Message>(message: &M, base: *const u8, len: usize) -> Option<(usize, usize)> {
    struct Locate {
        pos: usize,
        target: (*const u8, usize),
        found: Option<usize>,
    }
    impl std::io::Write for Locate {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            if (bytes.as_ptr(), bytes.len()) == self.target {
                self.found = Some(self.pos);
            }
            self.pos += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut locate = Locate {
        pos: CDR_LE_HEADER.len(),
        target: (base, len),
        found: None,
    };
    cdr_encoding::to_writer::<M, LittleEndian, _>(&mut locate, message).ok()?;
    Some((locate.found?, locate.pos))
}

/// Writes a payload into a lent buffer around the lent bytes `field`: the write of those
/// very bytes (the serializer hands over the field's own slice) is skipped, and any other
/// write that would touch them, or pass the buffer's end, fails the payload.
struct InPlace {
    base: *mut u8,
    capacity: usize,
    pos: usize,
    field: Range<usize>,
    field_written: bool,
}

impl InPlace {
    fn put(&mut self, bytes: &[u8], at: usize) -> std::io::Result<()> {
        let end = at
            .checked_add(bytes.len())
            .filter(|&end| end <= self.capacity)
            .ok_or(std::io::ErrorKind::WriteZero)?;
        if at < self.field.end && self.field.start < end && !bytes.is_empty() {
            return Err(std::io::ErrorKind::InvalidData.into());
        }
        // SAFETY: `at..end` lies inside the buffer and outside the lent bytes (both checked
        // above), so it aliases no slice handed out for them; `copy` allows `bytes` to be
        // anywhere, even in the buffer.
        unsafe { std::ptr::copy(bytes.as_ptr(), self.base.add(at), bytes.len()) };
        Ok(())
    }
}

impl std::io::Write for InPlace {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let lent = self.base.wrapping_add(self.field.start).cast_const();
        if !bytes.is_empty() && bytes.as_ptr() == lent && bytes.len() == self.field.len() {
            if self.pos != self.field.start || self.field_written {
                return Err(std::io::ErrorKind::InvalidData.into());
            }
            self.field_written = true;
        } else {
            self.put(bytes, self.pos)?;
        }
        self.pos += bytes.len();
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::message::{decode, encode};
    use crate::type_hash::{Field, TypeDescription, type_id};
    use serde::{Deserialize, Serialize};

    /// An image-like message: fields of several alignments before and after its pixels.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub(super) struct Frame {
        pub(super) seq: u32,
        pub(super) frame_id: String,
        pub(super) data: Bytes,
        pub(super) tail: u16,
        pub(super) exposure: f64,
        pub(super) note: String,
    }

    impl Message for Frame {
        const TYPE_NAME: &'static str = "kairos_test/msg/Frame";
        fn description() -> TypeDescription {
            TypeDescription::new(
                Self::TYPE_NAME,
                vec![
                    Field::primitive("seq", type_id::UINT32),
                    Field::primitive("frame_id", type_id::STRING),
                    Field::primitive("data", type_id::UINT8).sequence(),
                    Field::primitive("tail", type_id::UINT16),
                    Field::primitive("exposure", type_id::DOUBLE),
                    Field::primitive("note", type_id::STRING),
                ],
            )
        }
    }

    pub(super) fn data(frame: &mut Frame) -> &mut Bytes {
        &mut frame.data
    }

    /// A buffer of the heap, as a transport's pool would lend one; it holds a count of the
    /// buffers alive, so a test sees one freed.
    struct Heap(Box<[u8]>, #[allow(dead_code)] std::sync::Arc<()>);

    // SAFETY: the boxed slice is owned, initialized, and does not move with the value.
    unsafe impl LentBuffer for Heap {
        fn as_mut_ptr(&mut self) -> *mut u8 {
            self.0.as_mut_ptr()
        }
        fn capacity(&self) -> usize {
            self.0.len()
        }
        fn as_any(&self) -> &dyn Any {
            self
        }
        fn into_any(self: Box<Self>) -> Box<dyn Any + Send> {
            self
        }
    }

    pub(super) fn heap(
        alive: &std::sync::Arc<()>,
    ) -> impl FnOnce(usize) -> Option<Box<dyn LentBuffer>> {
        let alive = alive.clone();
        // Old bytes in the buffer, as a reused chunk of a pool has.
        move |capacity| Some(Box::new(Heap(vec![0xee; capacity].into(), alive)) as _)
    }

    pub(super) fn template(frame_id: &str, note: &str) -> Frame {
        Frame {
            seq: 1,
            frame_id: frame_id.to_owned(),
            data: Bytes::new(),
            tail: 0xbeef,
            exposure: 0.25,
            note: note.to_owned(),
        }
    }

    fn fill(bytes: &mut [u8]) {
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (i * 7 + 3) as u8;
        }
    }

    /// The payload `write_around` wrote, as a slice of its buffer.
    fn payload(written: Written) -> bytes::Bytes {
        written.into_bytes()
    }

    #[test]
    fn a_lent_field_is_written_in_place_and_the_payload_is_the_encoded_message() {
        let alive = std::sync::Arc::new(());
        // Lengths that leave the fields after the bytes at every alignment.
        for len in [1, 2, 3, 5, 8, 4096, 70_001] {
            for frame_id in ["", "c", "camera_optical"] {
                let mut frame = template(frame_id, "after");
                assert!(lend(&mut frame, data, len, heap(&alive)));
                assert!(frame.data.is_lent());
                assert_eq!(frame.data.len(), len);
                fill(&mut frame.data);
                let filled_at = frame.data.as_ptr();
                // Fixed-size fields may change after the loan.
                frame.seq = 42;
                frame.exposure = 0.5;
                let expected = encode(&frame);
                let written = write_around(&mut frame, data).expect("in place");
                assert_eq!(frame.data, Bytes::new(), "the buffer left the field");
                assert_eq!(written.len(), expected.len(), "{len} bytes, {frame_id:?}");
                let range = written.field();
                let payload = payload(written);
                assert_eq!(payload, &expected[..], "{len} bytes, {frame_id:?}");
                assert_eq!(
                    payload[range].as_ptr(),
                    filled_at,
                    "the bytes were not copied"
                );
                let back: Frame = decode(&payload).unwrap();
                assert_eq!(back.seq, 42);
                assert_eq!(back.note, "after");
            }
        }
        assert_eq!(std::sync::Arc::strong_count(&alive), 1, "a buffer leaked");
    }

    #[test]
    fn a_message_that_no_longer_fits_its_loan_is_refused_and_still_encodes_right() {
        let alive = std::sync::Arc::new(());
        type Change = fn(&mut Frame);
        let changes: [(&str, Change); 4] = [
            ("a longer string before the bytes", |f| {
                f.frame_id.push_str("_moved")
            }),
            ("the bytes resized", |f| f.data.to_mut().push(1)),
            ("the bytes replaced", |f| f.data = Bytes::from(vec![9; 64])),
            ("a string after the bytes past the buffer's end", |f| {
                f.note = "x".repeat(64)
            }),
        ];
        for (what, change) in changes {
            let mut frame = template("camera", "");
            assert!(lend(&mut frame, data, 5000, heap(&alive)));
            fill(&mut frame.data);
            change(&mut frame);
            let expected = encode(&frame);
            assert!(write_around(&mut frame, data).is_none(), "{what}");
            // Refused, the message is intact: encoded as any other, it is right.
            assert_eq!(encode(&frame), expected, "{what}");
            let back: Frame = decode(&expected).unwrap();
            assert_eq!(back, frame, "{what}");
        }
        assert_eq!(std::sync::Arc::strong_count(&alive), 1, "a buffer leaked");
    }

    #[test]
    fn a_string_after_the_bytes_may_change_within_the_buffer() {
        let alive = std::sync::Arc::new(());
        let mut frame = template("camera", "abc");
        assert!(lend(&mut frame, data, 300, heap(&alive)));
        fill(&mut frame.data);
        frame.note = "ab".to_owned();
        let expected = encode(&frame);
        let written = write_around(&mut frame, data).expect("fits");
        assert_eq!(payload(written), &expected[..]);
    }

    #[test]
    fn no_buffer_or_a_short_one_or_nothing_to_lend_leaves_the_message_as_it_was() {
        let alive = std::sync::Arc::new(());
        let mut frame = template("camera", "");
        frame.data = Bytes::from(vec![1, 2, 3]);
        let before = frame.clone();
        assert!(!lend(&mut frame, data, 100, |_| None));
        assert_eq!(frame, before);
        let short = |capacity: usize| {
            Some(Box::new(Heap(vec![0; capacity - 1].into(), alive.clone())) as _)
        };
        assert!(!lend(&mut frame, data, 100, short));
        assert_eq!(frame, before);
        assert!(!lend(&mut frame, data, 0, heap(&alive)));
        assert_eq!(frame, before);
        assert!(write_around(&mut frame, data).is_none(), "nothing lent");
        assert_eq!(std::sync::Arc::strong_count(&alive), 1, "a buffer leaked");
    }

    #[test]
    fn lent_bytes_have_one_holder_a_clone_is_a_copy_and_a_view_keeps_the_buffer() {
        let alive = std::sync::Arc::new(());
        let mut frame = template("camera", "");
        assert!(lend(&mut frame, data, 8192, heap(&alive)));
        fill(&mut frame.data);
        let copy = frame.clone();
        assert!(!copy.data.is_lent());
        assert_ne!(copy.data.as_ptr(), frame.data.as_ptr());
        assert_eq!(copy.data, frame.data);
        let at = frame.data.as_ptr();
        let view = std::mem::take(&mut frame.data).into_shared();
        assert_eq!(view.as_ptr(), at, "made a view without a copy");
        assert_eq!(view, copy.data.to_vec());
        assert_eq!(std::sync::Arc::strong_count(&alive), 2, "the view keeps it");
        drop(view);
        assert_eq!(std::sync::Arc::strong_count(&alive), 1);
        // Writing through to_mut copies out: the bytes are no longer lent.
        assert!(lend(&mut frame, data, 8192, heap(&alive)));
        frame.data.to_mut()[0] = 1;
        assert!(!frame.data.is_lent());
        assert_eq!(std::sync::Arc::strong_count(&alive), 1);
    }
}

#[cfg(test)]
mod random {
    //! Random loans, random changes to the message between the loan and the publish: the
    //! payload is always the encoded message, written in place exactly when the message
    //! still fits, and the lent bytes are never touched by the writing.

    use super::tests::{Frame, data, heap, template};
    use super::*;
    use crate::message::encode;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Change {
        Seq(u32),
        Exposure(f64),
        FrameId(String),
        Note(String),
        Tail(u16),
        Push(u8),
        Truncate(usize),
        Replace(Vec<u8>),
        Write(usize, u8),
    }

    fn change() -> impl Strategy<Value = Change> {
        prop_oneof![
            any::<u32>().prop_map(Change::Seq),
            any::<f64>().prop_map(Change::Exposure),
            "[a-z_]{0,12}".prop_map(Change::FrameId),
            "[a-z ]{0,40}".prop_map(Change::Note),
            any::<u16>().prop_map(Change::Tail),
            any::<u8>().prop_map(Change::Push),
            any::<usize>().prop_map(Change::Truncate),
            proptest::collection::vec(any::<u8>(), 0..64).prop_map(Change::Replace),
            (any::<usize>(), any::<u8>()).prop_map(|(at, b)| Change::Write(at, b)),
        ]
    }

    fn apply(frame: &mut Frame, change: &Change) {
        match change {
            Change::Seq(v) => frame.seq = *v,
            Change::Exposure(v) => frame.exposure = *v,
            Change::FrameId(v) => frame.frame_id = v.clone(),
            Change::Note(v) => frame.note = v.clone(),
            Change::Tail(v) => frame.tail = *v,
            Change::Push(b) => frame.data.to_mut().push(*b),
            Change::Truncate(n) => {
                let n = n % (frame.data.len() + 1);
                frame.data.to_mut().truncate(n);
            }
            Change::Replace(v) => frame.data = Bytes::from(v.clone()),
            Change::Write(at, b) => {
                if !frame.data.is_empty() {
                    let at = at % frame.data.len();
                    frame.data[at] = *b;
                }
            }
        }
    }

    /// Where a frame's pixels start in its payload, by the CDR rules: the 4-byte header,
    /// `seq` (4 bytes), `frame_id` (a u32 length, its bytes and a NUL), then the pixels'
    /// u32 length aligned to 4 (alignment counts from the end of the header).
    fn pixels_at(frame: &Frame) -> usize {
        let after_frame_id = 4 + 4 + frame.frame_id.len() + 1;
        4 + after_frame_id.next_multiple_of(4) + 4
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        #[test]
        fn the_payload_is_always_the_encoded_message(
            frame_id in "[a-z_]{0,12}",
            note in "[a-z ]{0,40}",
            len in 1usize..5000,
            changes in proptest::collection::vec(change(), 0..6),
        ) {
            let alive = std::sync::Arc::new(());
            let mut frame = template(&frame_id, &note);
            // What the heap lends: the capacity asked for, no more.
            let capacity = encoded_len(&frame) + len + 8;
            prop_assert!(lend(&mut frame, data, len, heap(&alive)));
            let (lent_at, placed) = (frame.data.as_ptr(), pixels_at(&frame));
            prop_assert_eq!(&encode(&frame)[placed..placed + len], &frame.data[..]);
            for (i, b) in frame.data.iter_mut().enumerate() {
                *b = i as u8;
            }
            for change in &changes {
                apply(&mut frame, change);
            }
            let expected = encode(&frame);
            let fits = frame.data.is_lent()
                && pixels_at(&frame) == placed
                && expected.len() <= capacity;
            let data_before = frame.data.to_vec();
            let written = write_around(&mut frame, data);
            prop_assert_eq!(written.is_some(), fits, "after {:?}", changes);
            match written {
                Some(written) => {
                    let range = written.field();
                    let payload = written.into_bytes();
                    prop_assert_eq!(&payload[..], &expected[..]);
                    prop_assert_eq!(payload[range].as_ptr(), lent_at);
                }
                None => {
                    // Refused: the message is intact and encodes as expected.
                    prop_assert_eq!(&frame.data[..], &data_before[..]);
                    prop_assert_eq!(encode(&frame), expected);
                }
            }
            drop(frame);
            prop_assert_eq!(std::sync::Arc::strong_count(&alive), 1);
        }
    }
}
