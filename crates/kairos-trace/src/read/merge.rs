//! Events of every stream of every trace in time order: a k-way merge over a min-heap
//! keyed by each stream's next timestamp (ties go to the stream opened first, so the
//! order is deterministic). A stream whose own timestamps go backwards is reported and
//! its events are still delivered; a damaged stream delivers its error in place and the
//! others go on.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::error::ReadError;
use super::event::Event;
use super::notice::Notice;
use super::stream::StreamReader;

/// Keep at most this many notices; later ones are only counted.
const MAX_NOTICES: usize = 10_000;

/// The merged events of a [`super::TraceSet`]; also an [`Iterator`].
#[derive(Debug)]
pub struct Events {
    streams: Vec<StreamReader>,
    heads: Vec<Option<Event>>,
    heap: BinaryHeap<Reverse<(i64, usize)>>,
    errors: VecDeque<ReadError>,
    last: Option<i64>,
    notices: Vec<Notice>,
    discarded: u64,
    backwards: u64,
    notices_dropped: u64,
}

impl Events {
    pub(crate) fn new(streams: Vec<StreamReader>) -> Self {
        let n = streams.len();
        let mut me = Self {
            streams,
            heads: (0..n).map(|_| None).collect(),
            heap: BinaryHeap::with_capacity(n),
            errors: VecDeque::new(),
            last: None,
            notices: Vec::new(),
            discarded: 0,
            backwards: 0,
            notices_dropped: 0,
        };
        for i in 0..n {
            me.refill(i);
        }
        me
    }

    fn refill(&mut self, i: usize) {
        let result = self.streams[i].next_event();
        for notice in std::mem::take(&mut self.streams[i].notices) {
            self.note(notice);
        }
        match result {
            Ok(Some(ev)) => {
                self.heap.push(Reverse((ev.timestamp, i)));
                self.heads[i] = Some(ev);
            }
            Ok(None) => {}
            Err(e) => self.errors.push_back(e),
        }
    }

    fn note(&mut self, notice: Notice) {
        match &notice {
            Notice::Discarded { count, .. } => self.discarded += count,
            Notice::Backwards { .. } | Notice::PacketOverlap { .. } => self.backwards += 1,
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

    pub fn notices_dropped(&self) -> u64 {
        self.notices_dropped
    }

    /// Events the tracer reported discarding, so far.
    pub fn discarded(&self) -> u64 {
        self.discarded
    }

    /// Timestamps that went backwards so far: events delivered earlier than the event
    /// before them, and packets beginning before their stream's previous packet ended.
    pub fn backwards(&self) -> u64 {
        self.backwards
    }
}

impl Iterator for Events {
    type Item = Result<Event, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(e) = self.errors.pop_front() {
            return Some(Err(e));
        }
        let Reverse((ts, i)) = self.heap.pop()?;
        let ev = self.heads[i]
            .take()
            .expect("a stream in the heap has a head event");
        self.refill(i);
        if let Some(last) = self.last
            && ts < last
        {
            let notice = Notice::Backwards {
                path: self.streams[i].path().to_path_buf(),
                event: ev.name().to_string(),
                timestamp: ts,
                previous: last,
            };
            self.note(notice);
        }
        self.last = Some(self.last.map_or(ts, |l| l.max(ts)));
        Some(Ok(ev))
    }
}
