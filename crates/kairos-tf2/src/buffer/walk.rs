//! The walk through the frame tree behind every lookup and check (tf2's
//! `walkToTopParent` and `getLatestCommonTime`), and the errors it reports.
//!
//! Ground rules:
//! - One walk, two walkers: [`TransformWalker`] composes transforms for a lookup,
//!   [`ParentWalker`] only follows parents for a check, so `can_transform` and `lookup`
//!   cannot disagree about what is reachable.
//! - The walk: from the source up through its parents (composing source → top) until the
//!   target, a root, or a link without data at the time; then from the target up
//!   (composing target → top) until the source or that top. The answer is
//!   (target → top)⁻¹ · (source → top).
//! - Every walk is bounded by [`MAX_GRAPH_DEPTH`] links and reports a loop past it.
//! - Nothing allocates unless the walk fails.

use super::{BufferCore, MAX_GRAPH_DEPTH};
use crate::cache::FrameCache;
use crate::error::{Extrapolation, Tf2Error};
use crate::frames::FrameId;
use crate::time::Stamp;
use crate::transform::Transform;

/// How a walk through the tree ended (tf2's `WalkEnding`).
#[derive(Clone, Copy, Debug)]
pub(super) enum WalkEnd {
    /// Source and target are one frame.
    Identity,
    /// The target lies on the source's path to the root.
    TargetParentOfSource,
    /// The source lies on the target's path to the root.
    SourceParentOfTarget,
    /// Both paths meet at a common root.
    FullPath,
}

/// What a walk collects at each link: the transforms (a lookup) or nothing but the
/// parents (a check).
pub(super) trait Walker {
    /// Reads `cache` at `time`, keeps what it needs, and returns the parent.
    fn gather(&mut self, cache: &FrameCache, time: Stamp) -> Result<FrameId, Extrapolation>;
    /// Composes the link just gathered onto the source's (or the target's) path.
    fn accumulate(&mut self, source_side: bool);
    /// The walk ended this way.
    fn finish(&mut self, end: WalkEnd);
}

/// Composes the transform of a lookup.
#[derive(Default)]
pub(super) struct TransformWalker {
    link: Transform,
    source_to_top: Transform,
    target_to_top: Transform,
    pub(super) result: Transform,
}

impl Walker for TransformWalker {
    fn gather(&mut self, cache: &FrameCache, time: Stamp) -> Result<FrameId, Extrapolation> {
        cache.transform_at(time, &mut self.link)
    }

    fn accumulate(&mut self, source_side: bool) {
        if source_side {
            self.source_to_top = self.link * self.source_to_top;
        } else {
            self.target_to_top = self.link * self.target_to_top;
        }
    }

    fn finish(&mut self, end: WalkEnd) {
        self.result = match end {
            WalkEnd::Identity => Transform::IDENTITY,
            WalkEnd::TargetParentOfSource => self.source_to_top,
            WalkEnd::SourceParentOfTarget => self.target_to_top.inverse(),
            WalkEnd::FullPath => self.target_to_top.inverse() * self.source_to_top,
        };
        self.result.rotation = self.result.rotation.with_tf2_sign();
    }
}

/// Only checks that every link has data (tf2's `CanTransformAccum`).
pub(super) struct ParentWalker;

impl Walker for ParentWalker {
    fn gather(&mut self, cache: &FrameCache, time: Stamp) -> Result<FrameId, Extrapolation> {
        cache.parent(time)
    }

    fn accumulate(&mut self, _source_side: bool) {}

    fn finish(&mut self, _end: WalkEnd) {}
}

impl BufferCore {
    /// tf2's `walkToTopParent`: returns the time the walk used (`time`, or the latest
    /// common time for `LATEST`).
    pub(super) fn walk<W: Walker>(
        &self,
        walker: &mut W,
        time: Stamp,
        target: FrameId,
        source: FrameId,
    ) -> Result<Stamp, Tf2Error> {
        if source == target {
            walker.finish(WalkEnd::Identity);
            return Ok(time);
        }
        let time = if time.is_latest() {
            self.latest_common_time_of(target, source)?
        } else {
            time
        };

        // Up from the source, composing source → top (the frame where it stops). tf2 reads
        // a frame's link before asking whether it is the target; asking first gives the
        // same answer (the target's own link is never composed) without the read.
        let mut frame = source;
        let mut depth = 0;
        let mut missing: Option<(FrameId, Extrapolation)> = None;
        let top = loop {
            if frame == target {
                walker.finish(WalkEnd::TargetParentOfSource);
                return Ok(time);
            }
            let Some(cache) = self.cache(frame) else {
                break frame;
            };
            let parent = match walker.gather(cache, time) {
                Ok(parent) => parent,
                Err(kind) => {
                    // There may still be a path from the target to here.
                    missing = Some((frame, kind));
                    break frame;
                }
            };
            walker.accumulate(true);
            frame = parent;
            depth += 1;
            if depth > MAX_GRAPH_DEPTH {
                return Err(self.loop_error(frame, time));
            }
        };

        // Up from the target to the top of the source's path, composing target → top.
        let mut frame = target;
        let mut depth = 0;
        while frame != top {
            if frame == source {
                walker.finish(WalkEnd::SourceParentOfTarget);
                return Ok(time);
            }
            let Some(cache) = self.cache(frame) else {
                break;
            };
            let parent = walker
                .gather(cache, time)
                .map_err(|kind| self.extrapolation_error(target, source, frame, time, kind))?;
            walker.accumulate(false);
            frame = parent;
            depth += 1;
            if depth > MAX_GRAPH_DEPTH {
                return Err(self.loop_error(frame, time));
            }
        }
        if frame != top {
            if let Some((at, kind)) = missing {
                return Err(self.extrapolation_error(target, source, at, time, kind));
            }
            return Err(self.connectivity_error(target, frame, source, top));
        }
        walker.finish(WalkEnd::FullPath);
        Ok(time)
    }

    /// tf2's `getLatestCommonTime`, without its per-call vector: walk both frames to their
    /// roots (stopping early if one lies on the other's path), then climb both to their
    /// lowest common ancestor, taking the oldest newest-stamp of the links climbed.
    pub(super) fn latest_common_time_of(
        &self,
        target: FrameId,
        source: FrameId,
    ) -> Result<Stamp, Tf2Error> {
        if source == target {
            return Ok(self.latest_link(source).map_or(Stamp::LATEST, |(s, _)| s));
        }
        // Up from each side; early out when one reaches the other.
        let mut sides = [(source, target, 0usize, i64::MAX); 2];
        sides[1] = (target, source, 0, i64::MAX);
        for (frame, other, depth, oldest) in &mut sides {
            while let Some((stamp, parent)) = self.latest_link(*frame) {
                *oldest = oldest_of(*oldest, stamp);
                *frame = parent;
                if *frame == *other {
                    return Ok(common_stamp(*oldest));
                }
                *depth += 1;
                if *depth > MAX_GRAPH_DEPTH {
                    return Err(self.loop_error(*frame, Stamp::LATEST));
                }
            }
        }
        let [
            (source_root, _, source_depth, _),
            (target_root, _, target_depth, _),
        ] = sides;
        if source_root != target_root {
            return Err(self.connectivity_error(target, target_root, source, source_root));
        }
        // One tree: climb from the deeper frame to the other's depth, then both together
        // until they meet, at their lowest common ancestor.
        let mut oldest = i64::MAX;
        let mut climb = |frame: &mut FrameId| match self.latest_link(*frame) {
            Some((stamp, parent)) => {
                oldest = oldest_of(oldest, stamp);
                *frame = parent;
                true
            }
            None => false,
        };
        let (mut a, mut b) = (source, target);
        for _ in target_depth..source_depth {
            climb(&mut a);
        }
        for _ in source_depth..target_depth {
            climb(&mut b);
        }
        while a != b && climb(&mut a) && climb(&mut b) {}
        Ok(common_stamp(oldest))
    }

    fn extrapolation_error(
        &self,
        target: FrameId,
        source: FrameId,
        frame: FrameId,
        requested: Stamp,
        kind: Extrapolation,
    ) -> Tf2Error {
        Tf2Error::Extrapolation {
            target_frame: self.names.name(target).into(),
            source_frame: self.names.name(source).into(),
            frame: self.names.name(frame).into(),
            requested,
            kind,
        }
    }

    fn connectivity_error(
        &self,
        target: FrameId,
        target_root: FrameId,
        source: FrameId,
        source_root: FrameId,
    ) -> Tf2Error {
        Tf2Error::Connectivity {
            target_frame: self.names.name(target).into(),
            target_root: self.names.name(target_root).into(),
            source_frame: self.names.name(source).into(),
            source_root: self.names.name(source_root).into(),
        }
    }

    /// The loop a walk ran into: follow parents at `time` from `start` until a frame
    /// repeats.
    fn loop_error(&self, start: FrameId, time: Stamp) -> Tf2Error {
        let mut seen: Vec<FrameId> = vec![start];
        let mut frame = start;
        while seen.len() <= MAX_GRAPH_DEPTH + 1 {
            let Some(parent) = self.cache(frame).and_then(|c| c.parent(time).ok()) else {
                break;
            };
            if let Some(first) = seen.iter().position(|&f| f == parent) {
                let mut cycle: Vec<String> = seen[first..]
                    .iter()
                    .map(|&f| self.names.name(f).to_owned())
                    .collect();
                cycle.push(self.names.name(parent).to_owned());
                return Tf2Error::Loop { cycle };
            }
            seen.push(parent);
            frame = parent;
        }
        // No repeat: a chain deeper than the bound.
        let mut cycle: Vec<String> = seen
            .iter()
            .take(3)
            .map(|&f| self.names.name(f).to_owned())
            .collect();
        cycle.push(format!("... (more than {MAX_GRAPH_DEPTH} links, no end)"));
        Tf2Error::Loop { cycle }
    }
}

/// The older of `oldest` and `stamp`, where a zero stamp (static) does not count.
fn oldest_of(oldest: i64, stamp: Stamp) -> i64 {
    if stamp.is_latest() {
        oldest
    } else {
        oldest.min(stamp.nanos())
    }
}

fn common_stamp(oldest: i64) -> Stamp {
    if oldest == i64::MAX {
        Stamp::LATEST
    } else {
        Stamp::from_nanos(oldest)
    }
}
