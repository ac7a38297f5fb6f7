//! Messages: Python message classes to and from the Rust types of `kairos_zenoh::msg`.
//!
//! What this module promises:
//! - A Python message class names its ROS type in `_type` (`"std_msgs/msg/String"`) and its
//!   fields in `__slots__`, as rclpy's generated classes do; a nested message field names
//!   its class in `_field_types`. Any Rust type with serde derives in `.msg` field order
//!   (every `kairos_zenoh::Message`) converts through one generic path, so a new type
//!   slots in with one line in [`MESSAGES`] or [`SERVICES`] and a small Python class.
//! - A Python value of the wrong shape raises `TypeError` naming the type and the field
//!   problem; it never panics.
//! - The Rust side of a topic is the Rust type itself, so a Python node and a Rust node in
//!   one process share the topic (and its `Arc<T>` delivery), and the Zenoh transport sees
//!   a registered type it already knows how to put on the wire.

use kairos_zenoh::msg::{AddTwoInts, StringMsg};
use kairos_zenoh::{Message, ServiceType};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

/// The message types Python can publish and subscribe to, by ROS type name.
pub(crate) static MESSAGES: &[MessageKind] = &[MessageKind::of::<StringMsg>()];

/// The service types Python can serve and call, by ROS type name.
pub(crate) static SERVICES: &[ServiceKind] = &[ServiceKind::of::<AddTwoInts>()];

/// One message type: its name and the monomorphized constructors of its entities.
pub(crate) struct MessageKind {
    pub(crate) type_name: &'static str,
    pub(crate) publisher: crate::node::MakePublisher,
    pub(crate) subscription: crate::node::MakeSubscription,
}

impl MessageKind {
    const fn of<T: Message>() -> Self {
        Self {
            type_name: T::TYPE_NAME,
            publisher: crate::node::make_publisher::<T>,
            subscription: crate::node::make_subscription::<T>,
        }
    }
}

/// One service type: its name and the monomorphized constructors of its entities.
pub(crate) struct ServiceKind {
    pub(crate) type_name: &'static str,
    pub(crate) service: crate::node::MakeService,
    pub(crate) client: crate::node::MakeClient,
}

impl ServiceKind {
    const fn of<S: ServiceType>() -> Self {
        Self {
            type_name: S::TYPE_NAME,
            service: crate::node::make_service::<S::Request, S::Response>,
            client: crate::node::make_client::<S::Request, S::Response>,
        }
    }
}

/// The ROS type name a Python message or service class declares in `_type`.
pub(crate) fn type_name_of(class: &Bound<'_, PyAny>) -> PyResult<String> {
    class
        .getattr("_type")
        .and_then(|t| t.extract::<String>())
        .map_err(|_| {
            PyTypeError::new_err(format!(
                "{} is not a kairos message or service class (it has no `_type`); use the classes of kairos.std_msgs.msg, kairos.example_interfaces.srv, ...",
                class.repr().map(|r| r.to_string()).unwrap_or_default()
            ))
        })
}

pub(crate) fn message_kind(class: &Bound<'_, PyAny>) -> PyResult<&'static MessageKind> {
    let name = type_name_of(class)?;
    MESSAGES
        .iter()
        .find(|k| k.type_name == name)
        .ok_or_else(|| {
            let known: Vec<_> = MESSAGES.iter().map(|k| k.type_name).collect();
            PyTypeError::new_err(format!(
                "message type '{name}' has no Rust type in kairos yet (known: {}); add it to MESSAGES in crates/kairos-py/src/msg.rs",
                known.join(", ")
            ))
        })
}

pub(crate) fn service_kind(class: &Bound<'_, PyAny>) -> PyResult<&'static ServiceKind> {
    let name = type_name_of(class)?;
    SERVICES
        .iter()
        .find(|k| k.type_name == name)
        .ok_or_else(|| {
            let known: Vec<_> = SERVICES.iter().map(|k| k.type_name).collect();
            PyTypeError::new_err(format!(
                "service type '{name}' has no Rust type in kairos yet (known: {}); add it to SERVICES in crates/kairos-py/src/msg.rs",
                known.join(", ")
            ))
        })
}

/// A Python message object as the Rust message `T`.
pub(crate) fn from_py<T: serde::de::DeserializeOwned>(object: &Bound<'_, PyAny>) -> PyResult<T> {
    let value = to_value(object)?;
    serde_json::from_value(value).map_err(|err| {
        PyTypeError::new_err(format!(
            "cannot convert {} to {}: {err}",
            object
                .get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default(),
            std::any::type_name::<T>()
        ))
    })
}

/// The Rust message `message` as an instance of the Python class `class`.
pub(crate) fn to_py<T: serde::Serialize>(
    py: Python<'_>,
    message: &T,
    class: &Bound<'_, PyAny>,
) -> PyResult<PyObject> {
    let value = serde_json::to_value(message)
        .map_err(|err| PyTypeError::new_err(format!("cannot convert a message: {err}")))?;
    from_value(py, value, Some(class))
}

fn to_value(object: &Bound<'_, PyAny>) -> PyResult<Value> {
    if object.is_none() {
        return Ok(Value::Null);
    }
    // bool before int: Python's bool is an int.
    if let Ok(b) = object.downcast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if object.is_instance_of::<PyInt>() {
        if let Ok(i) = object.extract::<i64>() {
            return Ok(Value::Number(i.into()));
        }
        return Ok(Value::Number(object.extract::<u64>()?.into()));
    }
    if let Ok(f) = object.downcast::<PyFloat>() {
        let number = Number::from_f64(f.value())
            .ok_or_else(|| PyTypeError::new_err("NaN and infinity cannot be sent"))?;
        return Ok(Value::Number(number));
    }
    if let Ok(s) = object.downcast::<PyString>() {
        return Ok(Value::String(s.to_cow()?.into_owned()));
    }
    if let Ok(b) = object.downcast::<PyBytes>() {
        return Ok(Value::Array(
            b.as_bytes().iter().map(|&x| Value::from(x)).collect(),
        ));
    }
    if object.is_instance_of::<PyList>() || object.is_instance_of::<PyTuple>() {
        return object.try_iter()?.map(|item| to_value(&item?)).collect();
    }
    if object.hasattr("_type")? {
        let slots = object.getattr("__slots__")?;
        let mut map = Map::new();
        for slot in slots.try_iter()? {
            let slot = slot?;
            let name: String = slot.extract()?;
            map.insert(
                name,
                to_value(&object.getattr(slot.downcast::<PyString>()?)?)?,
            );
        }
        return Ok(Value::Object(map));
    }
    Err(PyTypeError::new_err(format!(
        "cannot send a value of type {} in a message",
        object.get_type().name()?
    )))
}

fn from_value(
    py: Python<'_>,
    value: Value,
    class: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyObject> {
    Ok(match value {
        Value::Null => py.None(),
        Value::Bool(b) => PyBool::new(py, b).to_owned().into_any().unbind(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any().unbind()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any().unbind()
            } else {
                PyFloat::new(py, n.as_f64().unwrap_or(f64::NAN))
                    .into_any()
                    .unbind()
            }
        }
        Value::String(s) => PyString::new(py, &s).into_any().unbind(),
        Value::Array(items) => {
            let items = items
                .into_iter()
                .map(|v| from_value(py, v, class))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any().unbind()
        }
        Value::Object(map) => {
            let Some(class) = class else {
                let dict = PyDict::new(py);
                for (k, v) in map {
                    dict.set_item(k, from_value(py, v, None)?)?;
                }
                return Ok(dict.into_any().unbind());
            };
            // `__new__` without `__init__`: every field is set below (serde writes them all).
            let object = class.call_method1(pyo3::intern!(py, "__new__"), (class,))?;
            // A dict lookup that misses returns None: no exception is made per field.
            let nested = class.getattr(pyo3::intern!(py, "_field_types")).ok();
            let nested = nested.as_ref().and_then(|n| n.downcast::<PyDict>().ok());
            for (k, v) in map {
                let field_class = match nested {
                    Some(types) => types.get_item(&k)?,
                    None => None,
                };
                object.setattr(k.as_str(), from_value(py, v, field_class.as_ref())?)?;
            }
            object.unbind()
        }
    })
}
