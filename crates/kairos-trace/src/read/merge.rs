//! Events of every stream of every trace in time order: a k-way merge over a tournament
//! tree of each stream's next timestamp (ties go to the stream opened first, so the
//! order is deterministic). A stream whose own timestamps go backwards is reported and
//! its events are still delivered; a damaged stream delivers its error in place and the
//! others go on.
//!
//! The event delivered last stays in its stream's head slot, and its stream the
//! tournament's winner, until the next call: [`Events::next_ref`] lends it out without
//! moving or counting anything, and the next call plays the stream's next head in its
//! place. Streams decoded on the merging thread are decoded in place, in batches of a
//! few events when there are many streams (one event at a time otherwise, so that such a
//! stream holds no decoded event besides its head); a stream's notices end a batch, so
//! they are taken in exactly where they fall among its events.
//!
//! Ground rules of the decoding threads. Streams may be decoded on worker threads (as
//! many as the [`super::Selection`] or `KAIROS_READ_THREADS` asks; none by default,
//! nor for more than 64 streams) while the caller's thread merges. Each stream belongs to one worker, which sends
//! its events in batches through a channel of that stream holding at most
//! [`BATCHES_AHEAD`] batches, so memory is bounded by streams x batches, not by the
//! trace. A worker never blocks on a full channel: it skips streams whose channel is
//! full and, when all are, waits for the merge to take a batch (the merge sends it a
//! wake-up for every batch it takes). Dropping [`Events`] drops the channels, which ends
//! every worker at its next send or wait; the drop then joins them. The merge order
//! depends only on each stream's own events, so it is the same with any number of
//! threads.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender, bounded, unbounded};

use super::error::ReadError;
use super::event::{Event, EventRef, Trace};
use super::notice::Notice;
use super::stream::{Decoded, StreamReader};
use super::tournament::Tournament;

/// Keep at most this many notices; later ones are only counted.
const MAX_NOTICES: usize = 10_000;
/// Traces with more streams than this are decoded on the merging thread.
const MAX_STREAMS_THREADED: usize = 64;
/// Streams decoded on the merging thread are decoded one event at a time up to this many
/// streams, 32 at a time beyond (measured on a 104-stream trace: 1 event at a time
/// 580 ms of CPU, 8 510 ms, 32 487 ms; BENCHMARKS.md).
const INLINE_BATCH_FROM: usize = 8;
/// Batches a worker may decode ahead of the merge, per stream.
const BATCHES_AHEAD: usize = 2;

/// What a stream hands the merge, in stream order.
#[derive(Debug)]
enum Item {
    Notice(Notice),
    Event(Decoded),
    Error(ReadError),
    /// The stream has nothing more; a channel that closes without it lost its worker.
    End,
}

#[derive(Debug)]
enum Feed {
    /// Decoded on the merging thread when needed.
    Inline(Box<Decoding>),
    /// Decoded by a worker.
    Worker {
        batches: Receiver<Vec<Item>>,
        wake: Sender<()>,
    },
}

/// A stream decoded on the merging thread, a batch of events at a time: with many
/// streams, decoding several events of a stream while its reader and bytes are in the
/// cache costs less than coming back to them for each event.
#[derive(Debug)]
struct Decoding {
    reader: StreamReader,
    /// Events per batch (1 with few streams: the head is then the only event held).
    batch: usize,
    /// What ended the batch before it was full: notices that come before the event
    /// after the batch, and that event, the stream's error or its end.
    after: Vec<Notice>,
    then: Then,
}

#[derive(Debug, Default)]
enum Then {
    #[default]
    More,
    Event(Decoded),
    Error(ReadError),
    End,
}

/// A stream's decoded events not yet delivered, in stream order; its head is
/// `events[next]`. Kept apart from the stream's reader, so that finding the winner's
/// head touches a few bytes, not a reader.
#[derive(Debug, Default)]
struct Batch {
    events: Vec<Option<Decoded>>,
    next: usize,
}

impl Batch {
    fn head(&self) -> Option<&Decoded> {
        self.events.get(self.next).and_then(Option::as_ref)
    }

    fn take_head(&mut self) -> Option<Decoded> {
        self.events.get_mut(self.next).and_then(Option::take)
    }

    /// Moves past the head delivered: the next head's timestamp, if the batch has one.
    fn pass(&mut self) -> Option<i64> {
        if self.next < self.events.len() {
            self.next += 1;
        }
        self.head().map(|h| h.timestamp)
    }

    fn clear(&mut self) {
        self.events.clear();
        self.next = 0;
    }
}

impl Decoding {
    fn new(reader: StreamReader, batch: usize) -> Self {
        Self {
            reader,
            batch,
            after: Vec::new(),
            then: Then::More,
        }
    }

    /// Moves past the head delivered; its successor's timestamp, decoding the next
    /// batch into `b` when this one is done. The notices that come before the new head
    /// go to `notes`.
    fn advance(
        &mut self,
        b: &mut Batch,
        notes: &mut Vec<Notice>,
    ) -> Result<Option<i64>, ReadError> {
        if let Some(ts) = b.pass() {
            return Ok(Some(ts));
        }
        notes.append(&mut self.after);
        b.clear();
        match std::mem::take(&mut self.then) {
            Then::More => {}
            Then::Event(ev) => b.events.push(Some(ev)),
            Then::Error(e) => return Err(e),
            Then::End => return Ok(None),
        }
        while b.events.len() < self.batch {
            let result = self.reader.next_event();
            // Notices come before the event decoded with them: they end the batch
            // unless it is still empty.
            let ends_batch = !self.reader.notices.is_empty() && !b.events.is_empty();
            if ends_batch {
                self.after.append(&mut self.reader.notices);
            } else {
                notes.append(&mut self.reader.notices);
            }
            match result {
                Ok(Some(ev)) if ends_batch => {
                    self.then = Then::Event(ev);
                    break;
                }
                Ok(Some(ev)) => b.events.push(Some(ev)),
                Ok(None) if b.events.is_empty() => return Ok(None),
                Err(e) if b.events.is_empty() => return Err(e),
                Ok(None) => {
                    self.then = Then::End;
                    break;
                }
                Err(e) => {
                    self.then = Then::Error(e);
                    break;
                }
            }
        }
        Ok(b.head().map(|h| h.timestamp))
    }
}

/// One stream as the merge sees it.
#[derive(Debug)]
struct Lane {
    trace: Arc<Trace>,
    path: PathBuf,
    feed: Feed,
    /// Items received from a worker and not yet merged.
    pending: VecDeque<Item>,
    done: bool,
}

/// The merged events of a [`super::TraceSet`]; also an [`Iterator`].
#[derive(Debug)]
pub struct Events {
    lanes: Vec<Lane>,
    /// Per stream: its decoded events not yet delivered (one at a time from a worker).
    batches: Vec<Batch>,
    /// Which stream's head comes next.
    order: Tournament,
    /// The stream whose head was delivered last: still the tournament's winner, refilled
    /// at the next call (so that the delivered event may be borrowed until then).
    delivered: Option<usize>,
    errors: VecDeque<ReadError>,
    last: Option<i64>,
    notices: Vec<Notice>,
    overflowed: Vec<(PathBuf, String)>,
    discarded: u64,
    discarded_packets: u64,
    backwards: u64,
    notices_dropped: u64,
    workers: Vec<JoinHandle<()>>,
    progress: Arc<AtomicU64>,
}

/// How many decoding threads to start for `streams` streams.
fn worker_count(streams: usize, asked: Option<usize>) -> usize {
    let wanted = asked
        .or_else(|| {
            std::env::var("KAIROS_READ_THREADS")
                .ok()
                .and_then(|v| v.parse::<usize>().ok())
        })
        // None by default: with events borrowed and decoded straight into their head
        // slot, a stream decoded on the merging thread costs less than the batches and
        // wake-ups of a worker saves (measured on 2 cores: 0.34-0.36 s inline against
        // 0.40-0.72 s with 2 workers for 4 M events; BENCHMARKS.md, issue 14).
        .unwrap_or(0);
    // Past this many streams a worker's passes over its streams and the handoffs cost
    // more than decoding; such traces (tiled or many-process) are read on one thread.
    if streams > MAX_STREAMS_THREADED {
        return 0;
    }
    wanted.min(streams)
}

/// Decodes up to `n` events of `reader` into a batch; the batch ends with
/// [`Item::End`] when the stream does.
fn fill(reader: &mut StreamReader, n: usize) -> Vec<Item> {
    let mut out = Vec::with_capacity(n + 1);
    let mut events = 0;
    while events < n {
        let result = reader.next_event();
        if !reader.notices.is_empty() {
            out.extend(reader.notices.drain(..).map(Item::Notice));
        }
        match result {
            Ok(Some(ev)) => {
                out.push(Item::Event(ev));
                events += 1;
            }
            Ok(None) => {
                out.push(Item::End);
                break;
            }
            Err(e) => {
                out.extend([Item::Error(e), Item::End]);
                break;
            }
        }
    }
    out
}

fn work(mut streams: Vec<(StreamReader, Sender<Vec<Item>>)>, wake: Receiver<()>, n: usize) {
    while !streams.is_empty() {
        // Wake-ups for batches taken before this pass: the pass sees their room.
        while wake.try_recv().is_ok() {}
        let mut progressed = false;
        let mut i = 0;
        while i < streams.len() {
            let (reader, tx) = &mut streams[i];
            if tx.is_full() {
                i += 1;
                continue;
            }
            let batch = fill(reader, n);
            let ended = matches!(batch.last(), Some(Item::End));
            if tx.send(batch).is_err() || ended {
                streams.swap_remove(i);
            } else {
                i += 1;
            }
            progressed = true;
        }
        if !progressed && !streams.is_empty() && wake.recv().is_err() {
            return;
        }
    }
}

impl Events {
    pub(crate) fn new(
        mut streams: Vec<StreamReader>,
        threads: Option<usize>,
        inline_batch: Option<usize>,
    ) -> Self {
        let n = streams.len();
        let progress = Arc::new(AtomicU64::new(0));
        for s in &mut streams {
            s.progress = progress.clone();
        }
        let workers = worker_count(n, threads);
        let batch = (16_384 / n.max(1)).clamp(64, 1024);
        let mut lanes = Vec::with_capacity(n);
        let mut handles = Vec::new();
        if workers == 0 {
            let per_batch = inline_batch.unwrap_or(if n > INLINE_BATCH_FROM { 32 } else { 1 });
            for r in streams {
                lanes.push(Lane {
                    trace: r.trace().clone(),
                    path: r.path().to_path_buf(),
                    feed: Feed::Inline(Box::new(Decoding::new(r, per_batch))),
                    pending: VecDeque::new(),
                    done: false,
                });
            }
        } else {
            let mut shares: Vec<Vec<(StreamReader, Sender<Vec<Item>>)>> =
                (0..workers).map(|_| Vec::new()).collect();
            let wakes: Vec<(Sender<()>, Receiver<()>)> =
                (0..workers).map(|_| unbounded()).collect();
            for (i, r) in streams.into_iter().enumerate() {
                let (tx, rx) = bounded(BATCHES_AHEAD);
                lanes.push(Lane {
                    trace: r.trace().clone(),
                    path: r.path().to_path_buf(),
                    feed: Feed::Worker {
                        batches: rx,
                        wake: wakes[i % workers].0.clone(),
                    },
                    pending: VecDeque::new(),
                    done: false,
                });
                shares[i % workers].push((r, tx));
            }
            for (share, (_, wake)) in shares.into_iter().zip(wakes) {
                let spawned = std::thread::Builder::new()
                    .name("kairos-read".into())
                    .spawn(move || work(share, wake, batch));
                match spawned {
                    Ok(h) => handles.push(h),
                    // Without the thread its streams' channels close without an end
                    // marker, and the merge reports them as damaged.
                    Err(_) => continue,
                }
            }
        }
        let mut me = Self {
            lanes,
            batches: (0..n).map(|_| Batch::default()).collect(),
            order: Tournament::new([]),
            delivered: None,
            errors: VecDeque::new(),
            last: None,
            notices: Vec::new(),
            overflowed: Vec::new(),
            discarded: 0,
            discarded_packets: 0,
            backwards: 0,
            notices_dropped: 0,
            workers: handles,
            progress,
        };
        let heads: Vec<Option<i64>> = (0..n).map(|i| me.refill(i)).collect();
        me.order = Tournament::new(heads);
        me
    }

    /// Puts stream `i`'s next event in its head slot and returns its timestamp, passing
    /// on the notices and error that come before it; `None` when the stream has ended.
    fn refill(&mut self, i: usize) -> Option<i64> {
        if let Feed::Inline(d) = &mut self.lanes[i].feed {
            let mut notes = Vec::new();
            let next = d.advance(&mut self.batches[i], &mut notes);
            for n in notes {
                self.note(n);
            }
            return next.unwrap_or_else(|e| {
                self.errors.push_back(e);
                None
            });
        }
        self.batches[i].clear();
        loop {
            let lane = &mut self.lanes[i];
            match lane.pending.pop_front() {
                Some(Item::Event(d)) => {
                    let ts = d.timestamp;
                    self.batches[i].events.push(Some(d));
                    return Some(ts);
                }
                Some(Item::Notice(n)) => self.note(n),
                Some(Item::Error(e)) => self.errors.push_back(e),
                Some(Item::End) => {
                    lane.done = true;
                    return None;
                }
                None if lane.done => return None,
                None => {
                    let next = match &mut lane.feed {
                        Feed::Inline(_) => unreachable!("inline streams are decoded above"),
                        Feed::Worker { batches, wake } => {
                            let got = batches.recv().ok();
                            let _ = wake.send(());
                            // A Vec becomes a VecDeque without copying.
                            got.map(|batch| lane.pending = VecDeque::from(batch))
                        }
                    };
                    match next {
                        Some(()) => {}
                        None => {
                            lane.done = true;
                            self.errors.push_back(ReadError::Damaged {
                                path: lane.path.clone(),
                                offset: 0,
                                expected: "its decoding thread to go on, but it stopped (a bug in kairos: please report it)".into(),
                            });
                            return None;
                        }
                    }
                }
            }
        }
    }

    fn note(&mut self, notice: Notice) {
        match &notice {
            Notice::Discarded { count, .. } => self.discarded += count,
            Notice::DiscardedPackets { count, .. } => self.discarded_packets += count,
            Notice::Backwards { .. } | Notice::PacketOverlap { .. } => self.backwards += 1,
            Notice::ClockOverflow { path, clock, .. } => {
                // Once per clock of a trace, not once per stream.
                let key = (
                    path.parent().map(PathBuf::from).unwrap_or_default(),
                    clock.clone(),
                );
                if self.overflowed.contains(&key) {
                    return;
                }
                self.overflowed.push(key);
            }
        }
        if self.notices.len() < MAX_NOTICES {
            self.notices.push(notice);
        } else {
            self.notices_dropped += 1;
        }
    }

    /// Notices so far (at most 10,000 are kept; see [`Events::notices_dropped`]).
    pub fn notices(&self) -> &[Notice] {
        &self.notices
    }

    /// Removes and returns the notices so far.
    pub fn take_notices(&mut self) -> Vec<Notice> {
        std::mem::take(&mut self.notices)
    }

    /// Notices not kept because 10 000 were already waiting to be taken: counted, never lost silently.
    pub fn notices_dropped(&self) -> u64 {
        self.notices_dropped
    }

    /// Bytes of stream files read so far (whole packets, counted as they are opened;
    /// decoding threads may be a few batches ahead of the events delivered), out of
    /// [`super::TraceSet::stream_bytes`]: for a progress bar.
    pub fn bytes_read(&self) -> u64 {
        self.progress.load(Ordering::Relaxed)
    }

    /// Events the tracer reported discarding, so far.
    pub fn discarded(&self) -> u64 {
        self.discarded
    }

    /// Packets the tracer discarded so far, as gaps in the packets' `packet_seq_num`.
    pub fn discarded_packets(&self) -> u64 {
        self.discarded_packets
    }

    /// Timestamps that went backwards so far: events delivered earlier than the event
    /// before them, and packets beginning before their stream's previous packet ended.
    pub fn backwards(&self) -> u64 {
        self.backwards
    }
}

impl Drop for Events {
    fn drop(&mut self) {
        // Closing the channels ends every worker at its next send or wait.
        self.lanes.clear();
        for h in self.workers.drain(..) {
            let _ = h.join();
        }
    }
}

impl Events {
    /// Refills the stream delivered last, still the tournament's winner: its next head
    /// plays in its place.
    fn settle(&mut self) {
        let Some(i) = self.delivered.take() else {
            return;
        };
        let next = self.refill(i);
        self.order.replace_winner(next);
    }

    /// Moves on to the next event: the index of the stream whose head it is (it stays
    /// its stream's head, and the stream the winner, until [`Events::settle`]), or an
    /// error a stream reported before it.
    fn advance(&mut self) -> Option<Result<usize, ReadError>> {
        self.settle();
        if let Some(e) = self.errors.pop_front() {
            return Some(Err(e));
        }
        let i = self.order.winner()?;
        self.delivered = Some(i);
        Some(Ok(i))
    }

    /// Stream `i`'s head event.
    fn head(&self, i: usize) -> Option<&Decoded> {
        self.batches[i].head()
    }

    /// Counts the event of stream `i` at `ts`, `name`d, going backwards if it does.
    fn check_order(&mut self, i: usize, ts: i64, name: &str) {
        if let Some(last) = self.last
            && ts < last
        {
            let notice = Notice::Backwards {
                path: self.lanes[i].path.clone(),
                event: name.to_string(),
                timestamp: ts,
                previous: last,
            };
            self.note(notice);
        }
        self.last = Some(self.last.map_or(ts, |l| l.max(ts)));
    }

    /// The next event, borrowed until the next call: no reference count is touched and
    /// no value moved, which makes reading faster when the caller only looks at each
    /// event (see [`EventRef::to_event`] for an owned copy). The same events, errors and
    /// order as the [`Iterator`]; the notices of the delivered event's stream that come
    /// after it are taken in at the next call instead of this one.
    pub fn next_ref(&mut self) -> Option<Result<EventRef<'_>, ReadError>> {
        let i = match self.advance()? {
            Ok(i) => i,
            Err(e) => return Some(Err(e)),
        };
        let head = self.head(i).expect("the winning stream has a head event");
        let (ts, class) = (head.timestamp, head.class as usize);
        if self.last.is_some_and(|last| ts < last) {
            let name = self.lanes[i].trace.classes[class].name.clone();
            self.check_order(i, ts, &name);
        } else {
            self.last = Some(ts);
        }
        let head = self.head(i).expect("still there");
        Some(Ok(head.view(&self.lanes[i].trace)))
    }
}

impl Iterator for Events {
    type Item = Result<Event, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        let i = match self.advance()? {
            Ok(i) => i,
            Err(e) => return Some(Err(e)),
        };
        let ev = self.batches[i]
            .take_head()
            .expect("the winning stream has a head event")
            .into_event(&self.lanes[i].trace);
        self.settle();
        self.check_order(i, ev.timestamp, ev.name());
        Some(Ok(ev))
    }
}
