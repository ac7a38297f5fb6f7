//! Controlling a recording from any thread, as rosbag2's recorder control services do:
//! pause, resume, is paused, split the bag, take a snapshot.
//!
//! What a [`RecorderControl`] promises:
//! - **Pause and resume apply at once**: a message that arrives after `pause` returns is
//!   not recorded (counted in [`TopicCounts::while_paused`]), one that arrives after
//!   `resume` returns is. Topics go on being discovered and subscribed while paused, as
//!   rosbag2's recorder does.
//! - **A split is done in order**: it goes through the writer's queue, so every message
//!   received before the request is in the closed file and every later one in the next.
//!   So is a snapshot (snapshot mode): every message received before the request, and
//!   still held, is written.
//! - **Never hangs**: a split or snapshot is answered by the writer, or fails once the
//!   writer has stopped, its queue is full, or it has not answered within
//!   [`SPLIT_ANSWER_BOUND`] (a disk that blocks a write), saying which.

use super::*;
use std::sync::mpsc::RecvTimeoutError;

/// The longest a split waits for the writer's answer.
pub const SPLIT_ANSWER_BOUND: Duration = Duration::from_secs(10);

/// A handle to a recording, cloneable and usable from any thread (see the module docs).
/// Got from [`Recorder::control`].
#[derive(Debug, Clone)]
pub struct RecorderControl {
    pub(super) shared: Arc<Shared>,
    pub(super) requests: SyncSender<Event>,
}

impl RecorderControl {
    /// Pauses recording; returns whether it was recording.
    pub fn pause(&self) -> bool {
        !self.shared.paused.swap(true, Ordering::AcqRel)
    }

    /// Resumes recording; returns whether it was paused.
    pub fn resume(&self) -> bool {
        self.shared.paused.swap(false, Ordering::AcqRel)
    }

    /// Whether recording is paused.
    pub fn is_paused(&self) -> bool {
        self.shared.paused.load(Ordering::Acquire)
    }

    /// Writes the messages snapshot mode holds into the bag, as rosbag2's `snapshot`;
    /// returns how many there were. Fails outside snapshot mode, saying how to turn it on.
    pub fn snapshot(&self) -> Result<u64, String> {
        let (reply, answer) = sync_channel(1);
        self.ask(Event::Snapshot(reply), answer)?
    }

    /// Closes the bag's current file and opens the next, as rosbag2's `split_bagfile`;
    /// returns the files closed and opened.
    pub fn split(&self) -> Result<FileSplit, String> {
        let (reply, answer) = sync_channel(1);
        self.ask(Event::Split(reply), answer)?
    }

    /// Sends `request` through the writer's queue and waits for its answer, bounded.
    fn ask<T>(&self, request: Event, answer: Receiver<T>) -> Result<T, String> {
        match self.requests.try_send(request) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => {
                return Err("the writer's queue is full; try again once it drains".into());
            }
            Err(TrySendError::Disconnected(_)) => {
                return Err("the recording has stopped".into());
            }
        }
        match answer.recv_timeout(SPLIT_ANSWER_BOUND) {
            Ok(answer) => Ok(answer),
            Err(RecvTimeoutError::Disconnected) => Err("the recording has stopped".into()),
            Err(RecvTimeoutError::Timeout) => Err(format!(
                "the writer did not answer within {SPLIT_ANSWER_BOUND:?} (is the disk blocked?)"
            )),
        }
    }
}
