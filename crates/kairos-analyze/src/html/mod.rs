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
//!
//! Here: the page, its style and the `summary` section; each other section is a module
//! of its own (`timeline`, `measures` for callbacks, queues and timers, `chain`, `goals`,
//! `events` for the log and the clock), with the helpers they share below.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::callbacks::{Run, SLOWEST_KEPT};
use crate::digest::Digest;
use crate::labels::{Labels, ThreadLabel, is_internal_node};
use crate::model::{CallbackId, ClockMarkKind, LogLine, Model};
use crate::plot::{self, Frame, Ns, count_label, esc};
use crate::stats::{Distribution, human_ns};
use crate::summary::summary;

mod chain;
mod events;
mod goals;
mod measures;
mod timeline;

use chain::chain_section;
use events::{clock_section, log_section};
use goals::goals_section;
use measures::{callbacks_section, queues_section, timers_section};
use timeline::timeline_section;

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

fn more_note(h: &mut String, total: usize, what: &str, order: &str) {
    if total > MAX_CHARTS {
        let _ = write!(
            h,
            "<p class=note>{total} {what}; the first {MAX_CHARTS} {order} are drawn.</p>"
        );
    }
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
