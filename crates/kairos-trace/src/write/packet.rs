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

/// Builds one packet in memory so it reaches the file in a single write.
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

    /// Bytes written so far.
    pub(crate) fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Events in the packet so far.
    pub(crate) fn events(&self) -> u64 {
        self.events
    }

    /// Appends one event. Records must come in timestamp order.
    pub(crate) fn push(&mut self, record: &Record, context: &EventContext) {
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

    /// Fills the packet context and returns the finished packet. Its time range is that of
    /// its events, so consecutive packets of a stream never overlap.
    pub(crate) fn finish(&mut self, info: PacketInfo) -> &[u8] {
        let bits = (self.bytes.len() as u64) * 8;
        let begin = self.first_timestamp.unwrap_or(self.last_timestamp);
        let mut context = Vec::with_capacity(CONTEXT_LEN);
        for value in [
            begin,
            self.last_timestamp,
            bits, // content_size
            bits, // packet_size: no padding
            info.seq_num,
            info.events_discarded,
        ] {
            context.extend_from_slice(&value.to_le_bytes());
        }
        context.extend_from_slice(&info.cpu_id.to_le_bytes());
        self.bytes[HEADER_LEN..HEADER_LEN + CONTEXT_LEN].copy_from_slice(&context);
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
        let start = packet.len();
        packet.push(&record(10), &context());
        let extended = packet.len() - start;
        packet.push(&record(20), &context());
        let compact = packet.len() - start - extended;
        assert_eq!(
            extended - compact,
            8,
            "extended adds a 32-bit id and 32 more bits"
        );
        packet.push(&record(20 + (1 << 32)), &context());
        assert_eq!(packet.len() - start, 2 * extended + compact);
    }

    #[test]
    fn context_records_sizes_and_time_range() {
        let mut packet = PacketBuilder::default();
        packet.begin(&[0; 16], 3);
        packet.push(&record(100), &context());
        packet.push(&record(250), &context());
        let info = PacketInfo {
            seq_num: 4,
            events_discarded: 9,
            cpu_id: 1,
        };
        let bytes = packet.finish(info).to_vec();
        let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
        assert_eq!(u64_at(HEADER_LEN), 100);
        assert_eq!(u64_at(HEADER_LEN + 8), 250);
        assert_eq!(u64_at(HEADER_LEN + 16), bytes.len() as u64 * 8);
        assert_eq!(u64_at(HEADER_LEN + 32), 4);
        assert_eq!(u64_at(HEADER_LEN + 40), 9);
    }

    #[test]
    fn procname_is_cut_at_a_character_boundary() {
        let field = EventContext::procname_field("ééééééééé"); // 18 bytes
        assert_eq!(&field[..16], "éééééééé".as_bytes());
        assert_eq!(field[16], 0);
    }
}
