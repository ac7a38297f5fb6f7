//! `callbacks`: per callback, how often it ran and how long it took.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt;

use serde::Serialize;

use crate::model::{CallbackId, Model};
use crate::stats::{Distribution, Recorder};

/// One callback's runs.
#[derive(Debug, Clone, Serialize)]
pub struct CallbackStats {
    /// Its id in the model.
    pub callback: CallbackId,
    /// Node, what it serves, and the symbol.
    pub label: String,
    /// The symbol or function name the trace gives.
    pub symbol: Option<String>,
    /// How long its runs took.
    pub duration: Distribution,
    /// The time all its runs took.
    pub total_ns: i64,
}

/// Every callback that ran, the busiest first.
#[derive(Debug, Clone, Serialize)]
pub struct Callbacks(pub Vec<CallbackStats>);

/// Every callback that ran in a whole model, the busiest (by total time) first.
pub fn callbacks(m: &Model) -> Callbacks {
    CallbackRuns::from_model(m).report(m)
}

/// Runs kept for the timeline at most: the longest.
pub const SLOWEST_KEPT: usize = 20_000;

/// One callback run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    /// The callback.
    pub callback: CallbackId,
    /// When it started.
    pub start: i64,
    /// How long it took.
    pub duration: i64,
}

/// Per callback, its run durations; and the longest runs of all.
#[derive(Debug, Default, Clone)]
pub struct CallbackRuns {
    per: Vec<Recorder>,
    /// The longest runs as (longest first, then by callback and run), at most
    /// [`SLOWEST_KEPT`]: the top of the heap is the one to drop next.
    slowest: BinaryHeap<(Reverse<i64>, CallbackId, u64, i64)>,
    runs: u64,
}

impl CallbackRuns {
    /// Every run of every callback of a whole model.
    pub fn from_model(m: &Model) -> Self {
        let mut r = Self::default();
        for (i, c) in m.callbacks.iter().enumerate() {
            for &(start, d) in &c.runs {
                r.run(CallbackId(i), start, d);
            }
        }
        r
    }

    /// A run of callback `cb`.
    pub fn run(&mut self, cb: CallbackId, start: i64, duration: i64) {
        if self.per.len() <= cb.0 {
            self.per.resize_with(cb.0 + 1, Recorder::default);
        }
        let seq = self.per[cb.0].count();
        self.per[cb.0].record(duration);
        self.runs += 1;
        self.slowest.push((Reverse(duration), cb, seq, start));
        if self.slowest.len() > SLOWEST_KEPT {
            self.slowest.pop();
        }
    }

    /// The durations of callback `cb`'s runs.
    pub fn durations(&self, cb: CallbackId) -> Option<&Recorder> {
        self.per.get(cb.0).filter(|r| r.count() > 0)
    }

    /// How many runs, of all callbacks.
    pub fn total_runs(&self) -> u64 {
        self.runs
    }

    /// The longest runs (at most [`SLOWEST_KEPT`]), longest first; runs of equal length
    /// by callback, then in the order they ran.
    pub fn slowest(&self) -> Vec<Run> {
        let mut v: Vec<_> = self.slowest.iter().copied().collect();
        v.sort_unstable();
        v.into_iter()
            .map(|(Reverse(duration), callback, _, start)| Run {
                callback,
                start,
                duration,
            })
            .collect()
    }

    /// The report, the busiest callback first.
    pub fn report(&self, m: &Model) -> Callbacks {
        let mut out: Vec<CallbackStats> = self
            .per
            .iter()
            .enumerate()
            .filter(|(_, r)| r.count() > 0)
            .map(|(i, r)| CallbackStats {
                callback: CallbackId(i),
                label: m.callback_label(CallbackId(i)),
                symbol: m.callbacks[i].symbol.clone(),
                duration: r.distribution(),
                total_ns: r.sum() as i64,
            })
            .collect();
        out.sort_by(|a, b| {
            b.total_ns
                .cmp(&a.total_ns)
                .then(a.callback.cmp(&b.callback))
        });
        Callbacks(out)
    }
}

impl fmt::Display for Callbacks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:>8} {:>10} {:>10} {:>10} {:>10}  callback",
            "count", "mean", "p50", "p99", "max"
        )?;
        for c in &self.0 {
            write!(f, "{:>8} ", c.duration.count)?;
            crate::stats::write_cells(f, &c.duration)?;
            writeln!(f, "  {}", c.label)?;
            if let Some(s) = &c.symbol {
                writeln!(f, "{:>54}  {}", "", shorten(s, 100))?;
            }
        }
        if self.0.iter().any(|c| c.duration.approximate) {
            writeln!(f, "{}", crate::stats::approximate_note())?;
        }
        Ok(())
    }
}

pub(crate) fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let cut: String = s.chars().take(max).collect();
    format!("{cut}...")
}
