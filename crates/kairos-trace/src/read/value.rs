//! Decoded field values. A structure holds its members' values in declaration order; the
//! names live in the type (see [`super::metadata::types`]), so decoding allocates no names.
//! Arrays and sequences of 8-bit text-encoded integers decode to strings, as babeltrace2
//! shows them.

/// A decoded field value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// An unsigned integer, or the container of an unsigned enumeration.
    UInt(u64),
    /// A signed integer, or the container of a signed enumeration.
    SInt(i64),
    /// A floating-point number.
    Float(f64),
    /// A string, or an array or sequence of 8-bit text-encoded integers.
    Str(String),
    /// A structure's member values, in declaration order (the names are in the type).
    Struct(Vec<Value>),
    /// The selected option's index and value.
    Variant(usize, Box<Value>),
    /// A static array or a sequence.
    Array(Vec<Value>),
}

impl Value {
    /// The value as an unsigned integer, if it is a non-negative integer.
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Value::UInt(v) => Some(v),
            Value::SInt(v) => u64::try_from(v).ok(),
            _ => None,
        }
    }

    /// The value as a signed integer, if it is an integer that fits.
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Value::UInt(v) => i64::try_from(v).ok(),
            Value::SInt(v) => Some(v),
            _ => None,
        }
    }

    /// The value as a string, if it is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
}
