//! The playback thread: each message sent at its planned time on the monotonic clock,
//! pauses, rate changes, seeks and messages asked for honoured, lateness kept; and
//! `/clock` published from the bag's time.

use super::*;
use kairos::trace::tp;

/// How long playing waits, at its end, for the answers to the service requests it sent.
const ANSWER_BOUND: Duration = Duration::from_secs(30);

/// The playing thread's state.
pub(super) struct Playback {
    /// Kept open while the publishers live.
    pub(super) _transport: Arc<ZenohTransport>,
    pub(super) bag: Bag,
    pub(super) outputs: HashMap<String, Output>,
    pub(super) topics: Vec<PlayedTopic>,
    pub(super) options: PlayOptions,
    pub(super) shared: Arc<Shared>,
    /// `/clock`: its rate (0 for a lock-step replay's, which moves once per message
    /// time) and publisher.
    pub(super) clock: Option<(f64, RawPublisher)>,
    /// A lock-step replay's side of the settle protocol.
    pub(super) settler: Option<Mutex<kairos_zenoh::settle::Settler>>,
    /// The bag time playing starts from (the bag's start plus the start offset).
    pub(super) origin_ns: u64,
    /// The last bag time played, if not the bag's end.
    pub(super) until_ns: Option<u64>,
    /// Requests from [`PlayerControl`]s (only this thread uses them).
    pub(super) requests: Mutex<Requests>,
}

/// How playing from a bag time ended.
pub(super) enum Outcome {
    /// Every message was sent.
    Ended,
    /// Stopped, or reading failed ([`PlayReport::error`]).
    Stopped,
    /// A seek: play again from this bag time.
    Seek(u64),
}

/// What the playing thread does with the message it holds.
pub(super) enum Turn {
    /// Send it: it is due at this time, or (`None`) it was asked for or it is lock step.
    Send(Option<Time>),
    Seek(u64),
    Stop,
}

impl Playback {
    pub(super) fn run(self) -> PlayReport {
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
            let periodic = self.clock.as_ref().filter(|(hz, _)| *hz > 0.0);
            let clock = periodic.map(|(hz, publisher)| {
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
        // A call's failure comes at the latest when the transport's query times out
        // (zenoh's `queries_default_timeout`); one bound for all services, and a stop
        // does not wait.
        let answers_by = steady.now() + KDuration::from(ANSWER_BOUND);
        for output in self.outputs.values() {
            if let Sink::Service(replay) = &output.sink {
                replay.wait_answers(answers_by, stop);
                report
                    .services
                    .insert(replay.service.clone(), replay.counts());
                // Its events were not published: its counts are the calls above.
                report.sent.remove(&self.topics[output.index].name);
            }
        }
        report
    }

    /// Plays the bag from the origin to the end (seeks followed); false if stopped or
    /// reading failed.
    pub(super) fn play_once(&self, report: &mut PlayReport, per_topic: &mut [u64]) -> bool {
        let mut from = self.origin_ns;
        loop {
            match self.play_from(from, report, per_topic) {
                Outcome::Ended => {
                    self.requests.lock().expect("not poisoned").end_of_bag();
                    return true;
                }
                Outcome::Stopped => return false,
                // Before the start of playing is the start, as rosbag2 clamps it.
                Outcome::Seek(to) => from = to.max(self.origin_ns),
            }
        }
    }

    /// Plays the messages from bag time `from_ns` on.
    fn play_from(&self, from_ns: u64, report: &mut PlayReport, per_topic: &mut [u64]) -> Outcome {
        let mut filter = ReadFilter::all()
            .topics(self.outputs.keys().cloned())
            .start(from_ns);
        if let Some(until) = self.until_ns {
            filter = filter.end(until);
        }
        let messages = match self.bag.read(&filter) {
            Ok(messages) => messages,
            Err(e) => {
                report.error = Some(format!("cannot read the bag: {e}"));
                return Outcome::Stopped;
            }
        };
        // Read ahead on a thread of its own, as rosbag2 does, so that reading (a chunk to
        // load or decompress) does not hold up a send that is due.
        let (tx, rx) = sync_channel::<crate::Result<BagMessage>>(self.options.read_ahead);
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
            if self.settler.is_some() {
                return self.send_lockstep(rx.iter(), report, per_topic);
            }
            // The clock starts once the first message is at hand: opening the files is
            // not counted against the first sends.
            let first = rx.recv().ok();
            self.shared
                .timeline
                .lock()
                .expect("not poisoned")
                .jump(from_ns, self.shared.steady.now());
            self.send_all(first.into_iter().chain(rx.iter()), report, per_topic)
        })
    }

    /// Sends what the reader hands over, each message when due.
    pub(super) fn send_all(
        &self,
        messages: impl Iterator<Item = crate::Result<BagMessage>>,
        report: &mut PlayReport,
        per_topic: &mut [u64],
    ) -> Outcome {
        let late_ns = i64::try_from(self.options.late_threshold.as_nanos()).unwrap_or(i64::MAX);
        for message in messages {
            let message = match message {
                Ok(message) => message,
                Err(e) => {
                    report.error = Some(format!("stopped reading the bag: {e}"));
                    return Outcome::Stopped;
                }
            };
            let Some(output) = self.outputs.get(&*message.topic) else {
                continue;
            };
            let due = match self.turn(message.log_time) {
                Turn::Send(due) => due,
                Turn::Seek(to) => return Outcome::Seek(to),
                Turn::Stop => return Outcome::Stopped,
            };
            if output.moves_clock {
                if let Some((_, clock)) = &self.clock {
                    clock.publish(&clock_cdr(message.log_time));
                    report.clock_published += 1;
                }
            }
            let sent_at = self.shared.steady.now();
            let lateness = due.map(|due| sent_at.since(due).unwrap_or(KDuration::ZERO).as_nanos());
            self.send(output, &message, lateness);
            if let Some(lateness) = lateness {
                if lateness > late_ns {
                    report.late += 1;
                }
                if report.lateness_ns.len() < KEPT_LATENESS {
                    report.lateness_ns.push(lateness);
                }
                report.lateness_max_ns = report.lateness_max_ns.max(lateness);
            }
            per_topic[output.index] += 1;
            self.shared.sent.fetch_add(1, Ordering::AcqRel);
            self.requests.lock().expect("not poisoned").played();
        }
        Outcome::Ended
    }

    /// Sends what the reader hands over in lock step (see the module docs).
    fn send_lockstep(
        &self,
        messages: impl Iterator<Item = crate::Result<BagMessage>>,
        report: &mut PlayReport,
        per_topic: &mut [u64],
    ) -> Outcome {
        let (Some(settler), Some((_, clock)), Some(bound)) =
            (&self.settler, &self.clock, self.options.lockstep)
        else {
            return Outcome::Stopped;
        };
        let mut settler = settler.lock().expect("not poisoned");
        let stop = &self.shared.stop;
        let mut stats = report.lockstep.take().unwrap_or_default();
        let settle =
            |settler: &mut kairos_zenoh::settle::Settler, stats: &mut LockstepReport| -> bool {
                stats.waits += 1;
                match settler.wait(bound, &|| stop.is_cancelled()) {
                    Ok(settled) => stats.rounds += u64::from(settled.rounds),
                    Err(_) if stop.is_cancelled() => return false,
                    Err(unsettled) => {
                        stats.unsettled += 1;
                        log::warn!("kairos bag play --lockstep: {unsettled}");
                        if stats.first_unsettled.len() < KEPT_UNSETTLED {
                            stats.first_unsettled.push(unsettled.to_string());
                        }
                    }
                }
                true
            };
        let started = std::time::Instant::now();
        let (mut first_ns, mut clock_ns) = (None, None);
        let mut outcome = if settle(&mut settler, &mut stats) {
            Outcome::Ended
        } else {
            Outcome::Stopped
        };
        for message in messages {
            if !matches!(outcome, Outcome::Ended) {
                break;
            }
            let message = match message {
                Ok(message) => message,
                Err(e) => {
                    report.error = Some(format!("stopped reading the bag: {e}"));
                    outcome = Outcome::Stopped;
                    break;
                }
            };
            let Some(output) = self.outputs.get(&*message.topic) else {
                continue;
            };
            // Paused, or stopped (a lock-step replay does not seek).
            if !matches!(self.turn(message.log_time), Turn::Send(_)) {
                outcome = Outcome::Stopped;
                break;
            }
            first_ns.get_or_insert(message.log_time);
            if clock_ns != Some(message.log_time) {
                // Every process holds the new time, then each applies it and delivers
                // what its timers' outputs brought meanwhile (see kairos_zenoh::settle).
                clock.publish(&clock_cdr(message.log_time));
                report.clock_published += 1;
                clock_ns = Some(message.log_time);
                if !settle(&mut settler, &mut stats) {
                    outcome = Outcome::Stopped;
                    break;
                }
                settler.step(bound);
                if !settle(&mut settler, &mut stats) {
                    outcome = Outcome::Stopped;
                    break;
                }
            }
            self.send(output, &message, None);
            per_topic[output.index] += 1;
            self.shared.sent.fetch_add(1, Ordering::AcqRel);
            self.requests.lock().expect("not poisoned").played();
            if !settle(&mut settler, &mut stats) {
                outcome = Outcome::Stopped;
                break;
            }
        }
        settler.end(bound);
        stats.elapsed = started.elapsed();
        if let (Some(first), Some(last)) = (first_ns, clock_ns) {
            stats.bag_span = Duration::from_nanos(last.saturating_sub(first));
        }
        report.lockstep = Some(stats);
        outcome
    }

    /// Publishes `message` on `output` and traces it as a bag message (`kairos:bag_play`,
    /// where its chain starts): `lateness_ns` is how long after its due time it leaves
    /// (`None`: it was asked for, or lock step, and was due at once).
    fn send(&self, output: &Output, message: &BagMessage, lateness_ns: Option<i64>) {
        let publisher = match &output.sink {
            Sink::Topic(publisher) => publisher,
            Sink::Service(replay) => return replay.replay(&message.data),
        };
        let seq = publisher.publish(&message.data);
        tp::bag_play(
            publisher.trace_handle(),
            seq,
            &message.topic,
            i64::try_from(message.log_time).unwrap_or(i64::MAX),
            lateness_ns.map_or(-1, |late| late.max(0)),
        );
    }

    /// Waits until the message of bag time `log_ns` is to be sent: when it is due (paused
    /// time not counted; in lock step, once not paused), or at once when asked for (play
    /// next, burst: the bag's time then moves to it). A seek or a stop ends the wait.
    pub(super) fn turn(&self, log_ns: u64) -> Turn {
        let steady = &self.shared.steady;
        let lockstep = self.settler.is_some();
        let mut requests = self.requests.lock().expect("not poisoned");
        loop {
            if self.shared.stop.is_cancelled() {
                return Turn::Stop;
            }
            // The wake token is taken before the requests are looked at: a request that
            // comes in after cancels this token, so the sleep below cannot miss it.
            let (paused, wake, due) = {
                let t = self.shared.timeline.lock().expect("not poisoned");
                (t.paused, t.wake.clone(), t.due(log_ns))
            };
            if let Some(to) = requests.take(paused, lockstep) {
                return Turn::Seek(to);
            }
            if requests.asked() {
                let mut t = self.shared.timeline.lock().expect("not poisoned");
                t.jump(log_ns, steady.now());
                return Turn::Send(None);
            }
            if paused {
                // Until resumed or asked (the wake token is cancelled), or stopped.
                let _ = steady.sleep_for(KDuration::from_secs(3600), &wake);
                continue;
            }
            if lockstep {
                return Turn::Send(None);
            }
            let due = due.expect("the timeline has started");
            if steady.sleep_until(due, &wake).is_ok() {
                return Turn::Send(Some(due));
            }
        }
    }

    /// Waits until zenoh routes every played topic to at least one subscriber, at most
    /// `limit`; returns the topics that have none.
    pub(super) fn wait_for_subscribers(&self, limit: Duration) -> Vec<String> {
        let steady = &self.shared.steady;
        let end = steady.now() + KDuration::from(limit);
        let missing = || {
            let mut left: Vec<(usize, String)> = self
                .outputs
                .values()
                .filter(|output| match &output.sink {
                    Sink::Topic(publisher) => !publisher.matched(),
                    Sink::Service(replay) => !replay.sender.is_ready(),
                })
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
pub(super) fn publish_clock(
    publisher: &RawPublisher,
    hz: f64,
    shared: &Shared,
    stop: &CancelToken,
) -> u64 {
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
pub(super) fn clock_cdr(ns: u64) -> [u8; 12] {
    let sec = i32::try_from(ns / 1_000_000_000).unwrap_or(i32::MAX);
    let nanosec = (ns % 1_000_000_000) as u32;
    let mut out = [0u8; 12];
    out[..4].copy_from_slice(&[0, 1, 0, 0]);
    out[4..8].copy_from_slice(&sec.to_le_bytes());
    out[8..].copy_from_slice(&nanosec.to_le_bytes());
    out
}

/// The `/clock` publisher: keep last 1, best effort (rclcpp's `ClockQoS`) unless
/// `reliable`.
pub(super) fn clock_publisher(
    transport: &ZenohTransport,
    node: &Node,
    reliable: bool,
) -> crate::Result<RawPublisher> {
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
            if reliable {
                Qos::keep_last(1)
            } else {
                Qos::keep_last(1).best_effort()
            },
        )
        .map_err(|e| Error::Play(format!("cannot publish /clock: {e}")))
}
