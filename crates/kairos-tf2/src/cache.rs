//! What the buffer holds for one child frame: its transforms to its parent over time
//! ([`TimeCache`]) or its one static transform ([`StaticCache`]).
//!
//! Ground rules:
//! - One cache per child frame; its entries name the parent, which may change over time
//!   (re-parenting). The tree is the set of these links.
//! - The buffer picks the kind by the `is_static` of the latest `set_transform` for the
//!   frame; switching kinds starts a new, empty cache (as tf2 does).
//! - `clear` empties a time cache and keeps a static one (tf2's `clearList` is a no-op
//!   for static transforms: they are published once and must survive a clock jump).

use crate::error::Extrapolation;
use crate::frames::FrameId;
use crate::static_cache::StaticCache;
use crate::time::Stamp;
use crate::time_cache::TimeCache;
use crate::transform::Transform;

/// One stored transform of a child frame: its parent and the transform at a time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Entry {
    /// When the transform was valid.
    pub(crate) stamp: Stamp,
    /// The parent frame at that time.
    pub(crate) parent: FrameId,
    /// Child → parent.
    pub(crate) transform: Transform,
}

/// The transforms of one child frame.
#[derive(Debug)]
pub(crate) enum FrameCache {
    /// Time-stamped transforms, interpolated between.
    Dynamic(TimeCache),
    /// One transform, valid at every time.
    Static(StaticCache),
}

impl FrameCache {
    /// Writes the transform at `time` ([`Stamp::LATEST`]: the newest) into `out`,
    /// interpolated if it falls between two stamps with the same parent, and returns the
    /// parent.
    #[inline]
    pub(crate) fn transform_at(
        &self,
        time: Stamp,
        out: &mut Transform,
    ) -> Result<FrameId, Extrapolation> {
        match self {
            FrameCache::Dynamic(cache) => cache.transform_at(time, out),
            FrameCache::Static(cache) => Ok(cache.transform_at(out)),
        }
    }

    /// The parent at `time`, without computing the transform.
    #[inline]
    pub(crate) fn parent(&self, time: Stamp) -> Result<FrameId, Extrapolation> {
        match self {
            FrameCache::Dynamic(cache) => cache.parent(time),
            FrameCache::Static(cache) => Ok(cache.parent()),
        }
    }

    /// The newest stamp and the parent then; `None` when empty. A static transform's
    /// stamp is [`Stamp::LATEST`]: valid at any time, it never limits the latest common
    /// time.
    #[inline]
    pub(crate) fn latest(&self) -> Option<(Stamp, FrameId)> {
        match self {
            FrameCache::Dynamic(cache) => cache.latest(),
            FrameCache::Static(cache) => Some((Stamp::LATEST, cache.parent())),
        }
    }

    /// Whether this is a static transform.
    pub(crate) fn is_static(&self) -> bool {
        matches!(self, FrameCache::Static(_))
    }

    /// Drops the time-stamped transforms (a static transform stays).
    pub(crate) fn clear(&mut self) {
        if let FrameCache::Dynamic(cache) = self {
            cache.clear();
        }
    }

    /// The oldest and newest stamps held and how many transforms; for a static transform
    /// its stamp as published, twice, and 1.
    pub(crate) fn extent(&self) -> Option<(Stamp, Stamp, usize)> {
        match self {
            FrameCache::Dynamic(cache) => cache.extent(),
            FrameCache::Static(cache) => Some((cache.stamp(), cache.stamp(), 1)),
        }
    }
}
