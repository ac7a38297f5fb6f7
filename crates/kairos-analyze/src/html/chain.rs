//! The `chain` section: the dominant chain's stages to scale, and every chain's
//! end-to-end latency.

use super::*;

pub(super) fn chain_section(h: &mut String, m: &Model, d: &Digest) {
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
