//! serde helpers for the field shapes of ROS messages that serde alone would not write as
//! CDR does, or not efficiently.
//!
//! What this module promises: [`array`](mod@array) writes a fixed array `T[N]` as `N` elements and no
//! length (CDR has none for arrays), for any `N` (serde's own impls stop at 32; `Odometry`
//! has `float64[36]`); [`bytes`] writes a `Vec<u8>` as a `uint8[]`: its u32 length and the
//! bytes in one block, the same bytes serde would write element by element. Generated
//! types hold a `uint8[]` as a [`Bytes`], which does the same and can be a view into the
//! received payload.

use serde::de::{Error as _, SeqAccess, Visitor};
use serde::ser::SerializeTuple;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::marker::PhantomData;

/// `#[serde(with = "kairos_msgs::cdr::array")]` on a `[T; N]` field.
pub mod array {
    use super::*;

    /// Writes the `N` elements, without a length.
    pub fn serialize<S: Serializer, T: Serialize, const N: usize>(
        value: &[T; N],
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        let mut tuple = serializer.serialize_tuple(N)?;
        for element in value {
            tuple.serialize_element(element)?;
        }
        tuple.end()
    }

    /// Reads `N` elements, without a length.
    pub fn deserialize<'de, D: Deserializer<'de>, T: Deserialize<'de>, const N: usize>(
        deserializer: D,
    ) -> Result<[T; N], D::Error> {
        struct ArrayVisitor<T, const N: usize>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>, const N: usize> Visitor<'de> for ArrayVisitor<T, N> {
            type Value = [T; N];
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "an array of {N} elements")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<[T; N], A::Error> {
                let mut items = Vec::with_capacity(N);
                while items.len() < N {
                    match seq.next_element()? {
                        Some(item) => items.push(item),
                        None => return Err(A::Error::invalid_length(items.len(), &self)),
                    }
                }
                // A self-describing format (JSON) may hold more than N: that is an error too.
                if seq.next_element::<serde::de::IgnoredAny>()?.is_some() {
                    return Err(A::Error::invalid_length(N + 1, &self));
                }
                Ok(items
                    .try_into()
                    .unwrap_or_else(|_| unreachable!("exactly N items were read")))
            }
        }
        deserializer.deserialize_tuple(N, ArrayVisitor::<T, N>(PhantomData))
    }
}

/// `#[serde(with = "kairos_msgs::cdr::bytes")]` on a `Vec<u8>` field (`uint8[]`, `byte[]`).
pub mod bytes {
    use super::*;

    /// Writes the length and the bytes in one block.
    pub fn serialize<S: Serializer>(value: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(value)
    }

    /// Reads the length and the bytes in one block.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
        deserializer.deserialize_bytes(BytesVisitor)
    }

    struct BytesVisitor;

    impl<'de> Visitor<'de> for BytesVisitor {
        type Value = Vec<u8>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a byte sequence")
        }
        fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<Vec<u8>, E> {
            Ok(v.to_vec())
        }
        fn visit_byte_buf<E: serde::de::Error>(self, v: Vec<u8>) -> Result<Vec<u8>, E> {
            Ok(v)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<u8>, A::Error> {
            let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0));
            while let Some(b) = seq.next_element::<u8>()? {
                out.push(b);
            }
            Ok(out)
        }
    }
}

pub use crate::bytes_field::{Bytes, SHARE_FROM};
