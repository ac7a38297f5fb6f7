//! Parameters: the graph's nodes' ROS 2 parameters, as the protocol's `getParameters` and
//! `setParameters` see them.
//!
//! What it promises:
//! - **ROS 2's names and types.** A parameter is named `<node>.<parameter>`
//!   (`/sensor.rate_hz`), as foxglove_bridge names ROS 2 parameters; a node is any node of
//!   the graph that serves `get_parameters` and `list_parameters` (the bridge's own node
//!   left out). Doubles carry the `float64` type, so `1.0` stays a double; byte arrays are
//!   base64 with the `byte_array` type, as the protocol says.
//! - **Through the nodes' own services.** A get asks each node concerned (every node, for
//!   an empty list of names), a set sends each node its parameters in one
//!   `set_parameters` call, on a blocking thread like a service call ([`crate::service`]);
//!   each node answers within [`PARAMETER_TIMEOUT`] or is reported.
//! - **Nothing refused silently.** A node that does not answer, a name without a node, a
//!   value a ROS 2 parameter cannot hold, or a set the node rejects: each is a warning
//!   status to the client naming the parameter and the reason. With an `id`, a get is
//!   answered with `parameterValues`, and so is a set (the values after it).
//! - **Updates as the nodes announce them.** A client that subscribed to parameters
//!   (`subscribeParameterUpdates`) gets a `parameterValues` without id each time a node
//!   of another process announces one of them declared, changed or deleted on
//!   `/parameter_events` (a deleted one has no value). The bridge hears that topic on the
//!   transport's thread and only queues into outboxes, so a slow client holds up no one.

use crate::hub::Hub;
use crate::server::Shared;
use crate::service::Calls;
use foxglove::ws_protocol::parameter::{Parameter, ParameterType, ParameterValue};
use foxglove::ws_protocol::server::{ParameterValues, Status};
use kairos_zenoh::graph_key::EntityKind;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::{Arc, Weak};
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;

/// How long each node has to answer one parameter request.
pub const PARAMETER_TIMEOUT: Duration = Duration::from_secs(5);

/// Where a request's answers go (the client's outbox).
pub(crate) type Answer = Box<dyn Fn(Message) + Send>;

/// Answers a `getParameters` (see the module docs).
pub(crate) fn get(
    shared: &Arc<Shared>,
    calls: &Arc<Calls>,
    names: Vec<String>,
    id: Option<String>,
    answer: Answer,
) {
    off_the_async_threads(shared, calls, answer, move |shared, warnings| {
        let wanted = if names.is_empty() {
            nodes(shared).into_iter().map(|n| (n, Vec::new())).collect()
        } else {
            by_node(names.iter().map(String::as_str), warnings)
        };
        let mut parameters = Vec::new();
        for (node, names) in wanted {
            match node_values(shared, &node, names) {
                Ok(values) => parameters.extend(values),
                Err(e) => warnings.push(format!("{node}: {e}")),
            }
        }
        id.map(|id| ParameterValues::new(parameters).with_id(id))
    });
}

/// Answers a `setParameters` (see the module docs).
pub(crate) fn set(
    shared: &Arc<Shared>,
    calls: &Arc<Calls>,
    parameters: Vec<Parameter>,
    id: Option<String>,
    answer: Answer,
) {
    off_the_async_threads(shared, calls, answer, move |shared, warnings| {
        let mut per_node: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
        for p in &parameters {
            let Some((node, name)) = split(&p.name) else {
                warnings.push(no_node(&p.name));
                continue;
            };
            match to_ros(p) {
                Ok(value) => per_node
                    .entry(node)
                    .or_default()
                    .push(json!({ "name": name, "value": value })),
                Err(e) => warnings.push(format!("{}: {e}", p.name)),
            }
        }
        let mut after = Vec::new();
        for (node, request) in per_node {
            let names: Vec<String> = request
                .iter()
                .filter_map(|p| p["name"].as_str().map(str::to_owned))
                .collect();
            match call(
                shared,
                node,
                "set_parameters",
                json!({ "parameters": request }),
            ) {
                Ok(response) => {
                    let results = response["results"].as_array().cloned().unwrap_or_default();
                    for (name, result) in names.iter().zip(results) {
                        if result["successful"] != true {
                            let reason = result["reason"].as_str().unwrap_or("no reason given");
                            warnings.push(format!("{node}.{name} was not set: {reason}"));
                        }
                    }
                }
                Err(e) => {
                    warnings.push(format!("{node}: {e}"));
                    continue;
                }
            }
            if id.is_some() {
                match node_values(shared, node, names) {
                    Ok(values) => after.extend(values),
                    Err(e) => warnings.push(format!("{node}: {e}")),
                }
            }
        }
        id.map(|id| ParameterValues::new(after).with_id(id))
    });
}

/// Runs `work` on a blocking thread, holding one of the client's places in flight (or
/// refusing at once when none is free); then answers each warning it gathered as a
/// warning status, and its `parameterValues`, if any.
fn off_the_async_threads(
    shared: &Arc<Shared>,
    calls: &Arc<Calls>,
    answer: Answer,
    work: impl FnOnce(&Shared, &mut Vec<String>) -> Option<ParameterValues> + Send + 'static,
) {
    let Some(entered) = calls.enter() else {
        return answer(busy());
    };
    let shared = shared.clone();
    tokio::task::spawn_blocking(move || {
        let mut warnings = Vec::new();
        let values = work(&shared, &mut warnings);
        drop(entered);
        for warning in warnings {
            answer(Message::from(&Status::warning(warning)));
        }
        if let Some(values) = values {
            answer(Message::from(&values));
        }
    });
}

/// Follows `/parameter_events` for the clients' parameter subscriptions (see the module
/// docs); the subscription lasts as long as what is returned.
pub(crate) fn follow_updates(shared: &Shared) -> Result<kairos_zenoh::interfaces::Held, String> {
    let ty = "rcl_interfaces/msg/ParameterEvent";
    let tool = kairos_zenoh::interfaces::message_by_name(ty)
        .ok_or_else(|| format!("kairos does not ship {ty}"))?;
    let hub: Weak<Hub> = Arc::downgrade(&shared.hub);
    tool.json_subscription(
        &shared.transport,
        &shared.node,
        kairos_zenoh::parameter_services::PARAMETER_EVENTS_TOPIC,
        kairos_zenoh::parameter_services::PARAMETER_EVENTS_QOS,
        Box::new(move |event| {
            if let Some(hub) = hub.upgrade() {
                hub.parameter_updates(&updates(&event));
            }
        }),
    )
    .map_err(|e| e.to_string())
}

/// The parameters a `rcl_interfaces/msg/ParameterEvent` (as JSON) announces, as the
/// protocol has them; a deleted one without value.
fn updates(event: &Value) -> Vec<Parameter> {
    let node = event["node"].as_str().unwrap_or_default();
    let list = |field: &str| event[field].as_array().cloned().unwrap_or_default();
    let name = |p: &Value| format!("{node}.{}", p["name"].as_str().unwrap_or_default());
    let mut out: Vec<Parameter> = list("new_parameters")
        .iter()
        .chain(&list("changed_parameters"))
        .map(|p| from_ros(&name(p), &p["value"]))
        .collect();
    out.extend(list("deleted_parameters").iter().map(|p| Parameter {
        name: name(p),
        r#type: None,
        value: None,
    }));
    out
}

fn busy() -> Message {
    Message::from(&Status::error(format!(
        "{} requests of this client are already waiting; ask again when one is answered",
        crate::service::CALLS_IN_FLIGHT
    )))
}

fn no_node(name: &str) -> String {
    format!("{name} names no node: a parameter is <node>.<name>, as /sensor.rate_hz")
}

/// `/ns/node.param.sub` as (`/ns/node`, `param.sub`): node names hold no `.`.
fn split(name: &str) -> Option<(&str, &str)> {
    let (node, parameter) = name.split_once('.')?;
    (node.starts_with('/') && node.len() > 1 && !parameter.is_empty()).then_some((node, parameter))
}

/// The names grouped by node (in order); a name without a node becomes a warning.
fn by_node<'a>(
    names: impl Iterator<Item = &'a str>,
    warnings: &mut Vec<String>,
) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for name in names {
        match split(name) {
            Some((node, parameter)) => out
                .entry(node.to_owned())
                .or_default()
                .push(parameter.to_owned()),
            None => warnings.push(no_node(name)),
        }
    }
    out
}

/// The nodes of the graph that serve their parameters, the bridge's own left out.
fn nodes(shared: &Shared) -> Vec<String> {
    let services: Vec<String> = shared
        .transport
        .graph()
        .tokens()
        .into_iter()
        .filter(|t| t.kind == EntityKind::Service)
        .filter_map(|t| t.endpoint.map(|e| e.name))
        .collect();
    let mut nodes: Vec<String> = services
        .iter()
        .filter_map(|s| s.strip_suffix("/get_parameters"))
        .filter(|n| {
            services
                .iter()
                .any(|s| s == &format!("{n}/list_parameters"))
        })
        .filter(|n| *n != shared.node.fully_qualified_name())
        .map(str::to_owned)
        .collect();
    nodes.sort();
    nodes.dedup();
    nodes
}

/// The parameters `names` of `node` (all of them when empty), as the protocol has them.
fn node_values(
    shared: &Shared,
    node: &str,
    mut names: Vec<String>,
) -> Result<Vec<Parameter>, String> {
    if names.is_empty() {
        let listed = call(shared, node, "list_parameters", json!({}))?;
        names = serde_json::from_value(listed["result"]["names"].clone()).unwrap_or_default();
    }
    let response = call(shared, node, "get_parameters", json!({ "names": names }))?;
    let values = response["values"].as_array().cloned().unwrap_or_default();
    Ok(names
        .iter()
        .zip(values)
        .map(|(name, value)| from_ros(&format!("{node}.{name}"), &value))
        .collect())
}

/// Calls `<node>/<service>` (an `rcl_interfaces` parameter service) with `request`.
fn call(shared: &Shared, node: &str, service: &str, request: Value) -> Result<Value, String> {
    let ty = match service {
        "get_parameters" => "rcl_interfaces/srv/GetParameters",
        "set_parameters" => "rcl_interfaces/srv/SetParameters",
        _ => "rcl_interfaces/srv/ListParameters",
    };
    let tool = kairos_zenoh::interfaces::service_by_name(ty)
        .ok_or_else(|| format!("kairos does not ship {ty}"))?;
    tool.call_json(
        &shared.transport,
        &shared.node,
        &format!("{node}/{service}"),
        request,
        kairos::time::Duration::from(PARAMETER_TIMEOUT),
    )
}

/// An `rcl_interfaces/msg/ParameterValue` (as JSON) as the protocol's parameter.
fn from_ros(name: &str, value: &Value) -> Parameter {
    let array = |field: &str, item: fn(&Value) -> Option<ParameterValue>| {
        value[field]
            .as_array()
            .map(|items| ParameterValue::Array(items.iter().filter_map(item).collect()))
    };
    let float = |v: &Value| v.as_f64().map(ParameterValue::Float64);
    let (r#type, value) = match value["type"].as_u64().unwrap_or(0) {
        1 => (
            None,
            value["bool_value"].as_bool().map(ParameterValue::Bool),
        ),
        2 => (
            None,
            value["integer_value"].as_i64().map(ParameterValue::Integer),
        ),
        3 => (Some(ParameterType::Float64), float(&value["double_value"])),
        4 => (
            None,
            value["string_value"]
                .as_str()
                .map(|s| ParameterValue::String(s.to_owned())),
        ),
        5 => {
            let bytes: Vec<u8> =
                serde_json::from_value(value["byte_array_value"].clone()).unwrap_or_default();
            return Parameter::byte_array(name, &bytes);
        }
        6 => (
            None,
            array("bool_array_value", |v| {
                v.as_bool().map(ParameterValue::Bool)
            }),
        ),
        7 => (
            None,
            array("integer_array_value", |v| {
                v.as_i64().map(ParameterValue::Integer)
            }),
        ),
        8 => (
            Some(ParameterType::Float64Array),
            array("double_array_value", |v| {
                v.as_f64().map(ParameterValue::Float64)
            }),
        ),
        9 => (
            None,
            array("string_array_value", |v| {
                v.as_str().map(|s| ParameterValue::String(s.to_owned()))
            }),
        ),
        _ => (None, None),
    };
    Parameter {
        name: name.to_owned(),
        r#type,
        value,
    }
}

/// The protocol's parameter as an `rcl_interfaces/msg/ParameterValue` (as JSON).
fn to_ros(p: &Parameter) -> Result<Value, String> {
    use ParameterValue as V;
    let Some(value) = &p.value else {
        return Ok(json!({ "type": 0 }));
    };
    let float = |v: &V| match v {
        V::Float64(f) => Some(*f),
        V::Integer(i) => Some(*i as f64),
        _ => None,
    };
    Ok(match (value, p.r#type) {
        (V::String(_), Some(ParameterType::ByteArray)) => {
            let bytes = p.decode_byte_array().map_err(|e| e.to_string())?;
            json!({ "type": 5, "byte_array_value": bytes })
        }
        (V::Integer(i), None) => json!({ "type": 2, "integer_value": i }),
        (V::Integer(_) | V::Float64(_), _) => {
            json!({ "type": 3, "double_value": float(value) })
        }
        (V::Bool(b), _) => json!({ "type": 1, "bool_value": b }),
        (V::String(s), _) => json!({ "type": 4, "string_value": s }),
        (V::Array(items), kind) => {
            let all = |f: fn(&V) -> bool| !items.is_empty() && items.iter().all(f);
            if kind == Some(ParameterType::Float64Array)
                || all(|v| matches!(v, V::Float64(_) | V::Integer(_)))
                    && items.iter().any(|v| matches!(v, V::Float64(_)))
            {
                let values: Option<Vec<f64>> = items.iter().map(float).collect();
                let values = values.ok_or("a float64 array holds only numbers")?;
                json!({ "type": 8, "double_array_value": values })
            } else if all(|v| matches!(v, V::Integer(_))) {
                let values: Vec<i64> = items
                    .iter()
                    .filter_map(|v| {
                        if let V::Integer(i) = v {
                            Some(*i)
                        } else {
                            None
                        }
                    })
                    .collect();
                json!({ "type": 7, "integer_array_value": values })
            } else if all(|v| matches!(v, V::Bool(_))) {
                let values: Vec<bool> = items
                    .iter()
                    .filter_map(|v| if let V::Bool(b) = v { Some(*b) } else { None })
                    .collect();
                json!({ "type": 6, "bool_array_value": values })
            } else if all(|v| matches!(v, V::String(_))) {
                let values: Vec<&str> = items
                    .iter()
                    .filter_map(|v| {
                        if let V::String(s) = v {
                            Some(s.as_str())
                        } else {
                            None
                        }
                    })
                    .collect();
                json!({ "type": 9, "string_array_value": values })
            } else {
                return Err("a ROS 2 parameter array is all booleans, integers, doubles or strings, and not empty".into());
            }
        }
        (V::Dict(_), _) => return Err("a ROS 2 parameter cannot hold a dictionary".into()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_a_node_and_a_parameter() {
        assert_eq!(split("/sensor.rate_hz"), Some(("/sensor", "rate_hz")));
        assert_eq!(split("/ns/arm.limits.max"), Some(("/ns/arm", "limits.max")));
        for bad in ["rate_hz", "/sensor", "/.x", "sensor.rate_hz", "/sensor."] {
            assert_eq!(split(bad), None, "{bad}");
        }
    }

    #[test]
    fn values_cross_both_ways_keeping_their_ros_type() {
        let ros = [
            json!({"type": 1, "bool_value": true}),
            json!({"type": 2, "integer_value": 7}),
            json!({"type": 3, "double_value": 1.0}),
            json!({"type": 4, "string_value": "map"}),
            json!({"type": 5, "byte_array_value": [0, 255, 3]}),
            json!({"type": 6, "bool_array_value": [true, false]}),
            json!({"type": 7, "integer_array_value": [1, -2]}),
            json!({"type": 8, "double_array_value": [1.0, 2.5]}),
            json!({"type": 9, "string_array_value": ["a", "b"]}),
        ];
        for value in ros {
            let parameter = from_ros("/n.p", &value);
            assert_eq!(parameter.name, "/n.p");
            // Through the protocol's JSON, as a client sends it back.
            let text = serde_json::to_string(&parameter).unwrap();
            let back: Parameter = serde_json::from_str(&text).unwrap();
            assert_eq!(to_ros(&back).unwrap(), value, "{text}");
        }
    }

    #[test]
    fn an_event_announces_its_nodes_parameters_deleted_ones_without_value() {
        let event = json!({
            "node": "/sensor",
            "new_parameters": [{"name": "a", "value": {"type": 2, "integer_value": 1}}],
            "changed_parameters": [{"name": "b", "value": {"type": 4, "string_value": "x"}}],
            "deleted_parameters": [{"name": "c", "value": {"type": 0}}],
        });
        let names: Vec<(String, Option<ParameterValue>)> = updates(&event)
            .into_iter()
            .map(|p| (p.name, p.value))
            .collect();
        assert_eq!(
            names,
            [
                ("/sensor.a".to_owned(), Some(ParameterValue::Integer(1))),
                (
                    "/sensor.b".to_owned(),
                    Some(ParameterValue::String("x".into()))
                ),
                ("/sensor.c".to_owned(), None),
            ]
        );
    }

    #[test]
    fn what_a_ros_2_parameter_cannot_hold_is_refused() {
        let refused = |value| {
            to_ros(&Parameter {
                name: "/n.p".into(),
                r#type: None,
                value: Some(value),
            })
        };
        assert!(refused(ParameterValue::Dict(BTreeMap::new())).is_err());
        assert!(refused(ParameterValue::Array(vec![])).is_err());
        let mixed = vec![
            ParameterValue::Bool(true),
            ParameterValue::String("x".into()),
        ];
        assert!(refused(ParameterValue::Array(mixed)).is_err());
        assert_eq!(
            to_ros(&Parameter {
                name: "/n.p".into(),
                r#type: None,
                value: None
            })
            .unwrap(),
            json!({"type": 0})
        );
    }
}
