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
use pyo3::types::{PyString, PyType};
use serde::de;
use serde::ser::{self, Serialize};
use std::fmt;
use std::sync::Arc;

mod from_py;
mod to_py;

use from_py::FromPy;
use to_py::ToPy;

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

/// The layout of a message class for the Rust message `T`.
pub(crate) fn layout_of<T: kairos::graph::Message>(
    class: &Bound<'_, PyAny>,
) -> PyResult<Arc<Layout>> {
    Layout::of(class, &T::description())
}
