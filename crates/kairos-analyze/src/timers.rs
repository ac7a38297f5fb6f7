//! `timers`: per timer, its period, the periods it actually ran at, how late each run
//! was, and how many periods it missed entirely.

use std::fmt;

use serde::Serialize;

use crate::model::Model;
use crate::stats::{Distribution, human_ns};

#[derive(Debug, Clone, Serialize)]
pub struct TimerStats {
    pub timer: usize,
    pub label: String,
    pub period_ns: Option<i64>,
    pub runs: usize,
    /// Time between consecutive runs.
    pub actual_period: Distribution,
    /// How late each run started: against `kairos:timer_fire`'s scheduled time when the
    /// trace has it, else against the previous run plus one period.
    pub lateness: Distribution,
    /// Periods in which the timer did not run at all.
    pub missed_periods: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Timers(pub Vec<TimerStats>);

pub fn timers(m: &Model) -> Timers {
    let out = m
        .timers
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let fired: &[i64] = if t.fired.is_empty() && !t.scheduled.is_empty() {
                &t.scheduled.iter().map(|&(_, a)| a).collect::<Vec<_>>()
            } else {
                &t.fired
            };
            let mut gaps: Vec<i64> = fired.windows(2).map(|w| w[1] - w[0]).collect();
            let (mut late, missed) = match t.period_ns.filter(|&p| p > 0) {
                Some(p) => {
                    let missed = gaps
                        .iter()
                        .map(|&g| ((g + p / 2) / p - 1).max(0) as u64)
                        .sum();
                    let late: Vec<i64> = if t.scheduled.is_empty() {
                        gaps.iter().map(|&g| g - p).collect()
                    } else {
                        t.scheduled.iter().map(|&(s, a)| a - s).collect()
                    };
                    (late, missed)
                }
                None => (Vec::new(), 0),
            };
            let label = match t.callback {
                Some(cb) => m.callback_label(cb),
                None => match t.node {
                    Some(n) => format!("{} timer 0x{:X}", m.nodes[n].name, t.handle),
                    None => format!("{} timer 0x{:X}", m.process_name(t.pid), t.handle),
                },
            };
            TimerStats {
                timer: i,
                label,
                period_ns: t.period_ns,
                runs: fired.len(),
                actual_period: Distribution::of(&mut gaps),
                lateness: Distribution::of(&mut late),
                missed_periods: missed,
            }
        })
        .collect();
    Timers(out)
}

impl fmt::Display for Timers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return writeln!(f, "no timers in this trace");
        }
        for t in &self.0 {
            let period = t
                .period_ns
                .map_or_else(|| "?".to_string(), |p| human_ns(p as f64));
            writeln!(
                f,
                "{}: period {period}, {} runs, {} missed periods",
                t.label, t.runs, t.missed_periods
            )?;
            let a = &t.actual_period;
            writeln!(
                f,
                "  actual period  mean {}  p50 {}  p99 {}  max {}",
                human_ns(a.mean_ns),
                human_ns(a.p50_ns as f64),
                human_ns(a.p99_ns as f64),
                human_ns(a.max_ns as f64)
            )?;
            let l = &t.lateness;
            writeln!(
                f,
                "  lateness       mean {}  p50 {}  p99 {}  max {}",
                human_ns(l.mean_ns),
                human_ns(l.p50_ns as f64),
                human_ns(l.p99_ns as f64),
                human_ns(l.max_ns as f64)
            )?;
        }
        Ok(())
    }
}
