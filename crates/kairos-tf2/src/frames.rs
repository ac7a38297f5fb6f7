//! Frame names interned to small integer ids, so the tree walk compares integers and
//! indexes vectors instead of hashing strings (tf2's `CompactFrameID`).
//!
//! Ground rules:
//! - A name gets its id the first time the buffer sees it, as a child or a parent, and
//!   keeps it for the buffer's life (`clear` drops data, not names, as in tf2).
//! - Ids are dense, from 0, in order of first appearance; the buffer keeps per-frame data
//!   in vectors indexed by them.
//! - Names hash with [`NameHasher`], a multiply-rotate hash (rustc's FxHash) about five
//!   times faster than the standard SipHash on short names. It does not resist crafted
//!   collisions; neither does tf2's `std::unordered_map`, and a peer that can publish on
//!   `/tf` can do worse than slow the table down.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// The id of an interned frame name: an index into the buffer's per-frame vectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct FrameId(u32);

impl FrameId {
    /// The id as a vector index.
    #[inline]
    pub(crate) fn index(self) -> usize {
        self.0 as usize
    }

    /// An id for the tests of the caches, which store ids without a name table.
    #[cfg(test)]
    pub(crate) fn from_raw(raw: u32) -> FrameId {
        FrameId(raw)
    }
}

/// The name ↔ id table.
#[derive(Debug, Default)]
pub(crate) struct FrameNames {
    ids: HashMap<String, FrameId, BuildHasherDefault<NameHasher>>,
    names: Vec<String>,
}

impl FrameNames {
    /// The id of `name`, if it was ever seen.
    #[inline]
    pub(crate) fn id(&self, name: &str) -> Option<FrameId> {
        self.ids.get(name).copied()
    }

    /// The id of `name`, giving it the next one if it is new. Returns whether it was new.
    pub(crate) fn intern(&mut self, name: &str) -> (FrameId, bool) {
        if let Some(&id) = self.ids.get(name) {
            return (id, false);
        }
        let id = FrameId(u32::try_from(self.names.len()).expect("fewer than 2^32 frames"));
        self.ids.insert(name.to_owned(), id);
        self.names.push(name.to_owned());
        (id, true)
    }

    /// The name of `id`.
    pub(crate) fn name(&self, id: FrameId) -> &str {
        &self.names[id.index()]
    }

    /// Every name, in order of first appearance.
    pub(crate) fn names(&self) -> &[String] {
        &self.names
    }
}

/// FxHash: for each 8 bytes, `(hash.rotl(5) ^ word) * K`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct NameHasher(u64);

impl NameHasher {
    const K: u64 = 0x517c_c1b7_2722_0a95;

    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(Self::K);
    }
}

impl Hasher for NameHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word) ^ ((rest.len() as u64) << 59));
        }
    }

    #[inline]
    fn write_u8(&mut self, byte: u8) {
        self.add(u64::from(byte));
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_keep_their_first_id() {
        let mut names = FrameNames::default();
        let (a, new_a) = names.intern("a");
        let (b, new_b) = names.intern("b");
        let (a_again, new_again) = names.intern("a");
        assert!(new_a && new_b && !new_again);
        assert_eq!(a, a_again);
        assert_ne!(a, b);
        assert_eq!(names.name(b), "b");
        assert_eq!(names.id("b"), Some(b));
        assert_eq!(names.id("c"), None);
        assert_eq!(names.names(), ["a", "b"]);
    }
}
