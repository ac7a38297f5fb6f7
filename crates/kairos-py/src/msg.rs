//! Messages: every interface of `kairos-msgs` for Python, by ROS type name.
//!
//! What this module promises:
//! - Every message and service type `kairos_msgs::visit_interfaces` hands over (the 14
//!   shipped packages) can be published, subscribed to, served and called from Python; a
//!   Python node and a Rust node of one process share the topic of the Rust type itself
//!   (one `Arc<T>` delivery), and the Zenoh transport puts it on the wire as rmw_zenoh does.
//! - The Python classes are generated at import (`kairos/_interfaces.py`) from what
//!   [`interfaces`] reports: each type's fields as its Rust type describes them
//!   (`Message::description`) and its default values (`T::default()`), so Python and Rust
//!   can never disagree on a field.
//! - A class that is not a kairos message class, or a type kairos has no Rust type for,
//!   is a `TypeError` saying so.

use crate::convert::to_plain;
use kairos::graph::{ActionType, Message, ServiceType};
use kairos_msgs::InterfaceVisitor;
use kairos_msgs::type_hash::TypeDescription;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// One message type: its name, description, defaults and the monomorphized constructors
/// of its entities.
pub(crate) struct MessageKind {
    pub(crate) type_name: &'static str,
    pub(crate) description: fn() -> TypeDescription,
    pub(crate) defaults: fn(Python<'_>) -> PyResult<PyObject>,
    pub(crate) publisher: crate::typed::MakePublisher,
    pub(crate) subscription: crate::typed::MakeSubscription,
    pub(crate) relay: crate::typed::MakeRelay,
    pub(crate) serialize: fn(&Bound<'_, PyAny>, &Bound<'_, PyAny>) -> PyResult<Vec<u8>>,
    pub(crate) deserialize: fn(&Bound<'_, PyAny>, &[u8]) -> PyResult<PyObject>,
}

/// One service type: its name, its request and response types, and the monomorphized
/// constructors of its entities.
pub(crate) struct ServiceKind {
    pub(crate) type_name: &'static str,
    pub(crate) request: &'static str,
    pub(crate) response: &'static str,
    pub(crate) service: crate::typed::MakeService,
    pub(crate) client: crate::typed::MakeClient,
}

/// One action type: the monomorphized constructors of its server and client.
pub(crate) struct ActionKind {
    pub(crate) server: crate::action_server::MakeActionServer,
    pub(crate) client: crate::action_client::MakeActionClient,
}

/// Every type Python can use, by ROS type name.
struct Registry {
    messages: BTreeMap<&'static str, MessageKind>,
    services: BTreeMap<&'static str, ServiceKind>,
    actions: BTreeMap<&'static str, ActionKind>,
}

impl InterfaceVisitor for Registry {
    fn message<M: Message>(&mut self) {
        self.messages
            .entry(M::TYPE_NAME)
            .or_insert_with(message_kind::<M>);
    }

    fn service<S: ServiceType>(&mut self) {
        self.services.insert(
            S::TYPE_NAME,
            ServiceKind {
                type_name: S::TYPE_NAME,
                request: S::Request::TYPE_NAME,
                response: S::Response::TYPE_NAME,
                service: crate::typed::make_service::<S::Request, S::Response>,
                client: crate::typed::make_client::<S::Request, S::Response>,
            },
        );
        self.messages
            .entry(S::Request::TYPE_NAME)
            .or_insert_with(message_kind::<S::Request>);
        self.messages
            .entry(S::Response::TYPE_NAME)
            .or_insert_with(message_kind::<S::Response>);
    }

    fn action<A: ActionType>(&mut self) {
        self.actions.insert(
            A::TYPE_NAME,
            ActionKind {
                server: crate::action_server::make_action_server::<A>,
                client: crate::action_client::make_action_client::<A>,
            },
        );
    }
}

/// The kind of a `Message` the visitor hands over. `Message` does not require `Default`,
/// so the default value is a deserialization of nothing (every generated struct is
/// `#[serde(default)]`, which is the type's `Default`).
fn message_kind<M: Message>() -> MessageKind {
    MessageKind {
        type_name: M::TYPE_NAME,
        description: M::description,
        defaults: defaults_of::<M>,
        publisher: crate::typed::make_publisher::<M>,
        subscription: crate::typed::make_subscription::<M>,
        relay: crate::typed::make_relay::<M>,
        serialize: serialize_as::<M>,
        deserialize: deserialize_as::<M>,
    }
}

/// `message`, an instance of `class`, as the CDR payload rmw_zenoh sends.
fn serialize_as<M: Message>(
    class: &Bound<'_, PyAny>,
    message: &Bound<'_, PyAny>,
) -> PyResult<Vec<u8>> {
    let layout = crate::convert::layout_of::<M>(class)?;
    let value: M = crate::convert::from_py(message, &layout)?;
    Ok(kairos_msgs::message::encode(&value))
}

/// The message of `class` a CDR payload holds.
fn deserialize_as<M: Message>(class: &Bound<'_, PyAny>, payload: &[u8]) -> PyResult<PyObject> {
    let layout = crate::convert::layout_of::<M>(class)?;
    let value: M = kairos_msgs::message::decode(payload).map_err(|e| {
        pyo3::exceptions::PyValueError::new_err(format!(
            "the bytes are not a serialized {}: {e}",
            M::TYPE_NAME
        ))
    })?;
    crate::convert::to_py(class.py(), &value, &layout)
}

/// `message` serialized as ROS serializes it (CDR with its encapsulation header): what
/// `rclpy.serialization.serialize_message` returns.
#[pyfunction]
pub(crate) fn serialize_message(message: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    let class = message.get_type().into_any();
    let kind = message_kind_of(&class)?;
    (kind.serialize)(&class, message)
}

/// The message of `class` that `payload` (CDR, as `serialize_message` returns) holds.
#[pyfunction]
pub(crate) fn deserialize_message(payload: &[u8], class: &Bound<'_, PyAny>) -> PyResult<PyObject> {
    let kind = message_kind_of(class)?;
    (kind.deserialize)(class, payload)
}

fn defaults_of<M: Message>(py: Python<'_>) -> PyResult<PyObject> {
    let empty = serde_json::Value::Object(serde_json::Map::new());
    let value: M = serde_json::from_value(empty).map_err(|err| {
        PyTypeError::new_err(format!("{} has no default value: {err}", M::TYPE_NAME))
    })?;
    to_plain(py, &value)
}

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let mut registry = Registry {
            messages: BTreeMap::new(),
            services: BTreeMap::new(),
            actions: BTreeMap::new(),
        };
        // A Python `rosgraph_msgs.msg.Clock` publisher drives `use_sim_time` nodes: its
        // topic is the twin of the runtime's own `/clock` (`ClockMsg`) in the process.
        kairos_msgs::visit_interfaces(&mut registry);
        registry
    })
}

/// The ROS type name a Python message or service class declares in `_type`.
pub(crate) fn type_name_of(class: &Bound<'_, PyAny>) -> PyResult<String> {
    class
        .getattr("_type")
        .and_then(|t| t.extract::<String>())
        .map_err(|_| {
            PyTypeError::new_err(format!(
                "{} is not a kairos message or service class (it has no `_type`); use the classes of kairos.std_msgs.msg, kairos.geometry_msgs.msg, ...",
                class.repr().map(|r| r.to_string()).unwrap_or_default()
            ))
        })
}

pub(crate) fn message_kind_of(class: &Bound<'_, PyAny>) -> PyResult<&'static MessageKind> {
    let name = type_name_of(class)?;
    registry().messages.get(name.as_str()).ok_or_else(|| {
        PyTypeError::new_err(format!(
            "message type '{name}' has no Rust type in kairos; the shipped packages are those of kairos-msgs ({})",
            packages().join(", ")
        ))
    })
}

pub(crate) fn service_kind_of(class: &Bound<'_, PyAny>) -> PyResult<&'static ServiceKind> {
    let name = type_name_of(class)?;
    registry().services.get(name.as_str()).ok_or_else(|| {
        PyTypeError::new_err(format!(
            "service type '{name}' has no Rust type in kairos; the shipped packages are those of kairos-msgs ({})",
            packages().join(", ")
        ))
    })
}

pub(crate) fn action_kind_of(class: &Bound<'_, PyAny>) -> PyResult<&'static ActionKind> {
    let name = type_name_of(class)?;
    registry().actions.get(name.as_str()).ok_or_else(|| {
        PyTypeError::new_err(format!(
            "action type '{name}' has no Rust type in kairos; the shipped packages are those of kairos-msgs ({})",
            packages().join(", ")
        ))
    })
}

fn packages() -> Vec<&'static str> {
    let mut packages: Vec<_> = registry()
        .messages
        .keys()
        .chain(registry().services.keys())
        .filter_map(|name| name.split('/').next())
        .collect();
    packages.dedup();
    packages.sort_unstable();
    packages.dedup();
    packages
}

/// A constant of an interface, as its `.msg` file writes it.
#[allow(
    dead_code,
    reason = "the shipped packages have integer constants only; any .msg may have the others"
)]
enum Const {
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(&'static str),
}

/// Every interface's constants, by ROS type name (made by build.rs from the `.msg` files).
static CONSTANTS: &[(&str, &[(&str, Const)])] = include!(concat!(env!("OUT_DIR"), "/constants.rs"));

fn constant<'py>(py: Python<'py>, value: &Const) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Const::Bool(b) => pyo3::types::PyBool::new(py, *b).to_owned().into_any(),
        Const::Int(i) => i.into_pyobject(py)?.into_any(),
        Const::Float(f) => f.into_pyobject(py)?.into_any(),
        Const::Str(s) => s.into_pyobject(py)?.into_any(),
    })
}

/// `(name, type_id, capacity, string_capacity, nested type name or None)` per field.
fn fields_of<'py>(py: Python<'py>, description: &TypeDescription) -> PyResult<Bound<'py, PyList>> {
    let fields = description.fields.iter().map(|field| {
        PyTuple::new(
            py,
            [
                field.name.clone().into_pyobject(py)?.into_any(),
                field.type_id.into_pyobject(py)?.into_any(),
                field.capacity.into_pyobject(py)?.into_any(),
                field.string_capacity.into_pyobject(py)?.into_any(),
                match &field.nested {
                    Some(nested) => nested.type_name.clone().into_pyobject(py)?.into_any(),
                    None => py.None().into_bound(py),
                },
            ],
        )
    });
    PyList::new(py, fields.collect::<PyResult<Vec<_>>>()?)
}

/// `kairos._kairos.interfaces()`: what the Python classes are generated from:
/// `{"messages": {type: (fields, defaults)}, "services": {type: (request, response)},
/// "constants": {type: [(name, value)]}}`
/// with the fields as [`fields_of`] lists them and the defaults as a dict of plain values
/// (nested messages as dicts). Types only nested (never registered) are described too,
/// with no defaults (`None`): their zero values follow from the field types.
#[pyfunction]
pub(crate) fn interfaces(py: Python<'_>) -> PyResult<PyObject> {
    let messages = PyDict::new(py);
    let mut pending: Vec<TypeDescription> = Vec::new();
    for kind in registry().messages.values() {
        let description = (kind.description)();
        let entry = (fields_of(py, &description)?, (kind.defaults)(py)?);
        messages.set_item(kind.type_name, entry)?;
        pending.extend(description.fields.iter().filter_map(|f| f.nested.clone()));
    }
    while let Some(description) = pending.pop() {
        if messages.contains(&description.type_name)? {
            continue;
        }
        let entry = (fields_of(py, &description)?, py.None());
        messages.set_item(&description.type_name, entry)?;
        pending.extend(description.fields.iter().filter_map(|f| f.nested.clone()));
    }
    let services = PyDict::new(py);
    for kind in registry().services.values() {
        services.set_item(kind.type_name, (kind.request, kind.response))?;
    }
    let constants = PyDict::new(py);
    for (type_name, values) in CONSTANTS {
        let values = values
            .iter()
            .map(|(name, value)| Ok((*name, constant(py, value)?)))
            .collect::<PyResult<Vec<_>>>()?;
        constants.set_item(type_name, values)?;
    }
    let out = PyDict::new(py);
    out.set_item("constants", constants)?;
    out.set_item("messages", messages)?;
    out.set_item("services", services)?;
    Ok(out.into_any().unbind())
}
