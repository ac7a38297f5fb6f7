//! kairos: the runtime robot code links.
//!
//! - [`time`]: clocks, sleeps, timers and rates that are never early and never hang.
