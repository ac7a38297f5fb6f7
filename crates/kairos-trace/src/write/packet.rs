//! Encoding of one CTF packet: packet header, packet context and events, laid out as the
//! metadata in [`super::metadata`] declares (little-endian, byte-aligned).

use super::buffer::Record;
use crate::schema::{FieldClass, FieldType};

const MAGIC: u32 = 0xC1FC_1FC1;
/// The `event_header_large` id that announces the extended form.
const EXTENDED_ID: u16 = u16::MAX;
/// magic + uuid + stream_id + stream_instance_id.
const HEADER_LEN: usize = 4 + 16 + 4 + 8;
/// Six 64-bit fields and `cpu_id`.
const CONTEXT_LEN: usize = 6 * 8 + 4;
/// Length of the `_procname` array in the event context.
pub(crate) const PROCNAME_LEN: usize = 17;

/// What every event of one stream repeats in its event context.
#[derive(Debug, Clone)]
pub(crate) struct EventContext {
    pub(crate) vtid: i32,
    pub(crate) vpid: i32,
    pub(crate) procname: [u8; PROCNAME_LEN],
}

impl EventContext {
    /// `procname` cut to 16 bytes (at a character boundary) and NUL-padded, as LTTng does.
    pub(crate) fn procname_field(procname: &str) -> [u8; PROCNAME_LEN] {
        let mut field = [0; PROCNAME_LEN];
        let mut end = procname.len().min(PROCNAME_LEN - 1);
        while !procname.is_char_boundary(end) {
            end -= 1;
        }
        field[..end].copy_from_slice(&procname.as_bytes()[..end]);
        field
    }
}

/// The values of a packet's context that the caller decides.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PacketInfo {
    pub(crate) seq_num: u64,
    /// Events discarded in this stream so far (a running count, as CTF defines it).
    pub(crate) events_discarded: u64,
    pub(crate) cpu_id: u32,
}

/// Every packet is exactly this many bytes (one page), holding as many events as fit; an
/// event that alone does not fit is refused (the writer counts it as discarded).
///
/// Why: Linux copies a `write` to a regular file page by page and gives up between pages
/// when a fatal signal arrives; with every page boundary a packet boundary, a SIGKILL
/// during a write leaves whole packets only, so the trace stays readable.
pub(crate) const PACKET_BYTES: usize = 4096;

/// What ends a string field cut so that its event fits in one packet.
pub(crate) const TRUNCATED_MARK: &str = "...[truncated]";

/// `payload`, encoded as `fields` declare, re-encoded in at most `room` bytes by cutting
/// its longest strings (at a character boundary) and ending each cut one with
/// [`TRUNCATED_MARK`]; `None` if it cannot fit.
fn truncate_strings(fields: &[FieldClass], payload: &[u8], room: usize) -> Option<Vec<u8>> {
    enum Piece<'a> {
        Fixed(&'a [u8]),
        Str(&'a [u8]),
    }
    let mut pieces = Vec::with_capacity(fields.len());
    let mut rest = payload;
    for field in fields {
        let len = match field.ty {
            FieldType::Hex64 | FieldType::U64 | FieldType::I64 => 8,
            FieldType::I32 => 4,
            FieldType::Clock => 1,
            FieldType::Str => {
                let end = rest.iter().position(|&b| b == 0)?;
                pieces.push(Piece::Str(&rest[..end]));
                rest = &rest[end + 1..];
                continue;
            }
        };
        let (fixed, after) = rest.split_at_checked(len)?;
        pieces.push(Piece::Fixed(fixed));
        rest = after;
    }
    // Bytes that do not shrink: fixed fields and each string's NUL.
    let fixed: usize = pieces
        .iter()
        .map(|piece| match piece {
            Piece::Fixed(bytes) => bytes.len(),
            Piece::Str(_) => 1,
        })
        .sum();
    let size_with_cap = |cap: usize| {
        let strings: usize = pieces
            .iter()
            .map(|piece| match piece {
                Piece::Str(bytes) => bytes.len().min(cap),
                Piece::Fixed(_) => 0,
            })
            .sum();
        fixed + strings
    };
    // The largest cap on string lengths (mark included) with which the payload fits.
    let (mut fits, mut too_long) = (TRUNCATED_MARK.len(), payload.len());
    if size_with_cap(fits) > room {
        return None;
    }
    while too_long - fits > 1 {
        let mid = fits + (too_long - fits) / 2;
        if size_with_cap(mid) <= room {
            fits = mid;
        } else {
            too_long = mid;
        }
    }
    let mut out = Vec::with_capacity(room);
    for piece in pieces {
        match piece {
            Piece::Fixed(bytes) => out.extend_from_slice(bytes),
            Piece::Str(bytes) if bytes.len() <= fits => {
                out.extend_from_slice(bytes);
                out.push(0);
            }
            Piece::Str(bytes) => {
                let mut end = fits - TRUNCATED_MARK.len();
                // Back off to the start of a UTF-8 character.
                while end > 0 && bytes[end] & 0xC0 == 0x80 {
                    end -= 1;
                }
                out.extend_from_slice(&bytes[..end]);
                out.extend_from_slice(TRUNCATED_MARK.as_bytes());
                out.push(0);
            }
        }
    }
    Some(out)
}

/// Builds one packet in memory.
#[derive(Debug, Default)]
pub(crate) struct PacketBuilder {
    bytes: Vec<u8>,
    first_timestamp: Option<u64>,
    last_timestamp: u64,
    events: u64,
}

impl PacketBuilder {
    /// Starts a packet of stream `instance_id` in the trace `uuid`.
    pub(crate) fn begin(&mut self, uuid: &[u8; 16], instance_id: u64) {
        self.bytes.clear();
        self.bytes.extend_from_slice(&MAGIC.to_le_bytes());
        self.bytes.extend_from_slice(uuid);
        self.bytes.extend_from_slice(&0u32.to_le_bytes()); // stream_id: the only stream class
        self.bytes.extend_from_slice(&instance_id.to_le_bytes());
        self.bytes.resize(HEADER_LEN + CONTEXT_LEN, 0); // filled by `finish`
        self.first_timestamp = None;
        self.events = 0;
    }

    /// Events in the packet so far.
    pub(crate) fn events(&self) -> u64 {
        self.events
    }

    /// Appends one event if it fits in the packet's page; otherwise leaves the packet as
    /// it was and returns false. An event that alone does not fit in a page goes into an
    /// empty packet with its longest strings cut to fit, each ending in
    /// [`TRUNCATED_MARK`]; false from an empty packet means even that does not fit.
    /// Records must come in timestamp order.
    pub(crate) fn try_push(&mut self, record: &Record, context: &EventContext) -> bool {
        let len = self.bytes.len();
        self.push_header(record, context);
        let payload_at = self.bytes.len();
        record.event.encode_payload(&mut self.bytes);
        if self.bytes.len() > PACKET_BYTES {
            let fitted = (self.events == 0)
                .then(|| {
                    let fields = record.event.id().class().fields;
                    let room = PACKET_BYTES.saturating_sub(payload_at);
                    truncate_strings(fields, &self.bytes[payload_at..], room)
                })
                .flatten();
            match fitted {
                Some(payload) => {
                    self.bytes.truncate(payload_at);
                    self.bytes.extend_from_slice(&payload);
                }
                None => {
                    self.bytes.truncate(len);
                    return false;
                }
            }
        }
        self.first_timestamp.get_or_insert(record.timestamp);
        self.last_timestamp = record.timestamp;
        self.events += 1;
        true
    }

    /// The timestamp of the packet's first event (0 while it has none).
    pub(crate) fn first_timestamp(&self) -> u64 {
        self.first_timestamp.unwrap_or_default()
    }

    /// Appends an event's header and context.
    fn push_header(&mut self, record: &Record, context: &EventContext) {
        let id = record.event.id() as u16;
        let timestamp = record.timestamp;
        // The 32-bit form stores the low bits; a reader infers at most one wrap since the
        // previous event, which holds when less than 2^32 ns passed.
        let compact = self.first_timestamp.is_some()
            && id < EXTENDED_ID
            && timestamp.wrapping_sub(self.last_timestamp) < 1 << 32;
        if compact {
            self.bytes.extend_from_slice(&id.to_le_bytes());
            self.bytes
                .extend_from_slice(&(timestamp as u32).to_le_bytes());
        } else {
            self.bytes.extend_from_slice(&EXTENDED_ID.to_le_bytes());
            self.bytes.extend_from_slice(&u32::from(id).to_le_bytes());
            self.bytes.extend_from_slice(&timestamp.to_le_bytes());
        }
        self.bytes.extend_from_slice(&context.vtid.to_le_bytes());
        self.bytes.extend_from_slice(&context.vpid.to_le_bytes());
        self.bytes.extend_from_slice(&context.procname);
    }

    #[cfg(test)]
    fn push(&mut self, record: &Record, context: &EventContext) {
        self.push_header(record, context);
        record.event.encode_payload(&mut self.bytes);
        self.first_timestamp.get_or_insert(record.timestamp);
        self.last_timestamp = record.timestamp;
        self.events += 1;
    }

    /// A packet with no event at `timestamp`.
    pub(crate) fn empty(
        uuid: &[u8; 16],
        instance_id: u64,
        timestamp: u64,
        info: PacketInfo,
    ) -> Vec<u8> {
        let mut packet = PacketBuilder::default();
        packet.begin(uuid, instance_id);
        packet.first_timestamp = Some(timestamp);
        packet.last_timestamp = timestamp;
        packet.finish(info).to_vec()
    }

    /// Fills the packet context, pads the packet to its page and returns it. Its time
    /// range is that of its events, so consecutive packets of a stream never overlap.
    pub(crate) fn finish(&mut self, info: PacketInfo) -> &[u8] {
        let content_bits = (self.bytes.len() as u64) * 8;
        self.bytes
            .resize(self.bytes.len().next_multiple_of(PACKET_BYTES), 0);
        let packet_bits = (self.bytes.len() as u64) * 8;
        let begin = self.first_timestamp.unwrap_or(self.last_timestamp);
        let context = &mut self.bytes[HEADER_LEN..HEADER_LEN + CONTEXT_LEN];
        let fields = [
            begin,
            self.last_timestamp,
            content_bits,
            packet_bits,
            info.seq_num,
            info.events_discarded,
        ];
        for (slot, value) in context.chunks_exact_mut(8).zip(fields) {
            slot.copy_from_slice(&value.to_le_bytes());
        }
        context[6 * 8..].copy_from_slice(&info.cpu_id.to_le_bytes());
        &self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Event;

    fn record(timestamp: u64) -> Record {
        Record {
            timestamp,
            event: Event::CallbackEnd { callback: 7 },
        }
    }

    fn context() -> EventContext {
        EventContext {
            vtid: 1,
            vpid: 1,
            procname: EventContext::procname_field("p"),
        }
    }

    #[test]
    fn first_event_and_long_gaps_use_the_extended_header() {
        let mut packet = PacketBuilder::default();
        packet.begin(&[0; 16], 0);
        let start = packet.bytes.len();
        packet.push(&record(10), &context());
        let extended = packet.bytes.len() - start;
        packet.push(&record(20), &context());
        let compact = packet.bytes.len() - start - extended;
        assert_eq!(
            extended - compact,
            8,
            "extended adds a 32-bit id and 32 more bits"
        );
        packet.push(&record(20 + (1 << 32)), &context());
        assert_eq!(packet.bytes.len() - start, 2 * extended + compact);
    }

    #[test]
    fn context_records_sizes_and_time_range() {
        let mut packet = PacketBuilder::default();
        packet.begin(&[0; 16], 3);
        packet.push(&record(100), &context());
        packet.push(&record(250), &context());
        let content = packet.bytes.len() as u64;
        let info = PacketInfo {
            seq_num: 4,
            events_discarded: 9,
            cpu_id: 1,
        };
        let bytes = packet.finish(info).to_vec();
        let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
        assert_eq!(u64_at(HEADER_LEN), 100);
        assert_eq!(u64_at(HEADER_LEN + 8), 250);
        assert_eq!(u64_at(HEADER_LEN + 16), content * 8);
        assert_eq!(u64_at(HEADER_LEN + 24), PACKET_BYTES as u64 * 8);
        assert_eq!(bytes.len(), PACKET_BYTES);
        assert_eq!(u64_at(HEADER_LEN + 32), 4);
        assert_eq!(u64_at(HEADER_LEN + 40), 9);
    }

    #[test]
    fn a_packet_stops_at_its_page_and_refuses_an_event_larger_than_one() {
        let mut packet = PacketBuilder::default();
        packet.begin(&[0; 16], 0);
        let mut timestamp = 0;
        while packet.try_push(&record(timestamp), &context()) {
            timestamp += 1;
        }
        let full = packet.bytes.len();
        assert!(full <= PACKET_BYTES && full + 60 > PACKET_BYTES, "{full}");
        assert_eq!(packet.events(), timestamp);
        assert_eq!(
            packet.last_timestamp,
            timestamp - 1,
            "the refused event left no trace"
        );

        packet.begin(&[0; 16], 0);
        let big = Record {
            timestamp: 1,
            event: Event::RclcppCallbackRegister {
                callback: 1,
                symbol: "x".repeat(2 * PACKET_BYTES).into(),
            },
        };
        assert!(
            packet.try_push(&big, &context()),
            "alone, it goes in with its symbol cut"
        );
        assert_eq!(packet.events(), 1);
        let text = String::from_utf8_lossy(&packet.bytes);
        assert!(
            text.contains(&format!("xxx{TRUNCATED_MARK}\0")),
            "the cut is visible"
        );
        let info = PacketInfo {
            seq_num: 0,
            events_discarded: 0,
            cpu_id: 0,
        };
        assert_eq!(
            packet.finish(info).len(),
            PACKET_BYTES,
            "no packet is larger than a page"
        );
    }

    #[test]
    fn strings_are_cut_longest_first_at_character_boundaries() {
        let event = Event::RclPublisherInit {
            publisher_handle: 1,
            node_handle: 2,
            rmw_publisher_handle: 3,
            topic_name: "é".repeat(100).into(),
            queue_depth: 10,
        };
        let mut payload = Vec::new();
        event.encode_payload(&mut payload);
        let fields = event.id().class().fields;
        let room = 3 * 8 + 8 + 51;
        let cut = truncate_strings(fields, &payload, room).expect("fits once cut");
        assert!(cut.len() <= room, "{} bytes", cut.len());
        assert_eq!(cut[..24], payload[..24], "fixed fields before are kept");
        assert_eq!(
            cut[cut.len() - 8..],
            payload[payload.len() - 8..],
            "and after"
        );
        let topic = std::str::from_utf8(&cut[24..cut.len() - 9]).expect("still UTF-8");
        assert_eq!(topic, format!("{}{TRUNCATED_MARK}", "é".repeat(18)));
        assert_eq!(
            truncate_strings(fields, &payload, 32 + 10),
            None,
            "too small"
        );
    }

    #[test]
    fn procname_is_cut_at_a_character_boundary() {
        let field = EventContext::procname_field("ééééééééé"); // 18 bytes
        assert_eq!(&field[..16], "éééééééé".as_bytes());
        assert_eq!(field[16], 0);
    }
}
