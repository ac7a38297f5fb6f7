//! Latency summaries shared by the demos and benchmarks.

use serde::Serialize;

/// Percentiles of a set of signed samples in microseconds (negative = early).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Summary {
    pub samples: usize,
    /// Samples below zero: returned before the deadline.
    pub early: usize,
    pub min_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
    pub mean_us: f64,
}

impl Summary {
    /// Summarizes signed nanosecond samples.
    pub fn of_nanos(samples: &[i64]) -> Summary {
        let mut sorted = samples.to_vec();
        sorted.sort_unstable();
        let us = |ns: i64| ns as f64 / 1e3;
        let pick = |q: f64| {
            if sorted.is_empty() {
                return 0.0;
            }
            let idx = ((sorted.len() as f64 - 1.0) * q).round() as usize;
            us(sorted[idx])
        };
        let mean = if sorted.is_empty() {
            0.0
        } else {
            sorted.iter().map(|&v| v as f64).sum::<f64>() / sorted.len() as f64 / 1e3
        };
        Summary {
            samples: sorted.len(),
            early: sorted.iter().filter(|&&v| v < 0).count(),
            min_us: sorted.first().copied().map(us).unwrap_or(0.0),
            p50_us: pick(0.5),
            p99_us: pick(0.99),
            p999_us: pick(0.999),
            max_us: sorted.last().copied().map(us).unwrap_or(0.0),
            mean_us: mean,
        }
    }

    pub fn row(&self, name: &str) -> String {
        format!(
            "{name:<18} {:>8} {:>6} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>10.1}",
            self.samples,
            self.early,
            self.min_us,
            self.p50_us,
            self.p99_us,
            self.p999_us,
            self.max_us
        )
    }

    pub fn header() -> String {
        format!(
            "{:<18} {:>8} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10}",
            "", "samples", "early", "min_us", "p50_us", "p99_us", "p99.9_us", "max_us"
        )
    }
}
