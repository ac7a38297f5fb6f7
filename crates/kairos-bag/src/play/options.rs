//! What to play and how (topics, remaps, rate, clock, QoS overrides), and what a play
//! reports: each topic's sends and how late they were.

use super::*;

/// Which of a bag's topics to play, as rosbag2's reader filter chooses them for
/// `ros2 bag play`. Topics and services (their `<service>/_service_event` topics) are
/// chosen apart:
/// - a topic is played if neither `topics` nor `regex` is given, or it is in `topics`,
///   or `regex` matches it; a service's events likewise with `services`;
/// - so `--topics /a` alone plays `/a` and every service, and `--regex` alone plays only
///   what it matches;
/// - what `exclude_topics`, `exclude_services` or `exclude` name is left out in any case.
///
/// Patterns match the whole name, as rosbag2's `std::regex_match` (`/chat` does not
/// match `/chatter`): build them with [`TopicSelection::whole_name`].
#[derive(Debug, Clone, Default)]
pub struct TopicSelection {
    /// These topics (`--topics`).
    pub topics: Vec<String>,
    /// These services' events (`--services`), by service name (`/add_two_ints`).
    pub services: Vec<String>,
    /// Topics and services whose whole name matches (`--regex`).
    pub regex: Option<Regex>,
    /// Not these topics and services (`--exclude-regex`).
    pub exclude: Option<Regex>,
    /// Not these topics (`--exclude-topics`).
    pub exclude_topics: Vec<String>,
    /// Not these services' events (`--exclude-services`), by service name.
    pub exclude_services: Vec<String>,
}

impl TopicSelection {
    /// `pattern` compiled to match a whole name, as rosbag2's player matches it.
    pub fn whole_name(pattern: &str) -> Result<Regex, Error> {
        Regex::new(&format!("^(?:{pattern})$"))
            .map_err(|e| Error::Play(format!("'{pattern}' is not a regular expression: {e}")))
    }

    /// Whether `topic` (the bag's name for it) is played.
    pub fn wants(&self, topic: &str) -> bool {
        let matches = |r: &Option<Regex>| r.as_ref().is_some_and(|r| r.is_match(topic));
        // A service's events are chosen by its name, a topic by its own.
        let (name, listed, excluded) = match topic.strip_suffix(SERVICE_EVENT_SUFFIX) {
            Some(service) => (service, &self.services, &self.exclude_services),
            None => (topic, &self.topics, &self.exclude_topics),
        };
        let included = (listed.is_empty() && self.regex.is_none())
            || listed.iter().any(|t| t == name)
            || matches(&self.regex);
        let left_out = excluded.iter().any(|t| t == name);
        included && !left_out && !matches(&self.exclude)
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
    /// Publish `/clock` just before messages are sent instead, carrying each one's log
    /// time (`ros2 bag play --clock-topics`, `--clock-topics-all`).
    pub clock_trigger: Option<ClockTrigger>,
    /// Messages read ahead of the one waiting to be sent (`--read-ahead-queue-size`;
    /// rosbag2's default 1000; 0 reads each message when the last has been sent).
    pub read_ahead: usize,
    /// Start paused (see [`PlayerControl::resume`]).
    pub start_paused: bool,
    /// Play only this much of the bag's time from the start of playing (0: nothing), as
    /// `ros2 bag play --playback-duration`.
    pub playback_duration: Option<Duration>,
    /// Play only messages at or before this bag time (ns since the epoch), as
    /// `ros2 bag play --playback-until-nsec`. With a duration too, the later of the two.
    pub playback_until_ns: Option<u64>,
    /// Before playing, wait up to this long until zenoh routes every played topic to at
    /// least one subscriber (matching, not only the subscriber's announcement).
    pub wait_for_subscribers: Option<Duration>,
    /// Sends later than this are counted in [`PlayReport::late`] (they are sent all the
    /// same).
    pub late_threshold: Duration,
    /// Playing stops when this is cancelled (the CLI passes kairos's shutdown token).
    pub cancel: CancelToken,
    /// Lock-step replay (see the module docs), each settle wait bounded by this; `None`
    /// plays at the recorded pace.
    pub lockstep: Option<Duration>,
    /// Send a service's recorded calls to the service again, from the requests of its
    /// introspection events, instead of publishing the events (`ros2 bag play
    /// --publish-service-requests`; see [`ServiceReplayCounts`]).
    pub publish_service_requests: bool,
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
            clock_trigger: None,
            read_ahead: super::DEFAULT_READ_AHEAD,
            start_paused: false,
            playback_duration: None,
            playback_until_ns: None,
            wait_for_subscribers: None,
            late_threshold: Duration::from_millis(10),
            cancel: CancelToken::new(),
            lockstep: None,
            publish_service_requests: false,
        }
    }
}

/// Which sends move `/clock` ([`PlayOptions::clock_trigger`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClockTrigger {
    /// Every message (`--clock-topics-all`).
    EveryMessage,
    /// The messages of these topics (the bag's names, `--clock-topics`).
    Topics(Vec<String>),
}

impl ClockTrigger {
    /// Whether a message of `topic` (the bag's name) moves `/clock`.
    pub fn fires_on(&self, topic: &str) -> bool {
        match self {
            Self::EveryMessage => true,
            Self::Topics(topics) => topics.iter().any(|t| t == topic),
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
    /// Messages sent per topic (published name), every played topic listed but the event
    /// topics of services whose calls were sent again (see [`Self::services`]).
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
    /// What a lock-step replay waited for.
    pub lockstep: Option<LockstepReport>,
    /// For each service whose recorded calls were sent again, what became of them.
    pub services: BTreeMap<String, ServiceReplayCounts>,
}

/// What a lock-step replay waited for (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct LockstepReport {
    /// Settle waits: one before the first message, one after each move of `/clock` and
    /// one after each message.
    pub waits: u64,
    /// Rounds of questions to every kairos process, in all.
    pub rounds: u64,
    /// Waits that ended on their bound: the replay went on without the work settling, so
    /// it may not be identical to another.
    pub unsettled: u64,
    /// What was under way at the first of them (at most [`KEPT_UNSETTLED`]).
    pub first_unsettled: Vec<String>,
    /// Monotonic time from the first message to the last settle.
    pub elapsed: Duration,
    /// Bag time from the first message played to the last.
    pub bag_span: Duration,
}

/// How many unsettled waits a [`LockstepReport`] describes.
pub const KEPT_UNSETTLED: usize = 5;

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

    /// What `kairos bag play` prints at the end, one line each: the messages sent per
    /// topic, the service calls sent again, `/clock`, and how late the sends were (or,
    /// in lock-step, what the replay waited for).
    pub fn describe(&self) -> Vec<String> {
        let mut lines: Vec<String> = self
            .sent
            .iter()
            .map(|(topic, sent)| format!("{topic}: {sent} sent"))
            .collect();
        for (service, calls) in &self.services {
            lines.push(format!(
                "service {service}: {} request(s) sent, {} answered, {} failed, {} recorded without their request",
                calls.sent, calls.answered, calls.failed, calls.without_request
            ));
        }
        if self.clock_published > 0 {
            lines.push(format!("/clock: {} sent", self.clock_published));
        }
        let stopped = if self.stopped { " (stopped)" } else { "" };
        if let Some(lockstep) = &self.lockstep {
            let elapsed = lockstep.elapsed.as_secs_f64();
            let span = lockstep.bag_span.as_secs_f64();
            lines.push(format!(
                "lock-step: {} message(s){stopped} in {elapsed:.3} s for {span:.3} s of bag time ({:.1}x real time); {} settle waits, {} rounds, {} ran out",
                self.total_sent(),
                span / elapsed.max(1e-9),
                lockstep.waits,
                lockstep.rounds,
                lockstep.unsettled
            ));
            return lines;
        }
        let l = self.lateness();
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        lines.push(format!(
            "{} message(s) sent{stopped}; send time - planned time: p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms ({} later than 10 ms)",
            self.total_sent(),
            ms(l.p50),
            ms(l.p99),
            ms(l.max),
            self.late
        ));
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_says_what_was_sent_and_how_late() {
        let mut report = PlayReport::default();
        report.sent.insert("/a".into(), 2);
        report.sent.insert("/b".into(), 1);
        report.lateness_ns = vec![1_000_000, 2_000_000, 3_000_000];
        report.lateness_max_ns = 3_000_000;
        report.clock_published = 5;
        let lines = report.describe();
        assert_eq!(lines[..3], ["/a: 2 sent", "/b: 1 sent", "/clock: 5 sent"]);
        assert!(
            lines[3].starts_with("3 message(s) sent; send time - planned time: p50 2.000 ms"),
            "{lines:?}"
        );
        assert!(
            lines[3].ends_with("max 3.000 ms (0 later than 10 ms)"),
            "{lines:?}"
        );
        report.stopped = true;
        report.lockstep = Some(LockstepReport::default());
        let last = report.describe().pop().unwrap();
        assert!(
            last.starts_with("lock-step: 3 message(s) (stopped) in 0.000 s"),
            "{last}"
        );
    }
}
