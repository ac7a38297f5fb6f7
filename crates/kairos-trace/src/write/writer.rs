//! The background writer thread: drains every thread's queue into packets at a fixed
//! interval and on request, and appends each packet to its stream file in one write.

use super::Error;
use super::buffer::{Registry, ThreadStream};
use super::packet::{EventContext, PacketBuilder, PacketInfo};
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::fs::File;
use std::io::Write;
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
    /// Events discarded because a thread's queue was full (also in the trace).
    pub events_discarded: u64,
    /// Events lost because writing failed (see the error `stop` returned).
    pub events_lost: u64,
    /// Streams (threads that traced).
    pub streams: u64,
    /// Packets written.
    pub packets: u64,
}

struct StreamFile {
    file: File,
    path: PathBuf,
    next_seq_num: u64,
    context: EventContext,
}

pub(crate) struct Writer {
    uuid: [u8; 16],
    registry: Arc<Registry>,
    interval: Duration,
    files: StreamFiles,
    packet: PacketBuilder,
    /// Whole packets waiting for their `write`.
    batch: Vec<u8>,
    stats: Stats,
    /// Discarded counts of streams already retired.
    retired_discarded: u64,
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
            files: StreamFiles {
                dir,
                vpid: std::process::id() as i32,
                procname,
                open: HashMap::new(),
                opened: 0,
            },
            packet: PacketBuilder::default(),
            batch: Vec::new(),
            stats: Stats::default(),
            retired_discarded: 0,
            failure: None,
        }
    }

    /// Runs until told to stop (or until the session is gone); returns what was written,
    /// or the first write error.
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
        self.stats.streams = self.files.opened;
        let open: Vec<StreamFile> = self.files.open.drain().map(|(_, file)| file).collect();
        for file in open {
            self.close(file);
        }
        match self.failure {
            Some(error) => Err(error),
            None => Ok(self.stats),
        }
    }

    /// Closes a stream file once its data is on disk, so a write-back error is reported
    /// rather than lost.
    fn close(&mut self, stream: StreamFile) {
        if let Err(source) = stream.file.sync_all() {
            self.failure
                .get_or_insert(Error::io("write back", stream.path, source));
        }
    }

    /// Writes every queued event.
    fn drain(&mut self) {
        for stream in self.registry.streams() {
            self.drain_stream(&stream);
        }
        for stream in self.registry.retire_finished() {
            // The thread exited and its queue is empty: close its file.
            if let Some(file) = self.files.open.remove(&stream.instance_id) {
                self.close(file);
            }
            self.retired_discarded += stream.discarded();
        }
        let live: u64 = self.registry.streams().iter().map(|s| s.discarded()).sum();
        self.stats.events_discarded = self.retired_discarded + live;
    }

    /// Writes the events queued on `stream`, a batch of whole packets per `write`.
    fn drain_stream(&mut self, stream: &ThreadStream) {
        let mut next = stream.pop();
        while let Some(mut record) = next.take() {
            if self.failure.is_some() {
                // Writing already failed: count, and do not let the queue fill up.
                self.stats.events_lost += 1;
                next = stream.pop();
                continue;
            }
            let file = match self.files.get(stream) {
                Ok(file) => file,
                Err(error) => {
                    self.failure = Some(error);
                    next = Some(record);
                    continue;
                }
            };
            self.batch.clear();
            let (mut events, mut packets) = (0, 0);
            loop {
                self.packet.begin(&self.uuid, stream.instance_id);
                let first_timestamp = record.timestamp;
                // The first event always goes in: an empty packet grows to fit it.
                self.packet.try_push(&record, &file.context);
                next = loop {
                    match stream.pop() {
                        Some(record) if !self.packet.try_push(&record, &file.context) => {
                            break Some(record);
                        }
                        Some(_) => {}
                        None => break None,
                    }
                };
                // Read after the pops: a discard counted here happened while the queue
                // was full, before (some of) the events just taken.
                let discarded = stream.discarded();
                if file.next_seq_num == 0 && discarded > 0 {
                    // babeltrace2 counts discards as the difference between two packets
                    // and gives no count for a stream's first packet: start with an empty
                    // one.
                    let info = PacketInfo {
                        seq_num: 0,
                        events_discarded: 0,
                        cpu_id: stream.cpu_id,
                    };
                    let empty =
                        PacketBuilder::empty(&self.uuid, stream.instance_id, first_timestamp, info);
                    self.batch.extend_from_slice(&empty);
                    file.next_seq_num = 1;
                    packets += 1;
                }
                let info = PacketInfo {
                    seq_num: file.next_seq_num,
                    events_discarded: discarded,
                    cpu_id: stream.cpu_id,
                };
                self.batch.extend_from_slice(self.packet.finish(info));
                file.next_seq_num += 1;
                packets += 1;
                events += self.packet.events();
                match next.take() {
                    Some(more) if self.batch.len() < BATCH_BYTES => record = more,
                    rest => {
                        next = rest;
                        break;
                    }
                }
            }
            match file.file.write_all(&self.batch) {
                Ok(()) => {
                    self.stats.events_written += events;
                    self.stats.packets += packets;
                }
                Err(source) => {
                    self.failure = Some(Error::io("write packets to", &file.path, source));
                    self.stats.events_lost += events;
                }
            }
        }
    }
}

/// The open stream files of a trace directory, one per traced thread.
struct StreamFiles {
    dir: PathBuf,
    vpid: i32,
    /// The process's name, for threads that have none of their own.
    procname: String,
    open: HashMap<u64, StreamFile>,
    opened: u64,
}

impl StreamFiles {
    /// The file of `stream`, created on its first packet.
    fn get(&mut self, stream: &ThreadStream) -> Result<&mut StreamFile, Error> {
        match self.open.entry(stream.instance_id) {
            Entry::Occupied(entry) => Ok(entry.into_mut()),
            Entry::Vacant(entry) => {
                let path = self.dir.join(format!("stream_{}", stream.instance_id));
                let file = File::create_new(&path)
                    .map_err(|source| Error::io("create the stream file", &path, source))?;
                self.opened += 1;
                Ok(entry.insert(StreamFile {
                    file,
                    path,
                    next_seq_num: 0,
                    context: EventContext {
                        vtid: stream.vtid,
                        vpid: self.vpid,
                        procname: EventContext::procname_field(if stream.procname.is_empty() {
                            &self.procname
                        } else {
                            &stream.procname
                        }),
                    },
                }))
            }
        }
    }
}
