//! One decoded event and the trace it came from.

use std::path::PathBuf;
use std::sync::Arc;

use super::metadata::types::{FieldType, StructType};
use super::metadata::{Clock, EnvValue, EventClass, Metadata, StreamClass};
use super::value::Value;

/// A trace of a [`super::TraceSet`]: its folder, metadata, hostname, and the label
/// babeltrace2 prints before each event's name.
#[derive(Debug)]
pub struct Trace {
    /// The trace's folder.
    pub path: PathBuf,
    /// Its parsed `metadata` file.
    pub metadata: Metadata,
    /// The `hostname` of its environment, when the tracer recorded one.
    pub hostname: Option<String>,
    /// The environment's `hostname`, `procname` and `(vpid)` that exist, joined by `:`.
    pub label: Option<String>,
    /// Every event class of every stream class, so decoders name a class by index.
    pub(crate) classes: Vec<Arc<EventClass>>,
    /// Per stream class: the index of the clock its events are timed by.
    pub(crate) stream_clocks: Vec<Option<usize>>,
}

impl Trace {
    /// The trace in folder `path`, described by `metadata`.
    pub fn new(path: PathBuf, metadata: Metadata) -> Self {
        let hostname = metadata.env_str("hostname").map(str::to_string);
        let vpid = metadata.env.iter().find_map(|(k, v)| match v {
            EnvValue::Int(i) if k == "vpid" => Some(format!("({i})")),
            _ => None,
        });
        let parts: Vec<String> = [
            hostname.clone(),
            metadata.env_str("procname").map(str::to_string),
            vpid,
        ]
        .into_iter()
        .flatten()
        .collect();
        let label = (!parts.is_empty()).then(|| parts.join(":"));
        let classes = metadata
            .streams
            .iter()
            .flat_map(|sc| sc.events.values().cloned())
            .collect();
        let stream_clocks = metadata.streams.iter().map(stream_clock).collect();
        Self {
            path,
            metadata,
            hostname,
            label,
            classes,
            stream_clocks,
        }
    }

    /// The clock that times the events of stream class `stream_class` (an index into
    /// `metadata.streams`), if any. Events of a stream class without one have no time:
    /// their `timestamp` is 0 and babeltrace2 prints none.
    pub fn clock_of(&self, stream_class: usize) -> Option<&Clock> {
        let c = (*self.stream_clocks.get(stream_class)?)?;
        self.metadata.clocks.get(c)
    }
}

/// The clock a stream class's events are timed by, as babeltrace2 chooses it: the clock
/// of the first clock-mapped integer of its event header, else of its packet context,
/// its event context, or an event class's context or payload (by event id). A clock
/// declared but mapped to no field times nothing.
fn stream_clock(sc: &StreamClass) -> Option<usize> {
    let mut ids: Vec<&u64> = sc.events.keys().collect();
    ids.sort();
    [&sc.event_header, &sc.packet_context, &sc.event_context]
        .into_iter()
        .flatten()
        .find_map(first_clock)
        .or_else(|| {
            ids.into_iter().find_map(|id| {
                let ev = &sc.events[id];
                [&ev.context, &ev.payload]
                    .into_iter()
                    .flatten()
                    .find_map(first_clock)
            })
        })
}

fn first_clock(ty: &FieldType) -> Option<usize> {
    match ty {
        FieldType::Int(i) => i.clock,
        FieldType::Enum(e) => e.container.clock,
        FieldType::Struct(s) => s.fields.iter().find_map(|f| first_clock(&f.ty)),
        FieldType::Variant(v) => v.options.iter().find_map(|f| first_clock(&f.ty)),
        FieldType::Array { elem, .. } | FieldType::Sequence { elem, .. } => first_clock(elem),
        FieldType::Float(_) | FieldType::Str(_) => None,
    }
}

/// A decoded event.
#[derive(Debug, Clone)]
pub struct Event {
    /// The event's class: its name and the types of its fields.
    pub class: Arc<EventClass>,
    /// The trace the event came from.
    pub trace: Arc<Trace>,
    /// Index of the event's stream class in `trace.metadata.streams`.
    pub stream_class: usize,
    /// Nanoseconds since the Unix epoch (the clock's offset applied).
    pub timestamp: i64,
    /// The `cpu_id` of the packet context, when there is one.
    pub cpu_id: Option<u64>,
    /// The packet context, when the reader's [`super::Selection`] asks for it.
    pub packet_context: Option<Arc<Value>>,
    /// The stream event context (fields every event of the stream carries), when the stream class has one and the selection asks for it.
    pub stream_context: Option<Value>,
    /// The event's own context, when its class has one and the selection asks for it.
    pub context: Option<Value>,
    /// The payload, when the class has one and the selection decodes it (see [`super::Selection::payloads`]).
    pub payload: Option<Value>,
}

impl Event {
    /// The event borrowed: what every accessor reads.
    pub fn view(&self) -> EventRef<'_> {
        EventRef {
            class: &self.class,
            trace: &self.trace,
            stream_class: self.stream_class,
            timestamp: self.timestamp,
            cpu_id: self.cpu_id,
            packet_context: self.packet_context.as_ref(),
            stream_context: self.stream_context.as_ref(),
            context: self.context.as_ref(),
            payload: self.payload.as_ref(),
        }
    }

    /// The event class's name, e.g. `ros2:rcl_publish`.
    pub fn name(&self) -> &str {
        &self.class.name
    }

    /// A payload field by name.
    pub fn field(&self, name: &str) -> Option<&Value> {
        self.view().field(name)
    }

    /// A context field by name: the event's own context, then the stream event context.
    pub fn context_field(&self, name: &str) -> Option<&Value> {
        self.view().context_field(name)
    }

    /// A payload field by name as an unsigned integer; `None` if absent or not a non-negative integer.
    pub fn u64(&self, name: &str) -> Option<u64> {
        self.view().u64(name)
    }

    /// A payload field by name as a signed integer; `None` if absent or not an integer that fits.
    pub fn i64(&self, name: &str) -> Option<i64> {
        self.view().i64(name)
    }

    /// A payload field by name as a string; `None` if absent or not a string.
    pub fn str(&self, name: &str) -> Option<&str> {
        self.view().str(name)
    }
}

/// An event borrowed from the reader ([`super::Events::next_ref`]) or from an
/// [`Event`] ([`Event::view`]): the same fields, owned by neither, so that handing one
/// over costs no reference count and moves no value.
#[derive(Debug, Clone, Copy)]
pub struct EventRef<'a> {
    /// The event's class: its name and the types of its fields.
    pub class: &'a Arc<EventClass>,
    /// The trace the event came from.
    pub trace: &'a Arc<Trace>,
    /// Index of the event's stream class in `trace.metadata.streams`.
    pub stream_class: usize,
    /// Nanoseconds since the Unix epoch (the clock's offset applied).
    pub timestamp: i64,
    /// The `cpu_id` of the packet context, when there is one.
    pub cpu_id: Option<u64>,
    /// The packet context, when the reader's [`super::Selection`] asks for it.
    pub packet_context: Option<&'a Arc<Value>>,
    /// The stream event context, when the stream class has one.
    pub stream_context: Option<&'a Value>,
    /// The event's own context, when its class has one.
    pub context: Option<&'a Value>,
    /// The payload, when the class has one and the selection decodes it.
    pub payload: Option<&'a Value>,
}

impl<'a> EventRef<'a> {
    /// The event class's name, e.g. `ros2:rcl_publish`.
    pub fn name(&self) -> &'a str {
        &self.class.name
    }

    /// A payload field by name.
    pub fn field(&self, name: &str) -> Option<&'a Value> {
        struct_field(self.class.payload.as_ref(), self.payload, name)
    }

    /// A context field by name: the event's own context, then the stream event context.
    pub fn context_field(&self, name: &str) -> Option<&'a Value> {
        struct_field(self.class.context.as_ref(), self.context, name).or_else(|| {
            let sc = &self.trace.metadata.streams[self.stream_class];
            struct_field(sc.event_context.as_ref(), self.stream_context, name)
        })
    }

    /// A payload field by name as an unsigned integer; `None` if absent or not a non-negative integer.
    pub fn u64(&self, name: &str) -> Option<u64> {
        self.field(name).and_then(Value::as_u64)
    }

    /// A payload field by name as a signed integer; `None` if absent or not an integer that fits.
    pub fn i64(&self, name: &str) -> Option<i64> {
        self.field(name).and_then(Value::as_i64)
    }

    /// A payload field by name as a string; `None` if absent or not a string.
    pub fn str(&self, name: &str) -> Option<&'a str> {
        self.field(name).and_then(Value::as_str)
    }

    /// An owned copy (the values cloned).
    pub fn to_event(&self) -> Event {
        Event {
            class: self.class.clone(),
            trace: self.trace.clone(),
            stream_class: self.stream_class,
            timestamp: self.timestamp,
            cpu_id: self.cpu_id,
            packet_context: self.packet_context.cloned(),
            stream_context: self.stream_context.cloned(),
            context: self.context.cloned(),
            payload: self.payload.cloned(),
        }
    }
}

fn struct_field<'a>(
    ty: Option<&'a FieldType>,
    val: Option<&'a Value>,
    name: &str,
) -> Option<&'a Value> {
    match (ty?, val?) {
        (FieldType::Struct(StructType { fields, .. }), Value::Struct(vals)) => {
            let i = fields.iter().position(|f| &*f.name == name)?;
            vals.get(i)
        }
        _ => None,
    }
}
