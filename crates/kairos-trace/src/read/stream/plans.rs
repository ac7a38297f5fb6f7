//! How each event class's payload is read, compiled the first time the class is met:
//! decoded when selected, otherwise skipped by a plan (one aligned jump for a run of
//! fixed-size fields) or decoded and dropped.

use crate::read::event::Trace;
use crate::read::metadata::types::{FieldPath, FieldType, Scope};
use crate::read::metadata::{EventClass, StreamClass};
use crate::read::plan::Plan;
use crate::read::select::Selection;
use std::collections::HashMap;
use std::sync::Arc;

/// How one event class's payload is read.
#[derive(Debug)]
pub(super) enum PayloadMode {
    Decode,
    /// Not selected: walked by a plan.
    Skip(Plan),
    /// Not selected, and one run of fixed-size fields (see [`Plan::fixed_run`]):
    /// aligned, then `bits` skipped, without running the plan.
    SkipFixed {
        align: u32,
        bits: u64,
    },
    /// Not selected, but no plan expresses it: decoded and dropped.
    Drop,
}

#[derive(Debug)]
pub(super) struct ClassPlan {
    /// Index into the trace's class table.
    pub(super) index: u32,
    pub(super) payload: PayloadMode,
    /// No context of its own and no payload to decode: with a stream class without an
    /// event context, the event yields no value and takes the short way.
    pub(super) plain: bool,
}

/// Per stream class: the header plan (when the header can be walked without values)
/// and each event class's plan, compiled the first time the class is met.
#[derive(Debug, Default)]
pub(super) struct StreamPlans {
    pub(super) header: Option<Plan>,
    /// By event id, for small ids; larger ones in `sparse`.
    pub(super) dense: Vec<Option<ClassPlan>>,
    pub(super) sparse: HashMap<u64, ClassPlan>,
}

/// Event ids below this are looked up in a vector.
pub(super) const DENSE_IDS: u64 = 4096;

/// The plan for an event class met for the first time.
pub(super) fn class_plan(trace: &Trace, class: &Arc<EventClass>, select: &Selection) -> ClassPlan {
    let index = trace
        .classes
        .iter()
        .position(|c| Arc::ptr_eq(c, class))
        .expect("the trace's class table holds every class") as u32;
    let payload = if select.wants_payload(class) {
        PayloadMode::Decode
    } else {
        match class.payload.as_ref().and_then(Plan::compile) {
            Some(plan) => match plan.fixed_run() {
                Some((align, bits)) => PayloadMode::SkipFixed { align, bits },
                None => PayloadMode::Skip(plan),
            },
            None => PayloadMode::Drop,
        }
    };
    let plain = class.context.is_none()
        && (class.payload.is_none()
            || matches!(
                payload,
                PayloadMode::Skip(_) | PayloadMode::SkipFixed { .. }
            ));
    ClassPlan {
        index,
        payload,
        plain,
    }
}

/// A plan for a stream class's event header, unless a later scope of the stream class
/// may look a field up in the header (then the header's values are needed).
pub(super) fn header_plan(sc: &StreamClass) -> Option<Plan> {
    let header = sc.event_header.as_ref()?;
    let mut names = Vec::new();
    field_names(header, &mut names);
    let mut paths = Vec::new();
    let mut later: Vec<&FieldType> = sc.event_context.iter().collect();
    for class in sc.events.values() {
        later.extend(class.context.iter());
        later.extend(class.payload.iter());
    }
    for ty in later {
        field_paths(ty, &mut paths);
    }
    let needs_header = paths.iter().any(|p| match p.scope {
        Scope::EventHeader => true,
        Scope::Relative => p.names.first().is_some_and(|n| names.contains(&n)),
        _ => false,
    });
    if needs_header {
        return None;
    }
    Plan::compile(header)
}

pub(super) fn field_names<'a>(ty: &'a FieldType, out: &mut Vec<&'a Arc<str>>) {
    match ty {
        FieldType::Struct(st) => st.fields.iter().for_each(|f| {
            out.push(&f.name);
            field_names(&f.ty, out);
        }),
        FieldType::Variant(v) => v.options.iter().for_each(|f| {
            out.push(&f.name);
            field_names(&f.ty, out);
        }),
        FieldType::Array { elem, .. } | FieldType::Sequence { elem, .. } => field_names(elem, out),
        _ => {}
    }
}

pub(super) fn field_paths<'a>(ty: &'a FieldType, out: &mut Vec<&'a FieldPath>) {
    match ty {
        FieldType::Struct(st) => st.fields.iter().for_each(|f| field_paths(&f.ty, out)),
        FieldType::Variant(v) => {
            out.push(&v.tag);
            v.options.iter().for_each(|f| field_paths(&f.ty, out));
        }
        FieldType::Array { elem, .. } => field_paths(elem, out),
        FieldType::Sequence { elem, len } => {
            out.push(len);
            field_paths(elem, out);
        }
        _ => {}
    }
}
