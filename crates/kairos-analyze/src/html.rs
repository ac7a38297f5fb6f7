//! A self-contained HTML page (no script, no network): the summary, a timeline of
//! callbacks per thread, a latency histogram per chain, and the dominant chain's
//! stages. Plots are inline SVG.

use std::fmt::Write;

use crate::chains::chains;
use crate::model::Model;
use crate::stats::human_ns;
use crate::summary::summary;

/// Slices drawn in the timeline at most; beyond this the longest runs are kept.
const MAX_SLICES: usize = 20_000;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

pub fn report(m: &Model, title: &str) -> String {
    let mut h = String::new();
    let s = summary(m);
    let _ = write!(
        h,
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{t}</title><style>\
         body{{font-family:sans-serif;margin:2em;color:#222}} table{{border-collapse:collapse}}\
         td,th{{border:1px solid #ccc;padding:2px 8px;text-align:left}} th{{background:#eee}}\
         .num{{text-align:right}} svg{{background:#fafafa;border:1px solid #ddd}}</style></head><body>\
         <h1>{t}</h1><p>{} events over {}; {} discarded by the tracer; {} timestamps going backwards.</p>",
        s.events,
        human_ns(s.duration_ns as f64),
        s.discarded_events,
        s.backwards_timestamps,
        t = esc(title),
    );
    h.push_str("<h2>Topics</h2><table><tr><th>topic</th><th>messages</th><th>publishers</th><th>subscribers</th></tr>");
    for t in &s.topics {
        let _ = write!(
            h,
            "<tr><td>{}</td><td class=num>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&t.name),
            t.messages,
            esc(&t.publishers.join(", ")),
            esc(&t.subscribers.join(", "))
        );
    }
    h.push_str("</table>");
    timeline(&mut h, m);
    let ch = chains(m);
    if let Some(c) = ch.0.first() {
        let _ = write!(
            h,
            "<h2>Dominant chain: {} ({} messages)</h2><table><tr><th>stage</th><th>mean</th><th>p50</th><th>p99</th><th>max</th></tr>",
            esc(&c.name()),
            c.count
        );
        for st in &c.stages {
            let d = &st.latency;
            let bold = c.dominant.as_deref() == Some(&st.name);
            let (o, e) = if bold { ("<b>", "</b>") } else { ("", "") };
            let _ = write!(
                h,
                "<tr><td>{o}{}{e}</td><td class=num>{}</td><td class=num>{}</td><td class=num>{}</td><td class=num>{}</td></tr>",
                esc(&st.name),
                human_ns(d.mean_ns),
                human_ns(d.p50_ns as f64),
                human_ns(d.p99_ns as f64),
                human_ns(d.max_ns as f64)
            );
        }
        let _ = write!(
            h,
            "<tr><th>end to end</th><th class=num>{}</th><th class=num>{}</th><th class=num>{}</th><th class=num>{}</th></tr></table>",
            human_ns(c.total.mean_ns),
            human_ns(c.total.p50_ns as f64),
            human_ns(c.total.p99_ns as f64),
            human_ns(c.total.max_ns as f64)
        );
    }
    h.push_str("<h2>End-to-end latency per chain</h2>");
    for c in &ch.0 {
        let _ = write!(h, "<h3>{}</h3>", esc(&c.name()));
        histogram(&mut h, &c.samples);
    }
    h.push_str("</body></html>\n");
    h
}

/// A histogram of `values` (sorted) in 40 bins between the smallest and the largest.
fn histogram(h: &mut String, values: &[i64]) {
    const BINS: usize = 40;
    let (Some(&lo), Some(&hi)) = (values.first(), values.last()) else {
        return;
    };
    let width = ((hi - lo) as f64 / BINS as f64).max(1.0);
    let mut counts = [0usize; BINS];
    for &v in values {
        counts[(((v - lo) as f64 / width) as usize).min(BINS - 1)] += 1;
    }
    let peak = counts.iter().copied().max().unwrap_or(1).max(1) as f64;
    let (w, ht) = (600.0, 120.0);
    let bw = w / BINS as f64;
    let _ = write!(h, "<svg width=\"{w}\" height=\"{}\">", ht + 20.0);
    for (i, &c) in counts.iter().enumerate() {
        let bh = c as f64 / peak * ht;
        let _ = write!(
            h,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{bh:.1}\" fill=\"#4a90d9\"><title>{c} messages from {}</title></rect>",
            i as f64 * bw,
            ht - bh,
            bw - 1.0,
            human_ns(lo as f64 + i as f64 * width)
        );
    }
    let _ = write!(
        h,
        "<text x=\"0\" y=\"{:.1}\" font-size=\"11\">{}</text><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"end\">{}</text></svg>",
        ht + 14.0,
        human_ns(lo as f64),
        w,
        ht + 14.0,
        human_ns(hi as f64)
    );
}

fn timeline(h: &mut String, m: &Model) {
    let (Some(first), Some(last)) = (m.first_ns, m.last_ns) else {
        return;
    };
    let span = (last - first).max(1) as f64;
    let mut lanes: Vec<(i64, i64)> = m.callbacks.iter().map(|c| (c.pid, c.tid)).collect();
    lanes.sort_unstable();
    lanes.dedup();
    let mut runs: Vec<(usize, i64, i64)> = m
        .callbacks
        .iter()
        .enumerate()
        .flat_map(|(i, c)| c.runs.iter().map(move |&(s, d)| (i, s, d)))
        .collect();
    if runs.len() > MAX_SLICES {
        runs.sort_by_key(|&(_, _, d)| std::cmp::Reverse(d));
        runs.truncate(MAX_SLICES);
    }
    let (w, lane_h, left) = (1000.0, 18.0, 220.0);
    let height = lanes.len() as f64 * lane_h + 10.0;
    let _ = write!(
        h,
        "<h2>Timeline (callbacks per thread)</h2><svg width=\"{}\" height=\"{height}\">",
        w + left
    );
    for (i, (pid, tid)) in lanes.iter().enumerate() {
        let _ = write!(
            h,
            "<text x=\"2\" y=\"{:.1}\" font-size=\"11\">{} tid {tid}</text>",
            i as f64 * lane_h + 13.0,
            esc(&m.process_name(*pid))
        );
    }
    let colors = [
        "#4a90d9", "#d9534f", "#5cb85c", "#f0ad4e", "#9b59b6", "#1abc9c",
    ];
    for (cb, start, dur) in runs {
        let c = &m.callbacks[cb];
        let lane = lanes.binary_search(&(c.pid, c.tid)).unwrap_or(0);
        let x = left + (start - first) as f64 / span * w;
        let wd = (dur as f64 / span * w).max(0.5);
        let _ = write!(
            h,
            "<rect x=\"{x:.2}\" y=\"{:.1}\" width=\"{wd:.2}\" height=\"{:.1}\" fill=\"{}\"><title>{}</title></rect>",
            lane as f64 * lane_h + 2.0,
            lane_h - 4.0,
            colors[cb % colors.len()],
            esc(&m.callback_label(cb))
        );
    }
    h.push_str("</svg>");
}
