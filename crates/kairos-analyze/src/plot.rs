//! Inline SVG charts for the HTML report: axes with round ticks, histograms with their
//! counts, step lines and scatter plots. No script and no external resource, so a
//! report is one file that opens anywhere.
//!
//! Every chart bounds what it draws (bins, points), whatever the size of its input, so a
//! report of a long trace stays small enough for a browser.

use std::fmt::Write;

/// Points drawn at most per series; beyond this a series is reduced to the extremes of
/// each horizontal pixel column, which keeps every peak visible.
pub const MAX_POINTS: usize = 2_000;

/// Escapes text for HTML and SVG.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// About `n` round tick values (1, 2 or 5 times a power of ten) covering `lo..=hi`.
pub fn ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    let span = (hi - lo).abs();
    if !span.is_finite() || span == 0.0 {
        return vec![lo];
    }
    let raw = span / n.max(1) as f64;
    let power = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * power)
        .find(|&s| s >= raw)
        .unwrap_or(10.0 * power);
    let first = (lo / step).ceil() * step;
    (0..)
        .map(|i| first + i as f64 * step)
        .take_while(|&v| v <= hi + step * 1e-9)
        .collect()
}

/// A plotting area: data ranges mapped onto a rectangle, with its axes drawn.
#[derive(Debug, Clone, Copy)]
pub struct Frame {
    /// The x range drawn.
    pub x: (f64, f64),
    /// The y range drawn.
    pub y: (f64, f64),
    /// The plot's width in pixels.
    pub width: f64,
    /// The plot's height in pixels.
    pub height: f64,
}

/// Margins around the plotting area, for tick labels and axis titles.
const LEFT: f64 = 64.0;
const BOTTOM: f64 = 38.0;
const TOP: f64 = 10.0;
const RIGHT: f64 = 16.0;

impl Frame {
    /// A frame for `x` and `y` ranges, `width` by `height` pixels.
    pub fn new(x: (f64, f64), y: (f64, f64), width: f64, height: f64) -> Self {
        let widen = |(lo, hi): (f64, f64)| if hi > lo { (lo, hi) } else { (lo, lo + 1.0) };
        Self {
            x: widen(x),
            y: widen(y),
            width,
            height,
        }
    }

    /// The pixel column of `x`.
    pub fn px(&self, x: f64) -> f64 {
        LEFT + (x - self.x.0) / (self.x.1 - self.x.0) * self.width
    }

    /// The pixel row of `y`.
    pub fn py(&self, y: f64) -> f64 {
        TOP + self.height - (y - self.y.0) / (self.y.1 - self.y.0) * self.height
    }

    /// Opens the `<svg>` and draws both axes with ticks, labels and titles.
    pub fn open(
        &self,
        h: &mut String,
        x_title: &str,
        y_title: &str,
        x_label: impl AxisLabels,
        y_label: impl AxisLabels,
    ) {
        let (w, ht) = (LEFT + self.width + RIGHT, TOP + self.height + BOTTOM);
        let _ = write!(
            h,
            "<svg class=\"chart\" width=\"{w:.0}\" height=\"{ht:.0}\" font-size=\"11\">"
        );
        self.axes(h, x_title, y_title, x_label, y_label);
    }

    /// Draws both axes with ticks, labels and titles (inside an open `<svg>`).
    pub fn axes(
        &self,
        h: &mut String,
        x_title: &str,
        y_title: &str,
        x_label: impl AxisLabels,
        y_label: impl AxisLabels,
    ) {
        let _ = write!(
            h,
            "<line x1=\"{LEFT}\" y1=\"{y0:.1}\" x2=\"{x1:.1}\" y2=\"{y0:.1}\" stroke=\"#333\"/>\
             <line x1=\"{LEFT}\" y1=\"{TOP}\" x2=\"{LEFT}\" y2=\"{y0:.1}\" stroke=\"#333\"/>",
            y0 = TOP + self.height,
            x1 = LEFT + self.width,
        );
        let x_ticks = ticks(self.x.0, self.x.1, 6);
        for (&t, label) in x_ticks.iter().zip(x_label.labels(&x_ticks)) {
            let x = self.px(t);
            let _ = write!(
                h,
                "<line x1=\"{x:.1}\" y1=\"{y0:.1}\" x2=\"{x:.1}\" y2=\"{y1:.1}\" stroke=\"#333\"/>\
                 <text x=\"{x:.1}\" y=\"{yt:.1}\" text-anchor=\"middle\">{}</text>",
                esc(&label),
                y0 = TOP + self.height,
                y1 = TOP + self.height + 4.0,
                yt = TOP + self.height + 15.0,
            );
        }
        let y_ticks = ticks(self.y.0, self.y.1, 4);
        for (&t, label) in y_ticks.iter().zip(y_label.labels(&y_ticks)) {
            let y = self.py(t);
            let _ = write!(
                h,
                "<line x1=\"{x0:.1}\" y1=\"{y:.1}\" x2=\"{LEFT}\" y2=\"{y:.1}\" stroke=\"#333\"/>\
                 <line x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{x1:.1}\" y2=\"{y:.1}\" stroke=\"#eee\"/>\
                 <text x=\"{xt:.1}\" y=\"{yt:.1}\" text-anchor=\"end\">{}</text>",
                esc(&label),
                x0 = LEFT - 4.0,
                x1 = LEFT + self.width,
                xt = LEFT - 6.0,
                yt = y + 4.0,
            );
        }
        let _ = write!(
            h,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\
             <text x=\"12\" y=\"{:.1}\" text-anchor=\"middle\" transform=\"rotate(-90 12 {:.1})\">{}</text>",
            LEFT + self.width / 2.0,
            TOP + self.height + 32.0,
            esc(x_title),
            TOP + self.height / 2.0,
            TOP + self.height / 2.0,
            esc(y_title),
        );
    }
}

/// Nanoseconds as a tooltip or bar label reads them (`human_ns`).
pub fn ns_label(v: f64) -> String {
    crate::stats::human_ns(v)
}

/// How an axis labels its ticks, given all of them: a closure labels each tick on its
/// own, [`Ns`] the whole axis in one unit.
pub trait AxisLabels {
    /// One label per tick.
    fn labels(&self, ticks: &[f64]) -> Vec<String>;
}

impl<F: Fn(f64) -> String> AxisLabels for F {
    fn labels(&self, ticks: &[f64]) -> Vec<String> {
        ticks.iter().map(|&t| self(t)).collect()
    }
}

/// Nanoseconds on an axis, every tick in the one unit (ns, us, ms or s) its largest tick
/// reads best in, with as many decimals as the step between ticks needs and no more:
/// `0`, `0.5 s`, `1 s`, `1.5 s`; `0`, `20 ms`, `40 ms`. Never raw nanoseconds.
#[derive(Debug, Clone, Copy)]
pub struct Ns;

impl AxisLabels for Ns {
    fn labels(&self, ticks: &[f64]) -> Vec<String> {
        let largest = ticks.iter().fold(0.0f64, |m, t| m.max(t.abs()));
        let (scale, unit) = [(1e9, "s"), (1e6, "ms"), (1e3, "us")]
            .into_iter()
            .find(|&(scale, _)| largest >= scale)
            .unwrap_or((1.0, "ns"));
        let step = ticks
            .windows(2)
            .map(|w| (w[1] - w[0]) / scale)
            .fold(f64::INFINITY, f64::min);
        let decimals = if step.is_finite() && step > 0.0 && step < 1.0 {
            ((-step.log10()).ceil() as usize).min(6)
        } else {
            0
        };
        ticks
            .iter()
            .map(|&t| {
                if t == 0.0 {
                    "0".to_string()
                } else {
                    format!("{:.*} {unit}", decimals, t / scale)
                }
            })
            .collect()
    }
}

/// A count on an axis: whole numbers only.
pub fn count_label(v: f64) -> String {
    if v.fract().abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        String::new()
    }
}

/// A histogram of durations (ns) in at most 30 bins, each bar labelled with its count;
/// `values` are (duration, how many), in ascending order.
pub fn histogram(h: &mut String, values: &[(i64, u64)], x_title: &str) {
    const BINS: usize = 30;
    let (Some(&(lo, _)), Some(&(hi, _))) = (values.first(), values.last()) else {
        h.push_str("<p>no samples</p>");
        return;
    };
    let width = ((hi - lo) as f64 / BINS as f64).max(1.0);
    let bins = if hi == lo { 1 } else { BINS };
    let mut counts = vec![0u64; bins];
    for &(v, n) in values {
        counts[(((v - lo) as f64 / width) as usize).min(bins - 1)] += n;
    }
    let peak = counts.iter().copied().max().unwrap_or(1) as f64;
    let x_hi = lo as f64 + width * bins as f64;
    let frame = Frame::new((lo as f64, x_hi), (0.0, peak * 1.15), 520.0, 120.0);
    frame.open(h, x_title, "runs", Ns, count_label);
    for (i, &c) in counts.iter().enumerate() {
        if c == 0 {
            continue;
        }
        let (x0, x1) = (
            frame.px(lo as f64 + i as f64 * width),
            frame.px(lo as f64 + (i + 1) as f64 * width),
        );
        let (y, y0) = (frame.py(c as f64), frame.py(0.0));
        let _ = write!(
            h,
            "<rect x=\"{x0:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"#4a90d9\">\
             <title>{c} runs from {} to {}</title></rect>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"9\">{c}</text>",
            (x1 - x0 - 1.0).max(0.5),
            y0 - y,
            ns_label(lo as f64 + i as f64 * width),
            ns_label(lo as f64 + (i + 1) as f64 * width),
            (x0 + x1) / 2.0,
            y - 2.0,
        );
    }
    h.push_str("</svg>");
}

/// The lowest and the highest point of one x bucket.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    index: usize,
    low: (f64, f64),
    high: (f64, f64),
}

impl Bucket {
    /// Its two points in x order (one when they are the same).
    fn push_into(self, out: &mut Vec<(f64, f64)>) {
        let (a, b) = if self.low.0 <= self.high.0 {
            (self.low, self.high)
        } else {
            (self.high, self.low)
        };
        out.push(a);
        if a != b {
            out.push(b);
        }
    }
}

/// Reduces `points` (sorted by x) to at most about [`MAX_POINTS`]: in each of
/// `MAX_POINTS / 2` equal x buckets, the lowest and the highest point.
pub fn thin(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    if points.len() <= MAX_POINTS {
        return points.to_vec();
    }
    let buckets = MAX_POINTS / 2;
    let (x0, x1) = (points[0].0, points[points.len() - 1].0);
    let span = (x1 - x0).max(1.0);
    let mut out = Vec::with_capacity(MAX_POINTS + 2);
    let mut current: Option<Bucket> = None;
    for &p in points {
        let index = (((p.0 - x0) / span) * buckets as f64) as usize;
        match &mut current {
            Some(bucket) if bucket.index == index => {
                if p.1 < bucket.low.1 {
                    bucket.low = p;
                }
                if p.1 > bucket.high.1 {
                    bucket.high = p;
                }
            }
            _ => {
                if let Some(done) = current.take() {
                    done.push_into(&mut out);
                }
                current = Some(Bucket {
                    index,
                    low: p,
                    high: p,
                });
            }
        }
    }
    if let Some(done) = current {
        done.push_into(&mut out);
    }
    out
}

/// Draws `points` as a step line (a value holds until the next point).
pub fn step_line(h: &mut String, frame: &Frame, points: &[(f64, f64)], color: &str) {
    let mut path = String::new();
    let mut last_y = None;
    for &(x, y) in points {
        match last_y {
            None => {
                let _ = write!(path, "M{:.1},{:.1}", frame.px(x), frame.py(y));
            }
            Some(prev) => {
                let _ = write!(
                    path,
                    " L{:.1},{:.1} L{:.1},{:.1}",
                    frame.px(x),
                    frame.py(prev),
                    frame.px(x),
                    frame.py(y)
                );
            }
        }
        last_y = Some(y);
    }
    let _ = write!(
        h,
        "<path d=\"{path}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"1.2\"/>"
    );
}

/// Draws `points` as dots.
pub fn dots(h: &mut String, frame: &Frame, points: &[(f64, f64)], color: &str) {
    for &(x, y) in points {
        let _ = write!(
            h,
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"1.8\" fill=\"{color}\"/>",
            frame.px(x),
            frame.py(y)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(
            ticks(0.0, 100.0, 5),
            vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]
        );
        let t = ticks(3.0, 97.0, 4);
        assert!(t.iter().all(|v| (3.0..=97.0).contains(v)), "{t:?}");
        assert_eq!(ticks(5.0, 5.0, 4), vec![5.0]);
    }

    #[test]
    fn time_axes_read_in_one_unit_with_the_decimals_the_step_needs() {
        let labels = |lo: f64, hi: f64| Ns.labels(&ticks(lo, hi, 6));
        assert_eq!(
            labels(0.0, 1.2e9),
            ["0", "0.2 s", "0.4 s", "0.6 s", "0.8 s", "1.0 s", "1.2 s"]
        );
        assert_eq!(
            labels(0.0, 100e6),
            ["0", "20 ms", "40 ms", "60 ms", "80 ms", "100 ms"]
        );
        assert_eq!(
            labels(0.0, 3e3),
            [
                "0", "0.5 us", "1.0 us", "1.5 us", "2.0 us", "2.5 us", "3.0 us"
            ]
        );
        assert_eq!(
            labels(0.0, 500.0),
            ["0", "100 ns", "200 ns", "300 ns", "400 ns", "500 ns"]
        );
        assert_eq!(
            labels(-2e6, 4e6),
            ["-2 ms", "-1 ms", "0", "1 ms", "2 ms", "3 ms", "4 ms"]
        );
    }

    #[test]
    fn thinning_keeps_the_extremes() {
        let points: Vec<(f64, f64)> = (0..100_000)
            .map(|i| (i as f64, if i == 77_777 { 1e9 } else { (i % 7) as f64 }))
            .collect();
        let thinned = thin(&points);
        assert!(thinned.len() <= MAX_POINTS + 2, "{}", thinned.len());
        assert!(thinned.contains(&(77_777.0, 1e9)), "the peak survives");
        assert!(thinned.windows(2).all(|w| w[0].0 <= w[1].0), "still sorted");
    }
}
