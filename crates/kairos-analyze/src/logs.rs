//! `log`: the lines nodes logged (`kairos:log`), in time order, each with the callback
//! that was running on its thread when it was written, so a warning reads next to the
//! work that caused it.

use std::fmt;

use serde::Serialize;

use crate::model::Model;
use crate::stats::human_ns;

/// One logged line, placed in the trace.
#[derive(Debug, Clone, Serialize)]
pub struct LogRow {
    /// When, since the trace's first event.
    pub at_ns: i64,
    /// When (trace time).
    pub timestamp_ns: i64,
    /// rcutils' level name (`INFO`).
    pub level: String,
    /// The logger (`robot.talker`).
    pub logger: String,
    /// The text.
    pub message: String,
    /// The process that wrote it.
    pub process: String,
    /// The thread that wrote it.
    pub tid: i64,
    /// The thread, as a person reads it: its nodes, process and thread id
    /// (`/robot/talker (kairos pid 7 · kairos-exec1-w0 tid 9)`, see [`crate::labels`]).
    pub thread: String,
    /// The callback it was written from (`/robot/talker timer 100 ms`), if any.
    pub callback: Option<String>,
}

/// The log lines of a trace at or above a severity.
#[derive(Debug, Clone, Serialize)]
pub struct LogReport {
    /// The lowest severity shown (rcutils' numbers).
    pub min_severity: i32,
    /// Lines below it, left out.
    pub below: usize,
    /// The lines, in trace order.
    pub lines: Vec<LogRow>,
}

/// The lines of `m` at or above `min_severity` (10 debug ... 50 fatal).
pub fn report(m: &Model, min_severity: i32) -> LogReport {
    let first = m.first_ns.unwrap_or(0);
    let labels = crate::labels::Labels::of(m);
    let (shown, below): (Vec<_>, Vec<_>) =
        m.log_lines.iter().partition(|l| l.severity >= min_severity);
    LogReport {
        min_severity,
        below: below.len(),
        lines: shown
            .into_iter()
            .map(|l| LogRow {
                at_ns: l.at - first,
                timestamp_ns: l.at,
                level: l.level(),
                logger: l.logger.clone(),
                message: l.message.clone(),
                process: m.process_name(l.pid),
                tid: l.tid,
                thread: labels.thread(l.pid, l.tid).full(),
                callback: l.callback.map(|c| m.callback_label(c)),
            })
            .collect(),
    }
}

impl fmt::Display for LogReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.lines.is_empty() {
            writeln!(f, "no log lines in this trace")?;
        }
        for l in &self.lines {
            write!(
                f,
                "{:>12}  [{}] [{}]: {}",
                human_ns(l.at_ns as f64),
                l.level,
                l.logger,
                l.message
            )?;
            match &l.callback {
                Some(cb) => writeln!(f, "    (in {cb}; on {})", l.thread)?,
                None => writeln!(f, "    (outside callbacks; on {})", l.thread)?,
            }
        }
        if self.below > 0 {
            writeln!(f, "({} lines below the level shown)", self.below)?;
        }
        Ok(())
    }
}
