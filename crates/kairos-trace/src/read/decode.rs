//! Decoding a field type into a [`Value`] from a packet's bits, resolving the fields that
//! sequence lengths and variant tags name, and advancing state as clock-mapped integers
//! go by. Lengths are checked against the bits left in the packet before anything is
//! allocated, so a damaged length costs an error, not memory.

use super::bits::{Bits, DecodeError};
use super::metadata::types::{FieldPath, FieldType, IntType, Scope, StructType};
use super::value::Value;

/// A sequence of zero-sized elements longer than this is refused.
const MAX_EMPTY_ELEMS: u64 = 1 << 16;

/// The scopes decoded before the current one, for absolute and fallback lookups.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Roots<'a> {
    pub packet_header: Option<(&'a FieldType, &'a Value)>,
    pub packet_context: Option<(&'a FieldType, &'a Value)>,
    pub event_header: Option<(&'a FieldType, &'a Value)>,
    pub stream_event_context: Option<(&'a FieldType, &'a Value)>,
    pub event_context: Option<(&'a FieldType, &'a Value)>,
}

impl<'a> Roots<'a> {
    fn get(&self, scope: Scope) -> Option<(&'a FieldType, &'a Value)> {
        match scope {
            Scope::PacketHeader => self.packet_header,
            Scope::PacketContext => self.packet_context,
            Scope::EventHeader => self.event_header,
            Scope::StreamEventContext => self.stream_event_context,
            Scope::EventContext => self.event_context,
            Scope::EventPayload | Scope::Relative => None,
        }
    }

    /// Innermost scope first: where a relative name not found in the enclosing
    /// structures is looked up.
    fn fallback(&self) -> [Option<(&'a FieldType, &'a Value)>; 5] {
        [
            self.event_context,
            self.stream_event_context,
            self.event_header,
            self.packet_context,
            self.packet_header,
        ]
    }
}

/// The structure being decoded: its type, the members decoded so far, and its parent.
struct Frame<'a> {
    ty: &'a StructType,
    vals: &'a [Value],
    parent: Option<&'a Frame<'a>>,
}

/// What decoding carries from field to field: the current value of each clock of the
/// trace (in cycles), and how many more values one event may decode.
#[derive(Debug, Clone)]
pub(crate) struct DecodeState {
    pub clocks: Vec<u64>,
    /// Off while decoding a packet context, whose `timestamp_end` must not move the clock.
    pub updating: bool,
    /// Values left for the current event: nested arrays of empty structures could
    /// otherwise multiply into billions of values from a few bytes.
    pub budget: u64,
}

/// The most values one event (or one packet header and context) may decode into.
pub(crate) const MAX_VALUES_PER_EVENT: u64 = 1 << 20;

impl Default for DecodeState {
    fn default() -> Self {
        Self {
            clocks: Vec::new(),
            updating: true,
            budget: MAX_VALUES_PER_EVENT,
        }
    }
}

impl DecodeState {
    pub(crate) fn update(&mut self, clock: usize, size: u32, v: u64) {
        if !self.updating {
            return;
        }
        let Some(cur) = self.clocks.get_mut(clock) else {
            return;
        };
        if size >= 64 {
            *cur = v;
            return;
        }
        // A clock field of fewer than 64 bits holds the low bits of the clock; when they
        // are below the previous low bits, the high bits have wrapped once.
        let mask = (1u64 << size) - 1;
        let mut next = (*cur & !mask) | v;
        if v < (*cur & mask) {
            next = next.wrapping_add(1u64 << size);
        }
        *cur = next;
    }
}

pub(crate) fn decode(
    ty: &FieldType,
    bits: &mut Bits<'_>,
    roots: &Roots<'_>,
    state: &mut DecodeState,
) -> Result<Value, DecodeError> {
    decode_in(ty, bits, roots, None, state)
}

fn decode_in(
    ty: &FieldType,
    bits: &mut Bits<'_>,
    roots: &Roots<'_>,
    frame: Option<&Frame<'_>>,
    state: &mut DecodeState,
) -> Result<Value, DecodeError> {
    if state.budget == 0 {
        return Err(bits.error(format!(
            "at most {MAX_VALUES_PER_EVENT} values in one event; the metadata's nested arrays ask for more"
        )));
    }
    state.budget -= 1;
    match ty {
        FieldType::Int(int) => decode_int(int, bits, state),
        FieldType::Enum(e) => decode_int(&e.container, bits, state),
        FieldType::Float(f) => {
            bits.align(f.align)?;
            let size = f.exp_dig + f.mant_dig;
            let raw = bits.read_uint(size, f.byte_order)?;
            Ok(Value::Float(if size == 32 {
                f64::from(f32::from_bits(raw as u32))
            } else {
                f64::from_bits(raw)
            }))
        }
        FieldType::Str(_) => {
            bits.align(8)?;
            let raw = bits.read_cstr()?;
            Ok(Value::Str(String::from_utf8_lossy(raw).into_owned()))
        }
        FieldType::Struct(st) => {
            bits.align(ty.align())?;
            let mut vals = Vec::with_capacity(st.fields.len());
            for field in &st.fields {
                let v = {
                    let here = Frame {
                        ty: st,
                        vals: &vals,
                        parent: frame,
                    };
                    decode_in(&field.ty, bits, roots, Some(&here), state)?
                };
                vals.push(v);
            }
            Ok(Value::Struct(vals))
        }
        FieldType::Variant(var) => {
            let Some((tag_ty, tag_val)) = lookup(&var.tag, frame, roots) else {
                return Err(bits.error(format!(
                    "the variant tag `{}` decoded before this variant",
                    show(&var.tag)
                )));
            };
            let FieldType::Enum(e) = tag_ty else {
                return Err(bits.error(format!(
                    "the variant tag `{}` to be an enumeration",
                    show(&var.tag)
                )));
            };
            let raw = int_key(tag_val);
            let option = e.labels(raw).find_map(|label| var.option_for(label));
            let Some(idx) = option else {
                return Err(bits.error(format!(
                    "a variant option for tag `{}` = {raw}, but no option matches its label",
                    show(&var.tag)
                )));
            };
            let inner = decode_in(&var.options[idx].ty, bits, roots, frame, state)?;
            Ok(Value::Variant(idx, Box::new(inner)))
        }
        FieldType::Array { elem, len } => decode_array(elem, *len, bits, roots, frame, state),
        FieldType::Sequence { elem, len } => {
            let Some((_, v)) = lookup(len, frame, roots) else {
                return Err(bits.error(format!(
                    "the sequence length `{}` decoded before the sequence",
                    show(len)
                )));
            };
            let Some(n) = v.as_u64() else {
                return Err(bits.error(format!(
                    "the sequence length `{}` to be a non-negative integer",
                    show(len)
                )));
            };
            decode_array(elem, n, bits, roots, frame, state)
        }
    }
}

fn decode_int(
    int: &IntType,
    bits: &mut Bits<'_>,
    state: &mut DecodeState,
) -> Result<Value, DecodeError> {
    bits.align(int.align)?;
    let raw = bits.read_uint(int.size, int.byte_order)?;
    if let Some(clock) = int.clock {
        state.update(clock, int.size, raw);
    }
    if int.signed {
        let shift = 64 - int.size;
        Ok(Value::SInt(((raw << shift) as i64) >> shift))
    } else {
        Ok(Value::UInt(raw))
    }
}

fn decode_array(
    elem: &FieldType,
    len: u64,
    bits: &mut Bits<'_>,
    roots: &Roots<'_>,
    frame: Option<&Frame<'_>>,
    state: &mut DecodeState,
) -> Result<Value, DecodeError> {
    bits.align(elem.align())?;
    let min = elem.min_bits();
    if (min == 0 && len > MAX_EMPTY_ELEMS) || len.saturating_mul(min) > bits.remaining() {
        return Err(bits.error(format!(
            "{len} array elements of at least {min} bits each, but only {} bits are left in the packet",
            bits.remaining()
        )));
    }
    if (min == 0 || !elem.is_char()) && len > state.budget {
        return Err(bits.error(format!(
            "{len} array elements, more than the {} values this event may still decode",
            state.budget
        )));
    }
    if elem.is_char() {
        let raw = bits.read_bytes(len)?;
        let text = raw.split(|&b| b == 0).next().unwrap_or_default();
        return Ok(Value::Str(String::from_utf8_lossy(text).into_owned()));
    }
    let mut out = Vec::with_capacity(len as usize);
    for _ in 0..len {
        out.push(decode_in(elem, bits, roots, frame, state)?);
    }
    Ok(Value::Array(out))
}

/// An integer value as a key that compares correctly whether it was signed or not.
pub(crate) fn int_key(v: &Value) -> i128 {
    match *v {
        Value::UInt(u) => i128::from(u),
        Value::SInt(s) => i128::from(s),
        _ => i128::MIN,
    }
}

fn show(path: &FieldPath) -> String {
    path.names
        .iter()
        .map(|n| &**n)
        .collect::<Vec<_>>()
        .join(".")
}

/// Finds the type and value a path names.
fn lookup<'a>(
    path: &FieldPath,
    frame: Option<&Frame<'a>>,
    roots: &Roots<'a>,
) -> Option<(&'a FieldType, &'a Value)> {
    let (first, rest) = path.names.split_first()?;
    if path.scope != Scope::Relative {
        if let Some((ty, val)) = roots.get(path.scope) {
            return follow(ty, val, &path.names);
        }
        // An absolute path into the scope being decoded: start from its outermost
        // structure, among the members decoded so far.
        let mut root = frame?;
        while let Some(parent) = root.parent {
            root = parent;
        }
        let decoded = &root.ty.fields[..root.vals.len()];
        let i = decoded.iter().position(|fd| fd.name == *first)?;
        return follow(&root.ty.fields[i].ty, &root.vals[i], rest);
    }
    let mut f = frame;
    while let Some(fr) = f {
        let decoded = &fr.ty.fields[..fr.vals.len()];
        if let Some(i) = decoded.iter().rposition(|fd| fd.name == *first) {
            return follow(&fr.ty.fields[i].ty, &fr.vals[i], rest);
        }
        f = fr.parent;
    }
    roots
        .fallback()
        .into_iter()
        .flatten()
        .find_map(|(ty, val)| follow(ty, val, &path.names))
}

/// Walks `names` down from a value through structures and selected variant options.
fn follow<'a>(
    ty: &'a FieldType,
    val: &'a Value,
    names: &[std::sync::Arc<str>],
) -> Option<(&'a FieldType, &'a Value)> {
    let Some((first, rest)) = names.split_first() else {
        return Some((ty, val));
    };
    match (ty, val) {
        (FieldType::Struct(st), Value::Struct(vals)) => {
            let i = st.index_of(first)?;
            follow(&st.fields[i].ty, vals.get(i)?, rest)
        }
        (FieldType::Variant(var), Value::Variant(i, inner)) => {
            let opt = var.options.get(*i)?;
            if opt.name == *first {
                follow(&opt.ty, inner, rest)
            } else {
                follow(&opt.ty, inner, names)
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::metadata::Metadata;

    fn payload(md: &Metadata) -> &FieldType {
        md.streams[0].events[&0].payload.as_ref().unwrap()
    }

    #[test]
    fn sequence_and_variant_follow_earlier_fields() {
        let md = Metadata::parse(
            r#"/* CTF 1.8 */
            typealias integer { size = 8; align = 8; signed = false; } := u8;
            trace { major = 1; minor = 8; byte_order = le; };
            event { id = 0; fields := struct {
              u8 _n; u8 _xs[ _n ];
              enum : u8 { "_a" = 1, "_b" = 2 } _tag;
              variant <_tag> { u8 _a; string _b; } _v;
            }; };"#,
        )
        .unwrap();
        let buf = [2u8, 7, 9, 2, b'h', b'i', 0];
        let mut bits = Bits::new(&buf, 0, 56);
        let v = decode(
            payload(&md),
            &mut bits,
            &Roots::default(),
            &mut DecodeState::default(),
        )
        .unwrap();
        assert_eq!(
            v,
            Value::Struct(vec![
                Value::UInt(2),
                Value::Array(vec![Value::UInt(7), Value::UInt(9)]),
                Value::UInt(2),
                Value::Variant(1, Box::new(Value::Str("hi".into()))),
            ])
        );
    }

    #[test]
    fn a_huge_sequence_length_is_an_error_not_an_allocation() {
        let md = Metadata::parse(
            r#"/* CTF 1.8 */
            typealias integer { size = 64; align = 8; signed = false; } := u64;
            trace { major = 1; minor = 8; byte_order = le; };
            event { id = 0; fields := struct { u64 _n; u64 _xs[ _n ]; }; };"#,
        )
        .unwrap();
        let mut buf = u64::MAX.to_le_bytes().to_vec();
        buf.extend([0u8; 16]);
        let mut bits = Bits::new(&buf, 0, buf.len() as u64 * 8);
        let err = decode(
            payload(&md),
            &mut bits,
            &Roots::default(),
            &mut DecodeState::default(),
        )
        .unwrap_err();
        assert!(err.expected.contains("array elements"), "{err:?}");
    }

    #[test]
    fn nested_arrays_of_empty_structures_hit_the_value_budget() {
        let md = Metadata::parse(
            r#"/* CTF 1.8 */
            trace { major = 1; minor = 8; byte_order = le; };
            event { id = 0; fields := struct { struct { struct { } _e[65536]; } _outer[65536]; }; };"#,
        )
        .unwrap();
        let buf = [0u8; 8];
        let mut bits = Bits::new(&buf, 0, 64);
        let err = decode(
            payload(&md),
            &mut bits,
            &Roots::default(),
            &mut DecodeState::default(),
        )
        .unwrap_err();
        assert!(err.expected.contains("values"), "{err:?}");
    }

    #[test]
    fn short_clock_fields_wrap_into_the_high_bits() {
        let mut c = DecodeState {
            clocks: vec![0x1_07FF_FFF0],
            ..DecodeState::default()
        };
        c.update(0, 27, 0x10);
        assert_eq!(c.clocks[0], 0x1_0800_0010);
        c.update(0, 27, 0x20);
        assert_eq!(c.clocks[0], 0x1_0800_0020);
    }

    #[test]
    fn signed_integers_are_sign_extended() {
        let md = Metadata::parse(
            r#"/* CTF 1.8 */
            trace { major = 1; minor = 8; byte_order = le; };
            event { id = 0; fields := struct { integer { size = 4; align = 1; signed = true; } _a; }; };"#,
        )
        .unwrap();
        let buf = [0x0Eu8];
        let mut bits = Bits::new(&buf, 0, 8);
        let v = decode(
            payload(&md),
            &mut bits,
            &Roots::default(),
            &mut DecodeState::default(),
        )
        .unwrap();
        assert_eq!(v, Value::Struct(vec![Value::SInt(-2)]));
    }
}
