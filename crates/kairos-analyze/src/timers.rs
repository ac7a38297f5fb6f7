//! `timers`: per timer, its period, the periods it actually ran at, how late each run
//! was, and how many periods it missed entirely.

use std::fmt;

use serde::Serialize;

use crate::model::{Model, TimerId};
use crate::stats::{Distribution, Recorder, human_ns};

/// One timer's runs.
#[derive(Debug, Clone, Serialize)]
pub struct TimerStats {
    /// Its id in the model.
    pub timer: TimerId,
    /// Its callback's label, or its node and handle.
    pub label: String,
    /// The period it was created with.
    pub period_ns: Option<i64>,
    /// How many times it ran.
    pub runs: usize,
    /// Time between consecutive runs.
    pub actual_period: Distribution,
    /// How late each run started: against `kairos:timer_fire`'s scheduled time when the
    /// trace has it, else against the previous run plus one period.
    pub lateness: Distribution,
    /// Periods in which the timer did not run at all.
    pub missed_periods: u64,
}

/// Every timer, in the order the trace declared them.
#[derive(Debug, Clone, Serialize)]
pub struct Timers(pub Vec<TimerStats>);

/// Every timer of a whole model.
pub fn timers(m: &Model) -> Timers {
    TimerRuns::from_model(m).report(m)
}

/// Runs kept one by one per timer (for plots); past this only the statistics grow.
pub const KEPT_RUNS: usize = 4096;

/// When one series of runs started: the gaps between them, and the periods missed.
#[derive(Debug, Default, Clone)]
struct Series {
    runs: u64,
    last: Option<i64>,
    gaps: Recorder,
    /// Missed periods counted with the period known when each gap was seen (used
    /// once the gaps are no longer kept one by one).
    missed: u64,
    /// The first [`KEPT_RUNS`] start times.
    kept: Vec<i64>,
}

impl Series {
    fn run(&mut self, at: i64, period: Option<i64>) {
        self.runs += 1;
        if let Some(last) = self.last {
            let g = at - last;
            self.gaps.record(g);
            if let Some(p) = period.filter(|&p| p > 0) {
                self.missed += missed(g, p);
            }
        }
        self.last = Some(at);
        if self.kept.len() < KEPT_RUNS {
            self.kept.push(at);
        }
    }

    fn missed(&self, p: i64) -> u64 {
        match self.gaps.exact() {
            Some(gaps) => gaps.iter().map(|&g| missed(g, p)).sum(),
            None => self.missed,
        }
    }
}

/// Periods of length `p` with no run in a gap of `g` between two runs.
fn missed(g: i64, p: i64) -> u64 {
    ((g + p / 2) / p - 1).max(0) as u64
}

/// One timer's runs as they are read.
#[derive(Debug, Default, Clone)]
pub struct TimerAcc {
    /// When its callback started.
    fired: Series,
    /// `kairos:timer_fire`'s actual times.
    actual: Series,
    /// Actual minus scheduled, from `kairos:timer_fire`.
    late: Recorder,
    /// The first [`KEPT_RUNS`] (scheduled, actual) pairs.
    scheduled: Vec<(i64, i64)>,
}

impl TimerAcc {
    /// The first start times of its callback (at most [`KEPT_RUNS`]).
    pub fn fired(&self) -> &[i64] {
        &self.fired.kept
    }

    /// The first (scheduled, actual) pairs (at most [`KEPT_RUNS`]).
    pub fn scheduled(&self) -> &[(i64, i64)] {
        &self.scheduled
    }

    /// Runs beyond those kept one by one.
    pub fn runs_not_kept(&self) -> u64 {
        self.fired.runs.max(self.actual.runs)
            - self.fired.kept.len().max(self.scheduled.len()) as u64
    }
}

/// Per timer, its runs.
#[derive(Debug, Default, Clone)]
pub struct TimerRuns {
    per: Vec<TimerAcc>,
}

impl TimerRuns {
    /// Every run of every timer of a whole model.
    pub fn from_model(m: &Model) -> Self {
        let mut r = Self::default();
        for (i, t) in m.timers.iter().enumerate() {
            let id = TimerId(i);
            r.timer(id);
            for &at in &t.fired {
                r.fired(id, at, t.period_ns);
            }
            for &(s, a) in &t.scheduled {
                r.scheduled(id, s, a, t.period_ns);
            }
        }
        r
    }

    fn timer(&mut self, t: TimerId) -> &mut TimerAcc {
        if self.per.len() <= t.0 {
            self.per.resize_with(t.0 + 1, TimerAcc::default);
        }
        &mut self.per[t.0]
    }

    /// Timer `t`'s callback started at `at`.
    pub fn fired(&mut self, t: TimerId, at: i64, period: Option<i64>) {
        self.timer(t).fired.run(at, period);
    }

    /// `kairos:timer_fire`: timer `t` was due at `scheduled` and ran at `actual`.
    pub fn scheduled(&mut self, t: TimerId, scheduled: i64, actual: i64, period: Option<i64>) {
        let acc = self.timer(t);
        acc.actual.run(actual, period);
        acc.late.record(actual - scheduled);
        if acc.scheduled.len() < KEPT_RUNS {
            acc.scheduled.push((scheduled, actual));
        }
    }

    /// Timer `t`'s runs, if it ran.
    pub fn get(&self, t: TimerId) -> Option<&TimerAcc> {
        self.per.get(t.0)
    }

    /// The report, one row per timer of the model.
    pub fn report(&self, m: &Model) -> Timers {
        let empty = TimerAcc::default();
        let out = m
            .timers
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let acc = self.per.get(i).unwrap_or(&empty);
                let series = if acc.fired.runs == 0 && acc.actual.runs > 0 {
                    &acc.actual
                } else {
                    &acc.fired
                };
                let (lateness, missed) = match t.period_ns.filter(|&p| p > 0) {
                    Some(p) => {
                        let late = if acc.actual.runs == 0 {
                            series.gaps.distribution_shifted(p)
                        } else {
                            acc.late.distribution()
                        };
                        (late, series.missed(p))
                    }
                    None => (Distribution::default(), 0),
                };
                let label = match t.callback {
                    Some(cb) => m.callback_label(cb),
                    None => match t.node {
                        Some(n) => format!("{} timer 0x{:X}", m.nodes[n].name, t.handle),
                        None => format!("{} timer 0x{:X}", m.process_name(t.pid), t.handle),
                    },
                };
                TimerStats {
                    timer: TimerId(i),
                    label,
                    period_ns: t.period_ns,
                    runs: series.runs as usize,
                    actual_period: series.gaps.distribution(),
                    lateness,
                    missed_periods: missed,
                }
            })
            .collect();
        Timers(out)
    }
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
            for (name, d) in [
                ("actual period", &t.actual_period),
                ("lateness     ", &t.lateness),
            ] {
                let [mean, p50, p99, max] = d.cells();
                writeln!(f, "  {name}  mean {mean}  p50 {p50}  p99 {p99}  max {max}")?;
            }
        }
        if self
            .0
            .iter()
            .any(|t| t.actual_period.approximate || t.lateness.approximate)
        {
            writeln!(f, "{}", crate::stats::approximate_note())?;
        }
        Ok(())
    }
}
