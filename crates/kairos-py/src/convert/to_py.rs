//! Rust to Python: a serde serializer that writes a Rust message into an instance of its
//! Python class (a dict where there is no class), field by field.

use super::{ConvError, Layout};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyList, PyString};
use serde::ser::{self, Impossible, Serialize};
pub(super) struct ToPy<'py, 'l> {
    pub(super) py: Python<'py>,
    /// The class a struct at this level becomes (none: a dict).
    pub(super) layout: Option<&'l Layout>,
}

pub(super) type Res = Result<PyObject, ConvError>;

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

pub(super) struct SeqToPy<'py, 'l> {
    pub(super) py: Python<'py>,
    /// The class of each element that is a struct.
    pub(super) layout: Option<&'l Layout>,
    pub(super) items: Vec<PyObject>,
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

pub(super) struct MapToPy<'py> {
    pub(super) dict: Bound<'py, PyDict>,
    pub(super) key: Option<PyObject>,
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

pub(super) enum StructToPy<'py, 'l> {
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
