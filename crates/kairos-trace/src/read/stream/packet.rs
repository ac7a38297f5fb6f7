//! Opening a packet: its header and context decoded (growing the first read until they
//! fit), its magic, sequence number, size and discarded-event count checked, its clock
//! set.

use super::{FIRST_READ, MAX_PACKET_BYTES, PACKET_MAGIC, Packet, StreamReader, last_uint};
use crate::read::bits::{Bits, DecodeError};
use crate::read::decode::{MAX_VALUES_PER_EVENT, Roots, decode};
use crate::read::error::ReadError;
use crate::read::notice::Notice;
use crate::read::value::Value;
use std::sync::Arc;
use std::sync::atomic::Ordering;

impl StreamReader {
    pub(super) fn open_packet(&mut self) -> Result<(), ReadError> {
        let offset = self.next_packet;
        let remaining = self.file_len - offset;
        let mut want = remaining.min(FIRST_READ);
        let (stream_class, header, context, body_bits) = loop {
            // The buffer only grows: refilling a megabyte packet with zeros first would
            // cost as much as reading it. Reads are bounded by the packet, never by it.
            if self.buf.len() < want as usize {
                self.buf.resize(want as usize, 0);
            }
            if let Err(cause) = self
                .file
                .read_exact_at(&mut self.buf[..want as usize], offset)
            {
                self.failed = true;
                return Err(ReadError::Io {
                    path: self.path.clone(),
                    cause,
                });
            }
            match self.decode_packet_start(want) {
                Ok(start) => break start,
                Err(_) if want < remaining && want < MAX_PACKET_BYTES => {
                    want = remaining.min(want * 16)
                }
                Err(e) => return Err(self.damaged(offset + e.bit_offset / 8, e.expected)),
            }
        };
        let md = &self.trace.metadata;
        let sc = &md.streams[stream_class];
        let context = context.map(Arc::new);
        let ctx = sc.packet_context.as_ref().zip(context.as_deref());
        let ctx_uint = |name: &str| ctx.and_then(|(t, v)| last_uint(t, v, name));
        let packet_bits = ctx_uint("packet_size").unwrap_or(remaining.saturating_mul(8));
        let content_bits = ctx_uint("content_size").unwrap_or(packet_bits);
        if packet_bits % 8 != 0 || content_bits > packet_bits || content_bits < body_bits {
            return Err(self.damaged(
                offset,
                format!(
                    "a packet context with content_size ({content_bits} bits) <= packet_size ({packet_bits} bits), a whole number of bytes, holding the header and context ({body_bits} bits)"
                ),
            ));
        }
        let packet_bytes = packet_bits / 8;
        if packet_bytes > MAX_PACKET_BYTES {
            return Err(self.damaged(
                offset,
                format!("a packet size up to {MAX_PACKET_BYTES} bytes, found {packet_bytes}"),
            ));
        }
        let (avail, truncated) = if packet_bytes > remaining {
            let t =
                format!("the packet's {packet_bytes} bytes, but the file ends after {remaining}");
            (remaining, Some(t))
        } else {
            (packet_bytes, None)
        };
        // The padding after the content is never decoded: it is not read either (half a
        // trace's bytes when each CPU's last packet is mostly empty).
        let wanted = avail.min(content_bits.div_ceil(8));
        let begin = ctx_uint("timestamp_begin");
        let discarded = ctx_uint("events_discarded");
        let cpu_id = ctx_uint("cpu_id");
        let clock = self.clock_of[stream_class];
        let at = clock.zip(begin).map(|(c, b)| md.clocks[c].to_ns(b));
        if let Some(c) = clock
            && !self.overflow_reported
            && let Some(Err(clamped)) = begin.map(|b| md.clocks[c].to_ns_checked(b))
        {
            self.overflow_reported = true;
            self.notices.push(Notice::ClockOverflow {
                path: self.path.clone(),
                clock: md.clocks[c].name.clone(),
                clamped,
            });
        }
        let end = clock
            .zip(ctx_uint("timestamp_end"))
            .map(|(c, e)| md.clocks[c].to_ns(e));
        if let Some(seq) = ctx_uint("packet_seq_num") {
            // Once per packet: a gap in the sequence numbers is packets the tracer lost.
            if let Some(prev) = self.last_seq
                && seq > prev.saturating_add(1)
            {
                self.notices.push(Notice::DiscardedPackets {
                    path: self.path.clone(),
                    packet_offset: offset,
                    count: seq - prev - 1,
                    after: self.last_end,
                    before: at,
                });
            }
            self.last_seq = Some(seq);
        }
        if let (Some(begin), Some(previous_end)) = (at, self.last_end)
            && begin < previous_end
        {
            self.notices.push(Notice::PacketOverlap {
                path: self.path.clone(),
                packet_offset: offset,
                begin,
                previous_end,
            });
        }
        self.last_end = end.or(self.last_end);
        if let (Some(c), Some(b)) = (clock, begin) {
            self.state.clocks[c] = b;
        }
        if let Some(now) = discarded {
            let before = self.last_discarded.unwrap_or(0);
            if now > before {
                self.notices.push(Notice::Discarded {
                    path: self.path.clone(),
                    packet_offset: offset,
                    count: now - before,
                    at,
                });
            }
            self.last_discarded = Some(now);
        }
        self.next_packet = offset + packet_bytes.max(1).min(remaining);
        self.progress
            .fetch_add(self.next_packet - offset, Ordering::Relaxed);
        self.packet = Some(Packet {
            offset,
            stream_class,
            header,
            context,
            cpu_id,
            pos_bits: body_bits,
            content_bits: content_bits.min(avail * 8),
            first: 0,
            loaded: want.min(wanted),
            wanted,
            truncated,
        });
        Ok(())
    }

    /// Decodes the packet header and context from the first `len` bytes of `buf`:
    /// the stream class index, both values, and where the first event starts.
    #[allow(clippy::type_complexity)]
    fn decode_packet_start(
        &mut self,
        len: u64,
    ) -> Result<(usize, Option<Value>, Option<Value>, u64), DecodeError> {
        let md = &self.trace.metadata;
        let mut bits = Bits::new(&self.buf, 0, len * 8);
        self.state.updating = false;
        self.state.budget = MAX_VALUES_PER_EVENT;
        let mut roots = Roots::default();
        let header = md
            .packet_header
            .as_ref()
            .map(|t| decode(t, &mut bits, &roots, &mut self.state))
            .transpose()?;
        roots.packet_header = md.packet_header.as_ref().zip(header.as_ref());
        let stream_id = match roots.packet_header {
            Some((t, v)) => {
                if let Some(magic) = last_uint(t, v, "magic")
                    && magic != PACKET_MAGIC
                {
                    return Err(DecodeError {
                        bit_offset: 0,
                        expected: format!(
                            "the CTF packet magic 0x{PACKET_MAGIC:X}, found 0x{magic:X}"
                        ),
                    });
                }
                last_uint(t, v, "stream_id")
            }
            None => None,
        };
        let stream_class = match stream_id {
            Some(id) => md.streams.iter().position(|s| s.id == id),
            None if md.streams.len() == 1 => Some(0),
            None => None,
        };
        let Some(stream_class) = stream_class else {
            return Err(DecodeError {
                bit_offset: 0,
                expected: format!("a stream id the metadata declares, found {stream_id:?}"),
            });
        };
        let sc = &md.streams[stream_class];
        let context = sc
            .packet_context
            .as_ref()
            .map(|t| decode(t, &mut bits, &roots, &mut self.state))
            .transpose()?;
        self.state.updating = true;
        Ok((stream_class, header, context, bits.pos()))
    }
}
