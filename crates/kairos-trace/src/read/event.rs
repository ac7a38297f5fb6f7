//! One decoded event and the trace it came from.

use std::path::PathBuf;
use std::sync::Arc;

use super::metadata::types::{FieldType, StructType};
use super::metadata::{EnvValue, EventClass, Metadata};
use super::value::Value;

/// A trace of a [`super::TraceSet`]: its folder, metadata, hostname, and the label
/// babeltrace2 prints before each event's name.
#[derive(Debug)]
pub struct Trace {
    pub path: PathBuf,
    pub metadata: Metadata,
    pub hostname: Option<String>,
    /// The environment's `hostname`, `procname` and `(vpid)` that exist, joined by `:`.
    pub label: Option<String>,
    /// Every event class of every stream class, so decoders name a class by index.
    pub(crate) classes: Vec<Arc<EventClass>>,
}

impl Trace {
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
        Self {
            path,
            metadata,
            hostname,
            label,
            classes,
        }
    }
}

/// A decoded event.
#[derive(Debug, Clone)]
pub struct Event {
    pub class: Arc<EventClass>,
    pub trace: Arc<Trace>,
    /// Index of the event's stream class in `trace.metadata.streams`.
    pub stream_class: usize,
    /// Nanoseconds since the Unix epoch (the clock's offset applied).
    pub timestamp: i64,
    /// The `cpu_id` of the packet context, when there is one.
    pub cpu_id: Option<u64>,
    /// The packet context, when the reader's [`super::Selection`] asks for it.
    pub packet_context: Option<Arc<Value>>,
    pub stream_context: Option<Value>,
    pub context: Option<Value>,
    pub payload: Option<Value>,
}

impl Event {
    pub fn name(&self) -> &str {
        &self.class.name
    }

    /// A payload field by name.
    pub fn field(&self, name: &str) -> Option<&Value> {
        struct_field(self.class.payload.as_ref(), self.payload.as_ref(), name)
    }

    /// A context field by name: the event's own context, then the stream event context.
    pub fn context_field(&self, name: &str) -> Option<&Value> {
        struct_field(self.class.context.as_ref(), self.context.as_ref(), name).or_else(|| {
            let sc = &self.trace.metadata.streams[self.stream_class];
            struct_field(
                sc.event_context.as_ref(),
                self.stream_context.as_ref(),
                name,
            )
        })
    }

    pub fn u64(&self, name: &str) -> Option<u64> {
        self.field(name).and_then(Value::as_u64)
    }

    pub fn i64(&self, name: &str) -> Option<i64> {
        self.field(name).and_then(Value::as_i64)
    }

    pub fn str(&self, name: &str) -> Option<&str> {
        self.field(name).and_then(Value::as_str)
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
