//! The `timeline` section: callbacks per thread on one time axis, the slowest runs
//! outlined and listed, log lines and clock jumps and stalls marked.

use super::*;

pub(super) fn timeline_section(h: &mut String, m: &Model, d: &Digest) {
    h.push_str(
        "<section id=\"timeline\"><h2>Timeline: callbacks and log lines per thread</h2>\
         <p class=note>One row per thread, named by the nodes whose callbacks ran on it, with its \
         process, thread name and thread id under them; the runtime's own threads (all their \
         nodes internal) are greyed and last.</p>",
    );
    let (Some(first), Some(last)) = (m.first_ns, m.last_ns) else {
        h.push_str("<p>the trace has no events</p></section>");
        return;
    };
    let mut lanes: Vec<(i64, i64)> = m
        .callbacks
        .iter()
        .enumerate()
        .filter(|(i, _)| d.callbacks.durations(CallbackId(*i)).is_some())
        .map(|(_, c)| (c.pid, c.tid))
        .chain(m.log_lines.iter().map(|l| (l.pid, l.tid)))
        .collect();
    lanes.sort_unstable();
    lanes.dedup();
    // The user's threads first, by process and then by what runs on them; the runtime's
    // own (its nodes all internal) after them.
    let labels = Labels::of(m);
    let lane_labels: BTreeMap<(i64, i64), ThreadLabel> = lanes
        .iter()
        .map(|&(pid, tid)| ((pid, tid), labels.thread(pid, tid)))
        .collect();
    lanes.sort_by_cached_key(|key| {
        let l = &lane_labels[key];
        (l.internal, l.pid, l.nodes.is_empty(), l.title(), l.tid)
    });
    if lanes.is_empty() && m.clock_marks.is_empty() {
        h.push_str("<p>no callback ran in this trace</p></section>");
        return;
    }
    let mut runs: Vec<Run> = d.callbacks.slowest();
    let total_runs = d.callbacks.total_runs() as usize;
    runs.truncate(MAX_SLICES);
    let slowest = &runs[..runs.len().min(SLOWEST)];

    let lane_h = 30.0;
    let label_w = 290.0;
    // The plot is narrower than the other charts' 900 px by what the wider labels take.
    let plot_w = 860.0;
    // With no callback, one empty lane still carries the clock's jumps and stalls.
    let lane_count = lanes.len().max(1);
    let frame = Frame::new(
        (0.0, (last - first) as f64),
        (0.0, lane_count as f64),
        plot_w,
        lane_count as f64 * lane_h,
    );
    // The frame's own y axis would number the lanes; the lanes are labelled in a column
    // of their own instead, so the axis is drawn without y ticks.
    let _ = write!(
        h,
        "<svg width=\"{:.0}\" height=\"{:.0}\" font-size=\"11\"><g>",
        label_w + 64.0 + plot_w + 16.0,
        lane_count as f64 * lane_h + 10.0 + 38.0
    );
    for (i, key) in lanes.iter().enumerate() {
        let label = &lane_labels[key];
        let y = frame.py(lane_count as f64 - i as f64);
        let _ = write!(
            h,
            "<g class=\"{}\"><title>{}</title><text x=\"2\" y=\"{:.1}\"{}>{}</text>\
             <text x=\"2\" y=\"{:.1}\" font-size=\"9\" fill=\"#777\">{}</text></g>",
            if label.internal {
                "lane internal"
            } else {
                "lane"
            },
            esc(&label.full()),
            y + 13.0,
            if label.internal {
                " fill=\"#888\" font-style=\"italic\""
            } else {
                ""
            },
            esc(&clip(&label.title_within(46), 46)),
            y + 25.0,
            esc(&clip(&label.detail(), 60)),
        );
    }
    let _ = write!(h, "</g><g transform=\"translate({label_w} 0)\">");
    frame.axes(h, "time since the trace began", "", Ns, |_| String::new());
    clock_overlay(h, m, &frame, first);
    let lane_index: BTreeMap<(i64, i64), usize> =
        lanes.iter().enumerate().map(|(i, &key)| (key, i)).collect();
    let lane_y = |pid: i64, tid: i64| {
        let lane = lane_index.get(&(pid, tid)).copied().unwrap_or(0);
        frame.py(lane_count as f64 - lane as f64) + 2.0
    };
    for run in runs.iter().rev() {
        let c = &m.callbacks[run.callback];
        let x = frame.px((run.start - first) as f64);
        let width = (frame.px((run.start - first + run.duration) as f64) - x).max(0.6);
        let _ = write!(
            h,
            "<rect x=\"{x:.2}\" y=\"{:.1}\" width=\"{width:.2}\" height=\"{:.1}\" fill=\"{}\">\
             <title>{} took {}</title></rect>",
            lane_y(c.pid, c.tid),
            lane_h - 4.0,
            COLORS[run.callback.0 % COLORS.len()],
            esc(&m.callback_label(run.callback)),
            human_ns(run.duration as f64)
        );
    }
    for (rank, run) in slowest.iter().enumerate() {
        let c = &m.callbacks[run.callback];
        let x = frame.px((run.start - first) as f64);
        let width = (frame.px((run.start - first + run.duration) as f64) - x).max(2.0);
        let y = lane_y(c.pid, c.tid);
        let _ = write!(
            h,
            "<rect class=\"slow\" x=\"{:.2}\" y=\"{:.1}\" width=\"{:.2}\" height=\"{:.1}\" fill=\"none\" \
             stroke=\"#d9534f\" stroke-width=\"1.5\"/><text x=\"{:.1}\" y=\"{:.1}\" fill=\"#d9534f\" \
             font-size=\"9\">{}</text>",
            x - 1.0,
            y - 1.0,
            width + 2.0,
            lane_h - 2.0,
            x,
            y - 2.0,
            rank + 1
        );
    }
    log_marks(h, m, &frame, first, lane_y);
    h.push_str("</g></svg>");
    if lanes.is_empty() {
        h.push_str("<p>no callback ran in this trace; its clock events are marked.</p></section>");
        return;
    }
    legend(h, m, d);
    if total_runs > MAX_SLICES {
        let _ = write!(
            h,
            "<p class=note>{total_runs} runs; the {MAX_SLICES} longest are drawn.</p>"
        );
    }
    h.push_str(
        "<p class=\"chart-title\">Slowest callback runs (outlined and numbered above)</p>\
         <table><tr><th>#</th><th>callback</th><th>thread</th><th>started at</th><th>took</th></tr>",
    );
    for (rank, run) in slowest.iter().enumerate() {
        let c = &m.callbacks[run.callback];
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td class=num>{}</td><td class=num>{}</td></tr>",
            rank + 1,
            esc(&m.callback_label(run.callback)),
            esc(&labels.thread(c.pid, c.tid).detail()),
            human_ns((run.start - first) as f64),
            human_ns(run.duration as f64)
        );
    }
    h.push_str("</table></section>");
}

/// `s` cut to at most `chars` characters, with `…` where it was cut.
fn clip(s: &str, chars: usize) -> String {
    if s.chars().count() <= chars {
        return s.to_string();
    }
    let mut out: String = s.chars().take(chars.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// Which color stands for which callback, for the callbacks that ran.
fn legend(h: &mut String, m: &Model, d: &Digest) {
    h.push_str("<p class=legend>");
    for i in 0..m.callbacks.len().min(40) {
        let i = CallbackId(i);
        if d.callbacks.durations(i).is_none() {
            continue;
        }
        let _ = write!(
            h,
            "<span><i class=swatch style=\"background:{}\"></i>{}</span>",
            COLORS[i.0 % COLORS.len()],
            esc(&m.callback_label(i))
        );
    }
    h.push_str("</p>");
}

/// Log lines drawn on the timeline at most (warnings and worse first).
const MAX_LOG_MARKS: usize = 2_000;

/// Each log line as a small mark on the lane of the thread that wrote it, colored by
/// level, its text (and the callback that wrote it) as its tooltip.
fn log_marks(
    h: &mut String,
    m: &Model,
    frame: &Frame,
    first: i64,
    lane_y: impl Fn(i64, i64) -> f64,
) {
    let mut lines: Vec<&LogLine> = m.log_lines.iter().collect();
    if lines.len() > MAX_LOG_MARKS {
        lines.sort_by_key(|l| std::cmp::Reverse(l.severity));
        lines.truncate(MAX_LOG_MARKS);
    }
    for line in lines {
        let x = frame.px((line.at - first) as f64);
        let y = lane_y(line.pid, line.tid);
        let color = match line.severity {
            s if s >= 40 => "#d9534f",
            30..=39 => "#f0ad4e",
            _ => "#777",
        };
        let within = line
            .callback
            .map(|c| format!(" (in {})", m.callback_label(c)))
            .unwrap_or_default();
        let _ = write!(
            h,
            "<path class=\"log\" d=\"M{x:.1} {:.1}l4 -6h-8z\" fill=\"{color}\"><title>[{}] [{}]: {}{}</title></path>",
            y + 6.0,
            line.level(),
            esc(&line.logger),
            esc(&line.message),
            esc(&within)
        );
    }
}

/// Clock jumps as red lines and stalls as orange bands across the timeline.
fn clock_overlay(h: &mut String, m: &Model, frame: &Frame, first: i64) {
    let (top, bottom) = (frame.py(frame.y.1), frame.py(frame.y.0));
    let mut stalled_since: Option<(i64, &'static str)> = None;
    let band = |h: &mut String, from: i64, to: i64, clock: &str| {
        let (x0, x1) = (
            frame.px((from - first) as f64),
            frame.px((to - first) as f64),
        );
        let _ = write!(
            h,
            "<rect class=\"stall\" x=\"{x0:.1}\" y=\"{top:.1}\" width=\"{:.1}\" height=\"{:.1}\" \
             fill=\"#f0ad4e\" opacity=\"0.25\"><title>{clock} clock stalled for {}</title></rect>",
            (x1 - x0).max(1.0),
            bottom - top,
            human_ns((to - from) as f64)
        );
    };
    for mark in &m.clock_marks {
        match mark.kind {
            ClockMarkKind::Jump { delta_ns } => {
                let x = frame.px((mark.at - first) as f64);
                let _ = write!(
                    h,
                    "<line class=\"jump\" x1=\"{x:.1}\" y1=\"{top:.1}\" x2=\"{x:.1}\" y2=\"{bottom:.1}\" \
                     stroke=\"#d9534f\" stroke-dasharray=\"4 2\"><title>{} clock jumped {}{}</title></line>",
                    mark.clock,
                    if delta_ns >= 0 { "+" } else { "" },
                    human_ns(delta_ns as f64)
                );
            }
            ClockMarkKind::Stall => stalled_since = Some((mark.at, mark.clock)),
            ClockMarkKind::Resume { .. } => {
                if let Some((from, clock)) = stalled_since.take() {
                    band(h, from, mark.at, clock);
                }
            }
        }
    }
    if let (Some((from, clock)), Some(last)) = (stalled_since, m.last_ns) {
        band(h, from, last, clock);
    }
}
