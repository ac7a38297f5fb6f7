//! `callbacks`: per callback, how often it ran and how long it took.

use std::fmt;

use serde::Serialize;

use crate::model::Model;
use crate::stats::{Distribution, human_ns};

#[derive(Debug, Clone, Serialize)]
pub struct CallbackStats {
    pub callback: usize,
    pub label: String,
    pub symbol: Option<String>,
    pub duration: Distribution,
    pub total_ns: i64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Callbacks(pub Vec<CallbackStats>);

/// Every callback that ran, the busiest (by total time) first.
pub fn callbacks(m: &Model) -> Callbacks {
    let mut out: Vec<CallbackStats> = m
        .callbacks
        .iter()
        .enumerate()
        .filter(|(_, c)| !c.runs.is_empty())
        .map(|(i, c)| {
            let mut d: Vec<i64> = c.runs.iter().map(|&(_, d)| d).collect();
            let total_ns = d.iter().sum();
            CallbackStats {
                callback: i,
                label: m.callback_label(i),
                symbol: c.symbol.clone(),
                duration: Distribution::of(&mut d),
                total_ns,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        b.total_ns
            .cmp(&a.total_ns)
            .then(a.callback.cmp(&b.callback))
    });
    Callbacks(out)
}

impl fmt::Display for Callbacks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:>8} {:>10} {:>10} {:>10} {:>10}  callback",
            "count", "mean", "p50", "p99", "max"
        )?;
        for c in &self.0 {
            let d = &c.duration;
            writeln!(
                f,
                "{:>8} {:>10} {:>10} {:>10} {:>10}  {}",
                d.count,
                human_ns(d.mean_ns),
                human_ns(d.p50_ns as f64),
                human_ns(d.p99_ns as f64),
                human_ns(d.max_ns as f64),
                c.label
            )?;
            if let Some(s) = &c.symbol {
                writeln!(f, "{:>54}  {}", "", shorten(s, 100))?;
            }
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
