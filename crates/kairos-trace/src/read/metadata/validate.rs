//! Checks, once the whole metadata is parsed, that every sequence length names an
//! unsigned integer and every variant tag an enumeration, as CTF 1.8 requires (and
//! babeltrace2 enforces): such metadata is refused before any stream is read, with the
//! event, scope and field named, rather than failing on every event later.
//!
//! Paths are resolved the way the decoder resolves them (see `decode::lookup`): a
//! relative name among the earlier members of the enclosing structures, innermost
//! first, then in the scopes decoded before; an absolute one in its scope. A path that
//! goes through a variant depends on the option decoded, and one that names nothing is
//! left for the decoder to report: only a target known for certain is checked.

use std::collections::HashMap;
use std::sync::Arc;

use super::types::{FieldPath, FieldType, Scope, StructType};
use super::{Metadata, MetadataError, MetadataFault};

/// The line each block starts on, so that a fault names it.
#[derive(Debug, Default)]
pub(super) struct Lines {
    /// The `trace` block declaring the packet header.
    pub trace: Option<u32>,
    /// `stream` blocks by stream class id.
    pub streams: HashMap<u64, u32>,
    /// `event` blocks by (stream class id, event id).
    pub events: HashMap<(u64, u64), u32>,
}

/// The scopes decoded before the one being checked.
#[derive(Debug, Default, Clone, Copy)]
struct Roots<'a> {
    packet_header: Option<&'a FieldType>,
    packet_context: Option<&'a FieldType>,
    event_header: Option<&'a FieldType>,
    stream_event_context: Option<&'a FieldType>,
    event_context: Option<&'a FieldType>,
}

impl<'a> Roots<'a> {
    fn get(&self, scope: Scope) -> Option<&'a FieldType> {
        match scope {
            Scope::PacketHeader => self.packet_header,
            Scope::PacketContext => self.packet_context,
            Scope::EventHeader => self.event_header,
            Scope::StreamEventContext => self.stream_event_context,
            Scope::EventContext => self.event_context,
            Scope::EventPayload | Scope::Relative => None,
        }
    }

    fn fallback(&self) -> [Option<&'a FieldType>; 5] {
        [
            self.event_context,
            self.stream_event_context,
            self.event_header,
            self.packet_context,
            self.packet_header,
        ]
    }
}

/// A structure being walked: the members before `upto` are decoded before the one at
/// `upto`.
struct Frame<'a> {
    st: &'a StructType,
    upto: usize,
    parent: Option<&'a Frame<'a>>,
}

/// What a path names, as far as the types alone tell.
enum Target<'a> {
    Found(&'a FieldType),
    /// It goes through a variant, or names nothing: the decoder decides.
    Unknown,
    NotFound,
}

/// Where the walk is, for the error message.
struct Place<'a> {
    line: Option<u32>,
    /// E.g. "event `ze_event` (id 1 of stream class 0), payload".
    scope: &'a str,
    /// Member names from the scope's root to the field being checked.
    names: Vec<Arc<str>>,
}

/// Checks every scope of `md`: `Err` names the first sequence length or variant tag of
/// the wrong type.
pub(super) fn check(md: &Metadata, lines: &Lines) -> Result<(), MetadataError> {
    let mut roots = Roots::default();
    if let Some(t) = &md.packet_header {
        scope(t, &roots, lines.trace, "trace packet header")?;
    }
    roots.packet_header = md.packet_header.as_ref();
    for sc in &md.streams {
        let line = lines.streams.get(&sc.id).copied();
        let mut roots = roots;
        let scopes = [
            (&sc.packet_context, "packet context"),
            (&sc.event_header, "event header"),
            (&sc.event_context, "event context"),
        ];
        for (i, (ty, what)) in scopes.into_iter().enumerate() {
            if let Some(t) = ty {
                scope(t, &roots, line, &format!("stream class {}, {what}", sc.id))?;
            }
            match i {
                0 => roots.packet_context = ty.as_ref(),
                1 => roots.event_header = ty.as_ref(),
                _ => roots.stream_event_context = ty.as_ref(),
            }
        }
        let mut ids: Vec<&u64> = sc.events.keys().collect();
        ids.sort();
        for id in ids {
            let ev = &sc.events[id];
            let line = lines.events.get(&(sc.id, *id)).copied().or(line);
            let name = |what: &str| {
                format!(
                    "event `{}` (id {id} of stream class {}), {what}",
                    ev.name, sc.id
                )
            };
            let mut roots = roots;
            if let Some(t) = &ev.context {
                scope(t, &roots, line, &name("context"))?;
            }
            roots.event_context = ev.context.as_ref();
            if let Some(t) = &ev.payload {
                scope(t, &roots, line, &name("payload"))?;
            }
        }
    }
    Ok(())
}

fn scope(
    ty: &FieldType,
    roots: &Roots<'_>,
    line: Option<u32>,
    what: &str,
) -> Result<(), MetadataError> {
    let mut place = Place {
        line,
        scope: what,
        names: Vec::new(),
    };
    walk(ty, None, roots, &mut place)
}

fn walk(
    ty: &FieldType,
    frame: Option<&Frame<'_>>,
    roots: &Roots<'_>,
    place: &mut Place<'_>,
) -> Result<(), MetadataError> {
    match ty {
        FieldType::Struct(st) => {
            for (upto, f) in st.fields.iter().enumerate() {
                let here = Frame {
                    st,
                    upto,
                    parent: frame,
                };
                place.names.push(f.name.clone());
                walk(&f.ty, Some(&here), roots, place)?;
                place.names.pop();
            }
            Ok(())
        }
        FieldType::Variant(var) => {
            if let Target::Found(tag) = resolve(&var.tag, frame, roots)
                && !matches!(tag, FieldType::Enum(_))
            {
                return Err(fault(
                    place,
                    MetadataFault::VariantTagNotEnum,
                    "variant",
                    &var.tag,
                    tag,
                    "an enumeration",
                ));
            }
            for opt in &var.options {
                place.names.push(opt.name.clone());
                walk(&opt.ty, frame, roots, place)?;
                place.names.pop();
            }
            Ok(())
        }
        FieldType::Sequence { elem, len } => {
            if let Target::Found(target) = resolve(len, frame, roots) {
                let unsigned = match target {
                    FieldType::Int(i) => !i.signed,
                    FieldType::Enum(e) => !e.container.signed,
                    _ => false,
                };
                if !unsigned {
                    return Err(fault(
                        place,
                        MetadataFault::SequenceLengthNotUnsigned,
                        "sequence",
                        len,
                        target,
                        "an unsigned integer",
                    ));
                }
            }
            walk(elem, frame, roots, place)
        }
        FieldType::Array { elem, .. } => walk(elem, frame, roots, place),
        FieldType::Int(_) | FieldType::Enum(_) | FieldType::Float(_) | FieldType::Str(_) => Ok(()),
    }
}

/// The type a path names, resolved as the decoder resolves it.
fn resolve<'a>(path: &FieldPath, frame: Option<&Frame<'a>>, roots: &Roots<'a>) -> Target<'a> {
    let Some((first, rest)) = path.names.split_first() else {
        return Target::Unknown;
    };
    if path.scope != Scope::Relative {
        if let Some(ty) = roots.get(path.scope) {
            return follow(ty, &path.names);
        }
        let Some(mut root) = frame else {
            return Target::NotFound;
        };
        while let Some(parent) = root.parent {
            root = parent;
        }
        return match root.st.fields[..root.upto]
            .iter()
            .position(|f| f.name == *first)
        {
            Some(i) => follow(&root.st.fields[i].ty, rest),
            None => Target::NotFound,
        };
    }
    let mut f = frame;
    while let Some(fr) = f {
        if let Some(i) = fr.st.fields[..fr.upto]
            .iter()
            .rposition(|fd| fd.name == *first)
        {
            return follow(&fr.st.fields[i].ty, rest);
        }
        f = fr.parent;
    }
    for ty in roots.fallback().into_iter().flatten() {
        match follow(ty, &path.names) {
            Target::NotFound => continue,
            found => return found,
        }
    }
    Target::NotFound
}

fn follow<'a>(ty: &'a FieldType, names: &[Arc<str>]) -> Target<'a> {
    let Some((first, rest)) = names.split_first() else {
        return Target::Found(ty);
    };
    match ty {
        FieldType::Struct(st) => match st.index_of(first) {
            Some(i) => follow(&st.fields[i].ty, rest),
            None => Target::NotFound,
        },
        FieldType::Variant(var) => match var.options.iter().find(|o| o.name == *first) {
            Some(opt) => follow(&opt.ty, rest),
            // Which option holds the name depends on the data.
            None => Target::Unknown,
        },
        _ => Target::NotFound,
    }
}

fn fault(
    place: &Place<'_>,
    kind: MetadataFault,
    what: &str,
    path: &FieldPath,
    found: &FieldType,
    wanted: &str,
) -> MetadataError {
    let field = place
        .names
        .iter()
        .map(|n| &**n)
        .collect::<Vec<_>>()
        .join(".");
    let target = path
        .names
        .iter()
        .map(|n| &**n)
        .collect::<Vec<_>>()
        .join(".");
    let role = if what == "variant" { "tag" } else { "length" };
    MetadataError::of(
        place.line,
        kind,
        format!(
            "{}: {what} `{field}` takes its {role} from `{target}`, which is {}, not {wanted}",
            place.scope,
            describe(found)
        ),
    )
}

fn describe(ty: &FieldType) -> &'static str {
    match ty {
        FieldType::Int(i) if i.signed => "a signed integer",
        FieldType::Int(_) => "an unsigned integer",
        FieldType::Enum(e) if e.container.signed => "an enumeration of a signed integer",
        FieldType::Enum(_) => "an enumeration",
        FieldType::Float(_) => "a floating-point number",
        FieldType::Str(_) => "a string",
        FieldType::Struct(_) => "a structure",
        FieldType::Variant(_) => "a variant",
        FieldType::Array { .. } => "an array",
        FieldType::Sequence { .. } => "a sequence",
    }
}
