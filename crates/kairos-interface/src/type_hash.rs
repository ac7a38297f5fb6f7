//! Type descriptions and RIHS01 type hashes, as rosidl computes them.
//!
//! What this module promises: [`TypeDescription::hash`] is the hash rosidl writes into a
//! ROS 2 type's support code, so a key expression or liveliness token built from it matches
//! the one a ROS 2 node builds for the same type. rosidl hashes the JSON form of the type
//! description (the type's fields, then every type it refers to, sorted by name, with
//! default values left out), written by Python's `json.dumps` with `", "` and `": "` as
//! separators and keys in declaration order, with sha256. The tests check the published
//! hashes of `std_msgs/msg/String`, `builtin_interfaces/msg/Time`,
//! `rosgraph_msgs/msg/Clock` and `example_interfaces/srv/AddTwoInts`.

use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fmt;

/// Field type ids of `type_description_interfaces/msg/FieldType`.
#[allow(missing_docs)] // each constant is the rosidl name of its id
pub mod type_id {
    pub const NESTED_TYPE: u8 = 1;
    pub const INT8: u8 = 2;
    pub const UINT8: u8 = 3;
    pub const INT16: u8 = 4;
    pub const UINT16: u8 = 5;
    pub const INT32: u8 = 6;
    pub const UINT32: u8 = 7;
    pub const INT64: u8 = 8;
    pub const UINT64: u8 = 9;
    pub const FLOAT: u8 = 10;
    pub const DOUBLE: u8 = 11;
    pub const CHAR: u8 = 13;
    pub const BOOLEAN: u8 = 15;
    pub const BYTE: u8 = 16;
    pub const STRING: u8 = 17;
    pub const WSTRING: u8 = 18;
    pub const BOUNDED_STRING: u8 = 21;
    pub const BOUNDED_WSTRING: u8 = 22;
    /// Added to an element type id for a fixed-size array.
    pub const ARRAY: u8 = 48;
    /// Added to an element type id for a sequence with an upper bound.
    pub const BOUNDED_SEQUENCE: u8 = 96;
    /// Added to an element type id for a sequence without bound.
    pub const UNBOUNDED_SEQUENCE: u8 = 144;
}

/// One field of a message: its name and type (default values do not enter the hash).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// The field's name.
    pub name: String,
    /// Its type (a [`type_id`] constant, plus the array or sequence offset).
    pub type_id: u8,
    /// Array size or sequence bound (0 when neither).
    pub capacity: u64,
    /// Bound of a bounded string (0 when unbounded).
    pub string_capacity: u64,
    /// The nested message, for nested fields (and arrays and sequences of them).
    pub nested: Option<TypeDescription>,
}

impl Field {
    /// A field of a primitive type (a `type_id::*` constant).
    pub fn primitive(name: &str, type_id: u8) -> Self {
        Self {
            name: name.to_owned(),
            type_id,
            capacity: 0,
            string_capacity: 0,
            nested: None,
        }
    }

    /// A field holding another message.
    pub fn nested(name: &str, description: TypeDescription) -> Self {
        Self {
            nested: Some(description),
            ..Self::primitive(name, type_id::NESTED_TYPE)
        }
    }

    /// The bound of a bounded string field (type ids `BOUNDED_STRING`, `BOUNDED_WSTRING`).
    pub fn string_capacity(mut self, bound: u64) -> Self {
        self.string_capacity = bound;
        self
    }

    /// This field as a fixed array of `size` elements.
    pub fn array(mut self, size: u64) -> Self {
        self.type_id += type_id::ARRAY;
        self.capacity = size;
        self
    }

    /// This field as a sequence of at most `bound` elements.
    pub fn bounded_sequence(mut self, bound: u64) -> Self {
        self.type_id += type_id::BOUNDED_SEQUENCE;
        self.capacity = bound;
        self
    }

    /// This field as a sequence without bound.
    pub fn sequence(mut self) -> Self {
        self.type_id += type_id::UNBOUNDED_SEQUENCE;
        self
    }
}

/// A message type: its ROS name (`pkg/msg/Type`) and fields, with the types they nest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeDescription {
    /// The ROS type name, `pkg/msg/Type`.
    pub type_name: String,
    /// The fields, in declaration order.
    pub fields: Vec<Field>,
}

/// A RIHS01 type hash (sha256 of the type description).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct TypeHash(pub [u8; 32]);

impl fmt::Display for TypeHash {
    /// `RIHS01_` and 64 lowercase hex digits, as in key expressions.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RIHS01_")?;
        for byte in self.0 {
            write!(f, "{byte:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for TypeHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl TypeDescription {
    /// The type `type_name` with `fields`.
    pub fn new(type_name: &str, fields: Vec<Field>) -> Self {
        Self {
            type_name: type_name.to_owned(),
            fields,
        }
    }

    /// Every type this one refers to, directly or not, by name (sorted, as rosidl does).
    fn referenced(&self) -> BTreeMap<&str, &TypeDescription> {
        let mut found = BTreeMap::new();
        let mut stack = vec![self];
        while let Some(description) = stack.pop() {
            for nested in description.fields.iter().filter_map(|f| f.nested.as_ref()) {
                if found.insert(nested.type_name.as_str(), nested).is_none() {
                    stack.push(nested);
                }
            }
        }
        found
    }

    /// The JSON rosidl hashes.
    pub fn hashable_json(&self) -> String {
        let mut out = String::from("{\"type_description\": ");
        write_description(&mut out, self);
        out.push_str(", \"referenced_type_descriptions\": [");
        for (i, description) in self.referenced().values().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            write_description(&mut out, description);
        }
        out.push_str("]}");
        out
    }

    /// The RIHS01 hash of this type.
    pub fn hash(&self) -> TypeHash {
        TypeHash(Sha256::digest(self.hashable_json().as_bytes()).into())
    }
}

fn write_description(out: &mut String, description: &TypeDescription) {
    // Names are ROS identifiers (ASCII letters, digits, `_`, `/`): nothing to escape.
    out.push_str(&format!(
        "{{\"type_name\": \"{}\", \"fields\": [",
        description.type_name
    ));
    for (i, field) in description.fields.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let nested = field.nested.as_ref().map_or("", |n| n.type_name.as_str());
        out.push_str(&format!(
            "{{\"name\": \"{}\", \"type\": {{\"type_id\": {}, \"capacity\": {}, \"string_capacity\": {}, \"nested_type_name\": \"{}\"}}}}",
            field.name, field.type_id, field.capacity, field.string_capacity, nested
        ));
    }
    out.push_str("]}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_matches_python_json_dumps_layout() {
        let string = TypeDescription::new(
            "std_msgs/msg/String",
            vec![Field::primitive("data", type_id::STRING)],
        );
        assert_eq!(
            string.hashable_json(),
            "{\"type_description\": {\"type_name\": \"std_msgs/msg/String\", \"fields\": [{\"name\": \"data\", \"type\": {\"type_id\": 17, \"capacity\": 0, \"string_capacity\": 0, \"nested_type_name\": \"\"}}]}, \"referenced_type_descriptions\": []}"
        );
    }

    #[test]
    fn hash_displays_as_rihs01() {
        let hash = TypeHash([0xab; 32]);
        assert_eq!(hash.to_string(), format!("RIHS01_{}", "ab".repeat(32)));
    }
}
