//! Encoding of one CTF packet: packet header, packet context and events, laid out as the
//! metadata in [`super::metadata`] declares (little-endian, byte-aligned).

use super::buffer::Record;

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

/// Packets are padded to a multiple of this many bytes, and a packet holds as many events
/// as fit in one such page (an event that alone does not fit gets a packet of several).
///
/// Why: Linux copies a `write` to a regular file page by page and gives up between pages
/// when a fatal signal arrives; with every page boundary a packet boundary, a SIGKILL
/// during a write leaves whole packets only, so the trace stays readable.
pub(crate) const PACKET_BYTES: usize = 4096;

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

    /// Appends one event if it fits in the packet's page, or if the packet is empty;
    /// otherwise leaves the packet as it was and returns false. Records must come in
    /// timestamp order.
    pub(crate) fn try_push(&mut self, record: &Record, context: &EventContext) -> bool {
        let (len, last_timestamp) = (self.bytes.len(), self.last_timestamp);
        self.push(record, context);
        if self.events > 1 && self.bytes.len() > PACKET_BYTES {
            self.bytes.truncate(len);
            self.last_timestamp = last_timestamp;
            self.events -= 1;
            return false;
        }
        true
    }

    fn push(&mut self, record: &Record, context: &EventContext) {
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
        record.event.encode_payload(&mut self.bytes);
        self.first_timestamp.get_or_insert(timestamp);
        self.last_timestamp = timestamp;
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

    /// Fills the packet context, pads the packet to whole pages and returns it. Its time
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
    fn a_packet_stops_at_its_page_unless_one_event_needs_more() {
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
            "alone, it gets a bigger packet"
        );
        let info = PacketInfo {
            seq_num: 0,
            events_discarded: 0,
            cpu_id: 0,
        };
        assert_eq!(packet.finish(info).len(), 3 * PACKET_BYTES);
    }

    #[test]
    fn procname_is_cut_at_a_character_boundary() {
        let field = EventContext::procname_field("ééééééééé"); // 18 bytes
        assert_eq!(&field[..16], "éééééééé".as_bytes());
        assert_eq!(field[16], 0);
    }
}
