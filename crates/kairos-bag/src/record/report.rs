//! What a recording counted, per topic and in all, and what it says of it: in the
//! [`RecordReport`] a recorder ends with, in the bag's `custom_data`
//! (`kairos.recorder.*`) and in words ([`RecordReport::describe`]).

use crate::{BagMetadata, BagWriter, Error};
use std::collections::BTreeMap;
use std::path::Path;

/// What happened to one topic's messages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TopicCounts {
    /// Messages that reached the recorder.
    pub received: u64,
    /// Messages in the bag.
    pub written: u64,
    /// Messages dropped because the queue to the writer was full.
    pub dropped_queue: u64,
    /// Messages not written because writing had failed.
    pub not_written: u64,
    /// Messages the publishers sent that never reached the recorder (gaps in their
    /// sequence numbers).
    pub lost_in_transport: u64,
    /// Messages that arrived while recording was paused, not recorded (not counted in
    /// `received`).
    pub while_paused: u64,
    /// Snapshot mode: messages that left the snapshot buffer to make room for newer ones,
    /// or were still in it when recording stopped, without a snapshot taking them.
    pub not_snapshotted: u64,
}

impl std::ops::Add for TopicCounts {
    type Output = TopicCounts;

    fn add(self, b: TopicCounts) -> TopicCounts {
        TopicCounts {
            received: self.received + b.received,
            written: self.written + b.written,
            dropped_queue: self.dropped_queue + b.dropped_queue,
            not_written: self.not_written + b.not_written,
            lost_in_transport: self.lost_in_transport + b.lost_in_transport,
            while_paused: self.while_paused + b.while_paused,
            not_snapshotted: self.not_snapshotted + b.not_snapshotted,
        }
    }
}

/// What a recording ended with.
#[derive(Debug)]
pub struct RecordReport {
    /// The bag's metadata (`None` if the bag could not be closed: see `error`).
    pub metadata: Option<BagMetadata>,
    /// Each recorded topic's counts.
    pub topics: BTreeMap<String, TopicCounts>,
    /// Topics recorded without a message definition (types kairos does not ship).
    pub without_definition: Vec<String>,
    /// The first write error (a full disk), or the error closing the bag.
    pub error: Option<Error>,
}

impl RecordReport {
    /// The counts of every topic, summed.
    pub fn total(&self) -> TopicCounts {
        self.topics
            .values()
            .fold(TopicCounts::default(), |a, b| a + *b)
    }

    /// What the recording did, in words: a line per topic (received, written, and each
    /// way a message was not written), one per topic without a definition, and the
    /// total, for a bag written to `bag` (what `kairos bag record` prints at stop).
    pub fn describe(&self, bag: &Path) -> Vec<String> {
        let mut lines = Vec::new();
        for (topic, c) in &self.topics {
            let mut line = format!("{topic}: {} received, {} written", c.received, c.written);
            for (count, why) in [
                (c.dropped_queue, "dropped (writer queue full)"),
                (c.not_written, "not written (writing had failed)"),
                (c.lost_in_transport, "lost in transport (sequence gaps)"),
                (c.while_paused, "not recorded (arrived while paused)"),
                (
                    c.not_snapshotted,
                    "in no snapshot (pushed out of the buffer, or held at the end)",
                ),
            ] {
                if count > 0 {
                    line += &format!(", {count} {why}");
                }
            }
            lines.push(line);
        }
        for topic in &self.without_definition {
            lines.push(format!(
                "{topic}: recorded without a message definition (a type kairos does not ship)"
            ));
        }
        let total = self.total();
        lines.push(format!(
            "{} message(s) on {} topic(s) written to {}; lost: {}",
            total.written,
            self.topics.len(),
            bag.display(),
            total.dropped_queue + total.not_written + total.lost_in_transport
        ));
        lines
    }
}

pub(super) fn record_counts(writer: &mut BagWriter, counts: &[(String, TopicCounts)]) {
    let mut total = TopicCounts::default();
    for (topic, c) in counts {
        total = total + *c;
        if c.dropped_queue + c.not_written + c.lost_in_transport > 0 {
            writer.set_custom_data(
                format!("kairos.recorder.lost.{topic}"),
                format!(
                    "received {}, written {}, dropped by the full queue {}, not written {}, lost in transport {}",
                    c.received, c.written, c.dropped_queue, c.not_written, c.lost_in_transport
                ),
            );
        }
    }
    for (key, value) in [
        ("received", total.received),
        ("written", total.written),
        ("dropped_queue", total.dropped_queue),
        ("not_written", total.not_written),
        ("lost_in_transport", total.lost_in_transport),
        ("while_paused", total.while_paused),
        ("not_snapshotted", total.not_snapshotted),
    ] {
        writer.set_custom_data(format!("kairos.recorder.{key}"), value.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_way_a_message_was_not_written_is_said_and_totalled() {
        let report = RecordReport {
            metadata: None,
            topics: BTreeMap::from([
                (
                    "/a".to_owned(),
                    TopicCounts {
                        received: 10,
                        written: 7,
                        dropped_queue: 2,
                        lost_in_transport: 1,
                        not_snapshotted: 1,
                        ..TopicCounts::default()
                    },
                ),
                (
                    "/b".to_owned(),
                    TopicCounts {
                        received: 3,
                        written: 3,
                        ..TopicCounts::default()
                    },
                ),
            ]),
            without_definition: vec!["/b".to_owned()],
            error: None,
        };
        assert_eq!(
            report.describe(Path::new("out")),
            [
                "/a: 10 received, 7 written, 2 dropped (writer queue full), 1 lost in transport (sequence gaps), 1 in no snapshot (pushed out of the buffer, or held at the end)",
                "/b: 3 received, 3 written",
                "/b: recorded without a message definition (a type kairos does not ship)",
                "10 message(s) on 2 topic(s) written to out; lost: 3",
            ]
        );
    }
}
