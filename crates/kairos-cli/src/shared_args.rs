//! Arguments several commands take, spelled once so they read and fail the same way
//! everywhere: topics picked by name pattern (`ros2 bag`'s `--regex` and
//! `--exclude-regex`) and whether hidden topics count. Durations in seconds are read by
//! `kairos_tools::seconds`, as every other command reads them.

use anyhow::Context;
use clap::Args;
use regex::Regex;

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

/// `--include-hidden-topics`: ROS 2 hides a topic with a name part starting with `_`
/// (`/_internal/x`); commands that pick topics from the graph leave them out unless asked.
#[derive(Debug, Args)]
pub struct HiddenTopics {
    /// Also topics with a name part starting with `_` (with --all or --regex where the
    /// command takes them).
    #[arg(long)]
    pub include_hidden_topics: bool,
}
