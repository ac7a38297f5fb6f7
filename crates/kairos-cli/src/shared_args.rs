//! Arguments several commands take, spelled once so they read and fail the same way
//! everywhere: topics picked by name pattern (`ros2 bag`'s `--regex` and
//! `--exclude-regex`), and durations given in seconds.

use anyhow::{Context, anyhow};
use clap::Args;
use regex::Regex;
use std::time::Duration;

/// `-e/--regex` and `-x/--exclude-regex`, as `ros2 bag record` and `ros2 bag play` take
/// them.
#[derive(Debug, Args)]
pub struct TopicPatterns {
    /// Only the topics whose name matches this regular expression.
    #[arg(short = 'e', long)]
    pub regex: Option<String>,
    /// Leave out the topics whose name matches this regular expression.
    #[arg(short = 'x', long)]
    pub exclude_regex: Option<String>,
}

impl TopicPatterns {
    /// The two patterns compiled, `(regex, exclude)`; an error names the flag whose
    /// pattern is not a regular expression.
    pub fn compile(&self) -> anyhow::Result<(Option<Regex>, Option<Regex>)> {
        let compile = |flag: &str, pattern: &Option<String>| {
            pattern
                .as_deref()
                .map(Regex::new)
                .transpose()
                .with_context(|| format!("{flag} is not a regular expression"))
        };
        Ok((
            compile("--regex", &self.regex)?,
            compile("--exclude-regex", &self.exclude_regex)?,
        ))
    }
}

/// `s` seconds as a duration; an error names `flag` when `s` is negative, not a number or
/// too large.
pub fn seconds(flag: &str, s: f64) -> anyhow::Result<Duration> {
    Duration::try_from_secs_f64(s).map_err(|_| anyhow!("{flag} {s} is not a number of seconds ≥ 0"))
}
