//! What this thread is doing now: the callback it runs and the wait it makes.
//!
//! The bottom of the runtime's layers. `exec` says which callback a thread runs
//! ([`callback::enter`]) and `thread` gives each managed thread a place for its wait
//! ([`wait::install`]); `time` and `logging` only read here. So a wait inside a callback
//! ends when that callback's executor shuts down, and a log line names the callback that
//! wrote it, without the lower modules calling up into the executor.

pub(crate) mod callback;
pub(crate) mod wait;
