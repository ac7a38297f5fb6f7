//! Field types of CTF 1.8 as the decoder needs them: sizes and alignments in bits, byte
//! orders already resolved (no `native` is left after parsing), names with the one
//! leading underscore CTF 1.8 tracers add already removed.

use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ByteOrder {
    Little,
    Big,
    /// Resolved to the trace's byte order once the whole metadata is parsed.
    Native,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    None,
    Utf8,
    Ascii,
}

#[derive(Debug, Clone, PartialEq)]
pub struct IntType {
    /// 1 to 64 bits.
    pub size: u32,
    /// In bits, a power of two.
    pub align: u32,
    pub signed: bool,
    pub byte_order: ByteOrder,
    /// 2, 8, 10 or 16: how a printer shows the value.
    pub base: u32,
    pub encoding: Encoding,
    /// Index into [`super::Metadata::clocks`] when the integer is mapped to a clock.
    pub clock: Option<usize>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FloatType {
    pub exp_dig: u32,
    pub mant_dig: u32,
    pub align: u32,
    pub byte_order: ByteOrder,
}

#[derive(Debug, Clone, PartialEq)]
pub struct EnumMapping {
    pub label: Arc<str>,
    /// Inclusive range, compared as signed when the container is signed.
    pub lo: i128,
    pub hi: i128,
}

#[derive(Debug, Clone, PartialEq)]
pub struct EnumType {
    pub container: IntType,
    pub mappings: Vec<EnumMapping>,
}

impl EnumType {
    /// Every label whose range holds `value`, in declaration order.
    pub fn labels(&self, value: i128) -> impl Iterator<Item = &Arc<str>> {
        self.mappings
            .iter()
            .filter(move |m| m.lo <= value && value <= m.hi)
            .map(|m| &m.label)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub name: Arc<str>,
    pub ty: FieldType,
}

#[derive(Debug, Clone, PartialEq)]
pub struct StructType {
    pub fields: Vec<Field>,
    /// The declared minimum alignment (`align(n)`), at least 1.
    pub min_align: u32,
    /// The structure's alignment: the largest of `min_align` and its fields'.
    pub align: u32,
    /// How many type nodes the structure holds, itself included.
    pub nodes: u64,
}

impl StructType {
    pub fn new(fields: Vec<Field>, min_align: u32) -> Self {
        let align = fields
            .iter()
            .map(|f| f.ty.align())
            .fold(min_align.max(1), u32::max);
        let nodes = 1 + fields.iter().map(|f| f.ty.nodes()).sum::<u64>();
        Self {
            fields,
            min_align,
            align,
            nodes,
        }
    }

    /// The same structure with a larger declared alignment (`struct name align(n)`).
    pub fn with_min_align(self, min_align: u32) -> Self {
        let min_align = self.min_align.max(min_align);
        Self::new(self.fields, min_align)
    }

    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| &*f.name == name)
    }
}

/// A path naming the field that holds a sequence length or a variant tag.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldPath {
    pub scope: Scope,
    /// Names below the scope (or, for [`Scope::Relative`], from the nearest enclosing
    /// structure holding the first name), underscores already removed.
    pub names: Vec<Arc<str>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Relative,
    PacketHeader,
    PacketContext,
    EventHeader,
    StreamEventContext,
    EventContext,
    EventPayload,
}

#[derive(Debug, Clone, PartialEq)]
pub struct VariantType {
    pub tag: FieldPath,
    pub options: Vec<Field>,
    /// How many type nodes the variant holds, itself included.
    pub nodes: u64,
}

impl VariantType {
    pub fn new(tag: FieldPath, options: Vec<Field>) -> Self {
        let nodes = 1 + options.iter().map(|f| f.ty.nodes()).sum::<u64>();
        Self {
            tag,
            options,
            nodes,
        }
    }

    /// The option a tag label selects. Tracers add a leading underscore to option names
    /// but not always to labels, so both spellings are accepted.
    pub fn option_for(&self, label: &str) -> Option<usize> {
        let bare = label.strip_prefix('_').unwrap_or(label);
        self.options
            .iter()
            .position(|o| &*o.name == label || &*o.name == bare)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum FieldType {
    Int(IntType),
    Float(FloatType),
    Enum(EnumType),
    Str(Encoding),
    Struct(StructType),
    Variant(VariantType),
    Array {
        elem: Box<FieldType>,
        len: u64,
    },
    Sequence {
        elem: Box<FieldType>,
        len: FieldPath,
    },
}

impl FieldType {
    /// The alignment, in bits, of the field's first bit.
    pub fn align(&self) -> u32 {
        match self {
            FieldType::Int(i) => i.align,
            FieldType::Enum(e) => e.container.align,
            FieldType::Float(f) => f.align,
            FieldType::Str(_) => 8,
            FieldType::Struct(s) => s.align,
            FieldType::Variant(_) => 1,
            FieldType::Array { elem, .. } | FieldType::Sequence { elem, .. } => elem.align(),
        }
    }

    /// How many type nodes this type holds: what a copy of it costs.
    pub fn nodes(&self) -> u64 {
        match self {
            FieldType::Struct(s) => s.nodes,
            FieldType::Variant(v) => v.nodes,
            FieldType::Enum(e) => 1 + e.mappings.len() as u64,
            FieldType::Array { elem, .. } | FieldType::Sequence { elem, .. } => 1 + elem.nodes(),
            FieldType::Int(_) | FieldType::Float(_) | FieldType::Str(_) => 1,
        }
    }

    /// The fewest bits one value of this type can take, used to reject lengths that
    /// cannot fit in what is left of a packet before allocating for them.
    pub fn min_bits(&self) -> u64 {
        match self {
            FieldType::Int(i) => u64::from(i.size),
            FieldType::Enum(e) => u64::from(e.container.size),
            FieldType::Float(f) => u64::from(f.exp_dig + f.mant_dig),
            FieldType::Str(_) => 8,
            FieldType::Struct(s) => s.fields.iter().map(|f| f.ty.min_bits()).sum(),
            FieldType::Variant(v) => v.options.iter().map(|o| o.ty.min_bits()).min().unwrap_or(0),
            FieldType::Array { elem, len } => elem.min_bits().saturating_mul(*len),
            FieldType::Sequence { .. } => 0,
        }
    }

    /// True for an 8-bit integer with a text encoding: arrays and sequences of it are
    /// strings.
    pub fn is_char(&self) -> bool {
        matches!(self, FieldType::Int(i) if i.size == 8 && i.encoding != Encoding::None)
    }

    pub(crate) fn resolve_native(&mut self, order: ByteOrder) {
        let fix = |b: &mut ByteOrder| {
            if *b == ByteOrder::Native {
                *b = order;
            }
        };
        match self {
            FieldType::Int(i) => fix(&mut i.byte_order),
            FieldType::Enum(e) => fix(&mut e.container.byte_order),
            FieldType::Float(f) => fix(&mut f.byte_order),
            FieldType::Str(_) => {}
            FieldType::Struct(s) => s.fields.iter_mut().for_each(|f| f.ty.resolve_native(order)),
            FieldType::Variant(v) => v
                .options
                .iter_mut()
                .for_each(|f| f.ty.resolve_native(order)),
            FieldType::Array { elem, .. } | FieldType::Sequence { elem, .. } => {
                elem.resolve_native(order)
            }
        }
    }
}

/// Removes the one leading underscore CTF 1.8 tracers put before identifiers.
pub(crate) fn strip_underscore(name: &str) -> &str {
    name.strip_prefix('_').unwrap_or(name)
}
