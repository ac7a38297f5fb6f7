//! Decoding plans compiled from the metadata: a field type turned once into a flat list
//! of operations (align, read an integer of a known size and byte order, skip a string
//! or a run of bytes, branch on a variant tag), run per event without allocating.
//!
//! Two uses: the event header, whose only outputs are the event id and the clock
//! updates, and event payloads an analysis did not ask for, which are walked only to
//! find where the next event starts. A type a plan cannot express without the value
//! tree (a sequence or variant whose length or tag lives outside the type itself, a
//! sequence of non-scalar elements) compiles to `None` and is decoded the general way,
//! so every trace still reads; only the fast path is narrower.
//!
//! A plan fails exactly where the general decoder fails, with the same messages: both
//! read through the same [`Bits`] cursor and check lengths and tags the same way.

use std::sync::Arc;

use super::bits::{Bits, DecodeError};
use super::decode::{DecodeState, MAX_VALUES_PER_EVENT};
use super::metadata::types::{ByteOrder, EnumType, FieldPath, FieldType, IntType, Scope};

/// One step of a plan. Integers that later steps need (tags, lengths) or that the
/// caller wants (the event id) are kept in numbered slots.
#[derive(Debug, Clone)]
enum Op {
    Align(u32),
    Int {
        size: u32,
        order: ByteOrder,
        signed: bool,
        clock: Option<usize>,
        slot: u32,
        /// An integer named `id`: the last one run is the event id.
        is_id: bool,
    },
    /// A NUL-terminated string.
    CStr,
    /// A static array of fixed-size elements: `bits` in all.
    Bits(u64),
    /// A sequence whose length is in `len_slot`, of scalar elements of `elem_bits`
    /// bits each (each aligned to `elem_align`, which their size is a multiple of).
    Seq {
        len_slot: u32,
        elem_bits: u64,
        elem_align: u32,
        is_char: bool,
        name: Arc<str>,
    },
    /// Jumps to the option the tag in `tag_slot` selects: the first `(lo, hi, target)`
    /// whose range holds it.
    Variant {
        tag_slot: u32,
        signed: bool,
        arms: Box<[(i128, i128, u32)]>,
        tag: Arc<str>,
    },
    Jump(u32),
}

/// A compiled plan; see the module documentation.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    ops: Vec<Op>,
    slots: usize,
}

/// Integers visible at one structure level while compiling: name, slot, and the
/// enumeration when the integer is one (a variant tag needs its ranges).
type Level<'a> = Vec<(Arc<str>, u32, Option<&'a EnumType>)>;

struct Compiler {
    ops: Vec<Op>,
    slots: u32,
    /// Names a tag or length refers to, and `id`: integers that must be read.
    needed: Vec<Arc<str>>,
}

impl Plan {
    /// Compiles `ty`, or `None` when it needs the general decoder.
    pub(crate) fn compile(ty: &FieldType) -> Option<Plan> {
        let mut needed: Vec<Arc<str>> = vec![Arc::from("id")];
        referenced(ty, &mut needed);
        let mut c = Compiler {
            ops: Vec::new(),
            slots: 0,
            needed,
        };
        let mut levels: Vec<Level> = vec![Vec::new()];
        c.field(ty, None, &mut levels)?;
        Some(Plan {
            ops: c.ops,
            slots: c.slots as usize,
        })
    }

    /// Runs the plan: advances `bits` past the value, updates clocks, and returns the
    /// last integer named `id` it read, if any.
    pub(crate) fn run(
        &self,
        bits: &mut Bits<'_>,
        state: &mut DecodeState,
        slots: &mut Vec<u64>,
    ) -> Result<Option<u64>, DecodeError> {
        if slots.len() < self.slots {
            slots.resize(self.slots, 0);
        }
        let mut id = None;
        let mut pc = 0usize;
        while let Some(op) = self.ops.get(pc) {
            pc += 1;
            match op {
                Op::Align(a) => bits.align(*a)?,
                Op::Int {
                    size,
                    order,
                    signed,
                    clock,
                    slot,
                    is_id,
                } => {
                    let raw = bits.read_uint(*size, *order)?;
                    if let Some(c) = clock {
                        state.update(*c, *size, raw);
                    }
                    let v = if *signed {
                        let shift = 64 - size;
                        (((raw << shift) as i64) >> shift) as u64
                    } else {
                        raw
                    };
                    slots[*slot as usize] = v;
                    if *is_id {
                        id = Some(v);
                    }
                }
                Op::CStr => {
                    bits.align(8)?;
                    bits.read_cstr()?;
                }
                Op::Bits(n) => {
                    if bits.remaining() < *n {
                        return Err(bits.error(format!(
                            "{n} bits of fixed-size fields, but only {} bits are left in the packet",
                            bits.remaining()
                        )));
                    }
                    bits.skip(*n);
                }
                Op::Seq {
                    len_slot,
                    elem_bits,
                    elem_align,
                    is_char,
                    name,
                } => {
                    let len = slots[*len_slot as usize];
                    bits.align(*elem_align)?;
                    if len.saturating_mul(*elem_bits) > bits.remaining() {
                        return Err(bits.error(format!(
                            "{len} array elements of at least {elem_bits} bits each, but only {} bits are left in the packet",
                            bits.remaining()
                        )));
                    }
                    if !is_char && len > MAX_VALUES_PER_EVENT {
                        return Err(bits.error(format!(
                            "{len} array elements, more than the values this event may still decode (sequence `{name}`)"
                        )));
                    }
                    bits.skip(len * elem_bits);
                }
                Op::Variant {
                    tag_slot,
                    signed,
                    arms,
                    tag,
                } => {
                    let v = slots[*tag_slot as usize];
                    let key = if *signed {
                        i128::from(v as i64)
                    } else {
                        i128::from(v)
                    };
                    match arms.iter().find(|(lo, hi, _)| *lo <= key && key <= *hi) {
                        Some(&(_, _, target)) => pc = target as usize,
                        None => {
                            return Err(bits.error(format!(
                                "a variant option for tag `{tag}` = {key}, but no option matches its label"
                            )));
                        }
                    }
                }
                Op::Jump(target) => pc = *target as usize,
            }
        }
        Ok(id)
    }
}

impl Compiler {
    /// Aligning to one bit is no step at all.
    fn align(&mut self, a: u32) {
        if a > 1 {
            self.ops.push(Op::Align(a));
        }
    }

    fn slot(&mut self) -> u32 {
        self.slots += 1;
        self.slots - 1
    }

    fn int<'a>(
        &mut self,
        int: &IntType,
        en: Option<&'a EnumType>,
        name: Option<&Arc<str>>,
        levels: &mut [Level<'a>],
    ) {
        self.align(int.align);
        let slot = self.slot();
        self.ops.push(Op::Int {
            size: int.size,
            order: int.byte_order,
            signed: int.signed,
            clock: int.clock,
            slot,
            is_id: name.is_some_and(|n| &**n == "id"),
        });
        if let (Some(n), Some(level)) = (name, levels.last_mut()) {
            level.push((n.clone(), slot, en));
        }
    }

    /// The slot of the integer a relative one-name path names, innermost level first,
    /// latest declaration first (as the general decoder looks it up).
    fn resolve<'a>(path: &FieldPath, levels: &[Level<'a>]) -> Option<(u32, Option<&'a EnumType>)> {
        if path.scope != Scope::Relative || path.names.len() != 1 {
            return None;
        }
        let name = &path.names[0];
        levels.iter().rev().find_map(|l| {
            l.iter()
                .rev()
                .find(|(n, _, _)| n == name)
                .map(|&(_, s, e)| (s, e))
        })
    }

    fn field<'a>(
        &mut self,
        ty: &'a FieldType,
        name: Option<&Arc<str>>,
        levels: &mut Vec<Level<'a>>,
    ) -> Option<()> {
        match ty {
            FieldType::Int(int) => self.int(int, None, name, levels),
            FieldType::Enum(e) => self.int(&e.container, Some(e), name, levels),
            FieldType::Float(f) => {
                self.align(f.align);
                let slot = self.slot();
                self.ops.push(Op::Int {
                    size: f.exp_dig + f.mant_dig,
                    order: f.byte_order,
                    signed: false,
                    clock: None,
                    slot,
                    is_id: false,
                });
            }
            FieldType::Str(_) => self.ops.push(Op::CStr),
            FieldType::Struct(st) if !self.needed.iter().any(|n| names_in(ty, n)) => {
                // Nothing in it is read later: one aligned run of bits when its layout
                // is the same for every value.
                if let Some(bits) = fixed_struct(ty) {
                    self.align(ty.align());
                    self.ops.push(Op::Bits(bits));
                    return Some(());
                }
                self.align(ty.align());
                levels.push(Vec::new());
                for f in &st.fields {
                    self.field(&f.ty, Some(&f.name), levels)?;
                }
                levels.pop();
            }
            FieldType::Struct(st) => {
                self.align(ty.align());
                levels.push(Vec::new());
                for f in &st.fields {
                    self.field(&f.ty, Some(&f.name), levels)?;
                }
                levels.pop();
                // A member visible by name from an enclosing level is not needed: the
                // general decoder only looks into structures through absolute paths.
            }
            FieldType::Variant(var) => {
                let (tag_slot, Some(en)) = Self::resolve(&var.tag, levels)? else {
                    return None;
                };
                let at = self.ops.len();
                self.ops.push(Op::Jump(0));
                let mut starts = Vec::with_capacity(var.options.len());
                let mut jumps = Vec::with_capacity(var.options.len());
                for opt in &var.options {
                    starts.push(self.ops.len() as u32);
                    self.field(&opt.ty, Some(&opt.name), levels)?;
                    jumps.push(self.ops.len());
                    self.ops.push(Op::Jump(0));
                }
                let end = self.ops.len() as u32;
                for j in jumps {
                    self.ops[j] = Op::Jump(end);
                }
                let arms = en
                    .mappings
                    .iter()
                    .filter_map(|m| Some((m.lo, m.hi, starts[var.option_for(&m.label)?])))
                    .collect();
                let tag = var
                    .tag
                    .names
                    .iter()
                    .map(|n| &**n)
                    .collect::<Vec<_>>()
                    .join(".");
                self.ops[at] = Op::Variant {
                    tag_slot,
                    signed: en.container.signed,
                    arms,
                    tag: tag.into(),
                };
            }
            FieldType::Array { elem, len } => {
                let (bits, align) = fixed(elem)?;
                self.align(align);
                self.ops.push(Op::Bits(bits.checked_mul(*len)?));
            }
            FieldType::Sequence { elem, len } => {
                let (elem_bits, elem_align) = fixed(elem)?;
                if !matches!(
                    **elem,
                    FieldType::Int(_) | FieldType::Enum(_) | FieldType::Float(_)
                ) {
                    return None;
                }
                let (len_slot, _) = Self::resolve(len, levels)?;
                self.ops.push(Op::Seq {
                    len_slot,
                    elem_bits,
                    elem_align,
                    is_char: elem.is_char(),
                    name: len.names.last()?.clone(),
                });
            }
        }
        Some(())
    }
}

/// The size and alignment of a type every value of which has the same size and whose
/// elements, laid end to end, stay aligned: scalars, and arrays and structures of them.
fn fixed(ty: &FieldType) -> Option<(u64, u32)> {
    let (bits, align) = match ty {
        FieldType::Int(i) => (u64::from(i.size), i.align),
        FieldType::Enum(e) => (u64::from(e.container.size), e.container.align),
        FieldType::Float(f) => (u64::from(f.exp_dig + f.mant_dig), f.align),
        FieldType::Array { elem, len } => {
            let (b, a) = fixed(elem)?;
            (b.checked_mul(*len)?, a)
        }
        _ => return None,
    };
    (bits % u64::from(align.max(1)) == 0).then_some((bits, align.max(1)))
}

/// The first names of the paths variant tags and sequence lengths in `ty` follow.
fn referenced(ty: &FieldType, out: &mut Vec<Arc<str>>) {
    match ty {
        FieldType::Struct(st) => st.fields.iter().for_each(|f| referenced(&f.ty, out)),
        FieldType::Variant(v) => {
            out.extend(v.tag.names.first().cloned());
            v.options.iter().for_each(|f| referenced(&f.ty, out));
        }
        FieldType::Array { elem, .. } => referenced(elem, out),
        FieldType::Sequence { elem, len } => {
            out.extend(len.names.first().cloned());
            referenced(elem, out);
        }
        _ => {}
    }
}

/// Whether a member named `name` is anywhere in `ty`, or an integer in it is mapped to
/// a clock (clock updates must run).
fn names_in(ty: &FieldType, name: &str) -> bool {
    match ty {
        FieldType::Int(i) => i.clock.is_some(),
        FieldType::Enum(e) => e.container.clock.is_some(),
        FieldType::Struct(st) => st
            .fields
            .iter()
            .any(|f| &*f.name == name || names_in(&f.ty, name)),
        FieldType::Variant(v) => v
            .options
            .iter()
            .any(|f| &*f.name == name || names_in(&f.ty, name)),
        FieldType::Array { elem, .. } | FieldType::Sequence { elem, .. } => names_in(elem, name),
        _ => false,
    }
}

/// The size of a structure whose members all have fixed sizes and no clock: laid out
/// from its (aligned) start, each member at the next multiple of its alignment.
fn fixed_struct(ty: &FieldType) -> Option<u64> {
    let FieldType::Struct(st) = ty else {
        return None;
    };
    let mut off = 0u64;
    for f in &st.fields {
        let (bits, align) = match &f.ty {
            FieldType::Struct(_) => (fixed_struct(&f.ty)?, f.ty.align()),
            FieldType::Int(i) if i.clock.is_some() => return None,
            FieldType::Enum(e) if e.container.clock.is_some() => return None,
            other => fixed(other)?,
        };
        let a = u64::from(align.max(1));
        off = off.div_ceil(a) * a + bits;
    }
    Some(off)
}
