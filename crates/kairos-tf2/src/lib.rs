//! Frames for kairos: tf2's transform buffer in Rust. Every frame's transform to its parent
//! over time, and the transform between any two frames at any time, through the tree.
//!
//! ```
//! use kairos_tf2::{BufferCore, Quaternion, Stamp, Transform, TransformStamped, Vector3};
//!
//! let mut buffer = BufferCore::new(); // keeps 10 s per frame
//! // odom -> base_link moves: 1 m at t = 1 s, 2 m at t = 2 s.
//! for (secs, x) in [(1, 1.0), (2, 2.0)] {
//!     let t = Transform::new(Vector3::new(x, 0.0, 0.0), Quaternion::IDENTITY);
//!     let msg = TransformStamped::new("odom", "base_link", Stamp::from_secs(secs), t);
//!     buffer.set_transform(&msg, "odometry", false)?;
//! }
//! // base_link -> lidar is fixed.
//! let mount = Transform::new(Vector3::new(0.0, 0.0, 0.5), Quaternion::IDENTITY);
//! let msg = TransformStamped::new("base_link", "lidar", Stamp::LATEST, mount);
//! buffer.set_transform(&msg, "urdf", true)?;
//!
//! // Where the lidar is in odom at 1.5 s: interpolated between the two stamps.
//! let at = buffer.lookup_transform("odom", "lidar", Stamp::from_secs_f64(1.5))?;
//! assert!((at.transform.translation.x - 1.5).abs() < 1e-12);
//! assert!((at.transform.translation.z - 0.5).abs() < 1e-12);
//!
//! // At 3 s there is no data yet: the error says so, with the range held.
//! let err = buffer.lookup("odom", "lidar", Stamp::from_secs(3)).unwrap_err();
//! assert!(err.to_string().contains("into the future"));
//! # Ok::<(), kairos_tf2::Tf2Error>(())
//! ```
//!
//! What this crate promises:
//! - **tf2's answers.** [`BufferCore`] stores and looks up as tf2's `BufferCore` does
//!   (geometry2, rolling): per-frame caches bounded by a cache length (10 s by default),
//!   linear interpolation of translations and slerp of rotations between the two nearest
//!   stamps, no interpolation across a change of parent, [`Stamp::LATEST`] as the latest
//!   common time of the path, static transforms valid at every time, and the same
//!   validation of incoming transforms. The facts of tf2's own unit tests are this
//!   crate's tests.
//! - **Errors that say what to do.** [`Tf2Error`] carries the facts (the frames that
//!   exist, the two unconnected trees, the requested time against the range held) and a
//!   `Fix:`; a transform that is not stored is an error, never only a log line.
//! - **Never hangs, never allocates on the lookup path.** A walk through the tree is
//!   bounded by [`MAX_GRAPH_DEPTH`]; [`BufferCore::lookup`] works on interned frame ids and
//!   binary searches without allocating. `examples/lookup_bench.rs` measures it.
//! - **Plain data.** [`TransformStamped`] mirrors `geometry_msgs/TransformStamped` field for
//!   field; this crate depends on no message crate and on no runtime, so the listener and
//!   broadcaster on `/tf` build on it.

#![deny(unsafe_code)]
#![warn(missing_docs)]

mod buffer;
mod cache;
mod error;
mod frames;
mod quaternion;
mod slerp;
mod static_cache;
mod time;
mod time_cache;
mod transform;
mod vector;

pub use buffer::{BufferCore, DEFAULT_CACHE_LENGTH, FrameInfo, MAX_GRAPH_DEPTH};
pub use error::{Extrapolation, FrameRole, Invalid, Tf2Error};
pub use quaternion::Quaternion;
pub use time::Stamp;
pub use transform::{Header, TimedTransform, Transform, TransformStamped};
pub use vector::Vector3;
