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
//!   its planned time: when the bag's time (started at the bag's start
//!   plus [`PlayOptions::start_offset`], going at [`PlayOptions::rate`], standing still
//!   while paused) reaches its log time. Only a message asked for (play next, burst) goes
//!   out before, at once. The wait is kairos's sleep ([`Clock::sleep_until`]), which never
//!   returns before its deadline and is cancelled by [`PlayOptions::cancel`] (the CLI's
//!   Ctrl-C) or [`Player::stop`]. A message whose time has passed is sent at once, never
//!   skipped; its lateness (send time - planned time) is measured for every message and
//!   reported as p50/p99/max in [`PlayReport::lateness`] (percentiles of the first
//!   [`KEPT_LATENESS`] sends, max of all), with the count of messages later than
//!   [`PlayOptions::late_threshold`] (a message asked for is counted, not measured).
//! - **Order as recorded.** Messages go out in the bag's log-time order, one at a time
//!   from one thread; a second thread reads up to [`PlayOptions::read_ahead`] messages
//!   ahead (1000 unless set), so reading does not delay a send that is due.
//! - **Counted.** [`PlayReport::sent`] has, for each played topic (under its remapped
//!   name), the messages sent.
//! - **Service calls as calls**, when asked ([`PlayOptions::publish_service_requests`]):
//!   a service's introspection events are not published; each recorded call is sent to
//!   the service again with its recorded request, once (see `service_replay`), and
//!   [`PlayReport::services`] counts what became of them.
//! - **Traced.** In a traced process (`KAIROS_TRACE`), every message sent is a
//!   publication of the topic's publisher, as any kairos publisher's, followed by
//!   `kairos:bag_play`: the bag topic and log time it came from and how late it left
//!   (-1 when it went out at once). `kairos trace chains` starts each chain it caused at
//!   that bag message, with the player's lateness as its first stage.
//! - **Ends whole.** A read error ends playing and is kept in [`PlayReport::error`].
//!   Zenoh may still queue the last messages when playing ends: close the transport
//!   ([`ZenohTransport::close`]) before the process exits, as `kairos bag play` does.
//! - **Controllable** from any thread through a [`PlayerControl`] ([`Player::control`]):
//!   pause, resume, toggle, a new rate, play next, burst, seek, stop, as rosbag2's player
//!   control services (which `kairos bag play` serves); while paused the bag's time stands
//!   still (and so does `/clock`). Playback can start paused, and end at a bag time
//!   ([`PlayOptions::playback_duration`], [`PlayOptions::playback_until_ns`]). With
//!   [`PlayOptions::clock_hz`], `/clock` (rosgraph_msgs/msg/Clock) carries the bag's
//!   time at that rate while playing, as `ros2 bag play --clock` does; with
//!   [`PlayOptions::clock_trigger`], just before each message of the chosen topics
//!   (`--clock-topics`, `--clock-topics-all`), carrying that message's log time, so a
//!   node on simulation time reads the message's own time when it hears it. Either way
//!   the bag's own `/clock` is not played.
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
use kairos_interface::service_event::SERVICE_EVENT_SUFFIX;
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

/// Messages read ahead of the one waiting to be sent unless [`PlayOptions::read_ahead`]
/// says otherwise (rosbag2's default read-ahead queue).
pub const DEFAULT_READ_AHEAD: usize = 1000;

/// The `/clock` rate of `ros2 bag play --clock` without a value.
pub const DEFAULT_CLOCK_HZ: f64 = 40.0;

mod control;
mod options;
mod playback;
mod qos;
mod service_replay;
mod timeline;

pub use control::PlayerControl;
use control::{Request, Requests};
use timeline::Timeline;

pub use options::{
    ClockTrigger, KEPT_UNSETTLED, Lateness, LockstepReport, PlayOptions, PlayReport, PlayedTopic,
    Remap, TopicSelection,
};
use playback::{Playback, clock_publisher};
pub use qos::qos_overrides_from_yaml;
use qos::{adapt_to_offers, qos_of, type_hash};
use service_replay::ServiceReplay;
pub use service_replay::ServiceReplayCounts;

#[derive(Debug)]
struct Shared {
    timeline: Mutex<Timeline>,
    stop: CancelToken,
    steady: Clock,
    /// Messages sent so far, every topic and loop.
    sent: AtomicU64,
    /// To the playing thread (see [`control`]).
    requests: Mutex<std::sync::mpsc::Sender<Request>>,
    /// A lock-step replay: no rate, no seek.
    lockstep: bool,
}

/// Plays a bag in a thread of its own (see the module docs).
#[derive(Debug)]
pub struct Player {
    shared: Arc<Shared>,
    topics: Vec<PlayedTopic>,
    until_ns: Option<u64>,
    thread: Option<JoinHandle<PlayReport>>,
}

/// Where a played topic's messages go.
struct Output {
    index: usize,
    sink: Sink,
    /// Whether its sends move `/clock` first ([`PlayOptions::clock_trigger`]).
    moves_clock: bool,
}

// One per played topic, held for the whole play: the size does not matter, and a topic's
// publisher is reached on every send without a pointer to follow.
#[allow(clippy::large_enum_variant)]
enum Sink {
    /// Published on the topic.
    Topic(RawPublisher),
    /// A service's events, whose requests are sent to the service
    /// ([`PlayOptions::publish_service_requests`]).
    Service(ServiceReplay),
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
        if options.clock_trigger.is_some() && options.clock_hz.is_some() {
            return Err(Error::Play(
                "/clock is published either at a rate or before messages, not both (as ros2 bag play's --clock and --clock-topics)".into(),
            ));
        }
        if options.lockstep.is_some() {
            if options.clock_hz.is_some() || options.clock_trigger.is_some() {
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
        let trigger_topics = match &options.clock_trigger {
            Some(ClockTrigger::Topics(topics)) => topics.as_slice(),
            _ => &[],
        };
        for missing in options
            .selection
            .topics
            .iter()
            .chain(trigger_topics)
            .filter(|t| !known.contains(&t.as_str()))
        {
            log::warn!("kairos bag play: the bag has no topic {missing}");
        }
        for missing in options
            .selection
            .services
            .iter()
            .filter(|s| !known.contains(&format!("{s}{SERVICE_EVENT_SUFFIX}").as_str()))
        {
            log::warn!("kairos bag play: the bag recorded no events of the service {missing}");
        }
        // The player's own /clock and the bag's would fight: the bag's is left out, as
        // ros2 bag play leaves it out with --clock.
        let own_clock = options.clock_hz.is_some() || options.clock_trigger.is_some();
        let chosen: Vec<&TopicInformation> = bag
            .info()
            .topics
            .iter()
            .filter(|t| options.selection.wants(&t.name))
            .filter(|t| !(own_clock && t.name == "/clock"))
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
            let sink = match topic.service() {
                Some((service, service_type)) if options.publish_service_requests => {
                    // A remap of the event topic renames the service the calls go to.
                    let service = name.strip_suffix(SERVICE_EVENT_SUFFIX).unwrap_or(service);
                    Sink::Service(service_replay(
                        &bag,
                        &transport,
                        &node,
                        &topic.name,
                        (service, service_type),
                    )?)
                }
                _ => Sink::Topic(
                    transport
                        .raw_publisher(
                            &node,
                            RawTopic {
                                name: &name,
                                ros_type: &topic.type_name,
                                type_hash: &hash,
                            },
                            qos,
                        )
                        .map_err(|e| Error::Play(format!("cannot publish {name}: {e}")))?,
                ),
            };
            outputs.insert(
                topic.name.clone(),
                Output {
                    index: topics.len(),
                    sink,
                    moves_clock: options
                        .clock_trigger
                        .as_ref()
                        .is_some_and(|trigger| trigger.fires_on(&topic.name)),
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
            (None, None) if options.clock_trigger.is_some() => {
                Some((0.0, clock_publisher(&transport, &node, false)?))
            }
            (None, None) => None,
        };
        let settler = options
            .lockstep
            .map(|_| Mutex::new(kairos_zenoh::settle::Settler::new(&transport)));
        let origin_ns = bag
            .info()
            .starting_time_ns
            .saturating_add(u64::try_from(options.start_offset.as_nanos()).unwrap_or(u64::MAX));
        let until_ns = playback_until(origin_ns, &options);
        let stop = options.cancel.child();
        let (requests, incoming) = std::sync::mpsc::channel();
        let shared = Arc::new(Shared {
            timeline: Mutex::new(Timeline::new(
                options.rate,
                origin_ns,
                options.start_paused,
                stop.child(),
            )),
            stop,
            steady: Clock::steady(),
            sent: AtomicU64::new(0),
            requests: Mutex::new(requests),
            lockstep: options.lockstep.is_some(),
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
            origin_ns,
            until_ns,
            requests: Mutex::new(Requests::new(incoming)),
        };
        let thread = std::thread::Builder::new()
            .name("kairos-bag-play".into())
            .spawn(move || playback.run())
            .map_err(|e| Error::Play(format!("cannot start the playing thread: {e}")))?;
        Ok(Self {
            shared,
            topics,
            until_ns,
            thread: Some(thread),
        })
    }

    /// The played topics.
    pub fn topics(&self) -> &[PlayedTopic] {
        &self.topics
    }

    /// The last bag time played (ns since the epoch), from
    /// [`PlayOptions::playback_duration`] and [`PlayOptions::playback_until_ns`] as
    /// rosbag2 combines them (the later of the two; a duration of 0 plays nothing);
    /// `None`: to the end of the bag.
    pub fn playback_until_ns(&self) -> Option<u64> {
        self.until_ns
    }

    /// A handle to control this playback from any thread (pause, rate, seek, ...).
    pub fn control(&self) -> PlayerControl {
        PlayerControl {
            shared: self.shared.clone(),
        }
    }

    /// Pauses: no message is sent and the bag's time stands still until resumed.
    pub fn pause(&self) {
        self.control().pause();
    }

    /// Resumes where the bag's time stood.
    pub fn resume(&self) {
        self.control().resume();
    }

    /// Pauses if playing, resumes if paused; returns whether it is paused now.
    pub fn toggle(&self) -> bool {
        self.control().toggle()
    }

    /// Whether it is paused.
    pub fn is_paused(&self) -> bool {
        self.control().is_paused()
    }

    /// The bag's time now (ns since the epoch): what `/clock` carries.
    pub fn bag_time_ns(&self) -> u64 {
        self.control().bag_time_ns()
    }

    /// Messages sent so far (every topic, every loop).
    pub fn sent(&self) -> u64 {
        self.control().sent()
    }

    /// Stops playing at once (a waiting sleep is cancelled).
    pub fn stop(&self) {
        self.control().stop();
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

/// The last bag time to play, as rosbag2 computes it (see [`Player::playback_until_ns`]).
fn playback_until(origin_ns: u64, options: &PlayOptions) -> Option<u64> {
    if options.playback_duration.is_none() && options.playback_until_ns.is_none() {
        return None;
    }
    let from_duration = options.playback_duration.map_or(0, |d| {
        if d.is_zero() {
            0
        } else {
            origin_ns.saturating_add(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
        }
    });
    Some(from_duration.max(options.playback_until_ns.unwrap_or(0)))
}

impl Drop for Player {
    fn drop(&mut self) {
        if self.thread.is_some() {
            self.stop();
            let _ = self.thread.take().map(JoinHandle::join);
        }
    }
}

/// The replay of `service`'s calls recorded on `topic`: its events read through once to
/// find the clients recorded on their side, and a sender of its requests.
fn service_replay(
    bag: &Bag,
    transport: &ZenohTransport,
    node: &Node,
    topic: &str,
    (service, service_type): (&str, &str),
) -> crate::Result<ServiceReplay> {
    let tool = kairos_zenoh::interfaces::service_by_name(service_type).ok_or_else(|| {
        Error::Play(format!(
            "cannot send the recorded requests of {service}: kairos does not ship {service_type}; \
             play its events as a topic (leave out --publish-service-requests)"
        ))
    })?;
    let sender = tool
        .sender(transport, node, service)
        .map_err(|e| Error::Play(format!("cannot call {service}: {e}")))?;
    let mut replay = ServiceReplay::new(service.to_owned(), tool, sender);
    for event in bag.read(&ReadFilter::all().topics([topic.to_owned()]))? {
        replay.learn(&event?.data);
    }
    Ok(replay)
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
        assert!(all.wants("/a") && all.wants("/_hidden") && all.wants("/add/_service_event"));
        let some = TopicSelection {
            topics: vec!["/a".into()],
            regex: Some(TopicSelection::whole_name("/b.*").unwrap()),
            exclude: Some(TopicSelection::whole_name(".*x").unwrap()),
            ..TopicSelection::default()
        };
        assert!(some.wants("/a") && some.wants("/b1") && !some.wants("/c"));
        assert!(!some.wants("/bx"));
        // The whole name, as std::regex_match: /b1 matches, /ab1 does not.
        assert!(!some.wants("/ab1"));
        // A regex dominates the services too: only those it matches.
        assert!(some.wants("/b/_service_event") && !some.wants("/add/_service_event"));
    }

    /// rosbag2's reader filter (`MCAPStorage::reset_iterator`, the sqlite3 storage's
    /// `prepare_included_topics_filter`): topics and services chosen apart.
    #[test]
    fn topics_and_services_are_chosen_apart_as_rosbag2s_reader_does() {
        let topics = TopicSelection {
            topics: vec!["/a".into()],
            ..TopicSelection::default()
        };
        assert!(topics.wants("/a") && !topics.wants("/b"));
        assert!(
            topics.wants("/add/_service_event"),
            "no services listed: every one"
        );
        let services = TopicSelection {
            services: vec!["/add".into()],
            ..TopicSelection::default()
        };
        assert!(services.wants("/add/_service_event") && !services.wants("/mul/_service_event"));
        assert!(services.wants("/a"), "no topics listed: every one");
        let excluded = TopicSelection {
            exclude_topics: vec!["/a".into()],
            exclude_services: vec!["/add".into()],
            ..TopicSelection::default()
        };
        assert!(!excluded.wants("/a") && excluded.wants("/b"));
        assert!(!excluded.wants("/add/_service_event") && excluded.wants("/mul/_service_event"));
        // A topic named like a service is not the service.
        assert!(excluded.wants("/add"));
        let bad = TopicSelection::whole_name("(").unwrap_err().to_string();
        assert!(bad.contains("not a regular expression"), "{bad}");
    }

    #[test]
    fn a_clock_trigger_fires_on_its_topics() {
        assert!(ClockTrigger::EveryMessage.fires_on("/x"));
        let some = ClockTrigger::Topics(vec!["/a".into()]);
        assert!(some.fires_on("/a") && !some.fires_on("/b"));
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
}
