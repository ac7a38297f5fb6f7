//! The CTF 1.8 trace writer and trace sessions.
//!
//! What it promises:
//! - A trace directory holds a plain-text `metadata` file and one data stream file per
//!   traced thread, laid out as LTTng-UST lays out a ROS 2 trace: the same packet header,
//!   packet context (`timestamp_begin`/`_end`, `content_size`, `packet_size`,
//!   `packet_seq_num`, `events_discarded`, `cpu_id`), event header and event context
//!   (`_vtid`, `_vpid`, `_procname`: the thread's name, as LTTng-UST records it), so
//!   babeltrace2 and Trace Compass open it as such.
//! - Timestamps come from the monotonic clock; the clock class carries the offset to the
//!   Unix epoch measured when the session started, so tools show wall-clock times. A
//!   session may stamp with a clock of the program's own instead ([`TraceClock`]).
//! - Tracing is cheap where it happens: a disabled tracepoint costs one relaxed atomic
//!   load; an enabled one reads the clock and pushes a fixed-size record onto its thread's
//!   own bounded queue, without a lock. Encoding and file writes happen on a background
//!   writer thread.
//! - Nothing is lost silently: an event that finds its thread's queue full is counted, and
//!   the count is written in the stream's `events_discarded`, which babeltrace2 reports.
//! - A killed process leaves a readable trace: the writer drains every queue and appends
//!   whole packets at a fixed interval (100 ms by default), so a SIGKILL loses at most the
//!   events of the last interval. Every packet is one 4 KiB page, as LTTng's sub-buffers
//!   are, so that a kill during a `write` (which Linux interrupts only between pages)
//!   cannot leave half a packet. An event larger than a page has its longest string fields
//!   cut to fit, each ending in `...[truncated]`.
//! - A failed write (disk full) or a stream file that cannot be created (too many open
//!   files) loses only the events of that stream and write: the file is cut back to its
//!   last whole packet, the other streams go on, the loss is counted in [`Stats`] and in
//!   the stream's `events_discarded` once a later packet of it can be written, and
//!   `flush`/`stop` return the first error.
//! - An event traced while its thread is being torn down (from a thread-local destructor)
//!   is written too, in a stream of its own.
//!
//! One stream per thread, not per CPU: a thread is the only producer of its queue, so a
//! push is a single-producer operation with no lock and no CPU pinning, and events of one
//! thread are in timestamp order by construction (the thread reads the clock and pushes in
//! sequence), which CTF requires within a stream. Per-CPU buffers would need restartable
//! sequences to stay lock-free when a thread migrates. The price is one stream file per
//! thread that traced; the `cpu_id` of a stream is the CPU its thread first traced on.
//!
//! Event header: LTTng's `event_header_large` (16-bit id; a 32-bit timestamp, or the id
//! 65535 followed by a 32-bit id and a 64-bit timestamp). It is what LTTng writes for a
//! channel with many event classes, so Trace Compass's fast path for LTTng headers applies,
//! and most events take 6 header bytes instead of 10. The first event of each packet and
//! any event 2^32 ns or more after the previous one use the extended form, so the 32-bit
//! form never has to rely on wrap-around guessing beyond one step.
//!
//! Events racing with [`Session::stop`] (a tracepoint that began before `stop` and
//! finishes after the final drain) may be dropped; every tracepoint that returned before
//! `stop` was called is in the trace.

mod buffer;
mod clock;
mod error;
#[cfg(test)]
mod layout_tests;
mod metadata;
mod packet;
mod session;
mod writer;

pub(crate) use clock::now_ns;
pub use clock::{ClockSource, TraceClock};
pub use error::Error;
pub use session::{
    ENV_VAR, MAX_BUFFER_EVENTS, MAX_FLUSH_INTERVAL, MIN_FLUSH_INTERVAL, Session, SessionConfig,
    Stats,
};

pub(crate) use buffer::{emit, enabled};
