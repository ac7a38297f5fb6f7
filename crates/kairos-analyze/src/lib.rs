//! Trace analysis: one model (objects, messages, callbacks, queues, timers) built from
//! kairos, ROS 2 (ros2_tracing) and ROS 1 (tracetools) traces, and the analyses and
//! reports rendered from it. Every report is a plain serializable value that also
//! prints itself for a person ([`std::fmt::Display`]).

#![warn(missing_docs)]

pub mod build;
pub mod callbacks;
pub mod chains;
pub mod digest;
pub mod flow;
pub mod goals;
pub mod html;
pub mod logs;
pub mod message_graph;
pub mod model;
pub mod perfetto;
pub mod plot;
pub mod queues;
pub mod stats;
pub mod summary;
pub mod sync;
pub mod timers;

pub use build::{AnalyzeError, Builder, Options, analyze};
pub use digest::Digest;
pub use model::Model;
