//! Summary statistics of a set of durations: count, mean, percentiles and extremes, and
//! the recorder that gathers them one sample at a time.
//!
//! A [`Recorder`] keeps every sample while there are at most [`EXACT_SAMPLES`] of them,
//! so the percentiles of an ordinary trace are exact (nearest rank). Past that it moves
//! the samples into an HDR histogram with three significant digits, so its memory stays
//! bounded however long the trace is: the percentiles it then gives are within
//! [`SKETCH_RELATIVE_ERROR`] of the exact nearest-rank value, and the [`Distribution`]
//! says so (`approximate`). Count, mean, minimum and maximum stay exact either way.

use hdrhistogram::Histogram;
use serde::Serialize;

/// Samples a recorder keeps one by one before it switches to a histogram.
pub const EXACT_SAMPLES: usize = 8192;

/// The largest relative error of a percentile once a recorder uses its histogram: with
/// three significant digits a bucket spans at most 1/1024 of its values, and the
/// percentile is the bucket's middle, so it is off by at most half of that.
pub const SKETCH_RELATIVE_ERROR: f64 = 1.0 / 2048.0;

/// Durations in nanoseconds, summarized.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Distribution {
    /// How many samples.
    pub count: usize,
    /// Their mean, exact.
    pub mean_ns: f64,
    /// The smallest, exact.
    pub min_ns: i64,
    /// The median (nearest rank).
    pub p50_ns: i64,
    /// The 99th percentile (nearest rank).
    pub p99_ns: i64,
    /// The largest, exact.
    pub max_ns: i64,
    /// True when `p50_ns` and `p99_ns` come from a histogram (more than
    /// [`EXACT_SAMPLES`] samples): each is then within [`SKETCH_RELATIVE_ERROR`] of the
    /// exact value. Left out of JSON when false.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub approximate: bool,
}

impl Distribution {
    /// Summarizes `values` (sorted in place). Percentiles are nearest-rank.
    pub fn of(values: &mut [i64]) -> Self {
        if values.is_empty() {
            return Self::default();
        }
        values.sort_unstable();
        let n = values.len();
        let rank = |p: f64| values[((p * n as f64).ceil() as usize).clamp(1, n) - 1];
        let sum: i128 = values.iter().map(|&v| i128::from(v)).sum();
        Self {
            count: n,
            mean_ns: sum as f64 / n as f64,
            min_ns: values[0],
            p50_ns: rank(0.50),
            p99_ns: rank(0.99),
            max_ns: values[n - 1],
            approximate: false,
        }
    }

    /// The four figures of a latency row: mean, p50, p99 and max, each as a short human
    /// figure; percentiles from a histogram are marked `~`. Every table and text report
    /// prints a distribution through this.
    pub fn cells(&self) -> [String; 4] {
        let mark = if self.approximate { "~" } else { "" };
        [
            human_ns(self.mean_ns),
            format!("{mark}{}", human_ns(self.p50_ns as f64)),
            format!("{mark}{}", human_ns(self.p99_ns as f64)),
            human_ns(self.max_ns as f64),
        ]
    }
}

/// The note printed under a report whose percentiles are marked `~`.
pub fn approximate_note() -> String {
    format!(
        "~ percentile of more than {EXACT_SAMPLES} samples, from a histogram: within {:.2} % of the exact value",
        SKETCH_RELATIVE_ERROR * 100.0
    )
}

/// Gathers samples one at a time; see the module docs for what it keeps.
#[derive(Debug, Clone, Default)]
pub struct Recorder {
    count: u64,
    sum: i128,
    min: i64,
    max: i64,
    /// Every sample, until there are more than [`EXACT_SAMPLES`].
    exact: Vec<i64>,
    /// After that: every sample, bucketed.
    sketch: Option<Box<Sketch>>,
}

/// Non-negative samples in one histogram, negative ones by magnitude in another.
#[derive(Debug, Clone)]
struct Sketch {
    positive: Histogram<u32>,
    negative: Histogram<u32>,
}

impl Sketch {
    fn new() -> Self {
        let h = || Histogram::new(3).expect("three significant digits is a valid precision");
        Self {
            positive: h(),
            negative: h(),
        }
    }

    fn record(&mut self, v: i64) {
        // `record` grows the histogram to the value; it fails only when a bucket's count
        // would overflow, and then the count stays at its maximum.
        let (h, x) = if v >= 0 {
            (&mut self.positive, v as u64)
        } else {
            (&mut self.negative, v.unsigned_abs())
        };
        if h.record(x).is_err() {
            h.saturating_record(x);
        }
    }

    /// Each bucket's middle value and count, in ascending order of value.
    fn buckets(&self) -> Vec<(i64, u64)> {
        let mut out: Vec<(i64, u64)> = self
            .negative
            .iter_recorded()
            .map(|b| {
                let mid = self.negative.median_equivalent(b.value_iterated_to());
                (
                    -(mid.min(i64::MAX as u64) as i64),
                    u64::from(b.count_at_value()),
                )
            })
            .collect();
        out.reverse();
        out.extend(self.positive.iter_recorded().map(|b| {
            let mid = self.positive.median_equivalent(b.value_iterated_to());
            (
                mid.min(i64::MAX as u64) as i64,
                u64::from(b.count_at_value()),
            )
        }));
        out
    }
}

impl Recorder {
    /// Adds one sample.
    pub fn record(&mut self, v: i64) {
        if self.count == 0 {
            (self.min, self.max) = (v, v);
        } else {
            self.min = self.min.min(v);
            self.max = self.max.max(v);
        }
        self.count += 1;
        self.sum += i128::from(v);
        match &mut self.sketch {
            Some(s) => s.record(v),
            None if self.exact.len() < EXACT_SAMPLES => self.exact.push(v),
            None => {
                let mut s = Box::new(Sketch::new());
                for &x in &self.exact {
                    s.record(x);
                }
                s.record(v);
                self.exact = Vec::new();
                self.sketch = Some(s);
            }
        }
    }

    /// How many samples.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Their exact sum.
    pub fn sum(&self) -> i128 {
        self.sum
    }

    /// Every sample in the order recorded, while the recorder still keeps them all.
    pub fn exact(&self) -> Option<&[i64]> {
        self.sketch.is_none().then_some(self.exact.as_slice())
    }

    /// The samples as (value, count) in ascending order of value: each sample when they
    /// are kept, else each histogram bucket's middle value.
    pub fn values(&self) -> Vec<(i64, u64)> {
        match &self.sketch {
            Some(s) => s.buckets(),
            None => {
                let mut v = self.exact.clone();
                v.sort_unstable();
                v.into_iter().map(|x| (x, 1)).collect()
            }
        }
    }

    /// The summary of what was recorded.
    pub fn distribution(&self) -> Distribution {
        self.distribution_shifted(0)
    }

    /// The summary of every sample minus `by` (exactly as if `v - by` had been recorded).
    pub fn distribution_shifted(&self, by: i64) -> Distribution {
        if self.count == 0 {
            return Distribution::default();
        }
        let n = self.count;
        let rank = |p: f64| ((p * n as f64).ceil() as u64).clamp(1, n);
        let at_rank = |r: u64| -> i64 {
            match &self.sketch {
                None => {
                    let mut v = self.exact.clone();
                    v.sort_unstable();
                    v[(r - 1) as usize]
                }
                Some(s) => {
                    let mut seen = 0;
                    let mut value = self.max;
                    for (v, c) in s.buckets() {
                        seen += c;
                        if seen >= r {
                            value = v;
                            break;
                        }
                    }
                    value.clamp(self.min, self.max)
                }
            }
        };
        Distribution {
            count: n as usize,
            mean_ns: (self.sum - i128::from(by) * i128::from(n)) as f64 / n as f64,
            min_ns: self.min - by,
            p50_ns: at_rank(rank(0.50)) - by,
            p99_ns: at_rank(rank(0.99)) - by,
            max_ns: self.max - by,
            approximate: self.sketch.is_some(),
        }
    }
}

/// Nanoseconds as a short human figure: `850 ns`, `12.3 us`, `4.56 ms`, `1.20 s`.
pub fn human_ns(ns: f64) -> String {
    let a = ns.abs();
    if a < 1e3 {
        format!("{ns:.0} ns")
    } else if a < 1e6 {
        format!("{:.1} us", ns / 1e3)
    } else if a < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

/// A distribution's four latency cells, right-aligned in columns of ten.
pub(crate) fn write_cells(f: &mut std::fmt::Formatter<'_>, d: &Distribution) -> std::fmt::Result {
    let [mean, p50, p99, max] = d.cells();
    write!(f, "{mean:>10} {p50:>10} {p99:>10} {max:>10}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let mut v: Vec<i64> = (1..=100).rev().collect();
        let d = Distribution::of(&mut v);
        assert_eq!(
            (d.count, d.min_ns, d.p50_ns, d.p99_ns, d.max_ns),
            (100, 1, 50, 99, 100)
        );
        assert_eq!(d.mean_ns, 50.5);
        assert!(!d.approximate);
        assert_eq!(Distribution::of(&mut []).count, 0);
    }

    #[test]
    fn past_the_exact_samples_percentiles_stay_within_the_stated_error() {
        // Latency-like values over six decades, some negative, in a scrambled order.
        let n = 200_000i64;
        let mut values: Vec<i64> = (0..n)
            .map(|i| {
                let x = (i * 7919) % n;
                let v = 50 + x * x / 7;
                if x % 13 == 0 { -v } else { v }
            })
            .collect();
        let mut r = Recorder::default();
        for &v in &values {
            r.record(v);
        }
        let d = r.distribution();
        let exact = Distribution::of(&mut values);
        assert!(d.approximate && !exact.approximate);
        assert_eq!(
            (d.count, d.min_ns, d.max_ns, d.mean_ns),
            (exact.count, exact.min_ns, exact.max_ns, exact.mean_ns)
        );
        for (got, want) in [(d.p50_ns, exact.p50_ns), (d.p99_ns, exact.p99_ns)] {
            let err = (got - want).abs() as f64 / want.abs() as f64;
            assert!(err <= SKETCH_RELATIVE_ERROR, "{got} vs {want}: {err}");
        }
        assert!(r.exact().is_none());
        let buckets = r.values();
        assert_eq!(buckets.iter().map(|b| b.1).sum::<u64>(), n as u64);
        assert!(buckets.len() < 40_000, "{} buckets", buckets.len());
    }

    #[test]
    fn a_shifted_distribution_equals_the_shifted_samples() {
        let mut gaps: Vec<i64> = (0..1000)
            .map(|i| 5_000_000 + (i * 37) % 900 - 450)
            .collect();
        let mut r = Recorder::default();
        for &g in &gaps {
            r.record(g);
        }
        let mut late: Vec<i64> = gaps.iter().map(|g| g - 5_000_000).collect();
        assert_eq!(
            r.distribution_shifted(5_000_000),
            Distribution::of(&mut late)
        );
        assert_eq!(r.distribution(), Distribution::of(&mut gaps));
    }
}
