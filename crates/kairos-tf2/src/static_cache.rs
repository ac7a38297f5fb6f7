//! The cache of a static frame: one transform, valid at every time (tf2's `StaticCache`).
//!
//! Ground rules: a new transform replaces the old one whatever its stamp; a lookup at
//! any time finds it, stamped with the time asked for.

use crate::cache::Entry;
use crate::frames::FrameId;
use crate::time::Stamp;
use crate::transform::Transform;

/// One transform, valid at every time.
#[derive(Debug)]
pub(crate) struct StaticCache {
    entry: Entry,
}

impl StaticCache {
    /// A cache holding `entry`.
    pub(crate) fn new(entry: Entry) -> StaticCache {
        StaticCache { entry }
    }

    /// Replaces the transform.
    pub(crate) fn insert(&mut self, entry: Entry) {
        self.entry = entry;
    }

    /// The transform, stamped `time`.
    #[cfg(test)]
    fn get(&self, time: Stamp) -> Entry {
        Entry {
            stamp: time,
            ..self.entry
        }
    }

    /// Writes the transform into `out` and returns the parent.
    #[inline]
    pub(crate) fn transform_at(&self, out: &mut Transform) -> FrameId {
        *out = self.entry.transform;
        self.entry.parent
    }

    /// The parent.
    #[inline]
    pub(crate) fn parent(&self) -> FrameId {
        self.entry.parent
    }

    /// The stamp the transform was published with.
    pub(crate) fn stamp(&self) -> Stamp {
        self.entry.stamp
    }
}

#[cfg(test)]
mod tests {
    //! tf2's `static_cache_test.cpp`, case for case.

    use super::*;

    fn item(nanos: i64, parent: u32) -> Entry {
        Entry {
            stamp: Stamp::from_nanos(nanos),
            parent: FrameId::from_raw(parent),
            transform: Transform::IDENTITY,
        }
    }

    /// tf2 `StaticCache.Repeatability`.
    #[test]
    fn the_latest_insert_answers_at_every_time_stamped_with_that_time() {
        let mut cache = StaticCache::new(item(0, 0));
        for i in 1..100 {
            cache.insert(item(i, i as u32));
            let got = cache.get(Stamp::from_nanos(i));
            assert_eq!(got.parent, FrameId::from_raw(i as u32));
            assert_eq!(got.stamp, Stamp::from_nanos(i));
            // Any other time too.
            assert_eq!(cache.get(Stamp::from_nanos(1_000 * i)).parent, got.parent);
        }
    }

    /// tf2 `StaticCache.DuplicateEntries`.
    #[test]
    fn inserting_the_same_transform_twice_gives_it_back_intact() {
        let mut cache = StaticCache::new(item(1, 3));
        cache.insert(item(1, 3));
        let got = cache.get(Stamp::from_nanos(1));
        assert!(got.transform.is_finite());
        assert_eq!(got, item(1, 3));
    }
}
