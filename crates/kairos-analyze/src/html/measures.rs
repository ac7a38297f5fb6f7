//! The `callbacks`, `queues` and `timers` sections: one chart per callback (durations),
//! queue (depth over time, drops) and timer (how late each run started), the busiest
//! first.

use super::*;

pub(super) fn callbacks_section(h: &mut String, m: &Model, digest: &Digest) {
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

pub(super) fn queues_section(h: &mut String, m: &Model, d: &Digest) {
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

pub(super) fn timers_section(h: &mut String, m: &Model, d: &Digest) {
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
