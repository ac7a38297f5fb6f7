//! Field types of CTF 1.8 as the decoder needs them: sizes and alignments in bits, byte
//! orders already resolved (no `native` is left after parsing), names with the one
//! leading underscore CTF 1.8 tracers add already removed.

use std::sync::Arc;

/// The byte order of an integer or floating-point field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ByteOrder {
    /// Least significant byte first.
    Little,
    /// Most significant byte first.
    Big,
    /// Resolved to the trace's byte order once the whole metadata is parsed.
    Native,
}

/// How a string or an 8-bit integer array is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// Not text: integers stay integers.
    None,
    /// UTF-8 text.
    Utf8,
    /// ASCII text.
    Ascii,
}

/// An integer field type.
#[derive(Debug, Clone, PartialEq)]
pub struct IntType {
    /// 1 to 64 bits.
    pub size: u32,
    /// In bits, a power of two.
    pub align: u32,
    /// Whether it is two's complement signed.
    pub signed: bool,
    /// Its byte order (never `Native` after parsing).
    pub byte_order: ByteOrder,
    /// 2, 8, 10 or 16: how a printer shows the value.
    pub base: u32,
    /// The text encoding of an 8-bit integer (arrays of them decode to strings).
    pub encoding: Encoding,
    /// Index into [`super::Metadata::clocks`] when the integer is mapped to a clock.
    pub clock: Option<usize>,
}

/// A floating-point field type (IEEE 754 when 8+24 or 11+53 digits).
#[derive(Debug, Clone, PartialEq)]
pub struct FloatType {
    /// Bits of exponent.
    pub exp_dig: u32,
    /// Bits of mantissa, the implicit leading bit included.
    pub mant_dig: u32,
    /// Alignment in bits, a power of two.
    pub align: u32,
    /// Its byte order (never `Native` after parsing).
    pub byte_order: ByteOrder,
}

/// One label of an enumeration and the values it names.
#[derive(Debug, Clone, PartialEq)]
pub struct EnumMapping {
    /// The label.
    pub label: Arc<str>,
    /// Inclusive range, compared as signed when the container is signed.
    pub lo: i128,
    /// The last value of the range.
    pub hi: i128,
}

/// An enumeration field type: an integer whose values have labels.
#[derive(Debug, Clone, PartialEq)]
pub struct EnumType {
    /// The integer that holds the value.
    pub container: IntType,
    /// The labels, in declaration order.
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

/// A named member of a structure, or option of a variant.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// Its name, the leading underscore CTF 1.8 tracers add removed.
    pub name: Arc<str>,
    /// Its type.
    pub ty: FieldType,
}

/// A structure field type: members decoded in order.
#[derive(Debug, Clone, PartialEq)]
pub struct StructType {
    /// The members, in declaration order.
    pub fields: Vec<Field>,
    /// The declared minimum alignment (`align(n)`), at least 1.
    pub min_align: u32,
    /// The structure's alignment: the largest of `min_align` and its fields'.
    pub align: u32,
    /// How many type nodes the structure holds, itself included.
    pub nodes: u64,
}

impl StructType {
    /// A structure of `fields` declared with alignment `min_align`; computes its alignment and size in type nodes.
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

    /// The position of member `name`.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| &*f.name == name)
    }
}

/// A path naming the field that holds a sequence length or a variant tag.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldPath {
    /// Where the path starts.
    pub scope: Scope,
    /// Names below the scope (or, for [`Scope::Relative`], from the nearest enclosing
    /// structure holding the first name), underscores already removed.
    pub names: Vec<Arc<str>>,
}

/// Where a [`FieldPath`] starts: relative to the field, or at one of CTF's dynamic scopes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The nearest enclosing structure holding the path's first name.
    Relative,
    /// `trace.packet.header`.
    PacketHeader,
    /// `stream.packet.context`.
    PacketContext,
    /// `stream.event.header`.
    EventHeader,
    /// `stream.event.context`.
    StreamEventContext,
    /// `event.context`.
    EventContext,
    /// `event.fields`.
    EventPayload,
}

/// A variant field type: one of its options, chosen by the label of an enumeration tag.
#[derive(Debug, Clone, PartialEq)]
pub struct VariantType {
    /// The enumeration field whose label selects the option.
    pub tag: FieldPath,
    /// The options, in declaration order.
    pub options: Vec<Field>,
    /// How many type nodes the variant holds, itself included.
    pub nodes: u64,
}

impl VariantType {
    /// A variant of `options` selected by `tag`; counts its type nodes.
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

/// The type of a field, as the decoder reads it.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldType {
    /// An integer.
    Int(IntType),
    /// A floating-point number.
    Float(FloatType),
    /// An enumeration.
    Enum(EnumType),
    /// A null-terminated string.
    Str(Encoding),
    /// A structure.
    Struct(StructType),
    /// A variant.
    Variant(VariantType),
    /// A static array of `len` elements.
    Array {
        /// The elements' type.
        elem: Box<FieldType>,
        /// The number of elements.
        len: u64,
    },
    /// A sequence whose length is the value of the integer field at path `len`.
    Sequence {
        /// The elements' type.
        elem: Box<FieldType>,
        /// The field holding the length, decoded before the sequence.
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
