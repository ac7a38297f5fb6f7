//! The HTML report: one self-contained page (inline SVG and CSS, no script, no network)
//! that answers "where did the time go?" for a kairos, ROS 2 or ROS 1 trace.
//!
//! Sections, each an element with a stable id (tests and links rely on them):
//! - `summary`: events, duration, losses, processes with their nodes, topics; the
//!   runtime's own nodes and topics greyed and after the user's ([`crate::labels`]);
//! - `timeline`: callbacks per thread on a time axis, each row named by its nodes over its
//!   process, thread name and id (the runtime's own rows greyed and last), the slowest runs
//!   outlined and listed, clock jumps and stalls marked;
//! - `callbacks`: per callback, a duration histogram with axes and counts;
//! - `queues`: per queue, its depth over time with drops marked;
//! - `timers`: per timer, how late each run started;
//! - `chain`: the dominant chain's stages drawn to scale, and every chain's end-to-end
//!   latency histogram;
//! - `goals`: each action goal's life on a time axis (client and server spans, feedback
//!   ticks, its outcome), and the goals table of [`crate::goals`];
//! - `clock`: the clock events, listed.
//!
//! Time axes read in one unit each (`0.2 s`, `20 ms`), never raw nanoseconds.
//!
//! What is drawn is bounded (slices, points, bins, charts per section), so the page of a
//! long trace stays light; where a section shows only part, it says so.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::callbacks::{Run, SLOWEST_KEPT};
use crate::digest::Digest;
use crate::labels::{Labels, ThreadLabel, is_internal_node};
use crate::model::{CallbackId, ClockMark, ClockMarkKind, LogLine, Model};
use crate::plot::{self, Frame, Ns, count_label, esc};
use crate::stats::{Distribution, human_ns};
use crate::summary::summary;

/// Slices drawn in the timeline at most; beyond this the longest runs are kept.
const MAX_SLICES: usize = SLOWEST_KEPT;
/// Slowest runs outlined on the timeline and listed under it.
const SLOWEST: usize = 15;
/// Charts drawn per section at most (the busiest first).
const MAX_CHARTS: usize = 12;

const COLORS: [&str; 8] = [
    "#4a90d9", "#5cb85c", "#f0ad4e", "#9b59b6", "#1abc9c", "#e67e22", "#34495e", "#c0392b",
];

const STYLE: &str = "body{font-family:sans-serif;margin:2em;color:#222;max-width:1300px}\
table{border-collapse:collapse;margin:0.5em 0}td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}\
th{background:#eee}.num{text-align:right}svg{background:#fcfcfc;border:1px solid #ddd;margin:4px 0}\
nav a{margin-right:1em}section{margin-top:2em}.chart-title{margin:1em 0 0;font-weight:bold}\
.note{color:#666;font-size:90%}.legend span{display:inline-block;margin-right:1em}\
.swatch{display:inline-block;width:10px;height:10px;margin-right:4px}\
.internal{color:#888}";

/// The page for a whole model.
pub fn report(m: &Model, title: &str) -> String {
    report_digest(m, &Digest::from_model(m), title)
}

/// The page from a streaming digest (and the model of the trace's objects).
pub fn report_digest(m: &Model, d: &Digest, title: &str) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{t}</title><style>{STYLE}</style></head>\
         <body><h1>{t}</h1><nav><a href=\"#summary\">summary</a><a href=\"#timeline\">timeline</a>\
         <a href=\"#callbacks\">callbacks</a><a href=\"#queues\">queues</a><a href=\"#timers\">timers</a>\
         <a href=\"#chain\">chains</a><a href=\"#goals\">goals</a><a href=\"#log\">log</a><a href=\"#clock\">clock</a></nav>",
        t = esc(title),
    );
    summary_section(&mut h, m);
    timeline_section(&mut h, m, d);
    callbacks_section(&mut h, m, d);
    queues_section(&mut h, m, d);
    timers_section(&mut h, m, d);
    chain_section(&mut h, m, d);
    goals_section(&mut h, m);
    log_section(&mut h, m);
    clock_section(&mut h, m);
    h.push_str("</body></html>\n");
    h
}

fn summary_section(h: &mut String, m: &Model) {
    let s = summary(m);
    let _ = write!(
        h,
        "<section id=\"summary\"><h2>Summary</h2><p>{} events over {}; {} discarded by the tracer; \
         {} timestamps going backwards; {} processes, {} nodes, {} callbacks.</p>",
        s.events,
        human_ns(s.duration_ns as f64),
        s.discarded_events,
        s.backwards_timestamps,
        m.processes.len(),
        m.nodes.len(),
        m.callbacks.len(),
    );
    h.push_str("<table class=\"processes\"><tr><th>process</th><th>pid</th><th>nodes</th><th>runtime nodes</th></tr>");
    for p in &m.processes {
        let (runtime, user): (Vec<&str>, Vec<&str>) = m
            .nodes
            .iter()
            .filter(|n| n.pid == p.pid)
            .map(|n| n.name.as_str())
            .partition(|n| is_internal_node(n));
        let _ = write!(
            h,
            "<tr><td>{}{}</td><td class=num>{}</td><td>{}</td><td class=internal>{}</td></tr>",
            esc(&p.name),
            p.host
                .as_deref()
                .map_or_else(String::new, |host| format!(" on {}", esc(host))),
            p.pid,
            esc(&user.join(", ")),
            esc(&runtime.join(", "))
        );
    }
    h.push_str("</table>");
    h.push_str(
        "<table class=\"topics\"><tr><th>topic</th><th>messages</th><th>publishers</th><th>subscribers</th></tr>",
    );
    // The user's topics first; the runtime's own (hidden names, `/rosout`, ...) after,
    // greyed and tagged.
    let mut topics: Vec<_> = s.topics.iter().collect();
    topics.sort_by_key(|t| t.internal);
    for t in topics {
        let internal = t.internal;
        let _ = write!(
            h,
            "<tr{}><td>{}{}</td><td class=num>{}</td><td>{}</td><td>{}</td></tr>",
            if internal { " class=internal" } else { "" },
            esc(&t.name),
            if internal { " <i>(runtime)</i>" } else { "" },
            t.messages,
            esc(&t.publishers.join(", ")),
            esc(&t.subscribers.join(", "))
        );
    }
    h.push_str(
        "</table><p class=note>Names with a segment beginning with <code>_</code> (ROS 2's \
         hidden names, such as the transport's <code>_kairos_zenoh_clock</code> node and action \
         topics under <code>_action</code>) and the topics the runtime makes for every node \
         (<code>/rosout</code>, <code>/parameter_events</code>) are the runtime's own, and so is a \
         topic only the runtime's nodes use: greyed and listed after the user's.</p></section>",
    );
}

fn timeline_section(h: &mut String, m: &Model, d: &Digest) {
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

fn callbacks_section(h: &mut String, m: &Model, digest: &Digest) {
    h.push_str("<section id=\"callbacks\"><h2>Callbacks: how long each run took</h2>");
    let all = digest.callbacks.report(m);
    if all.0.is_empty() {
        h.push_str("<p>no callback ran in this trace</p></section>");
        return;
    }
    h.push_str(
        "<table><tr><th>callback</th><th>runs</th><th>mean</th><th>p50</th><th>p99</th><th>max</th>\
         <th>total</th></tr>",
    );
    for c in &all.0 {
        let _ = write!(
            h,
            "<tr><td>{}</td><td class=num>{}</td>{}<td class=num>{}</td></tr>",
            esc(&c.label),
            c.duration.count,
            cells(&c.duration, "td"),
            human_ns(c.total_ns as f64)
        );
    }
    h.push_str("</table>");
    approximate_note(h, all.0.iter().map(|c| &c.duration));
    for c in all.0.iter().take(MAX_CHARTS) {
        let _ = write!(
            h,
            "<p class=\"chart-title\">{} ({} runs)</p>",
            esc(&c.label),
            c.duration.count
        );
        let durations = digest
            .callbacks
            .durations(c.callback)
            .map(|r| r.values())
            .unwrap_or_default();
        plot::histogram(h, &durations, "duration");
    }
    more_note(h, all.0.len(), "callbacks", "by total time");
    h.push_str("</section>");
}

fn more_note(h: &mut String, total: usize, what: &str, order: &str) {
    if total > MAX_CHARTS {
        let _ = write!(
            h,
            "<p class=note>{total} {what}; the first {MAX_CHARTS} {order} are drawn.</p>"
        );
    }
}

fn queues_section(h: &mut String, m: &Model, d: &Digest) {
    h.push_str("<section id=\"queues\"><h2>Queues: depth over time, drops marked</h2>");
    let mut all = d.queues.report(m).0;
    if all.is_empty() {
        h.push_str("<p>no queue in this trace</p></section>");
        return;
    }
    all.sort_by_key(|q| std::cmp::Reverse((q.drop_count(), q.max_depth)));
    let first = m.first_ns.unwrap_or(0);
    let span = (m.last_ns.unwrap_or(first) - first) as f64;
    for q in all.iter().take(MAX_CHARTS) {
        let _ = write!(
            h,
            "<p class=\"chart-title\">{}: max depth {}{}, {} dropped{}</p>",
            esc(&q.name()),
            q.max_depth,
            q.capacity.map_or(String::new(), |c| format!(" of {c}")),
            q.drop_count(),
            if q.inferred {
                " (depth inferred from send and take times)"
            } else {
                ""
            }
        );
        let top = q.capacity.unwrap_or(0).max(q.max_depth).max(1) as f64;
        let frame = Frame::new((0.0, span), (0.0, top * 1.1), 900.0, 100.0);
        frame.open(h, "time since the trace began", "depth", Ns, count_label);
        let points: Vec<(f64, f64)> = q
            .depth
            .iter()
            .map(|&(t, d)| ((t - first) as f64, d as f64))
            .collect();
        plot::step_line(h, &frame, &plot::thin(&points), "#4a90d9");
        for drop in q.drops.iter().take(plot::MAX_POINTS) {
            let x = frame.px((drop.at_ns - first) as f64);
            let y = frame.py(top);
            let _ = write!(
                h,
                "<path class=\"drop\" d=\"M{:.1},{:.1} l6,6 m0,-6 l-6,6\" stroke=\"#d9534f\" stroke-width=\"1.5\">\
                 <title>dropped at {}</title></path>",
                x - 3.0,
                y - 3.0,
                human_ns((drop.at_ns - first) as f64)
            );
        }
        h.push_str("</svg>");
    }
    more_note(h, all.len(), "queues", "by drops and depth");
    h.push_str("</section>");
}

fn timers_section(h: &mut String, m: &Model, d: &Digest) {
    h.push_str("<section id=\"timers\"><h2>Timers: how late each run started</h2>");
    let stats = d.timers.report(m);
    if stats.0.is_empty() {
        h.push_str("<p>no timer in this trace</p></section>");
        return;
    }
    h.push_str(
        "<table><tr><th>timer</th><th>period</th><th>runs</th><th>missed periods</th>\
         <th>lateness p50</th><th>p99</th><th>max</th></tr>",
    );
    for t in &stats.0 {
        let _ = write!(
            h,
            "<tr><td>{}</td><td class=num>{}</td><td class=num>{}</td><td class=num>{}</td>\
             <td class=num>{}</td><td class=num>{}</td><td class=num>{}</td></tr>",
            esc(&t.label),
            t.period_ns.map_or("?".into(), |p| human_ns(p as f64)),
            t.runs,
            t.missed_periods,
            t.lateness.cells()[1],
            t.lateness.cells()[2],
            t.lateness.cells()[3]
        );
    }
    h.push_str("</table>");
    approximate_note(h, stats.0.iter().map(|t| &t.lateness));
    let first = m.first_ns.unwrap_or(0);
    for t in stats.0.iter().take(MAX_CHARTS) {
        let Some(acc) = d.timers.get(t.timer) else {
            continue;
        };
        let (fired, scheduled) = (acc.fired(), acc.scheduled());
        // Each run's lateness, at the trace time it ran when the trace says (executor
        // timers), else by run number (a timer waited on by a thread of its own).
        let by_time = fired.len() == scheduled.len() || scheduled.is_empty();
        let points: Vec<(f64, f64)> = if !scheduled.is_empty() {
            scheduled
                .iter()
                .enumerate()
                .map(|(i, &(s, a))| {
                    let x = if by_time {
                        (fired[i] - first) as f64
                    } else {
                        (i + 1) as f64
                    };
                    (x, (a - s) as f64)
                })
                .collect()
        } else if let Some(p) = t.period_ns.filter(|&p| p > 0) {
            fired
                .windows(2)
                .map(|w| ((w[1] - first) as f64, (w[1] - w[0] - p) as f64))
                .collect()
        } else {
            Vec::new()
        };
        if points.is_empty() {
            continue;
        }
        let not_kept = acc.runs_not_kept();
        let _ = write!(
            h,
            "<p class=\"chart-title\">{}{}</p>",
            esc(&t.label),
            if not_kept > 0 {
                format!(
                    " (the first {} runs; {not_kept} more not drawn)",
                    fired.len().max(scheduled.len())
                )
            } else {
                String::new()
            }
        );
        let (lo, hi) = points
            .iter()
            .fold((0.0f64, 0.0f64), |(lo, hi), &(_, y)| (lo.min(y), hi.max(y)));
        let frame = if by_time {
            let span = (m.last_ns.unwrap_or(first) - first) as f64;
            let frame = Frame::new((0.0, span), (lo, (hi * 1.1).max(1e3)), 900.0, 100.0);
            frame.open(h, "time since the trace began", "late by", Ns, Ns);
            frame
        } else {
            let frame = Frame::new(
                (1.0, points.len() as f64),
                (lo, (hi * 1.1).max(1e3)),
                900.0,
                100.0,
            );
            frame.open(h, "run", "late by", count_label, Ns);
            frame
        };
        plot::dots(h, &frame, &plot::thin(&points), "#9b59b6");
        h.push_str("</svg>");
    }
    more_note(h, stats.0.len(), "timers", "in trace order");
    h.push_str("</section>");
}

fn chain_section(h: &mut String, m: &Model, d: &Digest) {
    h.push_str("<section id=\"chain\"><h2>Chains: where each message's time went</h2>");
    let all = d.chains.report(m);
    let Some(c) = all.0.first() else {
        h.push_str("<p>no chain of callbacks and topics in this trace</p></section>");
        return;
    };
    let _ = write!(
        h,
        "<p class=\"chart-title\">Dominant chain: {} ({} messages, end to end {} mean)</p>",
        esc(&c.name()),
        c.count,
        human_ns(c.total.mean_ns)
    );
    // The stages side by side, each as wide as its mean share of the end-to-end time.
    let total: f64 = c.stages.iter().map(|s| s.latency.mean_ns.max(0.0)).sum();
    let (width, bar_h) = (1000.0, 34.0);
    let _ = write!(
        h,
        "<svg class=\"stages\" width=\"{width}\" height=\"{:.0}\" font-size=\"11\">",
        bar_h + 40.0
    );
    let mut x = 0.0;
    for (i, stage) in c.stages.iter().enumerate() {
        let share = if total > 0.0 {
            stage.latency.mean_ns.max(0.0) / total
        } else {
            0.0
        };
        let w = share * width;
        let dominant = c.dominant.as_deref() == Some(stage.name.as_str());
        let _ = write!(
            h,
            "<rect x=\"{x:.1}\" y=\"4\" width=\"{:.2}\" height=\"{bar_h}\" fill=\"{}\" stroke=\"{}\">\
             <title>{}: {} mean ({:.1} %)</title></rect>",
            w.max(0.5),
            if dominant {
                "#d9534f"
            } else {
                COLORS[i % COLORS.len()]
            },
            if dominant { "#000" } else { "#fff" },
            esc(&stage.name),
            human_ns(stage.latency.mean_ns),
            share * 100.0
        );
        if w > 90.0 {
            let _ = write!(
                h,
                "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"#fff\">{} {}</text>",
                x + 4.0,
                4.0 + bar_h / 2.0 + 4.0,
                esc(&stage.name),
                human_ns(stage.latency.mean_ns)
            );
        }
        x += w;
    }
    let _ = write!(
        h,
        "<text x=\"0\" y=\"{:.1}\">0</text><text x=\"{width}\" y=\"{:.1}\" text-anchor=\"end\">{}</text></svg>",
        bar_h + 20.0,
        bar_h + 20.0,
        human_ns(total)
    );
    h.push_str("<table><tr><th>stage</th><th>mean</th><th>p50</th><th>p99</th><th>max</th></tr>");
    for st in &c.stages {
        let bold = c.dominant.as_deref() == Some(&st.name);
        let (o, e) = if bold { ("<b>", "</b>") } else { ("", "") };
        let _ = write!(
            h,
            "<tr><td>{o}{}{e}</td>{}</tr>",
            esc(&st.name),
            cells(&st.latency, "td")
        );
    }
    let _ = write!(
        h,
        "<tr><th>end to end</th>{}</tr></table>",
        cells(&c.total, "th")
    );
    approximate_note(h, c.stages.iter().map(|s| &s.latency).chain([&c.total]));
    h.push_str("<h3>End-to-end latency per chain</h3>");
    for c in all.0.iter().take(MAX_CHARTS) {
        let _ = write!(
            h,
            "<p class=\"chart-title\">{} ({} messages)</p>",
            esc(&c.name()),
            c.count
        );
        plot::histogram(h, &c.samples.values(), "end-to-end latency");
    }
    more_note(h, all.0.len(), "chains", "by messages");
    h.push_str("</section>");
}

/// Goals drawn (and listed) at most, the first ones of the trace.
const MAX_GOALS: usize = 60;

/// An outcome's color on the goals chart.
fn outcome_color(outcome: &str) -> &'static str {
    match outcome {
        "succeeded" => "#5cb85c",
        "canceled" | "canceling" => "#f0ad4e",
        "aborted" | "rejected" | "no answer" => "#d9534f",
        _ => "#4a90d9",
    }
}

fn goals_section(h: &mut String, m: &Model) {
    h.push_str("<section id=\"goals\"><h2>Goals: each action goal's life</h2>");
    let report = crate::goals::report(m, None);
    let rows: Vec<(&str, &crate::goals::GoalRow)> = report
        .actions
        .iter()
        .flat_map(|a| a.goals.iter().map(move |g| (a.action.as_str(), g)))
        .collect();
    let (Some(first), Some(last)) = (m.first_ns, m.last_ns) else {
        h.push_str("<p>the trace has no events</p></section>");
        return;
    };
    if rows.is_empty() {
        h.push_str("<p>no action goal in this trace</p></section>");
        return;
    }
    let shown = &rows[..rows.len().min(MAX_GOALS)];
    let lane_h = 18.0;
    let label_w = 230.0;
    let frame = Frame::new(
        (0.0, (last - first) as f64),
        (0.0, shown.len() as f64),
        900.0,
        shown.len() as f64 * lane_h,
    );
    let _ = write!(
        h,
        "<svg width=\"{:.0}\" height=\"{:.0}\" font-size=\"11\"><g>",
        label_w + 64.0 + 900.0 + 16.0,
        shown.len() as f64 * lane_h + 10.0 + 38.0
    );
    let lane_y = |i: usize| frame.py(shown.len() as f64 - i as f64);
    for (i, (action, g)) in shown.iter().enumerate() {
        let _ = write!(
            h,
            "<text x=\"2\" y=\"{:.1}\">{} {}</text>",
            lane_y(i) + 13.0,
            esc(&g.id[..g.id.len().min(8)]),
            esc(action)
        );
    }
    let _ = write!(h, "</g><g transform=\"translate({label_w} 0)\">");
    frame.axes(h, "time since the trace began", "", Ns, |_| String::new());
    for (i, (_, g)) in shown.iter().enumerate() {
        let y = lane_y(i);
        let color = outcome_color(&g.outcome);
        for (side, top, height, opacity) in [
            (crate::model::ActionRole::Client, 2.0, lane_h - 4.0, 0.35),
            (crate::model::ActionRole::Server, 5.0, lane_h - 10.0, 1.0),
        ] {
            let steps: Vec<&crate::goals::StepRow> =
                g.steps.iter().filter(|s| s.side == side).collect();
            let (Some(a), Some(b)) = (steps.first(), steps.last()) else {
                continue;
            };
            // A goal still running at the trace's end runs to its edge.
            let end = if g.outcome == "running" || g.outcome == "canceling" {
                last - first
            } else {
                b.at_ns
            };
            let x = frame.px(a.at_ns as f64);
            let width = (frame.px(end as f64) - x).max(1.0);
            let _ = write!(
                h,
                "<rect class=\"goal\" x=\"{x:.2}\" y=\"{:.1}\" width=\"{width:.2}\" height=\"{height:.1}\" \
                 fill=\"{color}\" opacity=\"{opacity}\"><title>goal {} at the {}: {}, {} to {}</title></rect>",
                y + top,
                esc(&g.id),
                if side == crate::model::ActionRole::Server {
                    "server"
                } else {
                    "client"
                },
                esc(&g.outcome),
                human_ns(a.at_ns as f64),
                human_ns(end as f64)
            );
        }
        for step in g.steps.iter().filter(|s| s.event != "sent") {
            let x = frame.px(step.at_ns as f64);
            let (mark, stroke) = match step.event.as_str() {
                "feedback" => ("feedback", "#222"),
                "canceling" | "cancel_sent" | "cancel_refused" => ("cancel", "#e67e22"),
                _ => ("step", "#555"),
            };
            let _ = write!(
                h,
                "<line class=\"{mark}\" x1=\"{x:.2}\" y1=\"{:.1}\" x2=\"{x:.2}\" y2=\"{:.1}\" \
                 stroke=\"{stroke}\" stroke-width=\"1\"><title>{} {} at {}</title></line>",
                y + 3.0,
                y + lane_h - 3.0,
                esc(&step.event),
                esc(&step.at),
                human_ns(step.at_ns as f64)
            );
        }
    }
    h.push_str("</g></svg>");
    h.push_str(
        "<p class=note>Light bar: the client's view (request to result); dark bar: the server's \
         (accepted to end); ticks: feedback and other steps; color: the outcome (green succeeded, \
         orange canceled, red aborted or rejected, blue still running at the trace's end).</p>",
    );
    h.push_str(
        "<table><tr><th>goal</th><th>action</th><th>outcome</th><th>accept</th><th>ran</th>\
         <th>feedback received/published</th><th>result after end</th><th>total</th></tr>",
    );
    let cell = |v: Option<i64>| v.map_or_else(|| "-".to_owned(), |ns| human_ns(ns as f64));
    for (action, g) in shown {
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td class=num>{}</td><td class=num>{}</td>\
             <td class=num>{}/{}</td><td class=num>{}</td><td class=num>{}</td></tr>",
            esc(&g.id),
            esc(action),
            esc(&g.outcome),
            cell(g.accept_ns),
            cell(g.run_ns),
            g.feedback_received,
            g.feedback_published,
            cell(g.result_after_end_ns),
            cell(g.total_ns)
        );
    }
    h.push_str("</table>");
    if rows.len() > MAX_GOALS {
        let _ = write!(
            h,
            "<p class=note>{} goals; the first {MAX_GOALS} are shown (`kairos trace goals` lists all).</p>",
            rows.len()
        );
    }
    h.push_str("</section>");
}

/// Rows of the log table at most.
const MAX_LOG_ROWS: usize = 500;

fn log_section(h: &mut String, m: &Model) {
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

fn clock_section(h: &mut String, m: &Model) {
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

/// A distribution's mean, p50, p99 and max as table cells of kind `cell` (`td`, `th`).
fn cells(d: &Distribution, cell: &str) -> String {
    d.cells()
        .iter()
        .map(|v| format!("<{cell} class=num>{v}</{cell}>"))
        .collect()
}

/// Says under a table that its `~` percentiles come from a histogram, if any does.
fn approximate_note<'a>(h: &mut String, mut ds: impl Iterator<Item = &'a Distribution>) {
    if ds.any(|d| d.approximate) {
        let _ = write!(
            h,
            "<p class=note>{}</p>",
            esc(&crate::stats::approximate_note())
        );
    }
}
