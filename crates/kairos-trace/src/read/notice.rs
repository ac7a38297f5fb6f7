//! Things a reader reports while it keeps going: events and packets the tracer
//! discarded, and events whose timestamp is earlier than one already delivered.

use std::fmt;
use std::path::PathBuf;

/// Something a reader reports while it keeps reading (see [`super::Events::take_notices`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    /// The packet context's `events_discarded` counter grew: the tracer lost `count`
    /// events in this stream before the packet at `packet_offset`.
    Discarded {
        /// The stream file.
        path: PathBuf,
        /// The byte offset of the packet in the file.
        packet_offset: u64,
        /// How many events the tracer discarded.
        count: u64,
        /// The packet's `timestamp_begin`, ns since the epoch, if it has one.
        at: Option<i64>,
    },
    /// The packet context's `packet_seq_num` skipped: the tracer lost `count` whole
    /// packets of this stream before the packet at `packet_offset` (babeltrace2 warns
    /// "Tracer discarded N packets").
    DiscardedPackets {
        /// The stream file.
        path: PathBuf,
        /// The byte offset in the file of the packet after the gap.
        packet_offset: u64,
        /// How many packets the tracer discarded.
        count: u64,
        /// The previous packet's `timestamp_end`, ns since the epoch, if it has one.
        after: Option<i64>,
        /// This packet's `timestamp_begin`, ns since the epoch, if it has one.
        before: Option<i64>,
    },
    /// A packet begins before the previous packet of its stream ended: the stream's
    /// time goes backwards by `previous_end - begin` ns (babeltrace2 stops here).
    PacketOverlap {
        /// The stream file.
        path: PathBuf,
        /// The byte offset of the packet in the file.
        packet_offset: u64,
        /// The packet's `timestamp_begin`, ns since the epoch.
        begin: i64,
        /// The previous packet's `timestamp_end`, ns since the epoch.
        previous_end: i64,
    },
    /// A clock's offset puts timestamps beyond what 64-bit nanoseconds since the epoch
    /// hold: they are clamped to `clamped`. Reported once per clock.
    ClockOverflow {
        /// The stream file where the overflow was first met.
        path: PathBuf,
        /// The clock's name.
        clock: String,
        /// The value the timestamps are clamped to.
        clamped: i64,
    },
    /// An event came out of the merge earlier than the previous one delivered.
    Backwards {
        /// The stream file of the late event.
        path: PathBuf,
        /// The late event's name.
        event: String,
        /// Its timestamp, ns since the epoch.
        timestamp: i64,
        /// The timestamp of the event delivered before it.
        previous: i64,
    },
}

impl fmt::Display for Notice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Notice::Discarded {
                path,
                packet_offset,
                count,
                at,
            } => {
                write!(
                    f,
                    "{}: the tracer discarded {count} events before the packet at byte {packet_offset}",
                    path.display()
                )?;
                if let Some(at) = at {
                    write!(f, " (at {})", super::text::seconds(*at))?;
                }
                Ok(())
            }
            Notice::DiscardedPackets {
                path,
                packet_offset,
                count,
                after,
                before,
            } => {
                let packets = if *count == 1 { "packet" } else { "packets" };
                write!(
                    f,
                    "{}: the tracer discarded {count} {packets} before the packet at byte {packet_offset}",
                    path.display()
                )?;
                match (after, before) {
                    (Some(a), Some(b)) => write!(
                        f,
                        " (between {} and {})",
                        super::text::seconds(*a),
                        super::text::seconds(*b)
                    ),
                    (None, Some(b)) => write!(f, " (before {})", super::text::seconds(*b)),
                    (Some(a), None) => write!(f, " (after {})", super::text::seconds(*a)),
                    (None, None) => Ok(()),
                }
            }
            Notice::PacketOverlap {
                path,
                packet_offset,
                begin,
                previous_end,
            } => write!(
                f,
                "{}: timestamp goes backwards: the packet at byte {packet_offset} begins at {}, {} ns before the previous packet ended ({}); reading on",
                path.display(),
                super::text::seconds(*begin),
                previous_end - begin,
                super::text::seconds(*previous_end),
            ),
            Notice::ClockOverflow {
                path,
                clock,
                clamped,
            } => write!(
                f,
                "{}: clock `{clock}`: its offset puts timestamps beyond 64-bit nanoseconds since the epoch; they are clamped to {} (check the clock's offset_s and offset in the metadata)",
                path.display(),
                super::text::seconds(*clamped),
            ),
            Notice::Backwards {
                path,
                event,
                timestamp,
                previous,
            } => write!(
                f,
                "{}: event {event} at {} is {} ns earlier than the previous event delivered ({}); kept in stream order",
                path.display(),
                super::text::seconds(*timestamp),
                previous - timestamp,
                super::text::seconds(*previous),
            ),
        }
    }
}
