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

/// Which of a bag's topics to play, as `ros2 bag play` selects them: every topic unless
/// topics or a regex are given; `exclude` leaves out what it matches in any case.
#[derive(Debug, Clone, Default)]
pub struct TopicSelection {
    /// These topics (`--topics`).
    pub topics: Vec<String>,
    /// Topics whose name matches (`--regex`).
    pub regex: Option<Regex>,
    /// Not these (`--exclude-regex`).
    pub exclude: Option<Regex>,
}

impl TopicSelection {
    /// Whether `topic` (the bag's name for it) is played.
    pub fn wants(&self, topic: &str) -> bool {
        let chosen = (self.topics.is_empty() && self.regex.is_none())
            || self.topics.iter().any(|t| t == topic)
            || self.regex.as_ref().is_some_and(|r| r.is_match(topic));
        chosen && !self.exclude.as_ref().is_some_and(|r| r.is_match(topic))
    }
}

/// A topic renamed on playback: `from:=to` (both made absolute).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remap {
    /// The topic's name in the bag.
    pub from: String,
    /// The name it is published under.
    pub to: String,
}

impl std::str::FromStr for Remap {
    type Err = Error;

    /// `old:=new`, as `ros2 bag play --remap` takes it.
    fn from_str(text: &str) -> Result<Self, Error> {
        let bad = |why: &str| {
            Error::Play(format!(
                "bad remap '{text}': {why} (write old:=new, e.g. /chatter:=/chatter_replay)"
            ))
        };
        let (from, to) = text.split_once(":=").ok_or_else(|| bad("no ':='"))?;
        let (from, to) = (from.trim(), to.trim());
        for name in [from, to] {
            if name.is_empty() || name == "/" {
                return Err(bad("a side is empty"));
            }
            let valid = name.trim_start_matches('/').split('/').all(|part| {
                !part.is_empty()
                    && !part.starts_with(|c: char| c.is_ascii_digit())
                    && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            });
            if !valid {
                return Err(bad(&format!("'{name}' is not a topic name")));
            }
        }
        let absolute = |n: &str| {
            if n.starts_with('/') {
                n.to_owned()
            } else {
                format!("/{n}")
            }
        };
        Ok(Self {
            from: absolute(from),
            to: absolute(to),
        })
    }
}

/// How a [`Player`] plays.
#[derive(Debug, Clone)]
pub struct PlayOptions {
    /// Bag time per monotonic time: 2.0 plays twice as fast (must be > 0).
    pub rate: f64,
    /// Start again from the start (offset) once the bag has been played, until stopped.
    pub loop_playback: bool,
    /// Skip the messages of the first this-long of the bag.
    pub start_offset: Duration,
    /// Wait this long before playing.
    pub delay: Duration,
    /// The topics played.
    pub selection: TopicSelection,
    /// Topics published under another name.
    pub remaps: Vec<Remap>,
    /// A QoS profile per topic (the bag's name, or the remapped one) replacing the one
    /// chosen from the recorded offers.
    pub qos_overrides: BTreeMap<String, QosProfile>,
    /// Publish `/clock` with the bag's time at this rate (Hz) while playing.
    pub clock_hz: Option<f64>,
    /// Start paused (see [`Player::resume`]).
    pub start_paused: bool,
    /// Before playing, wait up to this long until zenoh routes every played topic to at
    /// least one subscriber (matching, not only the subscriber's announcement).
    pub wait_for_subscribers: Option<Duration>,
    /// Sends later than this are counted in [`PlayReport::late`] (they are sent all the
    /// same).
    pub late_threshold: Duration,
    /// Playing stops when this is cancelled (the CLI passes kairos's shutdown token).
    pub cancel: CancelToken,
}

impl Default for PlayOptions {
    fn default() -> Self {
        Self {
            rate: 1.0,
            loop_playback: false,
            start_offset: Duration::ZERO,
            delay: Duration::ZERO,
            selection: TopicSelection::default(),
            remaps: Vec::new(),
            qos_overrides: BTreeMap::new(),
            clock_hz: None,
            start_paused: false,
            wait_for_subscribers: None,
            late_threshold: Duration::from_millis(10),
            cancel: CancelToken::new(),
        }
    }
}

/// Send-time error statistics: how long after its planned time each message was sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Lateness {
    /// Messages measured.
    pub count: usize,
    /// The smallest lateness (never negative: a message is never sent early).
    pub min: Duration,
    /// The median.
    pub p50: Duration,
    /// The 99th percentile (nearest rank).
    pub p99: Duration,
    /// The largest.
    pub max: Duration,
}

impl Lateness {
    /// The statistics of `lateness_ns` (nanoseconds each; negative values count as 0).
    pub fn of(lateness_ns: &[i64]) -> Self {
        if lateness_ns.is_empty() {
            return Self::default();
        }
        let mut sorted = lateness_ns.to_vec();
        sorted.sort_unstable();
        let at = |p: f64| {
            let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
            Duration::from_nanos(u64::try_from(sorted[rank - 1]).unwrap_or(0))
        };
        Self {
            count: sorted.len(),
            min: at(0.0),
            p50: at(0.50),
            p99: at(0.99),
            max: at(1.0),
        }
    }
}

/// One played topic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlayedTopic {
    /// Its name in the bag.
    pub bag_name: String,
    /// The name it is published under (after remapping).
    pub name: String,
    /// Its type.
    pub type_name: String,
    /// The type hash announced.
    pub type_hash: String,
    /// Whether its publisher is reliable.
    pub reliable: bool,
    /// Whether its publisher keeps history for late joiners.
    pub transient_local: bool,
}

/// What a playback ended with.
#[derive(Debug, Clone, Default)]
pub struct PlayReport {
    /// The played topics.
    pub topics: Vec<PlayedTopic>,
    /// Messages sent per topic (published name), every played topic listed.
    pub sent: BTreeMap<String, u64>,
    /// For each message sent, in order: send time - planned time, in nanoseconds (the
    /// first [`KEPT_LATENESS`] sends; a long `--loop` keeps only their max and count).
    pub lateness_ns: Vec<i64>,
    /// The largest lateness of every send, in nanoseconds.
    pub lateness_max_ns: i64,
    /// Messages sent later than [`PlayOptions::late_threshold`].
    pub late: u64,
    /// Times the bag was played to its end.
    pub loops: u64,
    /// Whether playing was stopped (cancelled) before the end.
    pub stopped: bool,
    /// `/clock` messages published.
    pub clock_published: u64,
    /// Topics that had no subscriber when the wait for subscribers gave up.
    pub without_subscribers: Vec<String>,
    /// Why playing ended early other than by a stop: the bag could not be read on (a
    /// damaged file); what was read before it was sent.
    pub error: Option<String>,
}

impl PlayReport {
    /// Statistics of [`lateness_ns`](Self::lateness_ns); the count and max are of every
    /// send.
    pub fn lateness(&self) -> Lateness {
        let mut l = Lateness::of(&self.lateness_ns);
        l.count = usize::try_from(self.total_sent()).unwrap_or(usize::MAX);
        l.max = l.max.max(Duration::from_nanos(
            u64::try_from(self.lateness_max_ns).unwrap_or(0),
        ));
        l
    }

    /// Messages sent on every topic.
    pub fn total_sent(&self) -> u64 {
        self.sent.values().sum()
    }
}

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
        let clock = match options.clock_hz {
            None => None,
            Some(hz) => Some((hz, clock_publisher(&transport, &node)?)),
        };
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

/// The playing thread's state.
struct Playback {
    /// Kept open while the publishers live.
    _transport: Arc<ZenohTransport>,
    bag: Bag,
    outputs: HashMap<String, Output>,
    topics: Vec<PlayedTopic>,
    options: PlayOptions,
    shared: Arc<Shared>,
    clock: Option<(f64, RawPublisher)>,
}

impl Playback {
    fn run(self) -> PlayReport {
        let mut report = PlayReport {
            topics: self.topics.clone(),
            sent: self.topics.iter().map(|t| (t.name.clone(), 0)).collect(),
            ..PlayReport::default()
        };
        let (steady, stop) = (&self.shared.steady, &self.shared.stop);
        if let Some(limit) = self.options.wait_for_subscribers {
            report.without_subscribers = self.wait_for_subscribers(limit);
        }
        if !self.options.delay.is_zero() {
            let _ = steady.sleep_for(KDuration::from(self.options.delay), stop);
        }
        let clock_stop = stop.child();
        let mut per_topic = vec![0u64; self.topics.len()];
        std::thread::scope(|scope| {
            let clock = self.clock.as_ref().map(|(hz, publisher)| {
                let (shared, token) = (&self.shared, &clock_stop);
                scope.spawn(move || publish_clock(publisher, *hz, shared, token))
            });
            while !stop.is_cancelled() {
                let before = self.shared.sent.load(Ordering::Acquire);
                if !self.play_once(&mut report, &mut per_topic) {
                    break;
                }
                report.loops += 1;
                // A loop over nothing (every message before the start offset) would spin.
                if !self.options.loop_playback || self.shared.sent.load(Ordering::Acquire) == before
                {
                    break;
                }
            }
            clock_stop.cancel();
            if let Some(clock) = clock {
                report.clock_published = clock.join().unwrap_or(0);
            }
        });
        report.stopped = stop.is_cancelled();
        for (topic, count) in self.topics.iter().zip(per_topic) {
            *report.sent.entry(topic.name.clone()).or_default() += count;
        }
        report
    }

    /// Plays the bag from the origin to the end; false if stopped or reading failed.
    fn play_once(&self, report: &mut PlayReport, per_topic: &mut [u64]) -> bool {
        let origin_ns = self.shared.timeline.lock().expect("not poisoned").origin_ns;
        let filter = ReadFilter::all()
            .topics(self.outputs.keys().cloned())
            .start(origin_ns);
        let messages = match self.bag.read(&filter) {
            Ok(messages) => messages,
            Err(e) => {
                report.error = Some(format!("cannot read the bag: {e}"));
                return false;
            }
        };
        // Read ahead on a thread of its own, as rosbag2 does, so that reading (a chunk to
        // load or decompress) does not hold up a send that is due.
        let (tx, rx) = sync_channel::<crate::Result<BagMessage>>(READ_AHEAD);
        std::thread::scope(|scope| {
            scope.spawn(move || {
                for message in messages {
                    if tx.send(message).is_err() {
                        break;
                    }
                }
            });
            // Owned here, so that returning drops it and the reader stops.
            let rx = rx;
            // The clock starts once the first message is at hand: opening the files is
            // not counted against the first sends.
            let first = rx.recv().ok();
            self.start_timeline();
            self.send_all(
                first.into_iter().chain(rx.iter()),
                origin_ns,
                report,
                per_topic,
            )
        })
    }

    /// Maps the origin to now (paused time counted from now).
    fn start_timeline(&self) {
        let mut t = self.shared.timeline.lock().expect("not poisoned");
        let now = self.shared.steady.now();
        t.base = Some(now);
        t.paused_total = KDuration::ZERO;
        if t.paused {
            t.paused_since = Some(now);
        }
    }

    /// Sends what the reader hands over, each message when due.
    fn send_all(
        &self,
        messages: impl Iterator<Item = crate::Result<BagMessage>>,
        origin_ns: u64,
        report: &mut PlayReport,
        per_topic: &mut [u64],
    ) -> bool {
        let late_ns = i64::try_from(self.options.late_threshold.as_nanos()).unwrap_or(i64::MAX);
        for message in messages {
            let message = match message {
                Ok(message) => message,
                Err(e) => {
                    report.error = Some(format!("stopped reading the bag: {e}"));
                    return false;
                }
            };
            let Some(output) = self.outputs.get(&*message.topic) else {
                continue;
            };
            let Some(planned) = self.wait_until_due(message.log_time.saturating_sub(origin_ns))
            else {
                return false;
            };
            let sent_at = self.shared.steady.now();
            output.publisher.publish(&message.data);
            let lateness = sent_at.since(planned).unwrap_or(KDuration::ZERO).as_nanos();
            if lateness > late_ns {
                report.late += 1;
            }
            if report.lateness_ns.len() < KEPT_LATENESS {
                report.lateness_ns.push(lateness);
            }
            report.lateness_max_ns = report.lateness_max_ns.max(lateness);
            per_topic[output.index] += 1;
            self.shared.sent.fetch_add(1, Ordering::AcqRel);
        }
        true
    }

    /// Sleeps until the message `offset_ns` after the origin is due (paused time not
    /// counted); returns its planned time, or `None` if stopped.
    fn wait_until_due(&self, offset_ns: u64) -> Option<Time> {
        let steady = &self.shared.steady;
        loop {
            if self.shared.stop.is_cancelled() {
                return None;
            }
            let (paused, wake, planned) = {
                let t = self.shared.timeline.lock().expect("not poisoned");
                (t.paused, t.wake.clone(), t.planned(offset_ns))
            };
            let planned = planned.expect("the timeline has started");
            if paused {
                // Until resumed (the wake token is cancelled) or stopped.
                let _ = steady.sleep_for(KDuration::from_secs(3600), &wake);
                continue;
            }
            if steady.sleep_until(planned, &wake).is_ok() {
                return Some(planned);
            }
        }
    }

    /// Waits until zenoh routes every played topic to at least one subscriber, at most
    /// `limit`; returns the topics that have none.
    fn wait_for_subscribers(&self, limit: Duration) -> Vec<String> {
        let steady = &self.shared.steady;
        let end = steady.now() + KDuration::from(limit);
        let missing = || {
            let mut left: Vec<(usize, String)> = self
                .outputs
                .values()
                .filter(|output| !output.publisher.matched())
                .map(|output| (output.index, self.topics[output.index].name.clone()))
                .collect();
            left.sort();
            left.into_iter().map(|(_, name)| name).collect::<Vec<_>>()
        };
        loop {
            let left = missing();
            let now = steady.now();
            if left.is_empty() || now >= end || self.shared.stop.is_cancelled() {
                return left;
            }
            let next = now + KDuration::from_millis(20);
            let _ = steady.sleep_until(if next < end { next } else { end }, &self.shared.stop);
        }
    }
}

/// Publishes the bag's time on `/clock` at `hz` until `stop`; returns how many were sent.
fn publish_clock(publisher: &RawPublisher, hz: f64, shared: &Shared, stop: &CancelToken) -> u64 {
    let steady = &shared.steady;
    let period = KDuration::from_secs_f64(1.0 / hz);
    let start = steady.now();
    let mut sent = 0u64;
    loop {
        let ns = {
            let t = shared.timeline.lock().expect("not poisoned");
            t.bag_time_ns(steady.now())
        };
        publisher.publish(&clock_cdr(ns));
        sent += 1;
        let next = start + KDuration::from_nanos(period.as_nanos().saturating_mul(sent as i64));
        if steady.sleep_until(next, stop).is_err() {
            return sent;
        }
    }
}

/// rosgraph_msgs/msg/Clock in CDR (little endian): `builtin_interfaces/Time clock`.
fn clock_cdr(ns: u64) -> [u8; 12] {
    let sec = i32::try_from(ns / 1_000_000_000).unwrap_or(i32::MAX);
    let nanosec = (ns % 1_000_000_000) as u32;
    let mut out = [0u8; 12];
    out[..4].copy_from_slice(&[0, 1, 0, 0]);
    out[4..8].copy_from_slice(&sec.to_le_bytes());
    out[8..].copy_from_slice(&nanosec.to_le_bytes());
    out
}

/// The `/clock` publisher: best effort, keep last 1 (rclcpp's `ClockQoS`).
fn clock_publisher(transport: &ZenohTransport, node: &Node) -> crate::Result<RawPublisher> {
    const CLOCK_TYPE: &str = "rosgraph_msgs/msg/Clock";
    let hash = kairos_zenoh::interfaces::message_by_name(CLOCK_TYPE)
        .map(|tool| tool.type_hash().to_owned())
        .ok_or_else(|| Error::Play(format!("kairos does not know {CLOCK_TYPE}")))?;
    transport
        .raw_publisher(
            node,
            RawTopic {
                name: kairos::graph::CLOCK_TOPIC,
                ros_type: CLOCK_TYPE,
                type_hash: &hash,
            },
            Qos::keep_last(1).best_effort(),
        )
        .map_err(|e| Error::Play(format!("cannot publish /clock: {e}")))
}

/// The hash the bag recorded, else kairos's for the type, else [`UNKNOWN_TYPE_HASH`].
fn type_hash(topic: &TopicInformation) -> String {
    if !topic.type_description_hash.is_empty() {
        return topic.type_description_hash.clone();
    }
    match kairos_zenoh::interfaces::message_by_name(&topic.type_name) {
        Some(tool) => tool.type_hash().to_owned(),
        None => {
            log::warn!(
                "kairos bag play: the bag stored no type hash for {} ({}), a type kairos does not ship; \
                 it is announced as {UNKNOWN_TYPE_HASH} and only subscribers of that hash hear it",
                topic.name,
                topic.type_name
            );
            UNKNOWN_TYPE_HASH.to_owned()
        }
    }
}

/// rosbag2's choice from the recorded offers: reliable unless a publisher was best
/// effort, transient local if every publisher was; keep last 10 or the deepest kept
/// history recorded.
fn adapt_to_offers(offers: &[QosProfile]) -> Qos {
    let depth = offers
        .iter()
        .filter(|p| p.history == BagHistory::KeepLast)
        .map(|p| p.depth)
        .max()
        .unwrap_or(0)
        .clamp(10, 10_000);
    let mut qos = Qos::keep_last(usize::try_from(depth).unwrap_or(10));
    if offers
        .iter()
        .any(|p| p.reliability == BagReliability::BestEffort)
    {
        qos = qos.best_effort();
    }
    if !offers.is_empty()
        && offers
            .iter()
            .all(|p| p.durability == BagDurability::TransientLocal)
    {
        qos = qos.transient_local();
    }
    qos
}

/// An override profile as a kairos QoS; policies left unknown or system default take
/// rmw's default (reliable, volatile, keep last 10).
fn qos_of(profile: &QosProfile) -> Qos {
    let depth = usize::try_from(profile.depth)
        .unwrap_or(10_000)
        .clamp(1, 10_000);
    let mut qos = match profile.history {
        BagHistory::KeepAll => Qos::keep_all(depth.max(1000)),
        BagHistory::KeepLast => Qos::keep_last(depth),
        _ => Qos::keep_last(10),
    };
    if profile.reliability == BagReliability::BestEffort {
        qos = qos.best_effort();
    }
    if profile.durability == BagDurability::TransientLocal {
        qos = qos.transient_local();
    }
    qos
}

/// The QoS overrides of `ros2 bag play --qos-profile-overrides-path`: a YAML map from
/// topic to profile, policies by name (`reliability: best_effort`, `durability:
/// transient_local`, `history: keep_last`, `depth: 5`).
pub fn qos_overrides_from_yaml(text: &str) -> crate::Result<BTreeMap<String, QosProfile>> {
    crate::qos::profile_map_from_yaml(text)
        .map_err(|e| Error::Play(format!("cannot read the QoS overrides: {e}")))
}

#[cfg(test)]
mod tests {
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
