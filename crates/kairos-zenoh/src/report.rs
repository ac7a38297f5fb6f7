//! The one place the transport reports what it cannot hand to a caller: samples that do
//! not decode, peers with another type hash. Each report is a warning of the
//! `kairos_zenoh` logger, so it is printed in rcutils' format (and filtered by
//! `--log-level kairos_zenoh:=error`) and traced as `kairos:log` beside the callbacks
//! and messages around it. Every report is also counted where the caller can read it
//! (`malformed_samples`, `type_mismatches`); the line says which counter.

use kairos::logging::Logger;
use std::sync::LazyLock;

static LOGGER: LazyLock<Logger> = LazyLock::new(|| Logger::new("kairos_zenoh"));

/// Reports `message` as a warning of the `kairos_zenoh` logger.
#[track_caller]
pub(crate) fn warn(message: impl std::fmt::Display) {
    LOGGER.warn(message);
}
