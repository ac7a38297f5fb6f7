//! Python to Rust: a serde deserializer that reads exactly the Rust type's fields from a
//! Python message object, naming the field path of anything of the wrong shape.

use super::{ConvError, Layout, type_name_of};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde::de::{self, DeserializeSeed, Visitor};
/// The bytes of an `array.array('B')` or a numpy array of `uint8` (rclpy's `uint8[]` and
/// `uint8[N]`), copied at once instead of element by element; `None` for anything else.
pub(super) fn octets_of(object: &Bound<'_, PyAny>) -> PyResult<Option<Vec<u8>>> {
    let py = object.py();
    let octets = if let Ok(code) = object.getattr(pyo3::intern!(py, "typecode")) {
        code.extract::<String>().is_ok_and(|c| c == "B")
    } else if let Ok(dtype) = object.getattr(pyo3::intern!(py, "dtype")) {
        dtype
            .getattr(pyo3::intern!(py, "str"))
            .and_then(|s| s.extract::<String>())
            .is_ok_and(|s| s == "|u1")
    } else {
        false
    };
    if !octets {
        return Ok(None);
    }
    let bytes = object.call_method0(pyo3::intern!(py, "tobytes"))?;
    Ok(bytes
        .downcast::<PyBytes>()
        .ok()
        .map(|b| b.as_bytes().to_vec()))
}

pub(super) struct FromPy<'a, 'py> {
    pub(super) object: &'a Bound<'py, PyAny>,
    /// The class a struct at this level must be an instance of.
    pub(super) layout: Option<&'a Layout>,
}

impl<'a, 'py> FromPy<'a, 'py> {
    fn expected(&self, what: &str) -> ConvError {
        ConvError::new(format!(
            "expected {what}, got {}",
            type_name_of(self.object)
        ))
    }

    fn int<'de, V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ConvError> {
        if !self.object.is_instance_of::<PyInt>() {
            return Err(self.expected("an int"));
        }
        if let Ok(v) = self.object.extract::<i64>() {
            return visitor.visit_i64(v);
        }
        match self.object.extract::<u64>() {
            Ok(v) => visitor.visit_u64(v),
            Err(_) => Err(ConvError::new(format!(
                "{} does not fit in 64 bits",
                self.object
            ))),
        }
    }

    fn float<'de, V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ConvError> {
        if let Ok(f) = self.object.downcast::<PyFloat>() {
            return visitor.visit_f64(f.value());
        }
        // An int where a float is due is taken as that float (rclpy asserts instead).
        if self.object.is_instance_of::<PyInt>() && !self.object.is_instance_of::<PyBool>() {
            return visitor.visit_f64(self.object.extract::<f64>()?);
        }
        Err(self.expected("a float"))
    }

    fn seq<'de, V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ConvError> {
        let layout = self.layout;
        if let Ok(list) = self.object.downcast::<PyList>() {
            return visitor.visit_seq(Items::List {
                list,
                index: 0,
                layout,
            });
        }
        if let Ok(tuple) = self.object.downcast::<PyTuple>() {
            return visitor.visit_seq(Items::Tuple {
                tuple,
                index: 0,
                layout,
            });
        }
        if self.object.is_instance_of::<PyString>() {
            return Err(self.expected("a list"));
        }
        // numpy arrays (rclpy's fixed-size numeric arrays) and array.array (its numeric
        // sequences): their elements as Python numbers, in one call.
        let py = self.object.py();
        if self.object.hasattr(pyo3::intern!(py, "tolist"))? {
            let list = self.object.call_method0(pyo3::intern!(py, "tolist"))?;
            if let Ok(list) = list.downcast::<PyList>() {
                return visitor.visit_seq(Items::List {
                    list,
                    index: 0,
                    layout,
                });
            }
        }
        // Any other iterable.
        let iter = self
            .object
            .try_iter()
            .map_err(|_| self.expected("a list"))?;
        visitor.visit_seq(Items::Iter {
            iter,
            index: 0,
            layout,
        })
    }
}

impl<'de> de::Deserializer<'de> for FromPy<'_, '_> {
    type Error = ConvError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ConvError> {
        let o = self.object;
        if o.is_none() {
            visitor.visit_unit()
        } else if let Ok(b) = o.downcast::<PyBool>() {
            visitor.visit_bool(b.is_true())
        } else if o.is_instance_of::<PyInt>() {
            self.int(visitor)
        } else if o.is_instance_of::<PyFloat>() {
            self.float(visitor)
        } else if let Ok(s) = o.downcast::<PyString>() {
            visitor.visit_str(&s.to_cow()?)
        } else if let Ok(b) = o.downcast::<PyBytes>() {
            visitor.visit_bytes(b.as_bytes())
        } else {
            self.seq(visitor)
        }
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ConvError> {
        match self.object.downcast::<PyBool>() {
            Ok(b) => visitor.visit_bool(b.is_true()),
            Err(_) => Err(self.expected("a bool")),
        }
    }

    fn deserialize_i8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ConvError> {
        self.int(visitor)
    }
    fn deserialize_i16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ConvError> {
        self.int(visitor)
    }
    fn deserialize_i32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ConvError> {
        self.int(visitor)
    }
    fn deserialize_i64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ConvError> {
        self.int(visitor)
    }
    fn deserialize_u8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ConvError> {
        self.int(visitor)
    }
    fn deserialize_u16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ConvError> {
        self.int(visitor)
    }
    fn deserialize_u32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ConvError> {
        self.int(visitor)
    }
    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ConvError> {
        self.int(visitor)
    }
    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ConvError> {
        self.float(visitor)
    }
    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ConvError> {
        self.float(visitor)
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ConvError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ConvError> {
        match self.object.downcast::<PyString>() {
            Ok(s) => visitor.visit_str(&s.to_cow()?),
            Err(_) => Err(self.expected("a str")),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ConvError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ConvError> {
        if let Ok(b) = self.object.downcast::<PyBytes>() {
            return visitor.visit_bytes(b.as_bytes());
        }
        if let Ok(b) = self.object.downcast::<PyByteArray>() {
            return visitor.visit_byte_buf(b.to_vec());
        }
        if self.object.is_instance_of::<PyString>() {
            return Err(self.expected("bytes"));
        }
        if let Some(bytes) = octets_of(self.object)? {
            return visitor.visit_byte_buf(bytes);
        }
        // A list of ints, ...
        let bytes = self
            .object
            .try_iter()
            .map_err(|_| self.expected("bytes"))?
            .enumerate()
            .map(|(i, item)| {
                item.and_then(|v| v.extract::<u8>()).map_err(|e| {
                    ConvError::new(format!("expected an int in 0..=255 ({e})")).at_index(i)
                })
            })
            .collect::<Result<Vec<u8>, _>>()?;
        visitor.visit_byte_buf(bytes)
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ConvError> {
        self.deserialize_bytes(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ConvError> {
        if self.object.is_none() {
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ConvError> {
        visitor.visit_unit()
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, ConvError> {
        visitor.visit_unit()
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, ConvError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ConvError> {
        self.seq(visitor)
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, ConvError> {
        self.seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, ConvError> {
        self.seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, ConvError> {
        Err(self.expected("a map (messages have none)"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ConvError> {
        if let Some(layout) = self.layout {
            let class = layout.class.bind(self.object.py());
            // The exact class is the common case: a pointer comparison.
            if !self.object.get_type().is(class) && !self.object.is_instance(class)? {
                return Err(self.expected(&format!("a {}", layout.type_name)));
            }
        }
        visitor.visit_seq(Fields {
            object: self.object,
            layout: self.layout,
            names: fields,
            index: 0,
            struct_name: name,
        })
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        _variants: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, ConvError> {
        Err(ConvError::new(format!("enum {name} has no message form")))
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ConvError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ConvError> {
        visitor.visit_unit()
    }
}

/// A struct's fields, read as attributes in declaration order.
pub(super) struct Fields<'a, 'py> {
    pub(super) object: &'a Bound<'py, PyAny>,
    pub(super) layout: Option<&'a Layout>,
    pub(super) names: &'static [&'static str],
    pub(super) index: usize,
    pub(super) struct_name: &'static str,
}

impl<'de> de::SeqAccess<'de> for Fields<'_, '_> {
    type Error = ConvError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, ConvError> {
        let Some(&name) = self.names.get(self.index) else {
            return Ok(None);
        };
        let field = self.layout.and_then(|l| l.fields.get(self.index));
        self.index += 1;
        let value = match field {
            Some(f) if f.rust_name == name => self.object.getattr(f.name.bind(self.object.py())),
            _ => self.object.getattr(name),
        }
        .map_err(|_| {
            ConvError::new(format!(
                "{} has no field '{name}' (a {} has)",
                type_name_of(self.object),
                self.struct_name
            ))
        })?;
        let nested = field.and_then(|f| f.nested.as_deref());
        seed.deserialize(FromPy {
            object: &value,
            layout: nested,
        })
        .map(Some)
        .map_err(|e| e.in_field(name))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.names.len() - self.index)
    }
}

/// The elements of a list, tuple or other iterable.
pub(super) enum Items<'a, 'py> {
    List {
        list: &'a Bound<'py, PyList>,
        index: usize,
        layout: Option<&'a Layout>,
    },
    Tuple {
        tuple: &'a Bound<'py, PyTuple>,
        index: usize,
        layout: Option<&'a Layout>,
    },
    Iter {
        iter: Bound<'py, pyo3::types::PyIterator>,
        index: usize,
        layout: Option<&'a Layout>,
    },
}

impl<'de> de::SeqAccess<'de> for Items<'_, '_> {
    type Error = ConvError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, ConvError> {
        let (item, index, layout) = match self {
            Items::List {
                list,
                index,
                layout,
            } => {
                if *index >= list.len() {
                    return Ok(None);
                }
                (list.get_item(*index)?, index, *layout)
            }
            Items::Tuple {
                tuple,
                index,
                layout,
            } => {
                if *index >= tuple.len() {
                    return Ok(None);
                }
                (tuple.get_item(*index)?, index, *layout)
            }
            Items::Iter {
                iter,
                index,
                layout,
            } => match iter.next() {
                None => return Ok(None),
                Some(item) => (item?, index, *layout),
            },
        };
        let at = *index;
        *index += 1;
        seed.deserialize(FromPy {
            object: &item,
            layout,
        })
        .map(Some)
        .map_err(|e| e.at_index(at))
    }

    fn size_hint(&self) -> Option<usize> {
        match self {
            Items::List { list, index, .. } => Some(list.len().saturating_sub(*index)),
            Items::Tuple { tuple, index, .. } => Some(tuple.len().saturating_sub(*index)),
            Items::Iter { .. } => None,
        }
    }
}
