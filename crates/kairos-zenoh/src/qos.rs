//! QoS on the wire: how a kairos [`Qos`] becomes zenoh publisher and subscriber options,
//! exactly as rmw_zenoh maps an rmw QoS profile (facts from its `rmw_publisher_data.cpp`
//! and `rmw_subscription_data.cpp`):
//!
//! - reliability: reliable or best effort, as zenoh's own reliability marker;
//! - congestion control: `Block` only for a reliable keep-all publisher (nothing may be
//!   lost, so the publisher waits), `Drop` for every other one (a slow subscriber never
//!   stalls a publisher; what is lost shows as a sequence gap on the subscription);
//! - transient-local publisher: a zenoh-ext advanced publisher with a cache of the history
//!   depth, detectable through liveliness, and, when reliable, sample-miss detection with a
//!   sporadic heartbeat every 500 ms so subscribers can recover the last samples;
//! - transient-local subscription: a zenoh-ext advanced subscriber that queries the
//!   history of the depth from every cache it finds, now and whenever a publisher joins
//!   later (`detect_late_publishers`), never timing its queries out, detectable, and, when
//!   reliable, recovering missed samples on heartbeats;
//! - volatile: plain publishers and subscribers (rmw_zenoh's advanced entities with every
//!   option off are the same on the wire).

use kairos::graph::{Durability, History, Qos, Reliability};
use std::time::Duration;
use zenoh::qos::CongestionControl;

/// Period of the sample-miss heartbeat of a reliable transient-local publisher.
pub const HEARTBEAT_PERIOD: Duration = Duration::from_millis(500);

/// How long a transient-local subscription's history queries may take: rmw_zenoh passes
/// the largest value, so a slow cache is still heard (the query runs in the background and
/// never holds a caller).
pub const HISTORY_QUERY_TIMEOUT: Duration = Duration::from_millis(u64::MAX);

/// What a publisher of `qos` is declared with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublisherPlan {
    /// Zenoh's reliability for the QoS's.
    pub reliability: zenoh::qos::Reliability,
    /// Block for keep-all reliable publishers, drop for every other.
    pub congestion_control: CongestionControl,
    /// Samples kept for late joiners (transient-local only).
    pub cache: Option<usize>,
    /// Heartbeat period of sample-miss detection (reliable transient-local only).
    pub heartbeat: Option<Duration>,
    /// Announced through zenoh-ext's liveliness so late subscribers find its cache.
    pub detectable: bool,
}

/// What a subscription of `qos` is declared with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubscriberPlan {
    /// Samples asked of each publisher's cache (transient-local only).
    pub history: Option<usize>,
    /// Recovers missed samples on the publishers' heartbeats (reliable transient-local).
    pub recovery: bool,
    /// Announced through zenoh-ext's liveliness.
    pub detectable: bool,
}

fn reliable(qos: &Qos) -> bool {
    qos.reliability == Reliability::Reliable
}

fn transient_local(qos: &Qos) -> bool {
    qos.durability == Durability::TransientLocal
}

/// How a publisher of `qos` is declared, as rmw_zenoh declares it.
pub fn publisher_plan(qos: &Qos) -> PublisherPlan {
    let keep_all = matches!(qos.history, History::KeepAll { .. });
    let tl = transient_local(qos);
    PublisherPlan {
        reliability: if reliable(qos) {
            zenoh::qos::Reliability::Reliable
        } else {
            zenoh::qos::Reliability::BestEffort
        },
        congestion_control: if reliable(qos) && keep_all {
            CongestionControl::Block
        } else {
            CongestionControl::Drop
        },
        cache: tl.then(|| qos.depth()),
        heartbeat: (tl && reliable(qos)).then_some(HEARTBEAT_PERIOD),
        detectable: tl,
    }
}

/// How a subscription of `qos` is declared, as rmw_zenoh declares it.
pub fn subscriber_plan(qos: &Qos) -> SubscriberPlan {
    let tl = transient_local(qos);
    SubscriberPlan {
        history: tl.then(|| qos.depth()),
        recovery: tl && reliable(qos),
        detectable: tl,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zenoh::qos::Reliability as Z;

    #[test]
    fn congestion_blocks_only_for_reliable_keep_all() {
        let plan = |qos: Qos| publisher_plan(&qos).congestion_control;
        assert_eq!(plan(Qos::keep_all(100)), CongestionControl::Block);
        assert_eq!(plan(Qos::keep_last(10)), CongestionControl::Drop);
        assert_eq!(
            plan(Qos::keep_all(100).best_effort()),
            CongestionControl::Drop
        );
        assert_eq!(
            plan(Qos::keep_last(1).best_effort()),
            CongestionControl::Drop
        );
    }

    #[test]
    fn reliability_is_carried_as_zenohs_marker() {
        assert_eq!(publisher_plan(&Qos::keep_last(5)).reliability, Z::Reliable);
        assert_eq!(
            publisher_plan(&Qos::keep_last(5).best_effort()).reliability,
            Z::BestEffort
        );
    }

    #[test]
    fn transient_local_caches_the_depth_and_heartbeats_when_reliable() {
        let reliable = publisher_plan(&Qos::keep_last(7).transient_local());
        assert_eq!(reliable.cache, Some(7));
        assert_eq!(reliable.heartbeat, Some(Duration::from_millis(500)));
        assert!(reliable.detectable);
        let best_effort = publisher_plan(&Qos::keep_last(3).transient_local().best_effort());
        assert_eq!(best_effort.cache, Some(3));
        assert_eq!(best_effort.heartbeat, None);
        let volatile = publisher_plan(&Qos::keep_last(7));
        assert_eq!(
            (volatile.cache, volatile.heartbeat, volatile.detectable),
            (None, None, false)
        );
    }

    #[test]
    fn a_transient_local_subscription_asks_for_the_depth() {
        let sub = subscriber_plan(&Qos::keep_last(4).transient_local());
        assert_eq!(
            sub,
            SubscriberPlan {
                history: Some(4),
                recovery: true,
                detectable: true
            }
        );
        let sub = subscriber_plan(&Qos::keep_all(20).transient_local().best_effort());
        assert_eq!((sub.history, sub.recovery), (Some(20), false));
        let sub = subscriber_plan(&Qos::keep_last(4));
        assert_eq!(
            (sub.history, sub.recovery, sub.detectable),
            (None, false, false)
        );
    }
}
