//! kairos against raw zenoh and the other baselines, one ratio per round, summarised by
//! their median and spread.

use super::*;

/// The ratios of one payload size, one per round.
pub(super) struct Ratios {
    pub(super) size: usize,
    pub(super) p50: Spread,
    pub(super) p99: Spread,
    pub(super) throughput: Spread,
    pub(super) per_memcpy: Spread,
    pub(super) per_paced_memcpy: Spread,
    /// p50 and throughput against each baseline past raw zenoh that was measured.
    pub(super) baselines: Vec<Against>,
}

/// kairos against one baseline past raw zenoh ([`Side::baseline`]).
pub(super) struct Against {
    pub(super) json_key: &'static str,
    pub(super) name: &'static str,
    pub(super) p50: Spread,
    pub(super) throughput: Spread,
}

impl Ratios {
    /// From the cases of one size, round after round, each in the order of `sides`
    /// (kairos, raw, then the baselines asked for).
    pub(super) fn of(rounds: &[Case], sides: &[Side], floor: Floor) -> Self {
        let against = |baseline: usize, f: &dyn Fn(&Case, &Case) -> f64| {
            Spread(
                rounds
                    .chunks(sides.len())
                    .map(|round| f(&round[0], &round[baseline]))
                    .collect(),
            )
        };
        let spread = |f: &dyn Fn(&Case, &Case) -> f64| against(1, f);
        let p50 = |k: &Case, raw: &Case| k.latency.p50_us / raw.latency.p50_us;
        let throughput = |k: &Case, raw: &Case| k.msgs_per_s / raw.msgs_per_s;
        Ratios {
            baselines: sides
                .iter()
                .enumerate()
                .filter_map(|(i, side)| {
                    let (json_key, name) = side.baseline()?;
                    Some(Against {
                        json_key,
                        name,
                        p50: against(i, &p50),
                        throughput: against(i, &throughput),
                    })
                })
                .collect(),
            size: rounds[0].size,
            p50: spread(&p50),
            p99: spread(&|k, raw| k.latency.p99_us / raw.latency.p99_us),
            throughput: spread(&throughput),
            per_memcpy: spread(&|k, _| k.latency.p50_us / floor.hot_us),
            per_paced_memcpy: spread(&|k, _| k.latency.p50_us / floor.paced_us),
        }
    }
}

/// One ratio over the rounds.
pub(super) struct Spread(Vec<f64>);

impl Spread {
    pub(super) fn median(&self) -> f64 {
        let mut v = self.0.clone();
        v.sort_by(f64::total_cmp);
        let mid = v.len() / 2;
        if v.len() % 2 == 0 {
            (v[mid - 1] + v[mid]) / 2.0
        } else {
            v[mid]
        }
    }
}

impl std::fmt::Display for Spread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:.2}x", self.median())?;
        if self.0.len() > 1 {
            let (low, high) = self
                .0
                .iter()
                .fold((f64::MAX, f64::MIN), |(l, h), &x| (l.min(x), h.max(x)));
            write!(f, " ({low:.2}-{high:.2})")?;
        }
        Ok(())
    }
}
