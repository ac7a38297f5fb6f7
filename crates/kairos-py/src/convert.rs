//! Python message objects to Rust messages and back, directly through serde: no
//! intermediate tree (`serde_json::Value`) and no text, so a publish costs a few attribute
//! reads and a callback a few attribute writes.
//!
//! What this module promises:
//! - [`to_py`] builds an instance of the message's Python class (nested fields as
//!   instances of their classes, arrays and sequences as lists, `uint8[]`/`byte[]` as
//!   `bytes`) without running its `__init__`: every field is written from the Rust value,
//!   through the class's setters (which turn numeric arrays into rclpy's numpy arrays and
//!   `array.array`s, see `kairos/_interfaces.py`).
//! - [`from_py`] reads exactly the fields of the Rust type, in `.msg` order, from an
//!   instance of the message's class (or a subclass), numeric arrays as rclpy keeps them
//!   included (an `array.array('B')` or `uint8` numpy array in one copy); a value of the
//!   wrong shape is a `TypeError` naming the field path (`linear.x: expected a float, got
//!   str`), never a panic. Integers out of their field's range are refused the same way; NaN and the
//!   infinities are floats like any other.
//! - A [`Layout`] is computed once per class (when a publisher, subscription, service or
//!   client is made): field names as interned Python strings, each nested field's layout.
//!   The Rust type's fields are checked against the class then, not per message.

use kairos_msgs::TypeDescription;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple, PyType,
};
use serde::de::{self, DeserializeSeed, Visitor};
use serde::ser::{self, Impossible, Serialize};
use std::fmt;
use std::sync::Arc;

/// How one message class maps onto its Rust type.
pub(crate) struct Layout {
    /// The ROS type name (`geometry_msgs/msg/Twist`).
    pub(crate) type_name: String,
    pub(crate) class: Py<PyType>,
    /// The Rust type's fields, in `.msg` (and serde) order.
    pub(crate) fields: Vec<FieldLayout>,
}

pub(crate) struct FieldLayout {
    pub(crate) name: Py<PyString>,
    pub(crate) rust_name: String,
    /// The layout of the nested message (of each element, for arrays and sequences).
    pub(crate) nested: Option<Arc<Layout>>,
}

impl fmt::Debug for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Layout")
            .field("type_name", &self.type_name)
            .finish_non_exhaustive()
    }
}

impl Layout {
    /// The layout of `class` for the Rust type `description`: every field of the Rust type
    /// must be an attribute of the class; nested classes come from its `_field_types`.
    pub(crate) fn of(
        class: &Bound<'_, PyAny>,
        description: &TypeDescription,
    ) -> PyResult<Arc<Self>> {
        let py = class.py();
        let class = class.downcast::<PyType>().map_err(|_| {
            PyTypeError::new_err(format!(
                "{} is not a message class (for {})",
                class.repr().map(|r| r.to_string()).unwrap_or_default(),
                description.type_name
            ))
        })?;
        let nested_classes = class.getattr(pyo3::intern!(py, "_field_types")).ok();
        let mut fields = Vec::with_capacity(description.fields.len());
        for field in &description.fields {
            if !class.hasattr(field.name.as_str())? {
                return Err(PyTypeError::new_err(format!(
                    "class {} has no field '{}' of {}; generate it from the same interface",
                    class.name()?,
                    field.name,
                    description.type_name
                )));
            }
            let nested = match &field.nested {
                None => None,
                Some(nested) => {
                    let nested_class = nested_classes
                        .as_ref()
                        .and_then(|n| n.get_item(field.name.as_str()).ok())
                        .ok_or_else(|| {
                            PyTypeError::new_err(format!(
                                "class {} names no class for its field '{}' ({}) in _field_types",
                                class.name().map(|n| n.to_string()).unwrap_or_default(),
                                field.name,
                                nested.type_name
                            ))
                        })?;
                    Some(Self::of(&nested_class, nested)?)
                }
            };
            fields.push(FieldLayout {
                name: PyString::intern(py, &field.name).unbind(),
                rust_name: field.name.clone(),
                nested,
            });
        }
        Ok(Arc::new(Self {
            type_name: description.type_name.clone(),
            class: class.clone().unbind(),
            fields,
        }))
    }
}

/// The Rust message `message` as an instance of its Python class.
pub(crate) fn to_py<T: Serialize>(
    py: Python<'_>,
    message: &T,
    layout: &Layout,
) -> PyResult<PyObject> {
    message
        .serialize(ToPy {
            py,
            layout: Some(layout),
        })
        .map_err(|err| {
            PyTypeError::new_err(format!("cannot convert a {}: {err}", layout.type_name))
        })
}

/// A Python message object (an instance of `layout`'s class) as the Rust message `T`.
pub(crate) fn from_py<T: de::DeserializeOwned>(
    object: &Bound<'_, PyAny>,
    layout: &Layout,
) -> PyResult<T> {
    T::deserialize(FromPy {
        object,
        layout: Some(layout),
    })
    .map_err(|err| PyTypeError::new_err(format!("cannot send this as {}: {err}", layout.type_name)))
}

/// The Rust value `value` as plain Python values (nested messages as dicts): the defaults
/// the generated classes start from.
pub(crate) fn to_plain<T: Serialize>(py: Python<'_>, value: &T) -> PyResult<PyObject> {
    value
        .serialize(ToPy { py, layout: None })
        .map_err(|err| PyTypeError::new_err(err.to_string()))
}

/// Why a conversion failed, with the path of the field it failed in.
#[derive(Debug)]
pub(crate) struct ConvError {
    path: Vec<String>,
    message: String,
}

impl ConvError {
    fn new(message: impl Into<String>) -> Self {
        Self {
            path: Vec::new(),
            message: message.into(),
        }
    }

    fn in_field(mut self, field: &str) -> Self {
        self.path.push(field.to_owned());
        self
    }

    fn at_index(mut self, index: usize) -> Self {
        self.path.push(format!("[{index}]"));
        self
    }
}

impl fmt::Display for ConvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut path = String::new();
        for part in self.path.iter().rev() {
            if !path.is_empty() && !part.starts_with('[') {
                path.push('.');
            }
            path.push_str(part);
        }
        if path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{path}: {}", self.message)
        }
    }
}

impl std::error::Error for ConvError {}

impl ser::Error for ConvError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Self::new(msg.to_string())
    }
}

impl de::Error for ConvError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Self::new(msg.to_string())
    }
}

impl From<PyErr> for ConvError {
    fn from(err: PyErr) -> Self {
        Self::new(err.to_string())
    }
}

fn type_name_of(object: &Bound<'_, PyAny>) -> String {
    object
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

// -- Rust to Python ----------------------------------------------------------------------

struct ToPy<'py, 'l> {
    py: Python<'py>,
    /// The class a struct at this level becomes (none: a dict).
    layout: Option<&'l Layout>,
}

type Res = Result<PyObject, ConvError>;

impl ToPy<'_, '_> {
    fn int(self, v: i64) -> Res {
        let Ok(int) = v.into_pyobject(self.py);
        Ok(int.into_any().unbind())
    }

    fn uint(self, v: u64) -> Res {
        let Ok(int) = v.into_pyobject(self.py);
        Ok(int.into_any().unbind())
    }
}

impl<'py, 'l> ser::Serializer for ToPy<'py, 'l> {
    type Ok = PyObject;
    type Error = ConvError;
    type SerializeSeq = SeqToPy<'py, 'l>;
    type SerializeTuple = SeqToPy<'py, 'l>;
    type SerializeTupleStruct = SeqToPy<'py, 'l>;
    type SerializeTupleVariant = Impossible<PyObject, ConvError>;
    type SerializeMap = MapToPy<'py>;
    type SerializeStruct = StructToPy<'py, 'l>;
    type SerializeStructVariant = Impossible<PyObject, ConvError>;

    fn serialize_bool(self, v: bool) -> Res {
        Ok(PyBool::new(self.py, v).to_owned().into_any().unbind())
    }
    fn serialize_i8(self, v: i8) -> Res {
        self.int(i64::from(v))
    }
    fn serialize_i16(self, v: i16) -> Res {
        self.int(i64::from(v))
    }
    fn serialize_i32(self, v: i32) -> Res {
        self.int(i64::from(v))
    }
    fn serialize_i64(self, v: i64) -> Res {
        self.int(v)
    }
    fn serialize_u8(self, v: u8) -> Res {
        self.uint(u64::from(v))
    }
    fn serialize_u16(self, v: u16) -> Res {
        self.uint(u64::from(v))
    }
    fn serialize_u32(self, v: u32) -> Res {
        self.uint(u64::from(v))
    }
    fn serialize_u64(self, v: u64) -> Res {
        self.uint(v)
    }
    fn serialize_f32(self, v: f32) -> Res {
        self.serialize_f64(f64::from(v))
    }
    fn serialize_f64(self, v: f64) -> Res {
        Ok(PyFloat::new(self.py, v).into_any().unbind())
    }
    fn serialize_char(self, v: char) -> Res {
        let mut buf = [0u8; 4];
        self.serialize_str(v.encode_utf8(&mut buf))
    }
    fn serialize_str(self, v: &str) -> Res {
        Ok(PyString::new(self.py, v).into_any().unbind())
    }
    fn serialize_bytes(self, v: &[u8]) -> Res {
        Ok(PyBytes::new(self.py, v).into_any().unbind())
    }
    fn serialize_none(self) -> Res {
        Ok(self.py.None())
    }
    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Res {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Res {
        Ok(self.py.None())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Res {
        Ok(self.py.None())
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Res {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Res {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Res {
        Err(ConvError::new(format!("enum {name} has no message form")))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<SeqToPy<'py, 'l>, ConvError> {
        Ok(SeqToPy {
            py: self.py,
            layout: self.layout,
            items: Vec::with_capacity(len.unwrap_or(0)),
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<SeqToPy<'py, 'l>, ConvError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<SeqToPy<'py, 'l>, ConvError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, ConvError> {
        Err(ConvError::new(format!("enum {name} has no message form")))
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<MapToPy<'py>, ConvError> {
        Ok(MapToPy {
            dict: PyDict::new(self.py),
            key: None,
        })
    }
    fn serialize_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<StructToPy<'py, 'l>, ConvError> {
        let py = self.py;
        let Some(layout) = self.layout else {
            return Ok(StructToPy::Dict(PyDict::new(py)));
        };
        let class = layout.class.bind(py);
        // SAFETY: `class` is a live type object (we hold a reference) and the GIL is held;
        // `PyType_GenericNew` only allocates an instance (`tp_alloc`) and ignores its
        // argument pointers, which may be null. It returns a new reference or null with an
        // exception set, which `from_owned_ptr_or_err` takes over.
        let object = unsafe {
            let raw = pyo3::ffi::PyType_GenericNew(
                class.as_type_ptr(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            );
            Bound::from_owned_ptr_or_err(py, raw)?
        };
        Ok(StructToPy::Object {
            object,
            layout,
            index: 0,
        })
    }
    fn serialize_struct_variant(
        self,
        name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, ConvError> {
        Err(ConvError::new(format!("enum {name} has no message form")))
    }
}

struct SeqToPy<'py, 'l> {
    py: Python<'py>,
    /// The class of each element that is a struct.
    layout: Option<&'l Layout>,
    items: Vec<PyObject>,
}

impl SeqToPy<'_, '_> {
    fn push<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), ConvError> {
        let index = self.items.len();
        let item = value
            .serialize(ToPy {
                py: self.py,
                layout: self.layout,
            })
            .map_err(|e| e.at_index(index))?;
        self.items.push(item);
        Ok(())
    }

    fn finish(self) -> Res {
        Ok(PyList::new(self.py, self.items)?.into_any().unbind())
    }
}

impl ser::SerializeSeq for SeqToPy<'_, '_> {
    type Ok = PyObject;
    type Error = ConvError;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), ConvError> {
        self.push(value)
    }
    fn end(self) -> Res {
        self.finish()
    }
}

impl ser::SerializeTuple for SeqToPy<'_, '_> {
    type Ok = PyObject;
    type Error = ConvError;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), ConvError> {
        self.push(value)
    }
    fn end(self) -> Res {
        self.finish()
    }
}

impl ser::SerializeTupleStruct for SeqToPy<'_, '_> {
    type Ok = PyObject;
    type Error = ConvError;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), ConvError> {
        self.push(value)
    }
    fn end(self) -> Res {
        self.finish()
    }
}

struct MapToPy<'py> {
    dict: Bound<'py, PyDict>,
    key: Option<PyObject>,
}

impl ser::SerializeMap for MapToPy<'_> {
    type Ok = PyObject;
    type Error = ConvError;
    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result<(), ConvError> {
        let py = self.dict.py();
        self.key = Some(key.serialize(ToPy { py, layout: None })?);
        Ok(())
    }
    fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), ConvError> {
        let py = self.dict.py();
        let key = self
            .key
            .take()
            .ok_or_else(|| ConvError::new("map value without key"))?;
        let value = value.serialize(ToPy { py, layout: None })?;
        self.dict.set_item(key, value)?;
        Ok(())
    }
    fn end(self) -> Res {
        Ok(self.dict.into_any().unbind())
    }
}

enum StructToPy<'py, 'l> {
    /// An instance of the layout's class, filled field by field in order.
    Object {
        object: Bound<'py, PyAny>,
        layout: &'l Layout,
        index: usize,
    },
    /// No class known: a dict (the defaults the classes are generated from).
    Dict(Bound<'py, PyDict>),
}

impl ser::SerializeStruct for StructToPy<'_, '_> {
    type Ok = PyObject;
    type Error = ConvError;

    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), ConvError> {
        match self {
            StructToPy::Object {
                object,
                layout,
                index,
            } => {
                let py = object.py();
                // serde writes the fields in declaration order, as the layout lists them.
                let field = match layout.fields.get(*index) {
                    Some(f) if f.rust_name == key => f,
                    _ => layout
                        .fields
                        .iter()
                        .find(|f| f.rust_name == key)
                        .ok_or_else(|| {
                            ConvError::new(format!("{} has no field {key}", layout.type_name))
                        })?,
                };
                *index += 1;
                let value = value
                    .serialize(ToPy {
                        py,
                        layout: field.nested.as_deref(),
                    })
                    .map_err(|e| e.in_field(key))?;
                object.setattr(field.name.bind(py), value)?;
                Ok(())
            }
            StructToPy::Dict(dict) => {
                let py = dict.py();
                let value = value
                    .serialize(ToPy { py, layout: None })
                    .map_err(|e| e.in_field(key))?;
                dict.set_item(key, value)?;
                Ok(())
            }
        }
    }

    fn end(self) -> Res {
        Ok(match self {
            StructToPy::Object { object, .. } => object.unbind(),
            StructToPy::Dict(dict) => dict.into_any().unbind(),
        })
    }
}

// -- Python to Rust ----------------------------------------------------------------------

/// The bytes of an `array.array('B')` or a numpy array of `uint8` (rclpy's `uint8[]` and
/// `uint8[N]`), copied at once instead of element by element; `None` for anything else.
fn octets_of(object: &Bound<'_, PyAny>) -> PyResult<Option<Vec<u8>>> {
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

struct FromPy<'a, 'py> {
    object: &'a Bound<'py, PyAny>,
    /// The class a struct at this level must be an instance of.
    layout: Option<&'a Layout>,
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
struct Fields<'a, 'py> {
    object: &'a Bound<'py, PyAny>,
    layout: Option<&'a Layout>,
    names: &'static [&'static str],
    index: usize,
    struct_name: &'static str,
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
enum Items<'a, 'py> {
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

/// The layout of a message class for the Rust message `T`.
pub(crate) fn layout_of<T: kairos::graph::Message>(
    class: &Bound<'_, PyAny>,
) -> PyResult<Arc<Layout>> {
    Layout::of(class, &T::description())
}
