//! tf2 on kairos: the runtime half of ROS 2's frames. Broadcasters that send transforms on
//! `/tf` and `/tf_static`, a listener that fills a shared buffer from them, and lookups
//! that wait for a transform on the node's clock, the kairos way: never early, never
//! hanging, and failing at once where the wait could never complete.
//!
//! ```
//! use kairos::exec::Executor;
//! use kairos::graph::{Context, Node};
//! use kairos_tf2::{Quaternion, Stamp, Transform, TransformStamped, Vector3};
//! use kairos_tf2_ros::{Buffer, StaticTransformBroadcaster, TransformListener};
//!
//! let context = Context::new();
//! let robot = Node::new_in(&context, "robot", "/")?;
//! let mount = Transform::new(Vector3::new(0.2, 0.0, 0.3), Quaternion::IDENTITY);
//! let statics = StaticTransformBroadcaster::new(&robot)?;
//! statics.send_transform(&TransformStamped::new("base_link", "lidar", Stamp::LATEST, mount));
//!
//! // A listener that starts later still gets the static frames (transient local).
//! let buffer = Buffer::new(robot.clock());
//! let _listener = TransformListener::new(&robot, buffer.clone())?;
//! let executor = Executor::single_threaded();
//! executor.add_node(&robot)?;
//! while executor.spin_some()? > 0 {}
//! let found = buffer.lookup_transform("base_link", "lidar", Stamp::LATEST)?;
//! assert_eq!(found.transform.translation.z, 0.3);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The modules, and what each promises:
//! - [`broadcaster`]: tf2_ros's topics and QoS; a static broadcaster resends every frame
//!   it ever sent, so a late listener gets them all.
//! - [`listener`]: tf2_ros's subscriptions; every transform stored or counted and logged,
//!   none dropped silently.
//! - [`buffer`]: `kairos_tf2::BufferCore` behind a mutex; waits that end as soon as an
//!   insertion answers them, time out on the buffer's clock (simulation time included),
//!   end on cancel and shutdown, and fail at once with `WouldDeadlock` where the
//!   listener could never run meanwhile.
//! - [`server`]: tf2_ros's buffer server (`tf2_msgs/action/LookupTransform`): waiting
//!   lookups for other programs, bounded in time and in number.
//! - [`convert`]: the ROS messages to and from `kairos_tf2`'s plain data.
//! - [`error`]: how a wait ended, always with tf2's facts.

#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod broadcaster;
pub mod buffer;
pub mod convert;
pub mod error;
pub mod listener;
pub mod server;

pub use broadcaster::{StaticTransformBroadcaster, TransformBroadcaster};
pub use buffer::{Buffer, TransformFuture};
pub use error::TransformError;
pub use listener::{DEFAULT_AUTHORITY, TransformListener};
pub use server::BufferServer;
