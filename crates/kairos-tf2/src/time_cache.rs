//! The time-stamped transforms of one child frame (tf2's `TimeCache`).
//!
//! Ground rules:
//! - Entries are kept sorted by stamp, oldest first, in a vector whose front part is the
//!   pruned past: the usual insert (newer than everything) is a push, pruning moves the
//!   start forward, and the pruned part is dropped in one move once it is half the vector
//!   (amortised O(1) per entry). Nothing allocates once the vector has grown to its steady
//!   size. Lookups see one contiguous slice.
//! - A lookup first guesses the position from the stamps' spacing (exact when they are
//!   evenly spaced, as a broadcaster's usually are) and falls back to a binary search.
//! - Each entry keeps what interpolating towards its successor needs (the [`SlerpPlan`]
//!   and `1 / Δt`), computed when either is inserted: a lookup between two stamps costs
//!   two polynomial sines and no division.
//! - The cache keeps `length` back from its newest stamp: an entry older than
//!   `newest - length` is dropped, and one arriving that old is refused (tf2's
//!   `TF_OLD_DATA`), so the caller can report it.
//! - Out-of-order stamps are inserted in place. Entries with one stamp keep their insertion
//!   order; an exact duplicate (same stamp, parent and transform) is stored once. A lookup
//!   at a stamp held by several entries finds the one inserted last.
//! - A lookup at `t` between two stamps interpolates (translation linearly, rotation by
//!   slerp) when both have the same parent; across a change of parent it returns the older
//!   entry unchanged, as tf2 does (never a blend of two different links).
//! - [`Stamp::LATEST`] (zero) finds the newest entry. Any other time outside the stamps
//!   held is an [`Extrapolation`], with the range held.

use crate::cache::Entry;
use crate::error::Extrapolation;
use crate::frames::FrameId;
use crate::slerp::SlerpPlan;
use crate::time::Stamp;
use crate::transform::Transform;

/// The time-stamped transforms of one child frame.
#[derive(Debug)]
pub(crate) struct TimeCache {
    /// How far back from the newest stamp entries are kept, in nanoseconds.
    length_ns: i64,
    /// `items[start..]` are the entries held, sorted by stamp, oldest first;
    /// `items[..start]` were pruned and wait to be dropped in bulk.
    items: Vec<Stored>,
    start: usize,
    /// (entries held - 1) / (newest - oldest stamp): a time offset from the oldest stamp
    /// times this is the index it would have if the stamps were evenly spaced.
    index_per_ns: f64,
}

/// An entry and what interpolating towards its successor needs.
#[derive(Clone, Copy, Debug)]
struct Stored {
    entry: Entry,
    /// Towards the next entry; unused for the newest.
    to_next: Segment,
}

/// What interpolating from one entry to the next needs, computed once per pair.
#[derive(Clone, Copy, Debug, Default)]
struct Segment {
    slerp: SlerpPlan,
    /// `1 / (next stamp - this stamp)` in 1/ns; 0 between equal stamps.
    inv_dt: f64,
}

impl Segment {
    fn between(a: &Entry, b: &Entry) -> Segment {
        let dt = b.stamp.nanos() - a.stamp.nanos();
        Segment {
            slerp: SlerpPlan::new(a.transform.rotation, b.transform.rotation),
            inv_dt: if dt > 0 { 1.0 / dt as f64 } else { 0.0 },
        }
    }
}

/// The entries a lookup time falls on or between.
enum Found<'a> {
    /// Exactly one entry answers (an exact stamp, or the newest for `LATEST`).
    One(&'a Entry),
    /// The time lies strictly between these two (older, newer).
    Between(&'a Stored, &'a Entry),
}

/// Pruned entries are dropped in bulk once there are at least this many (and they are
/// half the vector).
const DRAIN_AT: usize = 32;

impl TimeCache {
    /// An empty cache keeping `length_ns` nanoseconds back from its newest stamp.
    pub(crate) fn new(length_ns: i64) -> TimeCache {
        TimeCache {
            length_ns,
            items: Vec::new(),
            start: 0,
            index_per_ns: 0.0,
        }
    }

    #[inline]
    fn held(&self) -> &[Stored] {
        &self.items[self.start..]
    }

    /// Stores `entry`, then drops what is now older than the cache length. Refuses an
    /// entry older than `newest - length`, returning the newest stamp held.
    pub(crate) fn insert(&mut self, entry: Entry) -> Result<(), Stamp> {
        let held = self.held();
        let at = match held.last() {
            None => 0,
            Some(newest) if entry.stamp > newest.entry.stamp => held.len(),
            Some(newest) => {
                let newest = newest.entry.stamp;
                if entry.stamp.nanos() < newest.nanos().saturating_sub(self.length_ns) {
                    return Err(newest);
                }
                // After every entry with an equal or older stamp.
                let at = held.partition_point(|s| s.entry.stamp <= entry.stamp);
                let duplicate = held[..at]
                    .iter()
                    .rev()
                    .take_while(|s| s.entry.stamp == entry.stamp)
                    .any(|s| s.entry == entry);
                if duplicate {
                    return Ok(());
                }
                at
            }
        };
        let index = self.start + at;
        let to_next = self.items.get(index).map_or(Segment::default(), |next| {
            Segment::between(&entry, &next.entry)
        });
        self.items.insert(index, Stored { entry, to_next });
        if at > 0 {
            let before = &mut self.items[index - 1];
            before.to_next = Segment::between(&before.entry, &entry);
        }
        self.prune();
        Ok(())
    }

    fn prune(&mut self) {
        if let Some(newest) = self.items.last() {
            let keep_from = newest.entry.stamp.nanos().saturating_sub(self.length_ns);
            while self.items[self.start].entry.stamp.nanos() < keep_from {
                // Stops at the newest at the latest: it is never older than itself.
                self.start += 1;
            }
        }
        if self.start >= DRAIN_AT && self.start * 2 >= self.items.len() {
            self.items.drain(..self.start);
            self.start = 0;
        }
        let held = self.held();
        self.index_per_ns = match (held.first(), held.last()) {
            (Some(oldest), Some(newest)) if newest.entry.stamp > oldest.entry.stamp => {
                (held.len() - 1) as f64
                    / (newest.entry.stamp.nanos() - oldest.entry.stamp.nanos()) as f64
            }
            _ => 0.0,
        };
    }

    #[inline(always)]
    fn find(&self, time: Stamp) -> Result<Found<'_>, Extrapolation> {
        let held = self.held();
        let (Some(oldest), Some(newest)) = (held.first(), held.last()) else {
            return Err(Extrapolation::NoData);
        };
        let (oldest, newest) = (&oldest.entry, &newest.entry);
        if time.is_latest() {
            return Ok(Found::One(newest));
        }
        if held.len() == 1 {
            return if oldest.stamp == time {
                Ok(Found::One(oldest))
            } else {
                Err(Extrapolation::OneValue {
                    stamp: oldest.stamp,
                })
            };
        }
        let (earliest, latest) = (oldest.stamp, newest.stamp);
        if time > latest {
            return Err(Extrapolation::Future { earliest, latest });
        }
        if time < earliest {
            return Err(Extrapolation::Past { earliest, latest });
        }
        if time == latest {
            // The newest, and the last inserted of several with that stamp.
            return Ok(Found::One(newest));
        }
        // 1 ≤ at < len: the oldest is at or before `time`, the newest after it.
        let at = self.first_after(held, time, earliest);
        let older = &held[at - 1];
        if older.entry.stamp == time {
            Ok(Found::One(&older.entry))
        } else {
            Ok(Found::Between(older, &held[at].entry))
        }
    }

    /// The index in `held` of the first entry stamped after `time`, for
    /// `earliest ≤ time < latest`.
    #[inline(always)]
    fn first_after(&self, held: &[Stored], time: Stamp, earliest: Stamp) -> usize {
        // Where `time` would be if the stamps were evenly spaced (saturating cast).
        let guess = ((time.nanos() - earliest.nanos()) as f64 * self.index_per_ns) as usize;
        let guess = guess.min(held.len() - 2);
        if held[guess].entry.stamp <= time && time < held[guess + 1].entry.stamp {
            return guess + 1;
        }
        held.partition_point(|s| s.entry.stamp <= time)
    }

    /// Writes the transform at `time` into `out`, interpolated between the two nearest
    /// stamps when they share a parent, and returns the parent. (An out-parameter: the
    /// walk keeps the transform where it composes it, without copying an entry.)
    #[inline]
    pub(crate) fn transform_at(
        &self,
        time: Stamp,
        out: &mut Transform,
    ) -> Result<FrameId, Extrapolation> {
        Ok(match self.find(time)? {
            Found::One(entry) => {
                *out = entry.transform;
                entry.parent
            }
            Found::Between(older, newer) if older.entry.parent != newer.parent => {
                *out = older.entry.transform;
                older.entry.parent
            }
            Found::Between(older, newer) => {
                let (a, b) = (&older.entry.transform, &newer.transform);
                let ratio =
                    (time.nanos() - older.entry.stamp.nanos()) as f64 * older.to_next.inv_dt;
                out.translation = a.translation.lerp(b.translation, ratio);
                out.rotation = older.to_next.slerp.at(a.rotation, b.rotation, ratio);
                older.entry.parent
            }
        })
    }

    /// The entry answering at `time`: stamped `time` when interpolated, else with the
    /// stamp of the entry held.
    #[cfg(test)]
    fn get(&self, time: Stamp) -> Result<Entry, Extrapolation> {
        let mut transform = Transform::IDENTITY;
        let parent = self.transform_at(time, &mut transform)?;
        let stamp = match self.find(time)? {
            Found::One(entry) => entry.stamp,
            Found::Between(..) => time,
        };
        Ok(Entry {
            stamp,
            parent,
            transform,
        })
    }

    /// The parent at `time` (between two stamps: the older entry's, as tf2).
    #[inline]
    pub(crate) fn parent(&self, time: Stamp) -> Result<FrameId, Extrapolation> {
        Ok(match self.find(time)? {
            Found::One(entry) => entry.parent,
            Found::Between(older, _) => older.entry.parent,
        })
    }

    /// The newest stamp and the parent then.
    #[inline]
    pub(crate) fn latest(&self) -> Option<(Stamp, FrameId)> {
        self.held().last().map(|s| (s.entry.stamp, s.entry.parent))
    }

    /// The oldest and newest stamps and the number of entries; `None` when empty.
    pub(crate) fn extent(&self) -> Option<(Stamp, Stamp, usize)> {
        let held = self.held();
        Some((
            held.first()?.entry.stamp,
            held.last()?.entry.stamp,
            held.len(),
        ))
    }

    /// Drops every entry.
    pub(crate) fn clear(&mut self) {
        self.items.clear();
        self.start = 0;
        self.index_per_ns = 0.0;
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.held().len()
    }

    #[cfg(test)]
    fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.held().iter().map(|s| &s.entry)
    }
}

#[cfg(test)]
mod tests {
    //! tf2's `cache_unittest.cpp`, case for case (names say what each promises; the tf2
    //! name is in each doc line), and the extrapolation and pruning cases of the buffer
    //! tests, at the level of one cache.

    use super::*;
    use crate::quaternion::Quaternion;
    use crate::vector::Vector3;

    const TEN_SECONDS: i64 = 10_000_000_000;

    fn item(nanos: i64, parent: u32) -> Entry {
        Entry {
            stamp: Stamp::from_nanos(nanos),
            parent: FrameId::from_raw(parent),
            transform: Transform::IDENTITY,
        }
    }

    fn at(nanos: i64) -> Stamp {
        Stamp::from_nanos(nanos)
    }

    /// tf2's deterministic "random" sequence (`seed_rand`/`get_rand`): values in [-1, 1).
    struct TfRand {
        values: Vec<f64>,
        step: usize,
    }

    impl TfRand {
        fn new() -> TfRand {
            let values = (0..2000u32)
                .map(|i| {
                    let pseudo = (f64::from(i) * std::f64::consts::PI).floor() as i64;
                    (pseudo % 100) as f64 / 50.0 - 1.0
                })
                .collect();
            TfRand { values, step: 0 }
        }

        fn next(&mut self) -> f64 {
            if self.step >= self.values.len() {
                self.step = 0;
            } else {
                self.step += 1;
            }
            self.values[self.step % self.values.len()]
        }
    }

    /// tf2 `TimeCache.GetAllItems`.
    #[test]
    fn keeps_entries_sorted_once_each_and_prunes_beyond_the_cache_length() {
        let mut cache = TimeCache::new(10);
        let (a, b, c, d) = (item(0, 0), item(10, 1), item(5, 2), item(3, 3));
        let (e, f, g) = (item(8, 4), item(8, 5), item(8, 6));
        for x in [a, b, c, d, e, f, g] {
            cache.insert(x).unwrap();
        }
        // Oldest to newest exactly the cache length apart: nothing pruned.
        assert_eq!(cache.extent(), Some((at(0), at(10), 7)));
        // Sorted; one stamp keeps insertion order (tf2 lists newest first, so its list
        // shows it reversed).
        let expected = [a, d, c, e, f, g, b];
        assert!(cache.entries().eq(expected.iter()));

        // Inserting them all again, in reverse, changes nothing.
        for x in [g, f, e, d, c, b, a] {
            cache.insert(x).unwrap();
        }
        assert!(cache.entries().eq(expected.iter()));

        // Newer data prunes what falls out of the cache length, and refuses data that
        // old.
        let (h, i, j) = (item(15, 7), item(0, 8), item(5, 9));
        cache.insert(h).unwrap();
        assert_eq!(cache.insert(i), Err(at(15)));
        cache.insert(j).unwrap();
        let expected = [c, j, e, f, g, b, h];
        assert!(
            cache.entries().eq(expected.iter()),
            "{:?}",
            cache.entries().collect::<Vec<_>>()
        );
    }

    /// tf2 `TimeCache.Repeatability`.
    #[test]
    fn every_exact_stamp_finds_its_own_entry() {
        let mut cache = TimeCache::new(TEN_SECONDS);
        for i in 1..100 {
            cache.insert(item(i, i as u32)).unwrap();
        }
        assert_eq!(cache.len(), 99);
        for i in 1..100 {
            let got = cache.get(at(i)).unwrap();
            assert_eq!(got.parent, FrameId::from_raw(i as u32));
            assert_eq!(got.stamp, at(i));
        }
    }

    /// tf2 `TimeCache.RepeatabilityReverseInsertOrder`.
    #[test]
    fn inserting_newest_first_gives_the_same_answers() {
        let mut cache = TimeCache::new(TEN_SECONDS);
        for i in (0..100).rev() {
            cache.insert(item(i, i as u32)).unwrap();
        }
        assert_eq!(cache.len(), 100);
        for i in 1..100 {
            let got = cache.get(at(i)).unwrap();
            assert_eq!(got.parent, FrameId::from_raw(i as u32));
            assert_eq!(got.stamp, at(i));
        }
    }

    /// tf2 `TimeCache.RepeatedElements`.
    #[test]
    fn an_entry_inserted_many_times_is_stored_once() {
        let mut cache = TimeCache::new(TEN_SECONDS);
        assert_eq!(cache.len(), 0);
        for _ in 1..100 {
            cache.insert(item(0, 0)).unwrap();
        }
        assert_eq!(cache.len(), 1);
    }

    /// tf2 `TimeCache.ZeroAtFront`.
    #[test]
    fn time_zero_finds_the_newest_entry() {
        let mut cache = TimeCache::new(TEN_SECONDS);
        for i in 1..100 {
            cache.insert(item(i, i as u32)).unwrap();
        }
        cache.insert(item(100, 100)).unwrap();
        for i in 1..100 {
            assert_eq!(
                cache.get(at(i)).unwrap().parent,
                FrameId::from_raw(i as u32)
            );
        }
        let newest = cache.get(Stamp::LATEST).unwrap();
        assert_eq!(
            (newest.parent, newest.stamp),
            (FrameId::from_raw(100), at(100))
        );

        cache.insert(item(101, 100)).unwrap();
        let newest = cache.get(Stamp::LATEST).unwrap();
        assert_eq!(
            (newest.parent, newest.stamp),
            (FrameId::from_raw(100), at(101))
        );
    }

    /// tf2 `TimeCache.CartesianInterpolation`.
    #[test]
    fn translation_is_interpolated_linearly_in_each_component() {
        let mut rand = TfRand::new();
        let mut cache = TimeCache::new(TEN_SECONDS);
        let offset = 200;
        for _ in 1..100 {
            let mut values = [Vector3::ZERO; 2];
            for (step, value) in values.iter_mut().enumerate() {
                *value = Vector3::new(10.0 * rand.next(), 10.0 * rand.next(), 10.0 * rand.next());
                let mut entry = item(step as i64 * 100 + offset, 2);
                entry.transform.translation = *value;
                cache.insert(entry).unwrap();
            }
            for pos in 0..100 {
                let got = cache.get(at(offset + pos)).unwrap().transform.translation;
                let expected = values[0] + (values[1] - values[0]) * (pos as f64 / 100.0);
                assert!((got.x - expected.x).abs() < 2e-6, "x at {pos}");
                assert!((got.y - expected.y).abs() < 2e-6, "y at {pos}");
                assert!((got.z - expected.z).abs() < 2e-6, "z at {pos}");
            }
            cache.clear();
        }
    }

    /// tf2 `TimeCache.ReparentingInterpolationProtection`.
    #[test]
    fn no_interpolation_across_a_change_of_parent() {
        let mut rand = TfRand::new();
        let mut cache = TimeCache::new(TEN_SECONDS);
        let offset = 555;
        let mut values = [Vector3::ZERO; 2];
        for (step, value) in values.iter_mut().enumerate() {
            *value = Vector3::new(10.0 * rand.next(), 10.0 * rand.next(), 10.0 * rand.next());
            let mut entry = item(step as i64 * 100 + offset, step as u32 + 4);
            entry.transform.translation = *value;
            cache.insert(entry).unwrap();
        }
        for pos in 0..100 {
            let got = cache.get(at(offset + pos)).unwrap();
            assert!((got.transform.translation - values[0]).length() < 1e-6);
            assert_eq!(got.parent, FrameId::from_raw(4));
            assert_eq!(cache.parent(at(offset + pos)), Ok(FrameId::from_raw(4)));
        }
        // At the second stamp exactly, the new parent.
        assert_eq!(cache.parent(at(offset + 100)), Ok(FrameId::from_raw(5)));
    }

    /// tf2 `Bullet.Slerp`.
    #[test]
    fn slerp_halfway_is_equally_far_from_both_ends() {
        let mut rand = TfRand::new();
        let q1 = Quaternion::from_rpy(0.0, 0.0, 0.0);
        for _ in 0..100 {
            let q2 = Quaternion::from_rpy(rand.next(), rand.next(), rand.next());
            let q3 = q1.slerp(q2, 0.5);
            assert!((q3.angle_to(q1) - q2.angle_to(q3)).abs() < 1e-5);
        }
    }

    /// tf2 `TimeCache.AngularInterpolation`.
    #[test]
    fn rotation_is_interpolated_by_slerp() {
        let mut rand = TfRand::new();
        let mut cache = TimeCache::new(TEN_SECONDS);
        let offset = 200;
        for _ in 1..100 {
            let mut angles = [0.0; 2];
            for (step, angle) in angles.iter_mut().enumerate() {
                *angle = 10.0 * rand.next() / 100.0;
                let mut entry = item(offset + step as i64 * 100, 3);
                entry.transform.rotation = Quaternion::from_rpy(*angle, 0.0, 0.0);
                cache.insert(entry).unwrap();
            }
            for pos in 0..100 {
                let got = cache.get(at(offset + pos)).unwrap().transform.rotation;
                // One axis: slerp moves the angle linearly.
                let t = pos as f64 / 100.0;
                let truth = Quaternion::from_rpy(angles[0] + (angles[1] - angles[0]) * t, 0.0, 0.0);
                assert!(truth.angle_to(got) < 1e-6, "at {pos}");
            }
            cache.clear();
        }
    }

    /// tf2 `TimeCache.DuplicateEntries`.
    #[test]
    fn a_duplicate_is_stored_once_and_read_back_intact() {
        let mut cache = TimeCache::new(TEN_SECONDS);
        cache.insert(item(1, 3)).unwrap();
        assert_eq!(cache.len(), 1);
        cache.insert(item(1, 3)).unwrap();
        assert_eq!(cache.len(), 1);
        let got = cache.get(at(1)).unwrap();
        assert!(got.transform.is_finite());
    }

    #[test]
    fn lookups_outside_the_stamps_held_say_which_way_and_the_range() {
        let mut cache = TimeCache::new(TEN_SECONDS);
        assert_eq!(cache.get(at(5)), Err(Extrapolation::NoData));
        assert_eq!(cache.get(Stamp::LATEST), Err(Extrapolation::NoData));
        assert_eq!(cache.latest(), None);

        cache.insert(item(2_000, 1)).unwrap();
        assert_eq!(
            cache.get(at(4_000)),
            Err(Extrapolation::OneValue { stamp: at(2_000) })
        );
        assert_eq!(cache.get(at(2_000)).unwrap().stamp, at(2_000));

        cache.insert(item(3_000, 1)).unwrap();
        let range = (at(2_000), at(3_000));
        assert_eq!(
            cache.get(at(1_000)),
            Err(Extrapolation::Past {
                earliest: range.0,
                latest: range.1
            })
        );
        assert_eq!(
            cache.parent(at(4_000)),
            Err(Extrapolation::Future {
                earliest: range.0,
                latest: range.1
            })
        );
        assert_eq!(cache.get(at(2_500)).unwrap().stamp, at(2_500));
    }

    #[test]
    fn the_cache_keeps_its_length_back_from_the_newest_stamp() {
        let second = 1_000_000_000;
        let mut cache = TimeCache::new(TEN_SECONDS);
        for s in 0..=20 {
            cache.insert(item(s * second, 1)).unwrap();
        }
        assert_eq!(cache.extent(), Some((at(10 * second), at(20 * second), 11)));
        // Out of order but within the length: stored in place.
        cache.insert(item(15 * second + 1, 1)).unwrap();
        assert_eq!(
            cache.get(at(15 * second + 1)).unwrap().stamp,
            at(15 * second + 1)
        );
        // Older than the length allows: refused with the newest stamp.
        assert_eq!(cache.insert(item(10 * second - 1, 1)), Err(at(20 * second)));
        assert_eq!(cache.len(), 12);
    }

    #[test]
    fn at_a_stamp_held_twice_the_last_insert_answers() {
        let mut cache = TimeCache::new(TEN_SECONDS);
        cache.insert(item(1, 1)).unwrap();
        cache.insert(item(5, 1)).unwrap();
        cache.insert(item(5, 2)).unwrap();
        cache.insert(item(9, 2)).unwrap();
        assert_eq!(cache.parent(at(5)), Ok(FrameId::from_raw(2)));
        assert_eq!(cache.get(at(7)).unwrap().parent, FrameId::from_raw(2));
    }
}
