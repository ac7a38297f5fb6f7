//! Snapshot mode, as rosbag2's `--snapshot-mode`: the recorder keeps the latest messages
//! in memory and writes them only when asked, a flight recorder for the moments before
//! something went wrong.
//!
//! What a [`SnapshotBuffer`] promises:
//! - **The latest, bounded in bytes.** It holds at most `max_bytes` of message data (the
//!   recorder's `max_cache_bytes`, as rosbag2 sizes its circular buffer by
//!   `--max-cache-size`); a new message pushes out the oldest until it fits. A message
//!   larger than the whole buffer is not kept.
//! - **A snapshot takes everything held**, in arrival order, and leaves the buffer empty:
//!   two snapshots never write one message twice.
//! - **Nothing lost silently.** A message pushed out, not kept, or still held when
//!   recording stops (rosbag2 drops those too) is counted in
//!   [`TopicCounts::not_snapshotted`](super::TopicCounts::not_snapshotted).

use super::{TopicStats, Traced};
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// What [`RecorderControl::snapshot`](super::RecorderControl::snapshot) answers outside
/// snapshot mode.
pub(super) const NOT_IN_SNAPSHOT_MODE: &str = "the recorder is not in snapshot mode: start it with snapshot mode (--snapshot-mode) to take snapshots";

/// A received message on its way to the bag.
pub(super) struct Pending {
    pub topic: Arc<str>,
    pub stats: Arc<TopicStats>,
    pub log_time: u64,
    pub publish_time: u64,
    pub sequence: u32,
    pub data: Vec<u8>,
    pub traced: Traced,
}

/// The messages snapshot mode holds (see the module docs).
pub(super) struct SnapshotBuffer {
    max_bytes: u64,
    bytes: u64,
    held: VecDeque<Pending>,
}

impl SnapshotBuffer {
    pub(super) fn new(max_bytes: u64) -> Self {
        Self {
            max_bytes,
            bytes: 0,
            held: VecDeque::new(),
        }
    }

    /// Keeps `message`, pushing out the oldest until it fits.
    pub(super) fn push(&mut self, message: Pending) {
        let size = message.data.len() as u64;
        if size > self.max_bytes {
            return not_snapshotted(&message);
        }
        while self.bytes + size > self.max_bytes {
            let Some(oldest) = self.held.pop_front() else {
                break;
            };
            self.bytes -= oldest.data.len() as u64;
            not_snapshotted(&oldest);
        }
        self.bytes += size;
        self.held.push_back(message);
    }

    /// Everything held, oldest first; the buffer is left empty.
    pub(super) fn take(&mut self) -> VecDeque<Pending> {
        self.bytes = 0;
        std::mem::take(&mut self.held)
    }

    /// Drops everything held, counted (recording stopped without a snapshot).
    pub(super) fn discard(&mut self) {
        for message in self.take() {
            not_snapshotted(&message);
        }
    }
}

fn not_snapshotted(message: &Pending) {
    message.stats.not_snapshotted.fetch_add(1, Ordering::AcqRel);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(stats: &Arc<TopicStats>, sequence: u32, size: usize) -> Pending {
        Pending {
            topic: Arc::from("/t"),
            stats: stats.clone(),
            log_time: u64::from(sequence),
            publish_time: 0,
            sequence,
            data: vec![0; size],
            traced: Traced {
                subscription: 0,
                publisher: 0,
                seq: 0,
            },
        }
    }

    #[test]
    fn the_latest_messages_that_fit_are_kept_and_the_rest_counted() {
        let stats = Arc::new(TopicStats::default());
        let mut buffer = SnapshotBuffer::new(100);
        for sequence in 0..10 {
            buffer.push(message(&stats, sequence, 30));
        }
        buffer.push(message(&stats, 99, 101));
        let held: Vec<u32> = buffer.take().iter().map(|m| m.sequence).collect();
        assert_eq!(held, [7, 8, 9], "the newest three of 30 bytes fit in 100");
        assert_eq!(
            stats.not_snapshotted.load(Ordering::Acquire),
            8,
            "seven pushed out, one too large"
        );
        assert!(buffer.take().is_empty(), "a snapshot empties the buffer");
        buffer.push(message(&stats, 10, 30));
        buffer.discard();
        assert_eq!(stats.not_snapshotted.load(Ordering::Acquire), 9);
        buffer.push(message(&stats, 11, 100));
        assert_eq!(buffer.take().len(), 1, "room for 100 bytes after a discard");
    }
}
