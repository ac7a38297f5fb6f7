//! The background writer thread: drains every thread's queue into packets at a fixed
//! interval and on request, and appends whole packets to each stream file.
//!
//! What it promises on top of the module's:
//! - Fairness: one pass over a queue takes at most what it held when the pass began, so a
//!   thread that traces without pause cannot keep the writer from the other queues, from
//!   answering a flush, or from stopping.
//! - Every packet is exactly one page ([`PACKET_BYTES`]): an event too large for one has
//!   its longest strings cut to fit, visibly (see [`PacketBuilder::try_push`]), so its
//!   handles still reach the trace; one that cannot fit even so (none in today's schema)
//!   is discarded and counted, as LTTng discards an event larger than a sub-buffer.
//! - A stream file only ever holds whole packets: when a `write` fails part-way (disk
//!   full, file-size limit) the file is cut back to its last whole packet.
//! - A failure is per stream: a stream file that cannot be created or written loses that
//!   stream's events (counted in [`Stats::events_lost`]) and the writer keeps writing the
//!   others, retrying the failed one at the next drain. The first error is what `flush`
//!   and `stop` return.
//! - Losses show in the trace where a later packet of the stream can carry them: every
//!   packet's `events_discarded` counts the stream's queue overflows, its too-large events
//!   and its events lost to failed writes, and a stream whose count grew without a new
//!   event gets an empty packet carrying it.

use super::Error;
use super::buffer::{Registry, ThreadStream};
use super::packet::{EventContext, PACKET_BYTES, PacketBuilder, PacketInfo};
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Packets are written in batches of about this many bytes, one `write` each.
const BATCH_BYTES: usize = 256 * 1024;

/// What a session asks of its writer.
#[derive(Debug)]
pub(crate) enum Command {
    /// Drain and write everything queued so far, then answer.
    Flush(Sender<Result<(), Error>>),
    /// Drain, write and finish.
    Stop,
}

/// What a finished session wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Events written to the trace.
    pub events_written: u64,
    /// Events discarded because a thread's queue was full or because one event alone did
    /// not fit in a packet even with its strings cut (also in the trace).
    pub events_discarded: u64,
    /// Events lost because writing failed (see the error `stop` returned); in the trace
    /// too when a later packet of their stream could be written.
    pub events_lost: u64,
    /// Streams (threads that traced and got a stream file).
    pub streams: u64,
    /// Packets written.
    pub packets: u64,
}

/// What the writer keeps about one thread's stream.
struct StreamState {
    /// `None` until its first packet, and while the file cannot be created.
    file: Option<File>,
    path: PathBuf,
    /// Bytes of whole packets in the file: where a failed write is cut back to.
    len: u64,
    /// True once the file could not be cut back: it may end in a partial packet, so
    /// nothing more is appended to it.
    broken: bool,
    next_seq_num: u64,
    context: EventContext,
    /// Events discarded by the writer because they do not fit in a packet, even cut.
    oversized: u64,
    /// Events lost because their packets could not be written.
    lost: u64,
    /// The `events_discarded` of the last packet in the file.
    reported: u64,
    /// The latest timestamp of an event taken from the queue: where an empty packet
    /// carrying a new discard count is placed.
    last_timestamp: u64,
}

impl StreamState {
    /// The stream's running discard count, as its next packet states it.
    fn discarded(&self, stream: &ThreadStream) -> u64 {
        stream.discarded() + self.oversized + self.lost
    }
}

/// A packet waiting in the batch: its events and the discard count it states.
#[derive(Clone, Copy)]
struct Pending {
    events: u64,
    discarded: u64,
}

pub(crate) struct Writer {
    uuid: [u8; 16],
    registry: Arc<Registry>,
    interval: Duration,
    dir: PathBuf,
    vpid: i32,
    /// The process's name, for threads that have none of their own.
    procname: String,
    streams: HashMap<u64, StreamState>,
    packet: PacketBuilder,
    /// Whole packets waiting for their `write`, and what each holds.
    batch: Vec<u8>,
    pending: Vec<Pending>,
    /// The `events_discarded` of the last packet in the file before the batch.
    batch_reported: u64,
    stats: Stats,
    /// Queue discards of streams already retired.
    retired_discarded: u64,
    /// Events discarded for not fitting in a packet, all streams.
    oversized: u64,
    /// The first error, reported by every later flush and by stop.
    failure: Option<Error>,
}

impl Writer {
    pub(crate) fn new(
        dir: PathBuf,
        uuid: [u8; 16],
        procname: String,
        registry: Arc<Registry>,
        interval: Duration,
    ) -> Self {
        Writer {
            uuid,
            registry,
            interval,
            dir,
            vpid: std::process::id() as i32,
            procname,
            streams: HashMap::new(),
            packet: PacketBuilder::default(),
            batch: Vec::new(),
            pending: Vec::new(),
            batch_reported: 0,
            stats: Stats::default(),
            retired_discarded: 0,
            oversized: 0,
            failure: None,
        }
    }

    /// Runs until told to stop (or until the session is gone); returns what was written,
    /// or the first error.
    pub(crate) fn run(mut self, commands: Receiver<Command>) -> Result<Stats, Error> {
        let mut next_flush = Instant::now() + self.interval;
        loop {
            match commands.recv_deadline(next_flush) {
                Err(RecvTimeoutError::Timeout) => {
                    self.drain();
                    next_flush += self.interval;
                    let now = Instant::now();
                    if next_flush < now {
                        // Fell behind (a slow disk): keep the interval, skip the backlog.
                        next_flush = now + self.interval;
                    }
                }
                Ok(Command::Flush(reply)) => {
                    self.drain();
                    // The session may have given up waiting; nothing to tell then.
                    let _ = reply.send(self.failure.clone().map_or(Ok(()), Err));
                }
                Ok(Command::Stop) | Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        self.drain();
        self.sync_open_files();
        match self.failure {
            Some(error) => Err(error),
            None => Ok(self.stats),
        }
    }

    fn fail(&mut self, error: Error) {
        self.failure.get_or_insert(error);
    }

    /// Puts the open stream files on disk at stop, so a write-back error is reported
    /// rather than lost. Not as threads exit (that stalled the writer on every thread's
    /// end) nor at flush (which promises readers the events, not durability).
    fn sync_open_files(&mut self) {
        let mut errors = Vec::new();
        for state in self.streams.values() {
            if let Some(file) = &state.file
                && let Err(source) = file.sync_all()
            {
                errors.push(Error::io("write back", &state.path, source));
            }
        }
        for error in errors {
            self.fail(error);
        }
    }

    /// Writes what every queue holds, then forgets the streams of exited threads.
    fn drain(&mut self) {
        for stream in self.registry.streams() {
            self.drain_stream(&stream);
        }
        for stream in self.registry.retire_finished() {
            // The thread exited and its queue is empty: report what it lost, close its
            // file (unsynced: see `sync_open_files`).
            self.report_discards(&stream);
            self.streams.remove(&stream.instance_id);
            self.retired_discarded += stream.discarded();
        }
        let live: u64 = self.registry.streams().iter().map(|s| s.discarded()).sum();
        self.stats.events_discarded = self.retired_discarded + live + self.oversized;
    }

    /// Makes the state of `stream`, with its file created if it can be; false when the
    /// file cannot be written (the error is recorded).
    fn open(&mut self, stream: &ThreadStream) -> bool {
        let state = self.streams.entry(stream.instance_id).or_insert_with(|| {
            let procname = if stream.procname.is_empty() {
                &self.procname
            } else {
                &stream.procname
            };
            StreamState {
                file: None,
                path: self.dir.join(format!("stream_{}", stream.instance_id)),
                len: 0,
                broken: false,
                next_seq_num: 0,
                context: EventContext {
                    vtid: stream.vtid,
                    vpid: self.vpid,
                    procname: EventContext::procname_field(procname),
                },
                oversized: 0,
                lost: 0,
                reported: 0,
                last_timestamp: 0,
            }
        });
        if state.broken {
            return false;
        }
        if state.file.is_none() {
            match OpenOptions::new()
                .append(true)
                .create_new(true)
                .open(&state.path)
            {
                Ok(file) => {
                    state.file = Some(file);
                    self.stats.streams += 1;
                }
                Err(source) => {
                    let error = Error::io("create the stream file", &state.path, source);
                    self.failure.get_or_insert(error);
                    return false;
                }
            }
        }
        true
    }

    /// Writes the events that `stream` held when the pass began, a batch of whole
    /// packets per `write`.
    fn drain_stream(&mut self, stream: &ThreadStream) {
        let mut budget = stream.len();
        if budget == 0 {
            self.report_discards(stream);
            return;
        }
        let mut pop = || {
            budget = budget.checked_sub(1)?;
            stream.pop()
        };
        if !self.open(stream) {
            // No file to write to: take the events anyway, so the queue does not fill.
            let mut lost = 0;
            let mut last_timestamp = None;
            while let Some(record) = pop() {
                lost += 1;
                last_timestamp = Some(record.timestamp);
            }
            self.stats.events_lost += lost;
            if let Some(state) = self.streams.get_mut(&stream.instance_id) {
                state.lost += lost;
                state.last_timestamp = last_timestamp.unwrap_or(state.last_timestamp);
            }
            return;
        }
        self.start_batch(stream.instance_id);
        let mut next = pop();
        while next.is_some() {
            let state = self.streams.get_mut(&stream.instance_id).expect("opened");
            self.packet.begin(&self.uuid, stream.instance_id);
            while let Some(record) = next.take() {
                state.last_timestamp = record.timestamp;
                if self.packet.try_push(&record, &state.context) {
                    next = pop();
                } else if self.packet.events() == 0 {
                    // Alone it does not fit in a packet, even cut: discard it, as LTTng does.
                    state.oversized += 1;
                    self.oversized += 1;
                    next = pop();
                } else {
                    next = Some(record);
                    break;
                }
            }
            if self.packet.events() > 0 {
                let first = self.packet.first_timestamp();
                let events = self.packet.events();
                let discarded = state.discarded(stream);
                if state.next_seq_num == 0 && discarded > 0 {
                    push_empty(
                        &mut self.batch,
                        &mut self.pending,
                        state,
                        stream,
                        &self.uuid,
                        first,
                        0,
                    );
                }
                let info = PacketInfo {
                    seq_num: state.next_seq_num,
                    events_discarded: discarded,
                    cpu_id: stream.cpu_id,
                };
                self.batch.extend_from_slice(self.packet.finish(info));
                self.pending.push(Pending { events, discarded });
                state.next_seq_num += 1;
                state.reported = discarded;
            }
            if self.batch.len() >= BATCH_BYTES {
                self.write_batch(stream.instance_id);
            }
        }
        self.write_batch(stream.instance_id);
        self.report_discards(stream);
    }

    /// Appends an empty packet carrying `stream`'s discard count if it grew since its
    /// last packet, so the trace shows losses that no later event would carry.
    fn report_discards(&mut self, stream: &ThreadStream) {
        let Some(state) = self.streams.get(&stream.instance_id) else {
            return;
        };
        if state.discarded(stream) == state.reported {
            return;
        }
        if !self.open(stream) {
            return;
        }
        self.start_batch(stream.instance_id);
        let state = self.streams.get_mut(&stream.instance_id).expect("opened");
        let discarded = state.discarded(stream);
        let at = state.last_timestamp;
        if state.next_seq_num == 0 {
            push_empty(
                &mut self.batch,
                &mut self.pending,
                state,
                stream,
                &self.uuid,
                at,
                0,
            );
        }
        push_empty(
            &mut self.batch,
            &mut self.pending,
            state,
            stream,
            &self.uuid,
            at,
            discarded,
        );
        self.write_batch(stream.instance_id);
    }

    fn start_batch(&mut self, instance_id: u64) {
        self.batch.clear();
        self.pending.clear();
        self.batch_reported = self.streams.get(&instance_id).map_or(0, |s| s.reported);
    }

    /// Appends the batch to the stream's file. If the write fails part-way, the file is
    /// cut back to its last whole packet and the events of the packets not kept are
    /// counted lost.
    fn write_batch(&mut self, instance_id: u64) {
        if self.batch.is_empty() {
            return;
        }
        let Some(state) = self.streams.get_mut(&instance_id) else {
            return;
        };
        let Some(file) = &mut state.file else {
            return;
        };
        let (written, result) = append(file, &self.batch);
        let kept = match result {
            Ok(()) => self.pending.len(),
            Err(source) => {
                let kept = written / PACKET_BYTES;
                let error = Error::io("write packets to", &state.path, source);
                self.failure.get_or_insert(error);
                let whole = state.len + (kept * PACKET_BYTES) as u64;
                if let Err(source) = file.set_len(whole) {
                    state.broken = true;
                    state.file = None;
                    let error = Error::io("cut back the partial packet of", &state.path, source);
                    self.failure.get_or_insert(error);
                }
                kept
            }
        };
        let (done, undone) = self.pending.split_at(kept);
        state.len += (kept * PACKET_BYTES) as u64;
        self.stats.packets += kept as u64;
        self.stats.events_written += done.iter().map(|p| p.events).sum::<u64>();
        if !undone.is_empty() {
            let lost: u64 = undone.iter().map(|p| p.events).sum();
            state.lost += lost;
            self.stats.events_lost += lost;
            state.next_seq_num -= undone.len() as u64;
            // With no packet of this batch in the file, the one before it is last.
            state.reported = done.last().map_or(self.batch_reported, |p| p.discarded);
        }
        self.batch.clear();
        self.pending.clear();
        self.batch_reported = state.reported;
    }
}

/// Appends an empty packet at `timestamp` stating `discarded` to the batch.
fn push_empty(
    batch: &mut Vec<u8>,
    pending: &mut Vec<Pending>,
    state: &mut StreamState,
    stream: &ThreadStream,
    uuid: &[u8; 16],
    timestamp: u64,
    discarded: u64,
) {
    // babeltrace2 counts discards as the difference between two packets and gives no
    // count for a stream's first packet: a stream whose first packet would state
    // discards starts with an empty one stating none.
    let info = PacketInfo {
        seq_num: state.next_seq_num,
        events_discarded: discarded,
        cpu_id: stream.cpu_id,
    };
    batch.extend_from_slice(&PacketBuilder::empty(
        uuid,
        stream.instance_id,
        timestamp,
        info,
    ));
    pending.push(Pending {
        events: 0,
        discarded,
    });
    state.next_seq_num += 1;
    state.reported = discarded;
}

/// Writes all of `bytes` to `file`; returns how many bytes were written, and the error
/// that stopped it short.
fn append(file: &mut File, bytes: &[u8]) -> (usize, io::Result<()>) {
    let mut written = 0;
    while written < bytes.len() {
        match file.write(&bytes[written..]) {
            Ok(0) => return (written, Err(io::ErrorKind::WriteZero.into())),
            Ok(n) => written += n,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return (written, Err(error)),
        }
    }
    (written, Ok(()))
}
