//! Node parameters: named, typed values a node declares and other processes read and set
//! (through ROS 2's parameter services, which `kairos-zenoh` serves for a node).
//!
//! What this module promises:
//! - A parameter is declared once, with a value and a [`ParameterDescriptor`]; reading or
//!   setting one that was not declared is [`ParameterError::NotDeclared`], never a silent
//!   new entry.
//! - A set changes the value only if it is accepted: same type as declared (unless the
//!   descriptor allows dynamic typing), not read-only, and accepted by the parameter's
//!   hook. A refusal is a typed error saying why; the old value stays.
//! - A descriptor's range ([`IntegerRange`], [`FloatingPointRange`]) is enforced on every
//!   value, declared, given by the ROS arguments or set: in `[from, to]`, on a multiple
//!   of `step` from `from` (or `to` itself) when `step` is not 0, as rcl checks it.
//! - Every declare, set and undeclare that takes effect is told to the table's listeners
//!   ([`Parameters::on_event`]) as one [`ParameterEvent`], after the table changed and
//!   with no lock held (`kairos-zenoh` publishes them on `/parameter_events`).
//! - [`Parameters::for_node`] declares `use_sim_time` (false) and switches the node's
//!   clock when it is set, exactly as [`Node::set_use_sim_time`] does, so a ROS 2 tool
//!   that sets `use_sim_time` on a kairos node moves it to simulation time.
//!
//! Ground rules: one mutex guards the table; hooks run with it released, before the new
//! value is stored (a hook that fails leaves the old value), and a set of the same
//! parameter from two threads applies both in some order.

use super::error::GraphError;
use super::node::Node;
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// The value of a parameter (the types of `rcl_interfaces/msg/ParameterValue`).
#[derive(Debug, Clone, PartialEq)]
pub enum ParameterValue {
    /// No value.
    NotSet,
    /// A boolean.
    Bool(bool),
    /// A 64-bit signed integer.
    Integer(i64),
    /// A 64-bit float.
    Double(f64),
    /// A string.
    String(String),
    /// An array of bytes.
    ByteArray(Vec<u8>),
    /// An array of booleans.
    BoolArray(Vec<bool>),
    /// An array of 64-bit signed integers.
    IntegerArray(Vec<i64>),
    /// An array of 64-bit floats.
    DoubleArray(Vec<f64>),
    /// An array of strings.
    StringArray(Vec<String>),
}

/// The type of a parameter, numbered as `rcl_interfaces/msg/ParameterType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum ParameterType {
    /// No value.
    NotSet = 0,
    /// A boolean.
    Bool = 1,
    /// A 64-bit signed integer.
    Integer = 2,
    /// A 64-bit float.
    Double = 3,
    /// A string.
    String = 4,
    /// An array of bytes.
    ByteArray = 5,
    /// An array of booleans.
    BoolArray = 6,
    /// An array of 64-bit signed integers.
    IntegerArray = 7,
    /// An array of 64-bit floats.
    DoubleArray = 8,
    /// An array of strings.
    StringArray = 9,
}

impl ParameterValue {
    /// The type of this value.
    pub fn kind(&self) -> ParameterType {
        match self {
            Self::NotSet => ParameterType::NotSet,
            Self::Bool(_) => ParameterType::Bool,
            Self::Integer(_) => ParameterType::Integer,
            Self::Double(_) => ParameterType::Double,
            Self::String(_) => ParameterType::String,
            Self::ByteArray(_) => ParameterType::ByteArray,
            Self::BoolArray(_) => ParameterType::BoolArray,
            Self::IntegerArray(_) => ParameterType::IntegerArray,
            Self::DoubleArray(_) => ParameterType::DoubleArray,
            Self::StringArray(_) => ParameterType::StringArray,
        }
    }
}

impl fmt::Display for ParameterType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            Self::NotSet => "not set",
            Self::Bool => "bool",
            Self::Integer => "integer",
            Self::Double => "double",
            Self::String => "string",
            Self::ByteArray => "byte array",
            Self::BoolArray => "bool array",
            Self::IntegerArray => "integer array",
            Self::DoubleArray => "double array",
            Self::StringArray => "string array",
        };
        f.write_str(name)
    }
}

impl fmt::Display for ParameterValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotSet => f.write_str("(not set)"),
            Self::Bool(v) => write!(f, "{v}"),
            Self::Integer(v) => write!(f, "{v}"),
            Self::Double(v) => write!(f, "{v:?}"),
            Self::String(v) => f.write_str(v),
            Self::ByteArray(v) => write!(f, "{v:?}"),
            Self::BoolArray(v) => write!(f, "{v:?}"),
            Self::IntegerArray(v) => write!(f, "{v:?}"),
            Self::DoubleArray(v) => write!(f, "{v:?}"),
            Self::StringArray(v) => write!(f, "{v:?}"),
        }
    }
}

/// What a parameter is (the fields of `rcl_interfaces/msg/ParameterDescriptor` kairos
/// uses).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParameterDescriptor {
    /// What the parameter is for, in words.
    pub description: String,
    /// Constraints on the value, in words.
    pub additional_constraints: String,
    /// A set is refused once the parameter is declared.
    pub read_only: bool,
    /// The value may change type when set.
    pub dynamic_typing: bool,
    /// The values an integer parameter may take.
    pub integer_range: Option<IntegerRange>,
    /// The values a double parameter may take.
    pub floating_point_range: Option<FloatingPointRange>,
}

/// The values an integer parameter may take (`rcl_interfaces/msg/IntegerRange`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntegerRange {
    /// The smallest value.
    pub from: i64,
    /// The largest value.
    pub to: i64,
    /// Values are `from + k * step` (or `to`); 0 allows every value in between.
    pub step: u64,
}

/// The values a double parameter may take (`rcl_interfaces/msg/FloatingPointRange`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FloatingPointRange {
    /// The smallest value.
    pub from: f64,
    /// The largest value.
    pub to: f64,
    /// Values are `from + k * step` (or `to`), within rcl's tolerance; 0 allows every
    /// value in between.
    pub step: f64,
}

impl IntegerRange {
    fn admits(&self, v: i64) -> bool {
        let (v, from, to) = (i128::from(v), i128::from(self.from), i128::from(self.to));
        (from..=to).contains(&v)
            && (self.step == 0 || v == to || (v - from) % i128::from(self.step) == 0)
    }
}

impl FloatingPointRange {
    fn admits(&self, v: f64) -> bool {
        // rcl's tolerance for "on a step": 1e-6 of the step.
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * self.step.abs().max(f64::EPSILON);
        (self.from..=self.to).contains(&v)
            && (self.step == 0.0 || close(v, self.to) || {
                let k = ((v - self.from) / self.step).round();
                close(self.from + k * self.step, v)
            })
    }
}

impl ParameterDescriptor {
    /// Why `value` is outside this descriptor's range, if it is.
    fn out_of_range(&self, value: &ParameterValue) -> Option<String> {
        match (value, self.integer_range, self.floating_point_range) {
            (ParameterValue::Integer(v), Some(r), _) if !r.admits(*v) => Some(format!(
                "{v} is outside [{}, {}] in steps of {}",
                r.from, r.to, r.step
            )),
            (ParameterValue::Double(v), _, Some(r)) if !r.admits(*v) => Some(format!(
                "{v} is outside [{}, {}] in steps of {}",
                r.from, r.to, r.step
            )),
            _ => None,
        }
    }
}

/// What one declare, set or undeclare changed (`rcl_interfaces/msg/ParameterEvent`).
#[derive(Debug, Clone, PartialEq)]
pub struct ParameterEvent {
    /// The node whose parameters these are (fully qualified; empty for a table of no
    /// node).
    pub node: String,
    /// Parameters declared, with their values.
    pub new: Vec<(String, ParameterValue)>,
    /// Parameters set, with their new values.
    pub changed: Vec<(String, ParameterValue)>,
    /// Parameters undeclared, with their last values.
    pub deleted: Vec<(String, ParameterValue)>,
}

/// Called with each [`ParameterEvent`] of a table.
pub type ParameterEventListener = Arc<dyn Fn(&ParameterEvent) + Send + Sync>;

/// Why a parameter was not declared, read or set.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParameterError {
    /// No parameter of this name was declared.
    #[error("parameter '{0}' is not declared; declare it on the node first")]
    NotDeclared(String),
    /// A parameter of this name was declared before.
    #[error("parameter '{0}' is already declared")]
    AlreadyDeclared(String),
    /// The value's type differs from the declared one (and the descriptor does not allow
    /// dynamic typing).
    #[error("parameter '{name}' is a {declared}, not a {given}")]
    TypeMismatch {
        /// The parameter.
        name: String,
        /// Its declared type.
        declared: ParameterType,
        /// The type of the value given.
        given: ParameterType,
    },
    /// The descriptor makes the parameter read-only.
    #[error("parameter '{0}' is read-only")]
    ReadOnly(String),
    /// The parameter's hook refused the value.
    #[error("parameter '{name}' refused the value: {reason}")]
    Rejected {
        /// The parameter.
        name: String,
        /// What the hook said.
        reason: String,
    },
    /// The ROS arguments (`-p`, `--params-file`) give a declared parameter a value of
    /// another type.
    #[error(
        "parameter '{name}' is declared a {declared}, but the ROS arguments (-p or \
         --params-file) give it a {given}: write a {declared} there"
    )]
    OverrideTypeMismatch {
        /// The parameter.
        name: String,
        /// Its declared type.
        declared: ParameterType,
        /// The type the arguments give.
        given: ParameterType,
    },
    /// The value is outside the descriptor's range.
    #[error("parameter '{name}' refused the value: {why}")]
    OutOfRange {
        /// The parameter.
        name: String,
        /// How the value misses the range.
        why: String,
    },
    /// The name is not a valid parameter name.
    #[error("'{0}' is not a parameter name (letters, digits, '_' and '.', not empty)")]
    BadName(String),
}

/// Called with a parameter's new value before it is stored; an `Err` refuses it.
pub type ParameterHook = Arc<dyn Fn(&ParameterValue) -> Result<(), String> + Send + Sync>;

struct Entry {
    value: ParameterValue,
    descriptor: ParameterDescriptor,
    hook: Option<ParameterHook>,
}

/// The parameters of one node. Cloning shares the table.
#[derive(Clone, Default)]
pub struct Parameters {
    table: Arc<Mutex<BTreeMap<String, Entry>>>,
    /// Values the ROS arguments give (`-p`, `--params-file`), taken at declaration.
    overrides: Arc<BTreeMap<String, ParameterValue>>,
    /// The node the table belongs to (empty: none), as events name it.
    node: Arc<str>,
    listeners: Arc<Mutex<Vec<ParameterEventListener>>>,
}

impl fmt::Debug for Parameters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Parameters")
            .field("names", &self.names())
            .finish()
    }
}

/// The name of the parameter that switches a node to simulation time.
pub const USE_SIM_TIME: &str = "use_sim_time";

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '/')
}

impl Parameters {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// The parameters of `node`, with `use_sim_time` declared (false) and bound to the
    /// node's clock: setting it switches the clock as [`Node::set_use_sim_time`] does.
    pub fn for_node(node: &Node) -> Result<Self, GraphError> {
        // Makes the node's clock a RosClock (system time until switched); the hook holds
        // that clock, not the node, so the node's services may hold the table.
        node.set_use_sim_time(false)?;
        let clock = node.clock();
        let ros = clock
            .as_ros()
            .cloned()
            .expect("set_use_sim_time leaves a ROS clock on the node");
        let parameters = Self {
            node: node.fully_qualified_name().into(),
            overrides: Arc::new(node.ros_args().overrides_for(node.fully_qualified_name())),
            ..Self::new()
        };
        let shown = node.downgrade();
        let hook: ParameterHook = Arc::new(move |value| match value {
            ParameterValue::Bool(on) => {
                ros.set_use_sim_time(*on);
                match shown.upgrade().map(Node::from_shared) {
                    Some(node) => node
                        .show_clock_subscription(*on)
                        .map_err(|e| format!("cannot show the node's /clock subscription: {e}")),
                    None => Ok(()),
                }
            }
            other => Err(format!("use_sim_time is a bool, not a {}", other.kind())),
        });
        parameters
            .declare_with_hook(
                USE_SIM_TIME,
                ParameterValue::Bool(false),
                ParameterDescriptor {
                    description: "Follow /clock (simulation time) instead of system time"
                        .to_owned(),
                    ..Default::default()
                },
                Some(hook),
            )
            // Only a `use_sim_time` the ROS arguments give wrongly can fail here.
            .map_err(GraphError::Parameter)?;
        Ok(parameters)
    }

    /// Declares `name` with `value`.
    pub fn declare(
        &self,
        name: &str,
        value: ParameterValue,
        descriptor: ParameterDescriptor,
    ) -> Result<(), ParameterError> {
        self.declare_with_hook(name, value, descriptor, None)
    }

    /// Declares `name` with `value`, and `hook` to accept or refuse each new value.
    pub fn declare_with_hook(
        &self,
        name: &str,
        value: ParameterValue,
        descriptor: ParameterDescriptor,
        hook: Option<ParameterHook>,
    ) -> Result<(), ParameterError> {
        if !valid_name(name) {
            return Err(ParameterError::BadName(name.to_owned()));
        }
        if self.table.lock().contains_key(name) {
            return Err(ParameterError::AlreadyDeclared(name.to_owned()));
        }
        // A value from the ROS arguments replaces the default, if its type fits and the
        // hook takes it (read-only parameters too: it is their initial value).
        let value = match self.overrides.get(name) {
            Some(given) => {
                let (declared, given_kind) = (value.kind(), given.kind());
                if declared != given_kind && !descriptor.dynamic_typing {
                    return Err(ParameterError::OverrideTypeMismatch {
                        name: name.to_owned(),
                        declared,
                        given: given_kind,
                    });
                }
                if let Some(hook) = &hook {
                    hook(given).map_err(|reason| ParameterError::Rejected {
                        name: name.to_owned(),
                        reason,
                    })?;
                }
                given.clone()
            }
            None => value,
        };
        if let Some(why) = descriptor.out_of_range(&value) {
            return Err(ParameterError::OutOfRange {
                name: name.to_owned(),
                why,
            });
        }
        {
            let mut table = self.table.lock();
            if table.contains_key(name) {
                return Err(ParameterError::AlreadyDeclared(name.to_owned()));
            }
            table.insert(
                name.to_owned(),
                Entry {
                    value: value.clone(),
                    descriptor,
                    hook,
                },
            );
        }
        self.tell(ParameterEvent {
            new: vec![(name.to_owned(), value)],
            ..self.event()
        });
        Ok(())
    }

    /// Removes `name` (a read-only parameter stays, as in rclcpp).
    pub fn undeclare(&self, name: &str) -> Result<(), ParameterError> {
        let entry = {
            let mut table = self.table.lock();
            let entry = table
                .get(name)
                .ok_or_else(|| ParameterError::NotDeclared(name.to_owned()))?;
            if entry.descriptor.read_only {
                return Err(ParameterError::ReadOnly(name.to_owned()));
            }
            table.remove(name).expect("just found")
        };
        self.tell(ParameterEvent {
            deleted: vec![(name.to_owned(), entry.value)],
            ..self.event()
        });
        Ok(())
    }

    /// Calls `listener` with every event of this table from now on (see the module docs).
    pub fn on_event(&self, listener: impl Fn(&ParameterEvent) + Send + Sync + 'static) {
        self.listeners.lock().push(Arc::new(listener));
    }

    /// An event of this table's node that changed nothing yet.
    fn event(&self) -> ParameterEvent {
        ParameterEvent {
            node: self.node.to_string(),
            new: Vec::new(),
            changed: Vec::new(),
            deleted: Vec::new(),
        }
    }

    fn tell(&self, event: ParameterEvent) {
        let listeners = self.listeners.lock().clone();
        for listener in listeners {
            listener(&event);
        }
    }

    /// The value the ROS arguments give `name` (taken when it is declared), if any.
    pub fn override_for(&self, name: &str) -> Option<&ParameterValue> {
        self.overrides.get(name)
    }

    /// The value of `name`.
    pub fn get(&self, name: &str) -> Result<ParameterValue, ParameterError> {
        self.table
            .lock()
            .get(name)
            .map(|e| e.value.clone())
            .ok_or_else(|| ParameterError::NotDeclared(name.to_owned()))
    }

    /// The descriptor of `name`.
    pub fn describe(&self, name: &str) -> Result<ParameterDescriptor, ParameterError> {
        self.table
            .lock()
            .get(name)
            .map(|e| e.descriptor.clone())
            .ok_or_else(|| ParameterError::NotDeclared(name.to_owned()))
    }

    /// Every declared name, sorted.
    pub fn names(&self) -> Vec<String> {
        self.table.lock().keys().cloned().collect()
    }

    /// Sets `name` to `value` if the declaration and the hook accept it.
    pub fn set(&self, name: &str, value: ParameterValue) -> Result<(), ParameterError> {
        let hook = {
            let table = self.table.lock();
            let entry = table
                .get(name)
                .ok_or_else(|| ParameterError::NotDeclared(name.to_owned()))?;
            if entry.descriptor.read_only {
                return Err(ParameterError::ReadOnly(name.to_owned()));
            }
            let (declared, given) = (entry.value.kind(), value.kind());
            if declared != given && !entry.descriptor.dynamic_typing {
                return Err(ParameterError::TypeMismatch {
                    name: name.to_owned(),
                    declared,
                    given,
                });
            }
            if let Some(why) = entry.descriptor.out_of_range(&value) {
                return Err(ParameterError::OutOfRange {
                    name: name.to_owned(),
                    why,
                });
            }
            entry.hook.clone()
        };
        if let Some(hook) = hook {
            hook(&value).map_err(|reason| ParameterError::Rejected {
                name: name.to_owned(),
                reason,
            })?;
        }
        let stored = match self.table.lock().get_mut(name) {
            Some(entry) => {
                entry.value = value.clone();
                true
            }
            // Undeclared meanwhile: nothing changed.
            None => false,
        };
        if stored {
            self.tell(ParameterEvent {
                changed: vec![(name.to_owned(), value)],
                ..self.event()
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{CLOCK_TOPIC, Context, EntityKind, Node, Qos};

    #[test]
    fn declared_parameters_are_read_and_set_by_their_rules() {
        let p = Parameters::new();
        p.declare("rate", ParameterValue::Double(10.0), Default::default())
            .unwrap();
        p.declare(
            "frame",
            ParameterValue::String("base".into()),
            ParameterDescriptor {
                read_only: true,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(p.get("rate").unwrap(), ParameterValue::Double(10.0));
        p.set("rate", ParameterValue::Double(20.0)).unwrap();
        assert_eq!(p.get("rate").unwrap(), ParameterValue::Double(20.0));
        assert_eq!(
            p.set("rate", ParameterValue::Integer(3)),
            Err(ParameterError::TypeMismatch {
                name: "rate".into(),
                declared: ParameterType::Double,
                given: ParameterType::Integer
            })
        );
        assert_eq!(
            p.set("frame", ParameterValue::String("x".into())),
            Err(ParameterError::ReadOnly("frame".into()))
        );
        assert_eq!(
            p.set("nope", ParameterValue::Bool(true)),
            Err(ParameterError::NotDeclared("nope".into()))
        );
        assert_eq!(
            p.declare("rate", ParameterValue::NotSet, Default::default()),
            Err(ParameterError::AlreadyDeclared("rate".into()))
        );
        assert!(matches!(
            p.declare("", ParameterValue::NotSet, Default::default()),
            Err(ParameterError::BadName(_))
        ));
        assert_eq!(p.names(), ["frame", "rate"]);
        assert_eq!(p.get("rate").unwrap(), ParameterValue::Double(20.0));
    }

    #[test]
    fn ranges_are_enforced_and_every_change_is_an_event() {
        let p = Parameters::new();
        let events = Arc::new(Mutex::new(Vec::new()));
        let seen = events.clone();
        p.on_event(move |e| seen.lock().push(e.clone()));
        let ranged = |i: Option<IntegerRange>, f: Option<FloatingPointRange>| ParameterDescriptor {
            integer_range: i,
            floating_point_range: f,
            ..Default::default()
        };
        let steps = IntegerRange {
            from: 0,
            to: 10,
            step: 4,
        };
        assert!(matches!(
            p.declare("n", ParameterValue::Integer(3), ranged(Some(steps), None)),
            Err(ParameterError::OutOfRange { .. })
        ));
        p.declare("n", ParameterValue::Integer(4), ranged(Some(steps), None))
            .unwrap();
        for (v, ok) in [
            (8, true),
            (10, true),
            (9, false),
            (12, false),
            (-4, false),
            (0, true),
        ] {
            assert_eq!(p.set("n", ParameterValue::Integer(v)).is_ok(), ok, "{v}");
        }
        let half = FloatingPointRange {
            from: 0.0,
            to: 1.0,
            step: 0.25,
        };
        p.declare("x", ParameterValue::Double(0.5), ranged(None, Some(half)))
            .unwrap();
        for (v, ok) in [(0.75, true), (1.0, true), (0.3, false), (1.25, false)] {
            assert_eq!(p.set("x", ParameterValue::Double(v)).is_ok(), ok, "{v}");
        }
        assert_eq!(p.get("n").unwrap(), ParameterValue::Integer(0));
        p.undeclare("x").unwrap();
        assert!(matches!(p.get("x"), Err(ParameterError::NotDeclared(_))));
        let events = events.lock();
        let kinds: Vec<(usize, usize, usize)> = events
            .iter()
            .map(|e| (e.new.len(), e.changed.len(), e.deleted.len()))
            .collect();
        // n declared, 3 accepted sets, x declared, 2 accepted sets, x undeclared.
        assert_eq!(
            kinds,
            [
                (1, 0, 0),
                (0, 1, 0),
                (0, 1, 0),
                (0, 1, 0),
                (1, 0, 0),
                (0, 1, 0),
                (0, 1, 0),
                (0, 0, 1)
            ]
        );
        assert_eq!(
            events[7].deleted,
            [("x".to_owned(), ParameterValue::Double(1.0))]
        );
    }

    #[test]
    fn setting_use_sim_time_switches_the_node_clock() {
        let context = Context::new();
        let node = Node::new_in(&context, "sim_user", "/").unwrap();
        let p = Parameters::for_node(&node).unwrap();
        let ros = || node.clock().as_ros().cloned().expect("a ROS clock");
        // rclcpp's time source subscribes /clock on the node while it is on sim time.
        let follows = || {
            let graph = node.graph();
            let of = graph.endpoints(EntityKind::Subscription, CLOCK_TOPIC);
            assert!(of.len() <= 1, "/clock subscriptions: {of:?}");
            of.first().map(|e| (e.node_fully_qualified_name(), e.qos))
        };
        assert!(!ros().use_sim_time());
        assert_eq!(follows(), None);
        assert_eq!(p.get(USE_SIM_TIME).unwrap(), ParameterValue::Bool(false));
        p.set(USE_SIM_TIME, ParameterValue::Bool(true)).unwrap();
        assert!(ros().use_sim_time());
        let shown = Some((
            "/sim_user".to_owned(),
            Some(Qos::keep_last(1).best_effort()),
        ));
        assert_eq!(follows(), shown);
        assert!(matches!(
            p.set(USE_SIM_TIME, ParameterValue::String("yes".into())),
            Err(ParameterError::TypeMismatch { .. })
        ));
        assert!(ros().use_sim_time(), "a refused set leaves the clock alone");
        assert_eq!(follows(), shown);
        p.set(USE_SIM_TIME, ParameterValue::Bool(true)).unwrap();
        assert_eq!(follows(), shown, "shown once, however often it is set");
        p.set(USE_SIM_TIME, ParameterValue::Bool(false)).unwrap();
        assert!(!ros().use_sim_time());
        assert_eq!(follows(), None);
    }
}
