//! The `goals` section: each action goal's life on a time axis, and the goals table.

use super::*;

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

pub(super) fn goals_section(h: &mut String, m: &Model) {
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
