//! The transform buffer: every frame's transforms to its parent over time, and lookups of
//! the transform between any two frames at any time (tf2's `BufferCore`).
//!
//! Ground rules:
//! - **tf2's answers.** Validation, the walk through the tree, interpolation, the latest
//!   common time, the errors and the sign of returned rotations follow tf2 (geometry2,
//!   rolling), so a kairos node and an rclcpp node given the same `/tf` agree on every
//!   lookup. Where kairos differs it says so at the item (stored rotations are
//!   normalised; stale data and loops are errors of their own).
//! - **Nothing dropped silently.** A transform that is not stored (invalid, or older than
//!   the cache keeps) is an error from [`BufferCore::set_transform`] naming the frame, the
//!   authority and the fix; tf2 logs these and returns `false`.
//! - **Bounded work.** A walk through the tree stops after [`MAX_GRAPH_DEPTH`] links with
//!   [`Tf2Error::Loop`], so a loop made by a bad broadcaster cannot hang a lookup.
//! - **No allocation on the lookup path.** Frame names are interned to integer ids, each
//!   frame's cache sits in a vector indexed by id, a cache finds a time by a guess from the
//!   stamps' spacing (else a binary search), and [`BufferCore::lookup`] returns a
//!   [`TimedTransform`] by value. Only errors, and [`BufferCore::lookup_transform`]'s two
//!   frame-name strings, allocate.
//! - **Not synchronised.** Storing takes `&mut self`, lookups `&self`: share a buffer
//!   behind a lock (tf2 holds a mutex inside; the listener built on this does the same
//!   outside).
//!
//! The walk through the tree, and the latest common time that [`Stamp::LATEST`] resolves
//! to, are in `buffer/walk.rs`.

mod walk;

use crate::cache::{Entry, FrameCache};
use crate::error::{FrameRole, Invalid, Tf2Error};
use crate::frames::{FrameId, FrameNames};
use crate::static_cache::StaticCache;
use crate::time::Stamp;
use crate::time_cache::TimeCache;
use crate::transform::{Header, TimedTransform, Transform, TransformStamped};
use std::fmt::Write as _;
use std::time::Duration;
use walk::{ParentWalker, TransformWalker};

/// How far back a buffer keeps transforms unless told otherwise: 10 s (tf2's
/// `BUFFER_CORE_DEFAULT_CACHE_TIME`).
pub const DEFAULT_CACHE_LENGTH: Duration = Duration::from_secs(10);

/// The most links a walk through the tree follows before it reports a loop (tf2's
/// `MAX_GRAPH_DEPTH`).
pub const MAX_GRAPH_DEPTH: usize = 1000;

/// How far from 1 a rotation's squared norm may be (tf2's
/// `QUATERNION_NORMALIZATION_TOLERANCE`).
const QUATERNION_NORM_TOLERANCE: f64 = 10e-3;

/// Every frame's transforms to its parent over time, and lookups between any two frames.
///
/// # Examples
///
/// ```
/// use kairos_tf2::{BufferCore, Quaternion, Stamp, Transform, TransformStamped, Vector3};
///
/// let mut buffer = BufferCore::new();
/// let lidar_on_base = Transform::new(Vector3::new(0.2, 0.0, 0.3), Quaternion::IDENTITY);
/// let t = TransformStamped::new("base_link", "lidar", Stamp::from_secs(1), lidar_on_base);
/// buffer.set_transform(&t, "urdf", true)?;
///
/// // A point the lidar sees 1 m ahead, in the base frame.
/// let found = buffer.lookup("base_link", "lidar", Stamp::LATEST)?;
/// let p = found.transform.transform_point(Vector3::new(1.0, 0.0, 0.0));
/// assert!((p.x - 1.2).abs() < 1e-12 && (p.z - 0.3).abs() < 1e-12);
/// # Ok::<(), kairos_tf2::Tf2Error>(())
/// ```
#[derive(Debug)]
pub struct BufferCore {
    cache_length_ns: i64,
    names: FrameNames,
    /// Per frame id: its cache (`None` for a frame only ever seen as a parent) and who
    /// last published it.
    slots: Vec<Slot>,
}

#[derive(Debug, Default)]
struct Slot {
    cache: Option<FrameCache>,
    authority: String,
}

/// What [`BufferCore::frames`] says about one frame: for `kairos tf frames`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct FrameInfo {
    /// The frame.
    pub name: String,
    /// Its parent at its newest transform; `None` for a root (a frame only seen as a
    /// parent, or whose data was cleared).
    pub parent: Option<String>,
    /// Who published its latest transform (empty for a frame only seen as a parent).
    pub authority: String,
    /// Whether its transform is static.
    pub is_static: bool,
    /// The oldest stamp held (for a static transform: its stamp as published).
    pub oldest: Option<Stamp>,
    /// The newest stamp held (for a static transform: its stamp as published).
    pub newest: Option<Stamp>,
    /// How many transforms are held.
    pub stored: usize,
}

impl Default for BufferCore {
    fn default() -> BufferCore {
        BufferCore::new()
    }
}

impl BufferCore {
    /// An empty buffer keeping [`DEFAULT_CACHE_LENGTH`] (10 s) of each frame's transforms.
    pub fn new() -> BufferCore {
        BufferCore::with_cache_length(DEFAULT_CACHE_LENGTH)
    }

    /// An empty buffer keeping `cache_length` back from each frame's newest transform
    /// (saturating at ~292 years).
    pub fn with_cache_length(cache_length: Duration) -> BufferCore {
        BufferCore {
            cache_length_ns: i64::try_from(cache_length.as_nanos()).unwrap_or(i64::MAX),
            names: FrameNames::default(),
            slots: Vec::new(),
        }
    }

    /// How far back from its newest transform each frame's data is kept.
    pub fn cache_length(&self) -> Duration {
        Duration::from_nanos(self.cache_length_ns.unsigned_abs())
    }

    /// Stores `transform` (child `child_frame_id` in parent `header.frame_id` at
    /// `header.stamp`), published by `authority`, as a static transform (valid at every
    /// time, replacing the previous one) or a time-stamped one.
    ///
    /// As in tf2, one leading `/` is stripped from both frame ids, and a frame that
    /// switches between static and time-stamped starts over with the new kind. Unlike tf2,
    /// the rotation is stored normalised (tf2 stores it as given, within its tolerance,
    /// which scales rotated points by up to 1 %).
    ///
    /// # Errors
    ///
    /// Nothing is stored, and:
    /// - [`Tf2Error::InvalidArgument`] for an empty frame id, a frame that is its own
    ///   parent, a NaN (or, unlike tf2, an infinity), or a rotation whose squared norm is 0.01 or more away from 1;
    /// - [`Tf2Error::OldData`] for a time-stamped transform older than the frame's newest
    ///   minus the cache length.
    pub fn set_transform(
        &mut self,
        transform: &TransformStamped,
        authority: &str,
        is_static: bool,
    ) -> Result<(), Tf2Error> {
        let parent = strip_slash(&transform.header.frame_id);
        let child = strip_slash(&transform.child_frame_id);
        let invalid = |what| Err(Tf2Error::InvalidArgument { what });
        if child.is_empty() {
            return invalid(Invalid::EmptyFrameId {
                role: FrameRole::Child,
                authority: authority.into(),
            });
        }
        if parent.is_empty() {
            return invalid(Invalid::EmptyFrameId {
                role: FrameRole::Parent,
                authority: authority.into(),
            });
        }
        if child == parent {
            return invalid(Invalid::SelfTransform {
                frame: child.into(),
                authority: authority.into(),
            });
        }
        let mut value = transform.transform;
        if !value.is_finite() {
            return invalid(Invalid::NotFinite {
                frame: child.into(),
                authority: authority.into(),
                transform: value,
            });
        }
        let unit = (value.rotation.norm_squared() - 1.0).abs() < QUATERNION_NORM_TOLERANCE;
        if !unit {
            return invalid(Invalid::DenormalizedQuaternion {
                frame: child.into(),
                authority: authority.into(),
                rotation: value.rotation,
            });
        }
        value.rotation = value.rotation.normalized();

        let child_id = self.intern(child);
        let parent_id = self.intern(parent);
        let entry = Entry {
            stamp: transform.header.stamp,
            parent: parent_id,
            transform: value,
        };
        let cache_length_ns = self.cache_length_ns;
        let slot = &mut self.slots[child_id.index()];
        match (&mut slot.cache, is_static) {
            (Some(FrameCache::Static(cache)), true) => cache.insert(entry),
            (Some(FrameCache::Dynamic(cache)), false) => {
                if let Err(newest) = cache.insert(entry) {
                    return Err(Tf2Error::OldData {
                        frame: child.into(),
                        stamp: entry.stamp,
                        authority: authority.into(),
                        newest,
                        cache_length_ns,
                    });
                }
            }
            (cache, true) => *cache = Some(FrameCache::Static(StaticCache::new(entry))),
            (cache, false) => {
                let mut fresh = TimeCache::new(cache_length_ns);
                // An empty cache refuses nothing.
                let _ = fresh.insert(entry);
                *cache = Some(FrameCache::Dynamic(fresh));
            }
        }
        if slot.authority != authority {
            slot.authority.clear();
            slot.authority.push_str(authority);
        }
        Ok(())
    }

    /// The transform that maps points in `source` to points in `target` at `time`
    /// ([`Stamp::LATEST`]: the latest common time), as a `TransformStamped` with
    /// `header.frame_id` = `target`, `child_frame_id` = `source` and the time it is valid
    /// at. [`BufferCore::lookup`] is the same without the two strings.
    ///
    /// # Errors
    ///
    /// As [`BufferCore::lookup`].
    pub fn lookup_transform(
        &self,
        target: &str,
        source: &str,
        time: Stamp,
    ) -> Result<TransformStamped, Tf2Error> {
        let found = self.lookup(target, source, time)?;
        Ok(stamped(target, source, found))
    }

    /// The transform that maps points in `source` to points in `target` at `time`
    /// ([`Stamp::LATEST`]: the latest time at which every link of the path has data), and
    /// the time it is valid at. Does not allocate unless it fails.
    ///
    /// Same frame twice: the identity, even for a frame never seen (tf2's "zero-length"
    /// lookup), stamped `time` (for `LATEST`, the frame's newest stamp).
    ///
    /// # Errors
    ///
    /// - [`Tf2Error::InvalidArgument`]: a frame id is empty or starts with `/`;
    /// - [`Tf2Error::Lookup`]: a frame does not exist (the error lists those that do);
    /// - [`Tf2Error::Connectivity`]: no path joins them (the error names both roots);
    /// - [`Tf2Error::Extrapolation`]: a link of the path has no data at `time` (the error
    ///   says which link, and the range it holds);
    /// - [`Tf2Error::Loop`]: the path does not reach a root within [`MAX_GRAPH_DEPTH`].
    pub fn lookup(
        &self,
        target: &str,
        source: &str,
        time: Stamp,
    ) -> Result<TimedTransform, Tf2Error> {
        // One frame twice is the identity even when its name is invalid or unknown (tf2
        // compares the strings first); comparing ids on the common path spares the
        // string comparison.
        let identity = |id: Option<FrameId>| {
            let stamp = match id.and_then(|id| self.cache(id)) {
                Some(cache) if time.is_latest() => cache.latest().map_or(time, |(s, _)| s),
                _ => time,
            };
            Ok(TimedTransform {
                stamp,
                transform: Transform::IDENTITY,
            })
        };
        let target_id = match self.validate(target, FrameRole::Target) {
            Ok(id) => id,
            Err(_) if target == source => return identity(None),
            Err(e) => return Err(e),
        };
        let source_id = self.validate(source, FrameRole::Source)?;
        if source_id == target_id {
            return identity(Some(target_id));
        }
        let mut walker = TransformWalker::default();
        let stamp = self.walk(&mut walker, time, target_id, source_id)?;
        Ok(TimedTransform {
            stamp,
            transform: walker.result,
        })
    }

    /// The transform that maps points in `source` at `source_time` to points in `target`
    /// at `target_time`, assuming `fixed` does not move between the two times (a robot
    /// in the `odom` or `map` frame between two scans). Stamped `target_time` (resolved
    /// if `LATEST`).
    ///
    /// # Errors
    ///
    /// As [`BufferCore::lookup`], for each of its two legs (source → fixed at
    /// `source_time`, fixed → target at `target_time`); every frame id is validated first.
    pub fn lookup_transform_full(
        &self,
        target: &str,
        target_time: Stamp,
        source: &str,
        source_time: Stamp,
        fixed: &str,
    ) -> Result<TransformStamped, Tf2Error> {
        let found = self.lookup_full(target, target_time, source, source_time, fixed)?;
        Ok(stamped(target, source, found))
    }

    /// [`BufferCore::lookup_transform_full`] without the two frame-name strings.
    ///
    /// # Errors
    ///
    /// As [`BufferCore::lookup_transform_full`].
    pub fn lookup_full(
        &self,
        target: &str,
        target_time: Stamp,
        source: &str,
        source_time: Stamp,
        fixed: &str,
    ) -> Result<TimedTransform, Tf2Error> {
        self.validate(target, FrameRole::Target)?;
        self.validate(source, FrameRole::Source)?;
        self.validate(fixed, FrameRole::Fixed)?;
        let fixed_from_source = self.lookup(fixed, source, source_time)?;
        let target_from_fixed = self.lookup(target, fixed, target_time)?;
        let mut transform = target_from_fixed.transform * fixed_from_source.transform;
        transform.rotation = transform.rotation.with_tf2_sign();
        Ok(TimedTransform {
            stamp: target_from_fixed.stamp,
            transform,
        })
    }

    /// Whether [`BufferCore::lookup`] of `source` in `target` at `time` would succeed.
    /// [`BufferCore::check_transform`] says why not.
    pub fn can_transform(&self, target: &str, source: &str, time: Stamp) -> bool {
        self.check_transform(target, source, time).is_ok()
    }

    /// `Ok` if [`BufferCore::lookup`] of `source` in `target` at `time` would succeed,
    /// else the reason (tf2's `canTransform` with its `error_msg`: the error's text).
    /// Cheaper than a lookup: it follows parents without composing transforms.
    ///
    /// # Errors
    ///
    /// The error the lookup would return.
    pub fn check_transform(&self, target: &str, source: &str, time: Stamp) -> Result<(), Tf2Error> {
        if target == source {
            return Ok(());
        }
        let target_id = self.validate(target, FrameRole::Target)?;
        let source_id = self.validate(source, FrameRole::Source)?;
        self.walk(&mut ParentWalker, time, target_id, source_id)?;
        Ok(())
    }

    /// Whether [`BufferCore::lookup_full`] would succeed.
    pub fn can_transform_full(
        &self,
        target: &str,
        target_time: Stamp,
        source: &str,
        source_time: Stamp,
        fixed: &str,
    ) -> bool {
        self.check_transform_full(target, target_time, source, source_time, fixed)
            .is_ok()
    }

    /// `Ok` if [`BufferCore::lookup_full`] would succeed, else the reason.
    ///
    /// # Errors
    ///
    /// The error the lookup would return.
    pub fn check_transform_full(
        &self,
        target: &str,
        target_time: Stamp,
        source: &str,
        source_time: Stamp,
        fixed: &str,
    ) -> Result<(), Tf2Error> {
        self.validate(target, FrameRole::Target)?;
        self.validate(source, FrameRole::Source)?;
        self.validate(fixed, FrameRole::Fixed)?;
        self.check_transform(target, fixed, target_time)?;
        self.check_transform(fixed, source, source_time)
    }

    /// The latest time at which every link between `target` and `source` has data: the
    /// oldest of the links' newest stamps (static links do not count; all static gives
    /// [`Stamp::LATEST`]). What a lookup at `LATEST` uses.
    ///
    /// # Errors
    ///
    /// [`Tf2Error::InvalidArgument`] or [`Tf2Error::Lookup`] for a bad or unknown frame,
    /// [`Tf2Error::Connectivity`] if no path joins them, [`Tf2Error::Loop`].
    pub fn latest_common_time(&self, target: &str, source: &str) -> Result<Stamp, Tf2Error> {
        let target_id = self.validate(target, FrameRole::Target)?;
        let source_id = self.validate(source, FrameRole::Source)?;
        self.latest_common_time_of(target_id, source_id)
    }

    /// The parent of `frame` at `time` ([`Stamp::LATEST`]: now); `None` for an unknown
    /// frame, a root, or a time outside its data.
    pub fn parent(&self, frame: &str, time: Stamp) -> Option<&str> {
        let id = self.names.id(frame)?;
        let parent = self.cache(id)?.parent(time).ok()?;
        Some(self.names.name(parent))
    }

    /// Whether `frame` has appeared in a transform, as child or parent.
    pub fn frame_exists(&self, frame: &str) -> bool {
        self.names.id(frame).is_some()
    }

    /// Every frame seen, as child or parent, in order of first appearance.
    pub fn frame_names(&self) -> &[String] {
        self.names.names()
    }

    /// Every frame seen, with its parent, publisher and the stamps held.
    pub fn frames(&self) -> Vec<FrameInfo> {
        self.names
            .names()
            .iter()
            .zip(&self.slots)
            .map(|(name, slot)| {
                let cache = slot.cache.as_ref();
                let parent = cache.and_then(FrameCache::latest);
                let extent = cache.and_then(FrameCache::extent);
                FrameInfo {
                    name: name.clone(),
                    parent: parent.map(|(_, p)| self.names.name(p).to_owned()),
                    authority: slot.authority.clone(),
                    is_static: cache.is_some_and(FrameCache::is_static),
                    oldest: extent.map(|(oldest, _, _)| oldest),
                    newest: extent.map(|(_, newest, _)| newest),
                    stored: extent.map_or(0, |(_, _, n)| n),
                }
            })
            .collect()
    }

    /// One line per frame that has a parent link, as tf2's `allFramesAsString`:
    /// `Frame lidar exists with parent base_link.` (`NO_PARENT` once its data is cleared).
    pub fn all_frames_as_string(&self) -> String {
        let mut text = String::new();
        for (id, slot) in self.slots.iter().enumerate() {
            let Some(cache) = &slot.cache else {
                continue;
            };
            let parent = cache
                .latest()
                .map_or("NO_PARENT", |(_, p)| self.names.name(p));
            let _ = writeln!(
                text,
                "Frame {} exists with parent {parent}.",
                self.names.names()[id]
            );
        }
        text
    }

    /// Drops every time-stamped transform; static transforms and frame names stay (as
    /// tf2: static transforms are published once, and must survive a jump of the clock,
    /// which is what a clear is for).
    pub fn clear(&mut self) {
        for slot in &mut self.slots {
            if let Some(cache) = &mut slot.cache {
                cache.clear();
            }
        }
    }

    fn intern(&mut self, name: &str) -> FrameId {
        let (id, new) = self.names.intern(name);
        if new {
            self.slots.push(Slot::default());
        }
        id
    }

    fn cache(&self, id: FrameId) -> Option<&FrameCache> {
        self.slots[id.index()].cache.as_ref()
    }

    /// The newest link of `frame` (stamp, parent); `None` for a root.
    fn latest_link(&self, frame: FrameId) -> Option<(Stamp, FrameId)> {
        self.cache(frame)?.latest()
    }

    fn validate(&self, frame: &str, role: FrameRole) -> Result<FrameId, Tf2Error> {
        if frame.is_empty() {
            return Err(Tf2Error::InvalidArgument {
                what: Invalid::EmptyFrameId {
                    role,
                    authority: String::new(),
                },
            });
        }
        if frame.starts_with('/') {
            return Err(Tf2Error::InvalidArgument {
                what: Invalid::LeadingSlash {
                    role,
                    frame: frame.into(),
                },
            });
        }
        self.names.id(frame).ok_or_else(|| Tf2Error::Lookup {
            frame: frame.into(),
            role,
            known: self.names.names().to_vec(),
        })
    }
}

fn strip_slash(frame: &str) -> &str {
    frame.strip_prefix('/').unwrap_or(frame)
}

fn stamped(target: &str, source: &str, found: TimedTransform) -> TransformStamped {
    TransformStamped {
        header: Header {
            stamp: found.stamp,
            frame_id: target.into(),
        },
        child_frame_id: source.into(),
        transform: found.transform,
    }
}
