//! One stream file, read packet by packet, each packet through a window that slides
//! along it (32 KiB; the whole rest of the packet for an event larger than what is left),
//! so a reader's footprint is a window per stream whatever the packets' and the trace's
//! length. A packet cut short by the end of the file still yields the events it holds
//! before the error.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use super::bits::{Bits, DecodeError};
use super::decode::{DecodeState, Roots, decode};
use super::error::ReadError;
use super::event::{Event, EventRef, Trace};
use super::metadata::cycles_to_ns;
use super::metadata::types::FieldType;
use super::notice::Notice;
use super::select::Selection;
use super::value::Value;

mod packet;
mod plans;

use plans::{DENSE_IDS, PayloadMode, StreamPlans, class_plan, header_plan};

const PACKET_MAGIC: u64 = 0xC1FC_1FC1;
/// The first read of a packet, enough for any real header and context.
const FIRST_READ: u64 = 4096;
/// A packet larger than this is refused as absurd rather than allocated.
const MAX_PACKET_BYTES: u64 = 256 << 20;
/// Bytes of a packet read at a time after its start: a window that slides along the
/// packet as its events are decoded. Many streams merged stay in the cache (a whole
/// megabyte packet per stream does not), and a stream's memory is this, not a packet.
const WINDOW: u64 = 32 << 10;
/// The window slides on when fewer bytes than this are left in it. An event that does
/// not fit what is left is decoded again from its start once the whole rest of its
/// packet is read.
const REFILL: u64 = 4 << 10;

/// The packet being read.
#[derive(Debug)]
struct Packet {
    offset: u64,
    stream_class: usize,
    header: Option<Value>,
    context: Option<Arc<Value>>,
    cpu_id: Option<u64>,
    pos_bits: u64,
    content_bits: u64,
    /// The reader's buffer holds the packet's bytes `first..loaded`.
    first: u64,
    loaded: u64,
    /// The packet's bytes that are read at all: its content, or what the file has.
    wanted: u64,
    /// Set when the file ends before the packet does: what was expected.
    truncated: Option<String>,
}

/// Where a stream's bytes come from: a file, or memory (for fuzzing and tests).
#[derive(Debug)]
enum Source {
    File(File),
    Bytes(Vec<u8>),
}

impl Source {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        match self {
            Source::File(f) => f.read_exact_at(buf, offset),
            Source::Bytes(b) => {
                let start = usize::try_from(offset).unwrap_or(usize::MAX);
                match b.get(start..).and_then(|rest| rest.get(..buf.len())) {
                    Some(src) => {
                        buf.copy_from_slice(src);
                        Ok(())
                    }
                    None => Err(std::io::ErrorKind::UnexpectedEof.into()),
                }
            }
        }
    }
}

/// An event as a stream decodes it: its class is an index into [`Trace`]'s class
/// table, so that decoding threads never touch the shared reference counts.
#[derive(Debug)]
pub(crate) struct Decoded {
    pub class: u32,
    pub stream_class: usize,
    pub timestamp: i64,
    pub cpu_id: Option<u64>,
    pub packet_context: Option<Arc<Value>>,
    /// Stream event context, event context and payload, boxed when there is any, so
    /// that a decoded event stays small as it moves through batches and the merge.
    pub values: Option<Box<[Option<Value>; 3]>>,
}

impl Decoded {
    /// The event borrowed, its class looked up in `trace`.
    pub(crate) fn view<'a>(&'a self, trace: &'a Arc<Trace>) -> EventRef<'a> {
        let [stream_context, context, payload] = match &self.values {
            Some(v) => [v[0].as_ref(), v[1].as_ref(), v[2].as_ref()],
            None => [None, None, None],
        };
        EventRef {
            class: &trace.classes[self.class as usize],
            trace,
            stream_class: self.stream_class,
            timestamp: self.timestamp,
            cpu_id: self.cpu_id,
            packet_context: self.packet_context.as_ref(),
            stream_context,
            context,
            payload,
        }
    }

    pub(crate) fn into_event(self, trace: &Arc<Trace>) -> Event {
        let [stream_context, context, payload] = match self.values {
            Some(v) => *v,
            None => [None, None, None],
        };
        Event {
            class: trace.classes[self.class as usize].clone(),
            trace: trace.clone(),
            stream_class: self.stream_class,
            timestamp: self.timestamp,
            cpu_id: self.cpu_id,
            packet_context: self.packet_context,
            stream_context,
            context,
            payload,
        }
    }
}

#[derive(Debug)]
pub(crate) struct StreamReader {
    path: PathBuf,
    file: Source,
    file_len: u64,
    trace: Arc<Trace>,
    next_packet: u64,
    packet: Option<Packet>,
    buf: Vec<u8>,
    state: DecodeState,
    /// The clocks before the event being decoded, to decode it again with a larger window.
    saved_clocks: Vec<u64>,
    last_discarded: Option<u64>,
    /// The previous packet's `packet_seq_num`.
    last_seq: Option<u64>,
    /// The previous packet's `timestamp_end`, ns since the epoch.
    last_end: Option<i64>,
    /// Per stream class: the clock its timestamps are on.
    clock_of: Vec<Option<usize>>,
    /// Per clock: its frequency and nanoseconds since the epoch at cycle 0 (a timestamp
    /// is this plus the cycles converted, when that does not overflow); `None` when the
    /// offset alone overflows.
    ns_base: Vec<Option<(u64, i64)>>,
    plans: Vec<StreamPlans>,
    select: Selection,
    /// Integer slots the plans use.
    slots: Vec<u64>,
    /// A clock whose offset overflows 64-bit nanoseconds was reported.
    overflow_reported: bool,
    failed: bool,
    pub(crate) notices: Vec<Notice>,
    /// Bytes of packets opened so far, shared by every stream of an [`super::Events`].
    pub(crate) progress: Arc<AtomicU64>,
}

impl StreamReader {
    pub(crate) fn open(
        path: &Path,
        trace: Arc<Trace>,
        select: Selection,
    ) -> Result<Self, ReadError> {
        let io = |cause| ReadError::Io {
            path: path.to_path_buf(),
            cause,
        };
        let file = File::open(path).map_err(io)?;
        let file_len = file.metadata().map_err(io)?.len();
        Ok(Self::new(
            path.to_path_buf(),
            Source::File(file),
            file_len,
            trace,
            select,
        ))
    }

    /// A reader of a stream held in memory.
    pub(crate) fn from_bytes(bytes: Vec<u8>, trace: Arc<Trace>) -> Self {
        let len = bytes.len() as u64;
        Self::new(
            PathBuf::from("<memory>"),
            Source::Bytes(bytes),
            len,
            trace,
            Selection::all(),
        )
    }

    fn new(
        path: PathBuf,
        file: Source,
        file_len: u64,
        trace: Arc<Trace>,
        select: Selection,
    ) -> Self {
        let plans = trace
            .metadata
            .streams
            .iter()
            .map(|sc| StreamPlans {
                header: header_plan(sc),
                ..StreamPlans::default()
            })
            .collect();
        let clock_of = trace.stream_clocks.clone();
        let ns_base = trace
            .metadata
            .clocks
            .iter()
            .map(|c| c.to_ns_checked(0).ok().map(|base| (c.freq, base)))
            .collect();
        let state = DecodeState {
            clocks: vec![0; trace.metadata.clocks.len()],
            ..DecodeState::default()
        };
        Self {
            path,
            file,
            file_len,
            trace,
            next_packet: 0,
            packet: None,
            buf: Vec::new(),
            state,
            saved_clocks: Vec::new(),
            last_discarded: None,
            last_seq: None,
            last_end: None,
            clock_of,
            ns_base,
            plans,
            select,
            slots: Vec::new(),
            overflow_reported: false,
            failed: false,
            notices: Vec::new(),
            progress: Arc::default(),
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn trace(&self) -> &Arc<Trace> {
        &self.trace
    }

    fn damaged(&mut self, offset: u64, expected: impl Into<String>) -> ReadError {
        self.failed = true;
        self.packet = None;
        ReadError::Damaged {
            path: self.path.clone(),
            offset,
            expected: expected.into(),
        }
    }

    /// The next event of this stream, `Ok(None)` at its end. After an error the stream
    /// yields nothing more.
    pub(crate) fn next_event(&mut self) -> Result<Option<Decoded>, ReadError> {
        loop {
            if self.failed {
                return Ok(None);
            }
            let Some(p) = &self.packet else {
                if self.next_packet >= self.file_len {
                    return Ok(None);
                }
                self.open_packet()?;
                continue;
            };
            if p.pos_bits >= p.content_bits {
                if let Some(expected) = p.truncated.clone() {
                    let at = p.offset + p.content_bits / 8;
                    return Err(self.damaged(at, expected));
                }
                self.packet = None;
                continue;
            }
            let windowed = p.loaded < p.wanted;
            if windowed && p.loaded * 8 < p.pos_bits.saturating_add(REFILL * 8) {
                self.load(WINDOW)?;
            }
            if windowed {
                self.saved_clocks.clone_from(&self.state.clocks);
            }
            let mut decoded = self.decode_event();
            if decoded.is_err()
                && let Some(p) = &self.packet
                && p.loaded < p.wanted
            {
                // The event may run past the window: decode it again over the whole rest.
                self.state.clocks.clone_from(&self.saved_clocks);
                self.load(u64::MAX)?;
                decoded = self.decode_event();
            }
            return match decoded {
                Ok(ev) => Ok(Some(ev)),
                Err(e) => {
                    let p = self.packet.as_ref().map_or(0, |p| p.offset);
                    let expected = match &self.packet {
                        Some(Packet {
                            truncated: Some(t), ..
                        }) => format!("{} ({t})", e.expected),
                        _ => e.expected,
                    };
                    Err(self.damaged(p + e.bit_offset / 8, expected))
                }
            };
        }
    }

    /// Slides the window to the current event and reads on until it holds `bytes`
    /// bytes (or the rest of the packet, if less).
    fn load(&mut self, bytes: u64) -> Result<(), ReadError> {
        let Some(p) = &mut self.packet else {
            return Ok(());
        };
        let from = (p.pos_bits / 8).clamp(p.first, p.loaded);
        let kept = (p.loaded - from) as usize;
        let start = (from - p.first) as usize;
        self.buf.copy_within(start..start + kept, 0);
        p.first = from;
        p.loaded = from + kept as u64;
        let upto = from.saturating_add(bytes).min(p.wanted);
        if upto <= p.loaded {
            return Ok(());
        }
        let len = (upto - from) as usize;
        // The buffer only grows: refilling it with zeros each time would cost as much as
        // reading. Reads are bounded by the packet, never by the buffer.
        if self.buf.len() < len {
            self.buf.resize(len, 0);
        }
        let offset = p.offset + p.loaded;
        if let Err(cause) = self.file.read_exact_at(&mut self.buf[kept..len], offset) {
            self.failed = true;
            self.packet = None;
            return Err(ReadError::Io {
                path: self.path.clone(),
                cause,
            });
        }
        p.loaded = upto;
        Ok(())
    }

    fn decode_event(&mut self) -> Result<Decoded, DecodeError> {
        let Self {
            trace,
            packet,
            buf,
            state,
            clock_of,
            ns_base,
            plans,
            select,
            slots,
            ..
        } = self;
        let p = packet.as_mut().expect("a packet is open");
        let md = &trace.metadata;
        let sc = &md.streams[p.stream_class];
        let plans = &mut plans[p.stream_class];
        let window = &buf[..(p.loaded - p.first) as usize];
        let mut bits = Bits::window(window, p.first, p.pos_bits, p.content_bits);
        let start = bits.pos();
        let mut roots = Roots {
            packet_header: md.packet_header.as_ref().zip(p.header.as_ref()),
            packet_context: sc.packet_context.as_ref().zip(p.context.as_deref()),
            ..Roots::default()
        };
        state.updating = true;
        state.budget = super::decode::MAX_VALUES_PER_EVENT;
        let header;
        let id = match (&plans.header, &sc.event_header) {
            (Some(plan), _) => plan.run(&mut bits, state, slots)?.unwrap_or(0),
            (None, Some(t)) => {
                header = decode(t, &mut bits, &roots, state)?;
                roots.event_header = Some((t, &header));
                last_uint(t, &header, "id").unwrap_or(0)
            }
            (None, None) => 0,
        };
        let existing = if id < DENSE_IDS {
            plans.dense.get(id as usize).and_then(Option::as_ref)
        } else {
            plans.sparse.get(&id)
        };
        let class_plan = match existing {
            Some(c) => c,
            None => {
                let Some(class) = sc.events.get(&id) else {
                    return Err(bits.error(format!(
                        "an event id that stream class {} declares, found id {id}",
                        sc.id
                    )));
                };
                let made = class_plan(trace, class, select);
                if id < DENSE_IDS {
                    let i = id as usize;
                    if plans.dense.len() <= i {
                        plans.dense.resize_with(i + 1, || None);
                    }
                    plans.dense[i].insert(made)
                } else {
                    plans.sparse.entry(id).or_insert(made)
                }
            }
        };
        let values = if class_plan.plain && sc.event_context.is_none() {
            match &class_plan.payload {
                PayloadMode::SkipFixed { align, bits: n } => {
                    bits.align(*align)?;
                    bits.skip_fixed(*n)?;
                }
                PayloadMode::Skip(plan) => {
                    plan.run(&mut bits, state, slots)?;
                }
                PayloadMode::Decode | PayloadMode::Drop => {}
            }
            None
        } else {
            let class = &trace.classes[class_plan.index as usize];
            let stream_context = sc
                .event_context
                .as_ref()
                .map(|t| decode(t, &mut bits, &roots, state))
                .transpose()?;
            roots.stream_event_context = sc.event_context.as_ref().zip(stream_context.as_ref());
            let context = class
                .context
                .as_ref()
                .map(|t| decode(t, &mut bits, &roots, state))
                .transpose()?;
            roots.event_context = class.context.as_ref().zip(context.as_ref());
            let payload = match (&class.payload, &class_plan.payload) {
                (None, _) => None,
                (Some(t), PayloadMode::Decode) => Some(decode(t, &mut bits, &roots, state)?),
                (Some(_), PayloadMode::Skip(plan)) => {
                    plan.run(&mut bits, state, slots)?;
                    None
                }
                (Some(_), PayloadMode::SkipFixed { align, bits: n }) => {
                    bits.align(*align)?;
                    bits.skip_fixed(*n)?;
                    None
                }
                (Some(t), PayloadMode::Drop) => {
                    decode(t, &mut bits, &roots, state)?;
                    None
                }
            };
            (stream_context.is_some() || context.is_some() || payload.is_some())
                .then(|| Box::new([stream_context, context, payload]))
        };
        if bits.pos() == start {
            return Err(bits.error(
                "an event that takes at least one bit (the metadata declares an empty event)",
            ));
        }
        p.pos_bits = bits.pos();
        let timestamp = match clock_of[p.stream_class] {
            Some(c) => match ns_base[c]
                .and_then(|(freq, base)| {
                    base.checked_add_unsigned(cycles_to_ns(freq, state.clocks[c]))
                })
                .map_or_else(|| md.clocks[c].to_ns_checked(state.clocks[c]), Ok)
            {
                Ok(ns) => ns,
                Err(clamped) => {
                    if !self.overflow_reported {
                        self.overflow_reported = true;
                        self.notices.push(Notice::ClockOverflow {
                            path: self.path.clone(),
                            clock: md.clocks[c].name.clone(),
                            clamped,
                        });
                    }
                    clamped
                }
            },
            None => 0,
        };
        Ok(Decoded {
            class: class_plan.index,
            stream_class: p.stream_class,
            timestamp,
            cpu_id: p.cpu_id,
            packet_context: if select.wants_packet_context() {
                p.context.clone()
            } else {
                None
            },
            values,
        })
    }
}

/// The last integer named `name` in decode order, looking into structures and the
/// selected options of variants: LTTng's extended event header puts the real id and
/// timestamp in `v.extended`, after the compact `id`.
pub(crate) fn last_uint(ty: &FieldType, val: &Value, name: &str) -> Option<u64> {
    match (ty, val) {
        (FieldType::Struct(st), Value::Struct(vals)) => {
            let mut found = None;
            for (f, v) in st.fields.iter().zip(vals) {
                if &*f.name == name
                    && let Some(u) = v.as_u64()
                {
                    found = Some(u);
                }
                if let Some(u) = last_uint(&f.ty, v, name) {
                    found = Some(u);
                }
            }
            found
        }
        (FieldType::Variant(var), Value::Variant(i, inner)) => {
            last_uint(&var.options.get(*i)?.ty, inner, name)
        }
        _ => None,
    }
}

/// Reads every event of an in-memory stream: how many decoded, and the error that
/// stopped it, if any.
pub(crate) fn decode_bytes(
    metadata: &super::metadata::Metadata,
    bytes: &[u8],
) -> (usize, Option<ReadError>) {
    let trace = Arc::new(Trace::new(PathBuf::from("<memory>"), metadata.clone()));
    let mut reader = StreamReader::from_bytes(bytes.to_vec(), trace);
    let mut n = 0;
    loop {
        match reader.next_event() {
            Ok(Some(_)) => n += 1,
            Ok(None) => return (n, None),
            Err(e) => return (n, Some(e)),
        }
    }
}
