//! What can go wrong when storing or looking up a transform, and what to do about it.
//!
//! Ground rules:
//! - The variants are tf2's exceptions (`LookupException`, `ConnectivityException`, the
//!   `ExtrapolationException` family, `InvalidArgumentException`, `TimeoutException`),
//!   plus the two conditions tf2 only logs from `setTransform` but kairos returns
//!   ([`Tf2Error::OldData`]) or reports under its own name ([`Tf2Error::Loop`], a
//!   `LookupException` in tf2). [`Tf2Error::tf2_code`] gives the `tf2_msgs/TF2Error` code.
//! - Every message carries the facts needed to act (the frames that exist, the two trees,
//!   the requested time and the stamps held) and ends with `Fix: ...`.

use crate::quaternion::Quaternion;
use crate::time::{Span, Stamp};
use crate::transform::Transform;
use std::fmt;

/// Why a transform could not be stored, looked up or checked.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Tf2Error {
    /// A frame asked about has never appeared in a transform (tf2's `LookupException`).
    #[error(
        "frame '{frame}' ({role}) does not exist in the buffer; {}. Fix: check the name, or wait until a broadcaster has published a transform naming '{frame}' (can_transform tells when)",
        known_text(known)
    )]
    Lookup {
        /// The frame asked for.
        frame: String,
        /// Which argument named it.
        role: FrameRole,
        /// Every frame the buffer knows, in the order it first saw them.
        known: Vec<String>,
    },

    /// Following parents from a frame comes back to it: the frame tree has a loop (tf2
    /// reports this as a `LookupException`, "the tf tree is invalid because it contains a
    /// loop").
    #[error(
        "the frame tree contains a loop: {} (each frame's parent in turn). Fix: a frame has one parent; find the broadcaster that made one of these frames a child of its own descendant (all_frames_as_string lists every frame's parent)",
        cycle.join(" -> ")
    )]
    Loop {
        /// The frames of the loop, the first repeated at the end.
        cycle: Vec<String>,
    },

    /// Both frames exist but no chain of parents joins them (tf2's
    /// `ConnectivityException`).
    #[error(
        "could not find a connection between '{target_frame}' (target, in the tree rooted at '{target_root}') and '{source_frame}' (source, in the tree rooted at '{source_root}'): they are part of two unconnected trees. Fix: publish the transform that joins the trees (one root as the child of a frame of the other tree), or look up within one tree"
    )]
    Connectivity {
        /// The target frame.
        target_frame: String,
        /// The root of the target frame's tree (at the requested time).
        target_root: String,
        /// The source frame.
        source_frame: String,
        /// The root of the source frame's tree (at the requested time).
        source_root: String,
    },

    /// A link of the path has no data at the requested time (tf2's
    /// `ExtrapolationException` and its subclasses, told apart by `kind`).
    #[error(
        "Lookup would require extrapolation {}",
        extrapolation_text(source_frame, target_frame, frame, *requested, kind)
    )]
    Extrapolation {
        /// The target frame of the lookup.
        target_frame: String,
        /// The source frame of the lookup.
        source_frame: String,
        /// The frame whose transform to its parent is missing at that time.
        frame: String,
        /// The time asked for (the latest common time when the lookup asked for
        /// [`Stamp::LATEST`]).
        requested: Stamp,
        /// Into the past, into the future, or too little data.
        kind: Extrapolation,
    },

    /// An argument or a transform's contents are invalid (tf2's
    /// `InvalidArgumentException`, and the `TF_SELF_TRANSFORM`, `TF_NO_FRAME_ID`,
    /// `TF_NO_CHILD_FRAME_ID`, `TF_NAN_INPUT` and `TF_DENORMALIZED_QUATERNION` errors its
    /// `setTransform` logs).
    #[error("{what}. Fix: {}", what.fix())]
    InvalidArgument {
        /// What is wrong.
        what: Invalid,
    },

    /// A transform older than the cache keeps was not stored (tf2 logs `TF_OLD_DATA` and
    /// returns false).
    #[error(
        "transform of '{frame}' at {stamp} from '{authority}' ignored: the cache keeps {} back from the newest, {newest}, so nothing before {}. Fix: publish transforms while they are recent, or make the buffer's cache_length longer",
        Span(*cache_length_ns), Stamp::from_nanos(newest.nanos() - cache_length_ns)
    )]
    OldData {
        /// The child frame of the transform.
        frame: String,
        /// Its stamp.
        stamp: Stamp,
        /// Who published it.
        authority: String,
        /// The newest stamp the frame's cache holds.
        newest: Stamp,
        /// The cache length, in nanoseconds.
        cache_length_ns: i64,
    },

    /// A wait for a transform ended before it became available (tf2's
    /// `TimeoutException`). `BufferCore` never waits, so never returns it; the waiting
    /// buffer built on it does.
    #[error(
        "no transform from '{source_frame}' to '{target_frame}' at {time} within {}{}. Fix: check that the broadcasters of the path run (all_frames_as_string), or wait longer",
        Span(i64::try_from(waited.as_nanos()).unwrap_or(i64::MAX)),
        last_text(last_error)
    )]
    Timeout {
        /// The target frame.
        target_frame: String,
        /// The source frame.
        source_frame: String,
        /// The time asked for.
        time: Stamp,
        /// How long the wait lasted.
        waited: std::time::Duration,
        /// Why the last check failed, if one ran.
        last_error: Option<Box<Tf2Error>>,
    },
}

impl Tf2Error {
    /// The `tf2_msgs/TF2Error` code of this error (1 lookup, 2 connectivity, 3
    /// extrapolation, 4 invalid argument, 5 timeout, 6 other transform error).
    pub fn tf2_code(&self) -> u8 {
        match self {
            Tf2Error::Lookup { .. } | Tf2Error::Loop { .. } => 1,
            Tf2Error::Connectivity { .. } => 2,
            Tf2Error::Extrapolation { .. } => 3,
            Tf2Error::InvalidArgument { .. } => 4,
            Tf2Error::Timeout { .. } => 5,
            Tf2Error::OldData { .. } => 6,
        }
    }
}

/// Which argument named a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FrameRole {
    /// The frame a lookup transforms into.
    Target,
    /// The frame a lookup transforms from.
    Source,
    /// The frame assumed constant over time in a lookup between two times.
    Fixed,
    /// A transform's `header.frame_id`.
    Parent,
    /// A transform's `child_frame_id`.
    Child,
}

impl fmt::Display for FrameRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FrameRole::Target => "the target frame",
            FrameRole::Source => "the source frame",
            FrameRole::Fixed => "the fixed frame",
            FrameRole::Parent => "the transform's frame_id",
            FrameRole::Child => "the transform's child_frame_id",
        })
    }
}

/// How a lookup time falls outside the data of one frame's cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Extrapolation {
    /// Before the oldest stamp held (tf2's `BackwardExtrapolationException`).
    Past {
        /// The oldest stamp held.
        earliest: Stamp,
        /// The newest stamp held.
        latest: Stamp,
    },
    /// After the newest stamp held (tf2's `ForwardExtrapolationException`).
    Future {
        /// The oldest stamp held.
        earliest: Stamp,
        /// The newest stamp held.
        latest: Stamp,
    },
    /// One transform is held, at another time: nothing to interpolate between (tf2's
    /// `NoDataForExtrapolationException`).
    OneValue {
        /// Its stamp.
        stamp: Stamp,
    },
    /// No transform is held: the frame's data was cleared (tf2's
    /// `NoDataForExtrapolationException`).
    NoData,
}

/// What is invalid about an argument or a transform.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Invalid {
    /// A frame id is empty (or was `/` alone, which tf2 strips to empty).
    EmptyFrameId {
        /// Which one.
        role: FrameRole,
        /// Who published the transform (empty for a lookup).
        authority: String,
    },
    /// A frame id given to a lookup starts with `/` (tf2 frame ids never do; `set_transform`
    /// strips one leading `/`, as tf2 does).
    LeadingSlash {
        /// Which one.
        role: FrameRole,
        /// The frame id as given.
        frame: String,
    },
    /// A transform names the same frame as parent and child.
    SelfTransform {
        /// The frame.
        frame: String,
        /// Who published it.
        authority: String,
    },
    /// A component of the transform is NaN (tf2's `TF_NAN_INPUT`) or infinite (which tf2
    /// stores, and which turns every lookup through the frame into NaN).
    NotFinite {
        /// The child frame.
        frame: String,
        /// Who published it.
        authority: String,
        /// The transform as received.
        transform: Transform,
    },
    /// The rotation's squared norm is off 1 by tf2's tolerance (0.01) or more.
    DenormalizedQuaternion {
        /// The child frame.
        frame: String,
        /// Who published it.
        authority: String,
        /// The rotation as received.
        rotation: Quaternion,
    },
}

impl Invalid {
    fn fix(&self) -> &'static str {
        match self {
            Invalid::EmptyFrameId { .. } => {
                "set every frame id (header.frame_id and child_frame_id)"
            }
            Invalid::LeadingSlash { .. } => {
                "drop the leading '/': tf2 frame ids are bare names ('base_link')"
            }
            Invalid::SelfTransform { .. } => {
                "a transform joins two different frames; set child_frame_id to the frame the transform describes"
            }
            Invalid::NotFinite { .. } => {
                "publish finite numbers; a NaN or infinity usually comes from a division by zero or an uninitialised value in the broadcaster"
            }
            Invalid::DenormalizedQuaternion { .. } => {
                "normalise the quaternion before publishing (divide by its norm); the identity is (0, 0, 0, 1), not all zeros"
            }
        }
    }
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Invalid::EmptyFrameId { role, authority } => {
                write!(f, "{role} is empty{}", from(authority))
            }
            Invalid::LeadingSlash { role, frame } => {
                write!(f, "{role} '{frame}' starts with '/'")
            }
            Invalid::SelfTransform { frame, authority } => write!(
                f,
                "transform{} has '{frame}' as both frame_id and child_frame_id",
                from(authority)
            ),
            Invalid::NotFinite {
                frame,
                authority,
                transform: t,
            } => write!(
                f,
                "transform of '{frame}'{} is not finite: translation ({}, {}, {}), rotation ({}, {}, {}, {})",
                from(authority),
                t.translation.x,
                t.translation.y,
                t.translation.z,
                t.rotation.x,
                t.rotation.y,
                t.rotation.z,
                t.rotation.w
            ),
            Invalid::DenormalizedQuaternion {
                frame,
                authority,
                rotation: q,
            } => write!(
                f,
                "transform of '{frame}'{} has rotation ({}, {}, {}, {}) whose squared norm is {}, not 1 within 0.01",
                from(authority),
                q.x,
                q.y,
                q.z,
                q.w,
                q.norm_squared()
            ),
        }
    }
}

fn from(authority: &str) -> String {
    if authority.is_empty() {
        String::new()
    } else {
        format!(" from '{authority}'")
    }
}

fn known_text(known: &[String]) -> String {
    if known.is_empty() {
        "the buffer holds no frames yet".into()
    } else {
        format!("frames that exist: {}", known.join(", "))
    }
}

fn extrapolation_text(
    source: &str,
    target: &str,
    frame: &str,
    requested: Stamp,
    kind: &Extrapolation,
) -> String {
    // tf2's own first words ("Lookup would require extrapolation into the past"), which
    // users and tests look for, then the lookup and the facts.
    let lookup = format!("(from '{source}' to '{target}' at {requested})");
    match kind {
        Extrapolation::Past { earliest, latest } => format!(
            "into the past {lookup}: the earliest data for '{frame}' is at {earliest} (held: {earliest} to {latest}). Fix: ask for a time in that range, or Stamp::LATEST for the latest common time; to keep older data, make the buffer's cache_length longer"
        ),
        Extrapolation::Future { earliest, latest } => format!(
            "into the future {lookup}: the latest data for '{frame}' is at {latest} (held: {earliest} to {latest}). Fix: wait until the transforms for {requested} have arrived (can_transform tells when), or ask for Stamp::LATEST"
        ),
        Extrapolation::OneValue { stamp } => format!(
            "{lookup}: only one transform for '{frame}' is held, at {stamp}, so there is nothing to interpolate at {requested}. Fix: ask for {stamp} or Stamp::LATEST, or wait for the next transform of '{frame}'"
        ),
        Extrapolation::NoData => format!(
            "{lookup}: no transform for '{frame}' is held (its data was cleared). Fix: wait until its broadcaster publishes again"
        ),
    }
}

fn last_text(last: &Option<Box<Tf2Error>>) -> String {
    match last {
        Some(e) => format!(" (last: {e})"),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_message_says_what_to_do() {
        let errors = [
            Tf2Error::Lookup {
                frame: "bar".into(),
                role: FrameRole::Source,
                known: vec!["foo".into(), "child".into()],
            },
            Tf2Error::Loop {
                cycle: vec!["a".into(), "b".into(), "a".into()],
            },
            Tf2Error::Connectivity {
                target_frame: "a".into(),
                target_root: "a".into(),
                source_frame: "2".into(),
                source_root: "1".into(),
            },
            Tf2Error::Extrapolation {
                target_frame: "foo".into(),
                source_frame: "bar".into(),
                frame: "bar".into(),
                requested: Stamp::from_secs(1),
                kind: Extrapolation::Past {
                    earliest: Stamp::from_secs(2),
                    latest: Stamp::from_secs(3),
                },
            },
            Tf2Error::InvalidArgument {
                what: Invalid::EmptyFrameId {
                    role: FrameRole::Parent,
                    authority: "me".into(),
                },
            },
            Tf2Error::OldData {
                frame: "b".into(),
                stamp: Stamp::from_secs(1),
                authority: "me".into(),
                newest: Stamp::from_secs(20),
                cache_length_ns: 10_000_000_000,
            },
            Tf2Error::Timeout {
                target_frame: "a".into(),
                source_frame: "b".into(),
                time: Stamp::from_secs(1),
                waited: std::time::Duration::from_millis(100),
                last_error: None,
            },
        ];
        for e in &errors {
            let text = e.to_string();
            assert!(text.contains("Fix: "), "{text}");
            assert!(!text.contains("Stamp("), "{text}");
        }
        assert!(
            errors[0]
                .to_string()
                .contains("frames that exist: foo, child")
        );
        assert!(errors[1].to_string().contains("a -> b -> a"));
        assert!(errors[2].to_string().contains("rooted at '1'"));
        let past = errors[3].to_string();
        assert!(
            past.contains("at 1 s") && past.contains("into the past"),
            "{past}"
        );
        assert!(past.contains("2 s to 3 s"), "{past}");
        assert!(errors[5].to_string().contains("nothing before 10 s"));
        assert!(errors[6].to_string().contains("within 100 ms"));
        let codes: Vec<u8> = errors.iter().map(Tf2Error::tf2_code).collect();
        assert_eq!(codes, [1, 1, 2, 3, 4, 6, 5]);
    }
}
