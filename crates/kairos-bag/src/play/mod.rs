//! Playing a bag back to a running system: each recorded message sent again, at its
//! recorded pace, to every kairos process and ROS 2 (rmw_zenoh) process the Zenoh
//! transport reaches, as `ros2 bag play` sends it. Needs the `zenoh` feature.
//!
//! What a [`Player`] promises:
//! - **Publishers as recorded.** One publisher per played topic, announced under the
//!   player's node with the recorded type and RIHS01 hash (for a bag that stored no hash,
//!   kairos's hash of the type when kairos ships it), so `kairos topic info` and ROS 2
//!   peers see a publisher of the recorded type. Its QoS is chosen from the recorded
//!   offered profiles as rosbag2 chooses it: reliable only if every recorded publisher
//!   was, transient local only if every recorded publisher was (then late joiners get
//!   the kept history), keep last 10 or the deepest recorded history; a profile in
//!   [`PlayOptions::qos_overrides`] replaces that choice.
//! - **Bytes as recorded.** Each message is sent undecoded, so types kairos does not
//!   ship are played like any other; each sample carries an attachment of the player's
//!   own publisher (its gid, sequence numbers from 1, the send time as source timestamp).
//! - **Never early, never dropped.** A message is sent once the monotonic clock reaches
//!   its planned time: the start of playback plus its log-time offset from the bag's start
//!   (after [`PlayOptions::start_offset`]) divided by [`PlayOptions::rate`], plus the time
//!   spent paused. The wait is kairos's sleep ([`Clock::sleep_until`]), which never
//!   returns before its deadline and is cancelled by [`PlayOptions::cancel`] (the CLI's
//!   Ctrl-C) or [`Player::stop`]. A message whose time has passed is sent at once, never
//!   skipped; its lateness (send time - planned time) is measured for every message and
//!   reported as p50/p99/max in [`PlayReport::lateness`] (percentiles of the first
//!   [`KEPT_LATENESS`] sends, max of all), with the count of messages later than
//!   [`PlayOptions::late_threshold`].
//! - **Order as recorded.** Messages go out in the bag's log-time order, one at a time
//!   from one thread; a second thread reads up to 1000 messages ahead, so reading does
//!   not delay a send that is due.
//! - **Counted.** [`PlayReport::sent`] has, for each played topic (under its remapped
//!   name), the messages sent.
//! - **Ends whole.** A read error ends playing and is kept in [`PlayReport::error`].
//!   Zenoh may still queue the last messages when playing ends: close the transport
//!   ([`ZenohTransport::close`]) before the process exits, as `kairos bag play` does.
//! - **Controllable.** Playback can start paused and be paused, resumed or toggled from
//!   any thread; while paused the bag's time stands still (and so does `/clock`).
//!   With [`PlayOptions::clock_hz`], `/clock` (rosgraph_msgs/msg/Clock) carries the bag's
//!   time at that rate while playing, as `ros2 bag play --clock` does.
//! - **Lock-step replay** ([`PlayOptions::lockstep`]): simulated time follows the bag,
//!   one message at a time, as fast as the system computes. For each message in log-time
//!   order, `/clock` moves to its log time (when it differs from the last), then the
//!   message is sent; after each of the two the player waits until the work it caused has
//!   settled in every kairos process, through the settle protocol of
//!   [`kairos_zenoh::settle`] (every process quiet, every sent message heard, no call
//!   outstanding). Node timers on simulation time fire at the `/clock` step, before the
//!   message is heard, and a callback's outputs are heard before time moves again; so
//!   replaying twice gives each topic's messages the same content in the same order at
//!   the same simulated times. A wait that reaches its bound is counted and described in
//!   [`LockstepReport`] (naming the process, nodes and topics still under way), and the
//!   replay goes on: it never hangs. What lock-step cannot order: messages of one step
//!   that reach one subscription from two publishers working concurrently (the system's
//!   own race), and work the protocol does not see (threads, steady timers, ROS 2 peers).

use crate::qos::{
    Durability as BagDurability, History as BagHistory, Reliability as BagReliability,
};
use crate::{Bag, BagMessage, Error, QosProfile, ReadFilter, TopicInformation};
use kairos::graph::{Node, Qos};
use kairos::time::{CancelToken, Clock, Duration as KDuration, Time};
use kairos_zenoh::ZenohTransport;
use kairos_zenoh::raw::{RawPublisher, RawTopic};
use regex::Regex;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::sync_channel;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// The hash announced for a type kairos does not know in a bag that stored none (what
/// rmw_zenoh announces when it has no hash).
pub const UNKNOWN_TYPE_HASH: &str = "TypeHashNotSupported";

/// How many sends' lateness a [`PlayReport`] keeps one by one (32 MiB of them).
pub const KEPT_LATENESS: usize = 1 << 22;

/// Messages read ahead of the one waiting to be sent (rosbag2's default read-ahead queue).
const READ_AHEAD: usize = 1000;

/// The `/clock` rate of `ros2 bag play --clock` without a value.
pub const DEFAULT_CLOCK_HZ: f64 = 40.0;

mod options;
mod playback;
mod qos;

pub use options::{
    KEPT_UNSETTLED, Lateness, LockstepReport, PlayOptions, PlayReport, PlayedTopic, Remap,
    TopicSelection,
};
use playback::{Playback, clock_publisher};
pub use qos::qos_overrides_from_yaml;
use qos::{adapt_to_offers, qos_of, type_hash};

/// The playback's timeline: which steady-clock time each bag time maps to.
#[derive(Debug)]
struct Timeline {
    rate: f64,
    /// The bag time (ns since the epoch) that playback starts from.
    origin_ns: u64,
    /// The steady time `origin_ns` was (or is to be) played at; `None` before playing.
    base: Option<Time>,
    paused: bool,
    paused_since: Option<Time>,
    /// Time spent paused since `base`.
    paused_total: KDuration,
    /// Cancelled (and replaced) at every change, so that a waiting sleep looks again.
    wake: CancelToken,
}

impl Timeline {
    fn scaled(&self, offset_ns: u64) -> KDuration {
        KDuration::from_nanos((offset_ns as f64 / self.rate).round() as i64)
    }

    /// The steady time the message `offset_ns` after the origin is due at.
    fn planned(&self, offset_ns: u64) -> Option<Time> {
        self.base
            .map(|base| base + self.paused_total + self.scaled(offset_ns))
    }

    /// The bag's time at steady time `now`.
    fn bag_time_ns(&self, now: Time) -> u64 {
        let Some(base) = self.base else {
            return self.origin_ns;
        };
        let mut played = now.since(base).unwrap_or(KDuration::ZERO) - self.paused_total;
        if let Some(since) = self.paused_since {
            played -= now.since(since).unwrap_or(KDuration::ZERO);
        }
        let played = (played.as_nanos().max(0) as f64 * self.rate) as u64;
        self.origin_ns.saturating_add(played)
    }

    fn changed(&mut self, stop: &CancelToken) {
        let old = std::mem::replace(&mut self.wake, stop.child());
        old.cancel();
    }
}

#[derive(Debug)]
struct Shared {
    timeline: Mutex<Timeline>,
    stop: CancelToken,
    steady: Clock,
    /// Messages sent so far, every topic and loop.
    sent: AtomicU64,
}

impl Shared {
    fn set_paused(&self, paused: bool) -> bool {
        let mut t = self.timeline.lock().expect("not poisoned");
        if t.paused != paused {
            let now = self.steady.now();
            t.paused = paused;
            if paused {
                t.paused_since = Some(now);
            } else if let Some(since) = t.paused_since.take() {
                t.paused_total += now.since(since).unwrap_or(KDuration::ZERO);
            }
            t.changed(&self.stop);
        }
        t.paused
    }
}

/// Plays a bag in a thread of its own (see the module docs).
#[derive(Debug)]
pub struct Player {
    shared: Arc<Shared>,
    topics: Vec<PlayedTopic>,
    thread: Option<JoinHandle<PlayReport>>,
}

/// A played topic's publisher.
struct Output {
    index: usize,
    publisher: RawPublisher,
}

impl Player {
    /// Opens the bag at `path` (a folder, a `.mcap` or `.db3` file), declares a publisher
    /// per played topic under `node`, and starts playing. Errors: a path that is not a
    /// bag, bad options, no topic to play, a publisher the transport refuses.
    pub fn start(
        transport: Arc<ZenohTransport>,
        node: Node,
        path: impl AsRef<Path>,
        options: PlayOptions,
    ) -> crate::Result<Self> {
        if !(options.rate.is_finite() && options.rate > 0.0) {
            return Err(Error::Play(format!(
                "the rate must be a number > 0, not {}",
                options.rate
            )));
        }
        if let Some(hz) = options.clock_hz {
            if !(hz.is_finite() && hz > 0.0) {
                return Err(Error::Play(format!(
                    "the /clock rate must be a number of Hz > 0, not {hz}"
                )));
            }
        }
        if options.lockstep.is_some() {
            if options.clock_hz.is_some() {
                return Err(Error::Play(
                    "lock-step replay publishes /clock itself, once per message time; leave out the /clock rate".into(),
                ));
            }
            if options.rate != 1.0 {
                return Err(Error::Play(
                    "lock-step replay goes as fast as the system settles; a rate does not apply"
                        .into(),
                ));
            }
        }
        let bag = Bag::open(path)?;
        let known: Vec<&str> = bag.info().topics.iter().map(|t| t.name.as_str()).collect();
        for remap in &options.remaps {
            if !known.contains(&remap.from.as_str()) {
                log::warn!(
                    "kairos bag play: the bag has no topic {} to remap (its topics: {})",
                    remap.from,
                    known.join(", ")
                );
            }
        }
        if let Some(missing) = options
            .selection
            .topics
            .iter()
            .find(|t| !known.contains(&t.as_str()))
        {
            log::warn!("kairos bag play: the bag has no topic {missing}");
        }
        let chosen: Vec<&TopicInformation> = bag
            .info()
            .topics
            .iter()
            .filter(|t| options.selection.wants(&t.name))
            .collect();
        if chosen.is_empty() {
            return Err(Error::Play(format!(
                "no topic of the bag is selected (its topics: {})",
                known.join(", ")
            )));
        }
        let mut topics = Vec::new();
        let mut outputs: HashMap<String, Output> = HashMap::new();
        for topic in chosen {
            let name = options
                .remaps
                .iter()
                .find(|r| r.from == topic.name)
                .map_or_else(|| topic.name.clone(), |r| r.to.clone());
            let hash = type_hash(topic);
            let profile = options
                .qos_overrides
                .get(&topic.name)
                .or_else(|| options.qos_overrides.get(&name));
            let qos = match profile {
                Some(profile) => qos_of(profile),
                None => adapt_to_offers(&topic.offered_qos_profiles),
            };
            let publisher = transport
                .raw_publisher(
                    &node,
                    RawTopic {
                        name: &name,
                        ros_type: &topic.type_name,
                        type_hash: &hash,
                    },
                    qos,
                )
                .map_err(|e| Error::Play(format!("cannot publish {name}: {e}")))?;
            outputs.insert(
                topic.name.clone(),
                Output {
                    index: topics.len(),
                    publisher,
                },
            );
            topics.push(PlayedTopic {
                bag_name: topic.name.clone(),
                name,
                type_name: topic.type_name.clone(),
                type_hash: hash,
                reliable: qos.reliability == kairos::graph::Reliability::Reliable,
                transient_local: qos.is_transient_local(),
            });
        }
        let clock = match (options.clock_hz, options.lockstep) {
            (Some(hz), _) => Some((hz, clock_publisher(&transport, &node, false)?)),
            // Reliable: every process must hear each move of time for the replay to settle.
            (None, Some(_)) => Some((0.0, clock_publisher(&transport, &node, true)?)),
            (None, None) => None,
        };
        let settler = options
            .lockstep
            .map(|_| Mutex::new(kairos_zenoh::settle::Settler::new(&transport)));
        let origin_ns = bag
            .info()
            .starting_time_ns
            .saturating_add(u64::try_from(options.start_offset.as_nanos()).unwrap_or(u64::MAX));
        let stop = options.cancel.child();
        let steady = Clock::steady();
        let shared = Arc::new(Shared {
            timeline: Mutex::new(Timeline {
                rate: options.rate,
                origin_ns,
                base: None,
                paused: options.start_paused,
                paused_since: options.start_paused.then(|| steady.now()),
                paused_total: KDuration::ZERO,
                wake: stop.child(),
            }),
            stop,
            steady,
            sent: AtomicU64::new(0),
        });
        let playback = Playback {
            _transport: transport,
            bag,
            outputs,
            topics: topics.clone(),
            options,
            shared: shared.clone(),
            clock,
            settler,
        };
        let thread = std::thread::Builder::new()
            .name("kairos-bag-play".into())
            .spawn(move || playback.run())
            .map_err(|e| Error::Play(format!("cannot start the playing thread: {e}")))?;
        Ok(Self {
            shared,
            topics,
            thread: Some(thread),
        })
    }

    /// The played topics.
    pub fn topics(&self) -> &[PlayedTopic] {
        &self.topics
    }

    /// Pauses: no message is sent and the bag's time stands still until resumed.
    pub fn pause(&self) {
        self.shared.set_paused(true);
    }

    /// Resumes where the bag's time stood.
    pub fn resume(&self) {
        self.shared.set_paused(false);
    }

    /// Pauses if playing, resumes if paused; returns whether it is paused now.
    pub fn toggle(&self) -> bool {
        let paused = self.is_paused();
        self.shared.set_paused(!paused)
    }

    /// Whether it is paused.
    pub fn is_paused(&self) -> bool {
        self.shared.timeline.lock().expect("not poisoned").paused
    }

    /// The bag's time now (ns since the epoch): what `/clock` carries.
    pub fn bag_time_ns(&self) -> u64 {
        let now = self.shared.steady.now();
        self.shared
            .timeline
            .lock()
            .expect("not poisoned")
            .bag_time_ns(now)
    }

    /// Messages sent so far (every topic, every loop).
    pub fn sent(&self) -> u64 {
        self.shared.sent.load(Ordering::Acquire)
    }

    /// Stops playing at once (a waiting sleep is cancelled).
    pub fn stop(&self) {
        self.shared.stop.cancel();
    }

    /// Whether playing has ended (the bag played, or stopped).
    pub fn is_finished(&self) -> bool {
        self.thread.as_ref().is_none_or(JoinHandle::is_finished)
    }

    /// Waits until playing ends (the bag played, or stopped), then says what was sent.
    pub fn wait(mut self) -> PlayReport {
        self.join()
    }

    fn join(&mut self) -> PlayReport {
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(report)) => report,
            Some(Err(panic)) => std::panic::resume_unwind(panic),
            None => PlayReport::default(),
        }
    }
}

impl Drop for Player {
    fn drop(&mut self) {
        if self.thread.is_some() {
            self.stop();
            let _ = self.thread.take().map(JoinHandle::join);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::playback::clock_cdr;
    use super::*;

    #[test]
    fn remaps_parse_or_say_why_not() {
        let r: Remap = "/chatter:=replayed".parse().unwrap();
        assert_eq!(r.from, "/chatter");
        assert_eq!(r.to, "/replayed");
        for bad in ["/chatter", ":=/x", "/x:=", "/a:=/b c", "/a:=/1b"] {
            let e = bad.parse::<Remap>().unwrap_err().to_string();
            assert!(e.contains("bad remap"), "{bad}: {e}");
        }
    }

    #[test]
    fn selection_follows_ros2_bag_play() {
        let all = TopicSelection::default();
        assert!(all.wants("/a") && all.wants("/_hidden"));
        let some = TopicSelection {
            topics: vec!["/a".into()],
            regex: Some(Regex::new("^/b").unwrap()),
            exclude: Some(Regex::new("x$").unwrap()),
        };
        assert!(some.wants("/a") && some.wants("/b1") && !some.wants("/c"));
        assert!(!some.wants("/bx"));
    }

    #[test]
    fn qos_follows_the_recorded_offers() {
        let reliable_tl = QosProfile {
            durability: BagDurability::TransientLocal,
            ..QosProfile::default()
        };
        let best_effort = QosProfile {
            reliability: BagReliability::BestEffort,
            ..QosProfile::default()
        };
        let qos = adapt_to_offers(&[reliable_tl]);
        assert!(qos.is_transient_local());
        assert_eq!(qos.reliability, kairos::graph::Reliability::Reliable);
        let qos = adapt_to_offers(&[reliable_tl, best_effort]);
        assert!(!qos.is_transient_local());
        assert_eq!(qos.reliability, kairos::graph::Reliability::BestEffort);
        assert_eq!(adapt_to_offers(&[]).depth(), 10);
    }

    #[test]
    fn lateness_percentiles_by_nearest_rank() {
        let ns: Vec<i64> = (1..=100).collect();
        let l = Lateness::of(&ns);
        assert_eq!(l.count, 100);
        assert_eq!(l.min, Duration::from_nanos(1));
        assert_eq!(l.p50, Duration::from_nanos(50));
        assert_eq!(l.p99, Duration::from_nanos(99));
        assert_eq!(l.max, Duration::from_nanos(100));
        assert_eq!(Lateness::of(&[]), Lateness::default());
    }

    #[test]
    fn clock_is_cdr_of_builtin_time() {
        let cdr = clock_cdr(1_585_866_235_112_411_371);
        assert_eq!(&cdr[..4], &[0, 1, 0, 0]);
        assert_eq!(
            i32::from_le_bytes(cdr[4..8].try_into().unwrap()),
            1_585_866_235
        );
        assert_eq!(
            u32::from_le_bytes(cdr[8..].try_into().unwrap()),
            112_411_371
        );
    }

    #[test]
    fn timeline_stands_still_while_paused() {
        let stop = CancelToken::new();
        let at = |ns| Time::new(kairos::time::ClockKind::Steady, ns);
        let mut t = Timeline {
            rate: 2.0,
            origin_ns: 1_000,
            base: Some(at(0)),
            paused: false,
            paused_since: None,
            paused_total: KDuration::ZERO,
            wake: stop.child(),
        };
        assert_eq!(t.planned(400), Some(at(200)));
        assert_eq!(t.bag_time_ns(at(100)), 1_200);
        t.paused = true;
        t.paused_since = Some(at(100));
        assert_eq!(t.bag_time_ns(at(500)), 1_200);
        t.paused = false;
        t.paused_since = None;
        t.paused_total = KDuration::from_nanos(400);
        assert_eq!(t.bag_time_ns(at(600)), 1_400);
        assert_eq!(t.planned(400), Some(at(600)));
        t.changed(&stop);
    }
}
