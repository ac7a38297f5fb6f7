//! The kairos trace format: the event schema shared by the runtime's tracepoints and the
//! analyzer, a CTF 1.8 writer and a CTF 1.8 reader.
//!
//! Every stage of a message that kairos runs (publish, transport, queue, take, callback,
//! timer fire, clock update, ...) is one event of [`schema`], recorded by a typed
//! tracepoint of [`tp`] and written by a [`Session`] as CTF that babeltrace2, Trace
//! Compass and tracetools_analysis open as a ROS 2 (LTTng-UST) trace. What the crate
//! promises, module by module:
//!
//! - [`schema`]: one table defines every event; the buffers' event type, the CTF metadata
//!   and the tracepoints are generated from it, so they cannot disagree. Names and fields
//!   are ros2_tracing's wherever the meaning is the same.
//! - [`tp`]: with no session running, a tracepoint costs one relaxed load and a branch;
//!   with one, it stamps the event and pushes it to the calling thread's buffer without a
//!   lock. Nothing is lost silently: an event that finds its buffer full is counted as
//!   discarded, and the count is written into the trace where readers report it.
//! - [`write`](mod@write): a session drains the per-thread buffers on a thread of its own into one
//!   stream per traced thread, stamps on the monotonic clock with the offset to the epoch
//!   in the clock class, and leaves a readable trace up to its last flush if the process
//!   is killed.
//! - [`read`]: a streaming reader of CTF 1.8 (kairos, LTTng kernel and user space,
//!   ros2_tracing, ROS 1 tracetools) whose memory does not grow with the trace's length;
//!   damage is an error naming the file and offset, never a panic, and the other streams
//!   go on.
//!
//! The runtime starts sessions through `kairos::trace` (`KAIROS_TRACE=DIR` traces any
//! kairos program); the analyzer (`kairos-analyze`) reads with [`read`].

#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod read;
pub mod schema;
pub mod tp;
pub mod write;

pub use write::Session;
