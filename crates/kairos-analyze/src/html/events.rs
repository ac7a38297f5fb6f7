//! The `log` and `clock` sections: the trace's log lines and clock events, listed.

use super::*;
use crate::model::ClockMark;

/// Rows of the log table at most.
const MAX_LOG_ROWS: usize = 500;

pub(super) fn log_section(h: &mut String, m: &Model) {
    h.push_str("<section id=\"log\"><h2>Log lines</h2>");
    if m.log_lines.is_empty() {
        h.push_str("<p>no log lines in this trace</p></section>");
        return;
    }
    let first = m.first_ns.unwrap_or(0);
    let labels = Labels::of(m);
    h.push_str(
        "<table><tr><th>at</th><th>level</th><th>logger</th><th>message</th><th>written in</th></tr>",
    );
    for line in m.log_lines.iter().take(MAX_LOG_ROWS) {
        let within = line.callback.map_or_else(
            || labels.thread(line.pid, line.tid).full(),
            |c| m.callback_label(c),
        );
        let _ = write!(
            h,
            "<tr><td class=num>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            human_ns((line.at - first) as f64),
            line.level(),
            esc(&line.logger),
            esc(&line.message),
            esc(&within)
        );
    }
    h.push_str("</table>");
    if m.log_lines.len() > MAX_LOG_ROWS {
        let _ = write!(
            h,
            "<p class=note>{} lines; the first {MAX_LOG_ROWS} are listed (`kairos trace log` lists all).</p>",
            m.log_lines.len()
        );
    }
    h.push_str("</section>");
}

pub(super) fn clock_section(h: &mut String, m: &Model) {
    h.push_str("<section id=\"clock\"><h2>Clock jumps and stalls</h2>");
    if m.clock_marks.is_empty() {
        h.push_str("<p>no clock jump or stall in this trace</p></section>");
        return;
    }
    let first = m.first_ns.unwrap_or(0);
    h.push_str("<table><tr><th>at</th><th>process</th><th>clock</th><th>what</th></tr>");
    for ClockMark {
        at,
        pid,
        clock,
        kind,
    } in &m.clock_marks
    {
        let what = match *kind {
            ClockMarkKind::Jump { delta_ns } => format!(
                "jumped {}{}",
                if delta_ns >= 0 { "+" } else { "" },
                human_ns(delta_ns as f64)
            ),
            ClockMarkKind::Stall => "stalled".to_string(),
            ClockMarkKind::Resume { stalled_ns } => {
                format!("resumed after {}", human_ns(stalled_ns as f64))
            }
        };
        let _ = write!(
            h,
            "<tr><td class=num>{}</td><td>{}</td><td>{clock}</td><td>{what}</td></tr>",
            human_ns((at - first) as f64),
            esc(&m.process_name(*pid))
        );
    }
    h.push_str("</table></section>");
}
