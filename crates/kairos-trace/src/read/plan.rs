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
//! A plan fails at the same event as the general decoder, for the same reason: both read
//! through the same [`Bits`] cursor and check lengths and tags the same way (a run of
//! fixed-size fields that the packet cuts short is reported at the run's start).

use std::sync::Arc;

use super::bits::{Bits, DecodeError};
use super::decode::{DecodeState, MAX_VALUES_PER_EVENT};
use super::lttng_header::LttngHeader;
use super::metadata::types::{ByteOrder, EnumType, FieldPath, FieldType, IntType, Scope};

/// One step of a plan. Integers that later steps need (tags, lengths) or that the
/// caller wants (the event id) are kept in numbered slots.
#[derive(Debug, Clone)]
pub(crate) enum Op {
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
    /// Fixed-size fields nothing reads (static arrays, structures of them): `bits` in all.
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
    /// The same steps as straight code, when they are an LTTng event header.
    lttng: Option<LttngHeader>,
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
            lttng: LttngHeader::recognise(&c.ops),
            ops: c.ops,
            slots: c.slots as usize,
        })
    }

    /// When the plan is one run of fixed-size fields nothing reads, possibly aligned
    /// first: the alignment and the bits, which a caller skips without running it.
    pub(crate) fn fixed_run(&self) -> Option<(u32, u64)> {
        match self.ops.as_slice() {
            [Op::Bits(n)] => Some((1, *n)),
            [Op::Align(a), Op::Bits(n)] => Some((*a, *n)),
            _ => None,
        }
    }

    /// Runs the plan: advances `bits` past the value, updates clocks, and returns the
    /// last integer named `id` it read, if any.
    pub(crate) fn run(
        &self,
        bits: &mut Bits<'_>,
        state: &mut DecodeState,
        slots: &mut Vec<u64>,
    ) -> Result<Option<u64>, DecodeError> {
        match &self.lttng {
            Some(header) => header.run(bits, state),
            None => self.interpret(bits, state, slots),
        }
    }

    /// Runs the plan's steps one by one.
    fn interpret(
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
                Op::Bits(n) => bits.skip_fixed(*n)?,
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
            FieldType::Struct(st) => {
                self.align(ty.align());
                // Nothing in it is read later and its layout is the same for every
                // value: one run of bits.
                if !self.needed.iter().any(|n| names_in(ty, n))
                    && let Some(bits) = fixed_struct(ty)
                {
                    self.ops.push(Op::Bits(bits));
                    return Some(());
                }
                levels.push(Vec::new());
                for f in &st.fields {
                    self.field(&f.ty, Some(&f.name), levels)?;
                }
                levels.pop();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::decode::{Roots, decode};
    use crate::read::metadata::Metadata;

    const TSDL: &str = r#"/* CTF 1.8 */
        typealias integer { size = 8; align = 8; signed = false; } := u8;
        typealias integer { size = 32; align = 8; signed = false; } := u32;
        trace { major = 1; minor = 8; byte_order = le; };
        clock { name = c; };
        typealias integer { size = 27; align = 1; signed = false; map = clock.c.value; } := c27;
        typealias integer { size = 64; align = 8; signed = false; map = clock.c.value; } := c64;
        stream {
          event.header := struct {
            enum : integer { size = 5; align = 1; signed = false; } { compact = 0 ... 30, extended = 31 } id;
            variant <id> { struct { c27 timestamp; } compact; struct { u32 id; c64 timestamp; } extended; } v;
          } align(8);
        };
        event { id = 0; fields := struct {
          u8 _n; u32 _xs[ _n ]; struct { u32 _a; u8 _b[3]; u32 _c; } _fixed;
          enum : u8 { "_s" = 1, "_i" = 2 } _tag; variant <_tag> { string _s; u32 _i; } _v; string _end;
        }; };"#;

    fn state() -> DecodeState {
        DecodeState {
            clocks: vec![0],
            ..DecodeState::default()
        }
    }

    #[test]
    fn the_lttng_header_plan_yields_the_id_and_moves_the_clock() {
        let md = Metadata::parse(TSDL).unwrap();
        let plan = Plan::compile(md.streams[0].event_header.as_ref().unwrap()).unwrap();
        // Compact: id 3, timestamp 0x12345; then extended: id 700, timestamp 2^40.
        let mut buf = (3u32 | (0x12345 << 5)).to_le_bytes().to_vec();
        buf.push(31);
        buf.extend(700u32.to_le_bytes());
        buf.extend((1u64 << 40).to_le_bytes());
        let (mut st, mut slots) = (state(), Vec::new());
        let mut bits = Bits::new(&buf, 0, buf.len() as u64 * 8);
        assert_eq!(plan.run(&mut bits, &mut st, &mut slots).unwrap(), Some(3));
        assert_eq!((st.clocks[0], bits.pos()), (0x12345, 32));
        assert_eq!(plan.run(&mut bits, &mut st, &mut slots).unwrap(), Some(700));
        assert_eq!((st.clocks[0], bits.pos()), (1 << 40, buf.len() as u64 * 8));
    }

    #[test]
    fn a_skip_plan_ends_where_the_decoder_ends_and_fails_where_it_fails() {
        let md = Metadata::parse(TSDL).unwrap();
        let ty = md.streams[0].events[&0].payload.as_ref().unwrap();
        let plan = Plan::compile(ty).unwrap();
        // The fixed inner structure is one run; the sequence and variant are not.
        assert!(
            plan.ops.iter().any(|op| matches!(op, Op::Bits(88))),
            "{:?}",
            plan.ops
        );
        // n = 2, xs = [7, 9], the 11 bytes of `fixed`, tag 1 (at byte 20), "hi", "end".
        let mut buf = vec![2u8];
        buf.extend(7u32.to_le_bytes());
        buf.extend(9u32.to_le_bytes());
        buf.extend([0u8; 11]);
        buf.push(1);
        buf.extend(b"hi\0end\0");
        let end = buf.len() as u64 * 8;
        let mut a = Bits::new(&buf, 0, end);
        decode(ty, &mut a, &Roots::default(), &mut state()).unwrap();
        let mut b = Bits::new(&buf, 0, end);
        plan.run(&mut b, &mut state(), &mut Vec::new()).unwrap();
        assert_eq!((a.pos(), b.pos()), (end, end));
        // A tag no option matches, and a packet cut inside the string.
        for (at, byte, cut) in [(20usize, 3u8, 0u64), (20, 1, 8)] {
            let mut bad = buf.clone();
            bad[at] = byte;
            let end = end - cut;
            let mut a = Bits::new(&bad, 0, end);
            let mut b = Bits::new(&bad, 0, end);
            let ea = decode(ty, &mut a, &Roots::default(), &mut state()).unwrap_err();
            let eb = plan.run(&mut b, &mut state(), &mut Vec::new()).unwrap_err();
            assert_eq!(ea, eb);
        }
    }

    /// LTTng's headers (compact and large, either byte order, an unaligned large tag)
    /// are recognised and run as straight code; on random bytes, cut anywhere and from
    /// random clocks, straight code and the plan's steps give the same id or error, the
    /// same position and the same clock.
    #[test]
    fn lttng_headers_run_straight_exactly_as_their_steps() {
        let headers = [
            ("le", "5", "0 ... 30", "31", "27"),
            ("le", "16", "0 ... 65534", "65535", "32"),
            ("be", "5", "0 ... 30", "31", "27"),
            ("le", "16", "1 ... 65535", "0", "32"),
        ];
        let mut rng = fastrand::Rng::with_seed(11);
        for (order, tag, compact, escape, short) in headers {
            let tsdl = format!(
                r#"/* CTF 1.8 */
                typealias integer {{ size = 32; align = 8; signed = false; }} := u32;
                trace {{ major = 1; minor = 8; byte_order = {order}; }};
                clock {{ name = c; }};
                typealias integer {{ size = {short}; align = 1; signed = false; map = clock.c.value; }} := cs;
                typealias integer {{ size = 64; align = 8; signed = false; map = clock.c.value; }} := c64;
                stream {{
                  event.header := struct {{
                    enum : integer {{ size = {tag}; align = 1; signed = false; }} {{ compact = {compact}, extended = {escape} }} id;
                    variant <id> {{ struct {{ cs timestamp; }} compact; struct {{ u32 id; c64 timestamp; }} extended; }} v;
                  }} align(8);
                }};
                event {{ id = 0; fields := struct {{ u32 _x; }}; }};"#
            );
            let md = Metadata::parse(&tsdl).unwrap();
            let plan = Plan::compile(md.streams[0].event_header.as_ref().unwrap()).unwrap();
            assert!(plan.lttng.is_some(), "{tsdl}");
            for _ in 0..3000 {
                let mut buf: Vec<u8> = (0..rng.usize(0..40)).map(|_| rng.u8(..)).collect();
                if rng.bool() && !buf.is_empty() {
                    // The escape tag, often.
                    buf[0] |= if tag == "5" { 31 } else { 0xFF };
                }
                let end = rng.u64(..=buf.len() as u64 * 8);
                let clock = rng.u64(..);
                let mut runs = Vec::new();
                for straight in [true, false] {
                    let mut st = state();
                    st.clocks[0] = clock;
                    let mut bits = Bits::new(&buf, 0, end);
                    let mut slots = Vec::new();
                    let got = if straight {
                        plan.run(&mut bits, &mut st, &mut slots)
                    } else {
                        plan.interpret(&mut bits, &mut st, &mut slots)
                    };
                    runs.push((got, bits.pos(), st.clocks[0]));
                }
                assert_eq!(runs[0], runs[1], "{order} {tag}: {buf:?} to bit {end}");
            }
        }
        // Another shape keeps its steps.
        let md = Metadata::parse(TSDL).unwrap();
        let payload = md.streams[0].events[&0].payload.as_ref().unwrap();
        assert!(Plan::compile(payload).unwrap().lttng.is_none());
    }
}
