//! ROS 2 lifecycle (managed) nodes on kairos: a node a supervisor configures, activates,
//! deactivates and shuts down, through the services and topic ROS 2 defines
//! (`lifecycle_msgs`), so `ros2 lifecycle`, launch's lifecycle events and ROS 2
//! supervisors drive a kairos node as they drive an rclcpp one.
//!
//! What this crate promises:
//! - **ROS 2's machine, exactly.** The states, transitions, ids and labels of
//!   rcl_lifecycle's default state machine ([`State`], [`Transition`]); a transition the
//!   state does not allow is a typed error ([`LifecycleError::NotAllowed`]) or, through
//!   `change_state`, `success: false`, counted and logged with the transitions allowed.
//! - **Nothing lost silently.** A [`LifecyclePublisher`] publishes only while its node is
//!   active; a publish at another time is counted and reported once per inactive period.
//! - **Never hang.** Transitions run one at a time, and one asked for during another is
//!   refused at once ([`LifecycleError::InProgress`]), never queued behind it; a callback
//!   that panics sends the node to error processing instead of unwinding into the
//!   executor.
//! - **Every change is seen.** Each state change is published on `~/transition_event`.

#![warn(missing_docs)]

mod error;
mod node;
mod publisher;
mod state;

pub use error::LifecycleError;
pub use node::{Lifecycle, LifecycleNode, NoCallbacks};
pub use publisher::{Activation, LifecyclePublisher};
pub use state::{CallbackReturn, State, Transition};
