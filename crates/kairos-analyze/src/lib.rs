//! Trace analysis: one model (objects, messages, callbacks, queues, timers) built from
//! kairos, ROS 2 (ros2_tracing) and ROS 1 (tracetools) traces, and the analyses and
//! reports rendered from it. Every report is a plain serializable value that also
//! prints itself for a person ([`std::fmt::Display`]).
//!
//! The question it answers is "where did this message spend its time?": from the moment
//! a source (a timer, a sensor callback) caused it, through each publish, transport,
//! queue and callback, to the last callback it reached. What it promises:
//!
//! - **One model for every source.** [`build`] maps each trace source onto [`model`]
//!   (processes, nodes, endpoints, callbacks, messages with their deliveries, queues);
//!   every analysis reads the model, never a source's own events, so an analysis works
//!   the same on a kairos trace and on a ROS 2 or ROS 1 one.
//! - **Messages linked, not guessed, where the trace says.** kairos traces carry each
//!   message's publisher and sequence number, so a delivery is joined to its publish
//!   exactly; ROS 2 and ROS 1 traces are linked by what their tracers record, and each
//!   subscription's takes are counted as linked exactly, inferred, or unlinked in the
//!   [`summary`], never dropped silently.
//! - **Streaming, in flat memory.** [`digest`] gathers what the analyses and the HTML
//!   report need record by record while the trace is read, so a trace of tens of millions
//!   of events is analyzed in memory that does not grow with its length.
//! - **Several hosts on one time line.** [`sync`] brings each host's clock onto one line
//!   before the analyses run, so no message seems to arrive before it was sent.
//! - **Analyses and reports.** [`summary`], [`callbacks`], [`timers`], [`queues`],
//!   [`chains`] (every path from a source to a sink, with each stage's latency),
//!   [`flow`] (one message followed to the end of the graph), [`goals`] (action goals),
//!   [`logs`]; every thread, process, node and topic named the same way in each
//!   ([`labels`]: threads by their process and nodes, the runtime's own nodes and topics
//!   marked); rendered as text, JSON, a self-contained HTML page ([`html`]) and Chrome
//!   trace JSON for Perfetto ([`perfetto`]).

#![warn(missing_docs)]

pub mod build;
pub mod callbacks;
pub mod chains;
pub mod digest;
pub mod flow;
pub mod goals;
pub mod html;
pub mod labels;
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
