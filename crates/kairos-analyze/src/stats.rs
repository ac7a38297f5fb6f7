//! Summary statistics of a set of durations: count, mean, percentiles and extremes.

use serde::Serialize;

/// Durations in nanoseconds, summarized.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Distribution {
    pub count: usize,
    pub mean_ns: f64,
    pub min_ns: i64,
    pub p50_ns: i64,
    pub p99_ns: i64,
    pub max_ns: i64,
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
        assert_eq!(Distribution::of(&mut []).count, 0);
    }
}
