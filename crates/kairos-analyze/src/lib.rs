//! Trace analysis: models (objects, messages, callbacks, queues, flows, timers, clocks)
//! built from event streams, and reports rendered from them.
//!
//! Not built yet: this crate is a seam that the trace-analysis issue fills.
