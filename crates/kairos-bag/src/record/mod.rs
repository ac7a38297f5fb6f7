//! Recording a running system into a bag: every message of the selected topics, from every
//! kairos process and ROS 2 (rmw_zenoh) process the Zenoh transport reaches, as rosbag2's
//! recorder stores it. Needs the `zenoh` feature.
//!
//! What a [`Recorder`] promises:
//! - **Topics as the graph announces them.** Topics are found in the graph (at start and
//!   whenever it changes, or at least every [`RecordOptions::discovery_period`]) as other
//!   processes' publishers announce them (a subscription never receives its own
//!   process's messages), and chosen by [`Selection`] as `ros2 bag record` chooses them
//!   (a list, all, a regex, an exclude regex; hidden topics only when asked). Each is
//!   recorded with the type and RIHS01 hash its first publisher announces, the QoS
//!   profiles its publishers offer, and its message definition: the files of the
//!   installed package (`AMENT_PREFIX_PATH`, read as rosbag2 reads them, see
//!   [`crate::definition_source`]), else kairos's own when it ships the type, else an
//!   empty schema, named in [`RecordReport::without_definition`]. The subscription's QoS is chosen as rosbag2
//!   chooses it: reliable only if every publisher is, transient local only if every
//!   publisher is (then the publishers' history is recorded too).
//! - **Bytes as they were sent.** Messages are written undecoded, log time = receive time
//!   on the recorder's clock (simulation time when that clock is on it), publish time =
//!   the publisher's source timestamp, sequence = the publisher's sequence number.
//! - **Nothing lost silently.** Between the transport and the writer is a queue bounded in
//!   bytes ([`RecordOptions::max_cache_bytes`]); a message that does not fit is dropped
//!   and counted. Gaps in a publisher's sequence numbers are counted. A write that fails
//!   (a full disk) stops writing: the error is kept ([`Recorder::failure`]), later
//!   messages are counted as not written, and the files written so far stay readable.
//!   Every count is in the [`RecordReport`] and in the bag's `custom_data`
//!   (`kairos.recorder.*`). For each topic, `received = written + dropped_queue +
//!   not_written` once the recorder has stopped.
//! - **Traced.** In a traced process (`KAIROS_TRACE`), each subscription is traced as
//!   every kairos subscription (`rcl_subscription_init`, `rmw_take` on arrival), a
//!   message dropped at the queue is `kairos:message_drop`, and a message written is
//!   `kairos:bag_write`, all under the publisher's handle and sequence number, so a trace
//!   follows a message from its publisher, in any traced process, into the bag.
//! - **Controllable** from any thread through a [`RecorderControl`]
//!   ([`Recorder::control`]), as rosbag2's recorder control services: pause and resume
//!   (while paused, arriving messages are not recorded, as rosbag2's; they are counted in
//!   [`TopicCounts::while_paused`]), and split the bag now. Recording can start paused
//!   ([`RecordOptions::start_paused`]). Every split, by size, by duration or asked for, is
//!   handed to [`RecordOptions::on_split`] with the closed and opened files, in order.
//! - **Snapshot mode** ([`RecordOptions::snapshot_mode`], rosbag2's `--snapshot-mode`):
//!   the latest [`RecordOptions::max_cache_bytes`] of messages are held in memory and
//!   written only when [`RecorderControl::snapshot`] asks, in arrival order; what ages
//!   out, or is still held at stop, is counted ([`TopicCounts::not_snapshotted`]).
//!   For each topic, `received = written + dropped_queue + not_written +
//!   not_snapshotted` once the recorder has stopped.
//! - **Stops whole.** [`Recorder::stop`] undeclares the subscriptions, writes every queued
//!   message, closes the last file with its summary and writes `metadata.yaml`.

use crate::definition_source::LocalDefinitionSource;
use crate::{BagMetadata, BagWriter, Error, FileSplit, TopicInfo, WriterOptions};
use kairos::graph::Node;
use kairos::time::Clock;
use kairos::trace::tp;
use kairos_zenoh::ZenohTransport;
use kairos_zenoh::graph_key::WireQos;
use kairos_zenoh::published::published_topics;
use kairos_zenoh::raw::{RawSample, RawTopic};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::thread::JoinHandle;
use std::time::Duration;

mod control;
mod qos_choice;
mod report;
mod selection;
mod snapshot;
pub use control::RecorderControl;
use qos_choice::profile_of;
pub use qos_choice::subscription_qos;
use report::record_counts;
pub use report::{RecordReport, TopicCounts};
pub use selection::Selection;
use snapshot::{NOT_IN_SNAPSHOT_MODE, Pending, SnapshotBuffer};

/// How a [`Recorder`] records.
#[derive(Debug, Clone)]
pub struct RecordOptions {
    /// The topics.
    pub selection: Selection,
    /// The bag's files: compression, splitting, chunk size.
    pub writer: WriterOptions,
    /// The most bytes of messages waiting for the writer (rosbag2's `--max-cache-size`,
    /// 100 MiB by default); a message that does not fit is dropped and counted.
    pub max_cache_bytes: u64,
    /// How often the graph is looked at for new topics, at the least (rosbag2's
    /// `--topic-polling-interval`, 100 ms); a change in the graph is looked at at once.
    pub discovery_period: Duration,
    /// Start paused (rosbag2's `--start-paused`): nothing is recorded until resumed.
    pub start_paused: bool,
    /// Snapshot mode (rosbag2's `--snapshot-mode`): the latest `max_cache_bytes` of
    /// messages are kept in memory and written only when a snapshot is asked for
    /// ([`RecorderControl::snapshot`]); see [`snapshot`](self#snapshot-mode).
    pub snapshot_mode: bool,
    /// Called on the writer's thread after each split of the bag (rosbag2 publishes
    /// `events/write_split` from it).
    pub on_split: Option<SplitHook>,
}

/// What to do after each split of the bag: see [`RecordOptions::on_split`].
#[derive(Clone)]
pub struct SplitHook(pub Arc<dyn Fn(&FileSplit) + Send + Sync>);

impl std::fmt::Debug for SplitHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SplitHook")
    }
}

impl Default for RecordOptions {
    fn default() -> Self {
        Self {
            selection: Selection::default(),
            writer: WriterOptions::default(),
            max_cache_bytes: 100 * 1024 * 1024,
            discovery_period: Duration::from_millis(100),
            start_paused: false,
            snapshot_mode: false,
            on_split: None,
        }
    }
}

/// Records the selected topics into a bag until [`stop`](Self::stop) (see the module docs).
#[derive(Debug)]
pub struct Recorder {
    shared: Arc<Shared>,
    /// The writer's queue, for the requests it answers (splits).
    requests: SyncSender<Event>,
    discovery: Option<JoinHandle<()>>,
    writer: Option<JoinHandle<WriterEnd>>,
}

#[derive(Debug, Default)]
struct TopicStats {
    received: AtomicU64,
    written: AtomicU64,
    dropped_queue: AtomicU64,
    not_written: AtomicU64,
    lost: AtomicU64,
    while_paused: AtomicU64,
    not_snapshotted: AtomicU64,
}

impl TopicStats {
    fn counts(&self) -> TopicCounts {
        TopicCounts {
            received: self.received.load(Ordering::Acquire),
            written: self.written.load(Ordering::Acquire),
            dropped_queue: self.dropped_queue.load(Ordering::Acquire),
            not_written: self.not_written.load(Ordering::Acquire),
            lost_in_transport: self.lost.load(Ordering::Acquire),
            while_paused: self.while_paused.load(Ordering::Acquire),
            not_snapshotted: self.not_snapshotted.load(Ordering::Acquire),
        }
    }
}

enum Event {
    Topic(TopicInfo),
    Message(Pending),
    /// Split the bag now; the answer is the split, or why not.
    Split(SyncSender<Result<FileSplit, String>>),
    /// Write the snapshot buffer now; the answer is how many messages it held, or why not.
    Snapshot(SyncSender<Result<u64, String>>),
    Stop,
}

/// A message as traces name it: the subscription that received it, its publisher and
/// the publisher's sequence number.
#[derive(Debug, Clone, Copy)]
struct Traced {
    subscription: u64,
    publisher: u64,
    seq: u64,
}

struct Shared {
    /// `true` while messages may enter the queue; a sender holds the read lock from its
    /// check to its send, so every message sent comes before [`Event::Stop`].
    open: RwLock<bool>,
    /// While set, arriving messages are counted, not recorded.
    paused: AtomicBool,
    /// Set by `stop`, and by the graph watch (to look again at once).
    wake: (Mutex<Wake>, Condvar),
    topics: Mutex<BTreeMap<String, Arc<TopicStats>>>,
    without_definition: Mutex<Vec<String>>,
    queued_bytes: AtomicU64,
    /// Messages in the queue (the depth traces give).
    queued_messages: AtomicU64,
    failed: Mutex<Option<String>>,
}

#[derive(Default)]
struct Wake {
    stop: bool,
    graph_changed: bool,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared").finish_non_exhaustive()
    }
}

struct WriterEnd {
    metadata: Option<BagMetadata>,
    error: Option<Error>,
}

impl Recorder {
    /// Creates the bag `dir` (which must not exist) and starts recording what `options`
    /// select from the graph of `transport`, through subscriptions announced under `node`,
    /// stamping receive times on `clock`.
    pub fn start(
        transport: Arc<ZenohTransport>,
        node: Node,
        clock: Clock,
        dir: impl AsRef<Path>,
        options: RecordOptions,
    ) -> crate::Result<Self> {
        if options.selection.is_empty() {
            return Err(Error::InvalidOption(
                "no topic selected: name topics, or choose all (-a) or a regex (--regex)".into(),
            ));
        }
        if options.snapshot_mode && options.max_cache_bytes == 0 {
            return Err(Error::InvalidOption(
                "snapshot mode keeps the latest max_cache_bytes of messages: give it more than 0 (--max-cache-size)".into(),
            ));
        }
        let mut writer = BagWriter::create(dir, options.writer.clone())?;
        writer.set_custom_data("kairos.recorder", "kairos bag record");
        let shared = Arc::new(Shared {
            open: RwLock::new(true),
            paused: AtomicBool::new(options.start_paused),
            wake: (Mutex::new(Wake::default()), Condvar::new()),
            topics: Mutex::new(BTreeMap::new()),
            without_definition: Mutex::new(Vec::new()),
            queued_bytes: AtomicU64::new(0),
            queued_messages: AtomicU64::new(0),
            failed: Mutex::new(None),
        });
        // The queue is bounded in bytes by `max_cache_bytes`; the count bound only keeps
        // a flood of empty messages from growing it without end.
        let (tx, rx) = sync_channel::<Event>(65_536);
        let writer = {
            let shared = shared.clone();
            let on_split = options.on_split.clone();
            let snapshot = options
                .snapshot_mode
                .then(|| SnapshotBuffer::new(options.max_cache_bytes));
            std::thread::Builder::new()
                .name("kairos-bag-writer".into())
                .spawn(move || write_loop(writer, rx, &shared, on_split, snapshot))
                .map_err(|e| Error::InvalidOption(format!("cannot start the writer: {e}")))?
        };
        {
            let shared = Arc::downgrade(&shared);
            transport.graph().watch(Box::new(move || {
                if let Some(shared) = shared.upgrade() {
                    shared.wake.0.lock().expect("not poisoned").graph_changed = true;
                    shared.wake.1.notify_all();
                }
            }));
        }
        let requests = tx.clone();
        let discovery = {
            let shared = shared.clone();
            let discoverer = Discoverer {
                transport,
                node,
                clock,
                options,
                tx,
                subscriptions: Vec::new(),
                recorded: BTreeMap::new(),
                definitions: LocalDefinitionSource::from_env(),
            };
            std::thread::Builder::new()
                .name("kairos-bag-discovery".into())
                .spawn(move || discoverer.run(&shared))
                .map_err(|e| Error::InvalidOption(format!("cannot start discovery: {e}")))?
        };
        Ok(Self {
            shared,
            requests,
            discovery: Some(discovery),
            writer: Some(writer),
        })
    }

    /// A handle that pauses, resumes and splits this recording from any thread.
    pub fn control(&self) -> RecorderControl {
        RecorderControl {
            shared: self.shared.clone(),
            requests: self.requests.clone(),
        }
    }

    /// The counts so far, per recorded topic.
    pub fn counts(&self) -> BTreeMap<String, TopicCounts> {
        let topics = self.shared.topics.lock().expect("not poisoned");
        topics
            .iter()
            .map(|(k, v)| (k.clone(), v.counts()))
            .collect()
    }

    /// The topics recorded so far.
    pub fn topics(&self) -> Vec<String> {
        let topics = self.shared.topics.lock().expect("not poisoned");
        topics.keys().cloned().collect()
    }

    /// Why writing stopped (a full disk), if it did: the recording should then be stopped.
    pub fn failure(&self) -> Option<String> {
        self.shared.failed.lock().expect("not poisoned").clone()
    }

    /// Stops recording: no message enters after this; every queued one is written; the
    /// bag is closed. Returns what happened to every topic's messages.
    pub fn stop(mut self) -> RecordReport {
        self.finish()
    }

    fn finish(&mut self) -> RecordReport {
        {
            let mut wake = self.shared.wake.0.lock().expect("not poisoned");
            wake.stop = true;
            self.shared.wake.1.notify_all();
        }
        if let Some(discovery) = self.discovery.take() {
            let _ = discovery.join();
        }
        let end = self.writer.take().map(|w| w.join());
        let (metadata, error) = match end {
            Some(Ok(end)) => (end.metadata, end.error),
            Some(Err(_)) => (
                None,
                Some(Error::InvalidOption("the bag writer panicked".into())),
            ),
            None => (None, None),
        };
        RecordReport {
            metadata,
            topics: self.counts(),
            without_definition: self
                .shared
                .without_definition
                .lock()
                .expect("not poisoned")
                .clone(),
            error,
        }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        if self.writer.is_some() {
            let _ = self.finish();
        }
    }
}

/// The discovery thread: subscribes each newly chosen topic; at stop, closes the queue.
struct Discoverer {
    transport: Arc<ZenohTransport>,
    node: Node,
    clock: Clock,
    options: RecordOptions,
    tx: SyncSender<Event>,
    subscriptions: Vec<kairos::graph::transport::Declaration>,
    /// The type each recorded topic was recorded with.
    recorded: BTreeMap<String, String>,
    /// Definitions of installed packages (`AMENT_PREFIX_PATH`), before kairos's own.
    definitions: LocalDefinitionSource,
}

impl Discoverer {
    fn run(mut self, shared: &Arc<Shared>) {
        loop {
            self.discover(shared);
            let (lock, condvar) = &shared.wake;
            let mut wake = lock.lock().expect("not poisoned");
            if !wake.stop && !wake.graph_changed {
                wake = condvar
                    .wait_timeout(wake, self.options.discovery_period)
                    .expect("not poisoned")
                    .0;
            }
            if wake.stop {
                break;
            }
            wake.graph_changed = false;
        }
        // Close the gate first: once it is closed no callback sends, so `Stop` is last.
        *shared.open.write().expect("not poisoned") = false;
        self.subscriptions.clear();
        let _ = self.tx.send(Event::Stop);
    }

    fn discover(&mut self, shared: &Arc<Shared>) {
        let tokens = self.transport.graph().tokens();
        // A subscription never receives its own session's messages: a topic only this
        // process publishes (the recorder's split events, its /rosout) would stay empty.
        let own = self.transport.session().zid().to_string();
        for (topic, published) in published_topics(&tokens, Some(&own)) {
            if self.recorded.contains_key(topic) {
                continue;
            }
            let ros_type = published.ros_type();
            if !self.options.selection.wants(topic, ros_type.as_deref()) {
                continue;
            }
            let endpoint = published.endpoint;
            let Some(ros_type) = ros_type else {
                log::warn!(
                    "kairos bag record: {topic} announces the type {}, which is not a ROS 2 message type; not recorded",
                    endpoint.dds_type
                );
                self.recorded.insert(topic.to_owned(), String::new());
                continue;
            };
            if let Err(e) =
                self.subscribe(shared, topic, &ros_type, &endpoint.hash, &published.offered)
            {
                log::warn!("kairos bag record: cannot record {topic}: {e}");
            }
            self.recorded.insert(topic.to_owned(), ros_type);
        }
    }

    fn subscribe(
        &mut self,
        shared: &Arc<Shared>,
        topic: &str,
        ros_type: &str,
        hash: &str,
        offered: &[&WireQos],
    ) -> Result<(), String> {
        let schema_text = self.definitions.recorded_definition(ros_type).unwrap_or_else(|e| {
            log::warn!(
                "kairos bag record: {topic} is recorded without its definition ({e}); readers that need one cannot decode it"
            );
            shared
                .without_definition
                .lock()
                .expect("not poisoned")
                .push(topic.to_owned());
            String::new()
        });
        let info = TopicInfo::new(topic, ros_type)
            .with_type_hash(hash)
            .with_qos(offered.iter().map(|q| profile_of(q)).collect())
            .with_schema_text(schema_text);
        // Before the subscription exists, so the writer knows the topic before any message.
        self.tx
            .send(Event::Topic(info))
            .map_err(|_| "the writer has stopped".to_owned())?;
        let stats = Arc::new(TopicStats::default());
        shared
            .topics
            .lock()
            .expect("not poisoned")
            .insert(topic.to_owned(), stats.clone());
        let deliver = {
            let (shared, stats, tx, clock) = (
                shared.clone(),
                stats.clone(),
                self.tx.clone(),
                self.clock.clone(),
            );
            let name: Arc<str> = Arc::from(topic);
            let limit = self.options.max_cache_bytes;
            move |sample: RawSample| {
                let open = shared.open.read().expect("not poisoned");
                if !*open {
                    return;
                }
                if shared.paused.load(Ordering::Acquire) {
                    stats.while_paused.fetch_add(1, Ordering::AcqRel);
                    return;
                }
                stats.received.fetch_add(1, Ordering::AcqRel);
                let traced = Traced {
                    subscription: sample.subscription_handle,
                    publisher: sample.publisher_handle(),
                    seq: sample.attachment.sequence_number as u64,
                };
                let dropped = |shared: &Shared| {
                    stats.dropped_queue.fetch_add(1, Ordering::AcqRel);
                    tp::message_drop(
                        traced.subscription,
                        traced.publisher,
                        traced.seq,
                        shared.queued_messages.load(Ordering::Acquire),
                    );
                };
                let size = sample.payload.len() as u64;
                let queued = shared.queued_bytes.fetch_add(size, Ordering::AcqRel);
                if queued + size > limit && queued > 0 {
                    shared.queued_bytes.fetch_sub(size, Ordering::AcqRel);
                    return dropped(&shared);
                }
                let event = Event::Message(Pending {
                    topic: name.clone(),
                    stats: stats.clone(),
                    log_time: u64::try_from(clock.now().nanos()).unwrap_or(0),
                    publish_time: u64::try_from(sample.attachment.source_timestamp).unwrap_or(0),
                    sequence: sample.attachment.sequence_number as u32,
                    data: sample.payload,
                    traced,
                });
                shared.queued_messages.fetch_add(1, Ordering::AcqRel);
                if let Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) =
                    tx.try_send(event)
                {
                    shared.queued_bytes.fetch_sub(size, Ordering::AcqRel);
                    shared.queued_messages.fetch_sub(1, Ordering::AcqRel);
                    dropped(&shared);
                }
            }
        };
        let lost = {
            let stats = stats.clone();
            move |count| {
                stats.lost.fetch_add(count, Ordering::AcqRel);
            }
        };
        let subscription = self
            .transport
            .raw_subscription(
                &self.node,
                RawTopic {
                    name: topic,
                    ros_type,
                    type_hash: hash,
                },
                subscription_qos(offered),
                deliver,
                lost,
            )
            .map_err(|e| e.to_string())?;
        self.subscriptions.push(subscription);
        Ok(())
    }
}

/// The writer thread: writes until [`Event::Stop`], then closes the bag.
fn write_loop(
    mut writer: BagWriter,
    rx: Receiver<Event>,
    shared: &Shared,
    on_split: Option<SplitHook>,
    mut snapshot: Option<SnapshotBuffer>,
) -> WriterEnd {
    let mut first_error: Option<Error> = None;
    // Every split is traced, and told to the hook (the recorder's split events).
    let announce = |split: &FileSplit| {
        tp::bag_split(
            &split.closed_file.display().to_string(),
            &split.opened_file.display().to_string(),
            split.reason.as_str(),
        );
        if let Some(hook) = &on_split {
            (hook.0)(split);
        }
    };
    let report_splits = |writer: &mut BagWriter| {
        for split in writer.take_splits() {
            announce(&split);
        }
    };
    let write = |writer: &mut BagWriter, first_error: &mut Option<Error>, m: Pending| {
        if first_error.is_some() {
            m.stats.not_written.fetch_add(1, Ordering::AcqRel);
            return;
        }
        match writer.write(&m.topic, m.log_time, m.publish_time, m.sequence, &m.data) {
            Ok(()) => {
                report_splits(writer);
                m.stats.written.fetch_add(1, Ordering::AcqRel);
                tp::bag_write(
                    m.traced.subscription,
                    m.traced.publisher,
                    m.traced.seq,
                    &m.topic,
                    i64::try_from(m.log_time).unwrap_or(i64::MAX),
                    m.data.len() as u64,
                );
            }
            Err(e) => {
                m.stats.not_written.fetch_add(1, Ordering::AcqRel);
                *shared.failed.lock().expect("not poisoned") = Some(e.to_string());
                *first_error = Some(e);
            }
        }
    };
    while let Ok(event) = rx.recv() {
        match event {
            Event::Split(reply) => {
                let answer = match &first_error {
                    Some(e) => Err(format!("writing had failed: {e}")),
                    None => writer.split().map_err(|e| e.to_string()),
                };
                if let Err(e) = &answer {
                    log::warn!("kairos bag record: cannot split the bag: {e}");
                }
                let split = writer.take_splits().pop();
                if let Some(split) = &split {
                    announce(split);
                }
                let _ =
                    reply.send(answer.and_then(|()| {
                        split.ok_or_else(|| "the writer reported no split".to_owned())
                    }));
            }
            Event::Snapshot(reply) => {
                let answer = match &mut snapshot {
                    None => Err(NOT_IN_SNAPSHOT_MODE.to_owned()),
                    Some(buffer) => {
                        let held = buffer.take();
                        let count = held.len() as u64;
                        for m in held {
                            write(&mut writer, &mut first_error, m);
                        }
                        match &first_error {
                            Some(e) => Err(format!("writing had failed: {e}")),
                            None => Ok(count),
                        }
                    }
                };
                let _ = reply.send(answer);
            }
            Event::Topic(info) => {
                let name = info.name.clone();
                if let Err(e) = writer.add_topic(info) {
                    log::warn!("kairos bag record: cannot add {name} to the bag: {e}");
                }
            }
            Event::Message(m) => {
                shared
                    .queued_bytes
                    .fetch_sub(m.data.len() as u64, Ordering::AcqRel);
                shared.queued_messages.fetch_sub(1, Ordering::AcqRel);
                match &mut snapshot {
                    Some(buffer) => buffer.push(m),
                    None => write(&mut writer, &mut first_error, m),
                }
            }
            Event::Stop => break,
        }
    }
    if let Some(buffer) = &mut snapshot {
        buffer.discard();
    }
    let counts: Vec<(String, TopicCounts)> = {
        let topics = shared.topics.lock().expect("not poisoned");
        topics
            .iter()
            .map(|(k, v)| (k.clone(), v.counts()))
            .collect()
    };
    record_counts(&mut writer, &counts);
    match writer.finish() {
        Ok(metadata) => WriterEnd {
            metadata: Some(metadata),
            error: first_error,
        },
        Err(e) => WriterEnd {
            metadata: None,
            error: Some(first_error.unwrap_or(e)),
        },
    }
}
