//! ROS 2's parameter services for a kairos node, so `ros2 param` (or `kairos param`) in
//! another process lists, reads, describes and sets its parameters.
//!
//! What this module promises: [`serve`] creates, on the node, the services rclcpp creates
//! for every node, with rcl_interfaces' types and names (`<node>/list_parameters`,
//! `get_parameters`, `set_parameters`, `describe_parameters`, `get_parameter_types`), and
//! every change of the node's [`Parameters`] (declare, set, undeclare) is published on
//! `/parameter_events` as `rcl_interfaces/msg/ParameterEvent` (one event listing every
//! parameter declared so far is published when serving starts, for whoever listens
//! already). Each request is answered from the node's table and follows its rules
//! (types, read-only, ranges): a refused set is reported in its `SetParametersResult`
//! with the reason, and changes nothing. [`on_parameter_events`] and [`watch_parameter`]
//! are the listening side, as rclcpp's `ParameterEventHandler`.

use kairos::graph::{
    GraphError, Node, ParameterEvent, ParameterType, ParameterValue, Parameters, Publisher, Qos,
    Service, Subscription,
};
use kairos_msgs::rcl_interfaces::msg as rcl;
use kairos_msgs::rcl_interfaces::srv;
use std::sync::Arc;

/// The parameter services of one node; dropping it withdraws them.
#[derive(Debug)]
pub struct ParameterServices {
    _list: Service<srv::ListParametersRequest, srv::ListParametersResponse>,
    _get: Service<srv::GetParametersRequest, srv::GetParametersResponse>,
    _set: Service<srv::SetParametersRequest, srv::SetParametersResponse>,
    _describe: Service<srv::DescribeParametersRequest, srv::DescribeParametersResponse>,
    _types: Service<srv::GetParameterTypesRequest, srv::GetParameterTypesResponse>,
    /// The `/parameter_events` publisher; the table's listener holds it weakly, so
    /// events stop with the services.
    _events: Arc<Publisher<rcl::ParameterEvent>>,
}

/// The topic parameter changes are published on.
pub const PARAMETER_EVENTS_TOPIC: &str = "/parameter_events";

/// The QoS of `/parameter_events` (rcl's: reliable, volatile, the last 1000).
pub const PARAMETER_EVENTS_QOS: Qos = Qos::keep_last(1000);

/// `event` as `rcl_interfaces/msg/ParameterEvent`, stamped now (system time).
pub fn event_to_ros(event: &ParameterEvent) -> rcl::ParameterEvent {
    let now = kairos::time::Clock::system().now().nanos();
    let parameters = |list: &[(String, ParameterValue)]| {
        list.iter()
            .map(|(name, value)| rcl::Parameter {
                name: name.clone(),
                value: to_ros(value),
            })
            .collect()
    };
    rcl::ParameterEvent {
        stamp: kairos_msgs::builtin_interfaces::msg::Time {
            sec: i32::try_from(now.div_euclid(1_000_000_000)).unwrap_or(i32::MAX),
            nanosec: now.rem_euclid(1_000_000_000) as u32,
        },
        node: event.node.clone(),
        new_parameters: parameters(&event.new),
        changed_parameters: parameters(&event.changed),
        deleted_parameters: parameters(&event.deleted),
    }
}

/// Calls `callback` with every `/parameter_events` message `node` hears (from every node,
/// in this process and others), on `node`'s executor.
pub fn on_parameter_events(
    node: &Node,
    callback: impl Fn(&rcl::ParameterEvent) + Send + Sync + 'static,
) -> Result<Subscription<rcl::ParameterEvent>, GraphError> {
    node.create_subscription(
        PARAMETER_EVENTS_TOPIC,
        PARAMETER_EVENTS_QOS,
        move |event: &rcl::ParameterEvent| callback(event),
    )
}

/// Calls `callback` with each new value of parameter `name` of node `of_node` (fully
/// qualified): declared, set, or `NotSet` when undeclared. A value that does not convert
/// (an unknown type number) is skipped.
pub fn watch_parameter(
    node: &Node,
    of_node: &str,
    name: &str,
    callback: impl Fn(ParameterValue) + Send + Sync + 'static,
) -> Result<Subscription<rcl::ParameterEvent>, GraphError> {
    let (of_node, name) = (of_node.to_owned(), name.to_owned());
    on_parameter_events(node, move |event| {
        if event.node != of_node {
            return;
        }
        let values = event
            .new_parameters
            .iter()
            .chain(&event.changed_parameters)
            .filter(|p| p.name == name)
            .filter_map(|p| from_ros(&p.value).ok());
        for value in values {
            callback(value);
        }
        if event.deleted_parameters.iter().any(|p| p.name == name) {
            callback(ParameterValue::NotSet);
        }
    })
}

/// Serves `parameters` as `node`'s ROS 2 parameter services.
pub fn serve(node: &Node, parameters: &Parameters) -> Result<ParameterServices, GraphError> {
    let p = parameters.clone();
    let list = node.create_service("~/list_parameters", move |r: srv::ListParametersRequest| {
        srv::ListParametersResponse {
            result: list(&p.names(), &r.prefixes, r.depth),
        }
    })?;
    let p = parameters.clone();
    let get = node.create_service("~/get_parameters", move |r: srv::GetParametersRequest| {
        srv::GetParametersResponse {
            values: r
                .names
                .iter()
                .map(|n| to_ros(&p.get(n).unwrap_or(ParameterValue::NotSet)))
                .collect(),
        }
    })?;
    let p = parameters.clone();
    let set = node.create_service("~/set_parameters", move |r: srv::SetParametersRequest| {
        srv::SetParametersResponse {
            results: r
                .parameters
                .iter()
                .map(|parameter| match from_ros(&parameter.value) {
                    Err(reason) => refused(reason),
                    Ok(value) => match p.set(&parameter.name, value) {
                        Ok(()) => rcl::SetParametersResult {
                            successful: true,
                            reason: String::new(),
                        },
                        Err(e) => refused(e.to_string()),
                    },
                })
                .collect(),
        }
    })?;
    let p = parameters.clone();
    let describe = node.create_service(
        "~/describe_parameters",
        move |r: srv::DescribeParametersRequest| srv::DescribeParametersResponse {
            descriptors: r.names.iter().map(|n| describe(&p, n)).collect(),
        },
    )?;
    let p = parameters.clone();
    let types = node.create_service(
        "~/get_parameter_types",
        move |r: srv::GetParameterTypesRequest| srv::GetParameterTypesResponse {
            types: r
                .names
                .iter()
                .map(|n| p.get(n).map_or(ParameterType::NotSet, |v| v.kind()) as u8)
                .collect(),
        },
    )?;
    let events = Arc::new(
        node.create_publisher::<rcl::ParameterEvent>(PARAMETER_EVENTS_TOPIC, PARAMETER_EVENTS_QOS)?,
    );
    let declared: Vec<(String, ParameterValue)> = parameters
        .names()
        .into_iter()
        .filter_map(|name| parameters.get(&name).ok().map(|v| (name, v)))
        .collect();
    events.publish(event_to_ros(&ParameterEvent {
        node: node.fully_qualified_name().to_owned(),
        new: declared,
        changed: Vec::new(),
        deleted: Vec::new(),
    }));
    let publisher = Arc::downgrade(&events);
    parameters.on_event(move |event| {
        if let Some(publisher) = publisher.upgrade() {
            publisher.publish(event_to_ros(event));
        }
    });
    Ok(ParameterServices {
        _list: list,
        _get: get,
        _set: set,
        _describe: describe,
        _types: types,
        _events: events,
    })
}

fn refused(reason: String) -> rcl::SetParametersResult {
    rcl::SetParametersResult {
        successful: false,
        reason,
    }
}

fn describe(parameters: &Parameters, name: &str) -> rcl::ParameterDescriptor {
    let kind = parameters
        .get(name)
        .map_or(ParameterType::NotSet, |v| v.kind());
    let descriptor = parameters.describe(name).unwrap_or_default();
    rcl::ParameterDescriptor {
        name: name.to_owned(),
        r#type: kind as u8,
        description: descriptor.description,
        additional_constraints: descriptor.additional_constraints,
        read_only: descriptor.read_only,
        dynamic_typing: descriptor.dynamic_typing,
        integer_range: descriptor
            .integer_range
            .map(|r| rcl::IntegerRange {
                from_value: r.from,
                to_value: r.to,
                step: r.step,
            })
            .into_iter()
            .collect(),
        floating_point_range: descriptor
            .floating_point_range
            .map(|r| rcl::FloatingPointRange {
                from_value: r.from,
                to_value: r.to,
                step: r.step,
            })
            .into_iter()
            .collect(),
    }
}

/// rcl's `list_parameters`: names under the prefixes (all with none), at most `depth`
/// dot-separated levels below them (any depth with 0), and the prefixes of those names.
fn list(names: &[String], prefixes: &[String], depth: u64) -> rcl::ListParametersResult {
    let within = |rest: &str| depth == 0 || (rest.matches('.').count() as u64) < depth;
    let mut result = rcl::ListParametersResult::default();
    for name in names {
        let matched = if prefixes.is_empty() {
            within(name)
        } else {
            prefixes.iter().any(|prefix| {
                name == prefix
                    || name
                        .strip_prefix(prefix.as_str())
                        .and_then(|r| r.strip_prefix('.'))
                        .is_some_and(within)
            })
        };
        if matched {
            result.names.push(name.clone());
            if let Some((prefix, _)) = name.rsplit_once('.')
                && !result.prefixes.iter().any(|p| p == prefix)
            {
                result.prefixes.push(prefix.to_owned());
            }
        }
    }
    result
}

/// A kairos value as `rcl_interfaces/msg/ParameterValue`.
pub fn to_ros(value: &ParameterValue) -> rcl::ParameterValue {
    let mut ros = rcl::ParameterValue {
        r#type: value.kind() as u8,
        ..Default::default()
    };
    match value {
        ParameterValue::NotSet => {}
        ParameterValue::Bool(v) => ros.bool_value = *v,
        ParameterValue::Integer(v) => ros.integer_value = *v,
        ParameterValue::Double(v) => ros.double_value = *v,
        ParameterValue::String(v) => ros.string_value = v.clone(),
        ParameterValue::ByteArray(v) => ros.byte_array_value = v.clone().into(),
        ParameterValue::BoolArray(v) => ros.bool_array_value = v.clone(),
        ParameterValue::IntegerArray(v) => ros.integer_array_value = v.clone(),
        ParameterValue::DoubleArray(v) => ros.double_array_value = v.clone(),
        ParameterValue::StringArray(v) => ros.string_array_value = v.clone(),
    }
    ros
}

/// An `rcl_interfaces/msg/ParameterValue` as a kairos value; an unknown type number is an
/// error naming it.
pub fn from_ros(ros: &rcl::ParameterValue) -> Result<ParameterValue, String> {
    use rcl::ParameterType as T;
    Ok(match ros.r#type {
        T::PARAMETER_NOT_SET => ParameterValue::NotSet,
        T::PARAMETER_BOOL => ParameterValue::Bool(ros.bool_value),
        T::PARAMETER_INTEGER => ParameterValue::Integer(ros.integer_value),
        T::PARAMETER_DOUBLE => ParameterValue::Double(ros.double_value),
        T::PARAMETER_STRING => ParameterValue::String(ros.string_value.clone()),
        T::PARAMETER_BYTE_ARRAY => ParameterValue::ByteArray(ros.byte_array_value.to_vec()),
        T::PARAMETER_BOOL_ARRAY => ParameterValue::BoolArray(ros.bool_array_value.clone()),
        T::PARAMETER_INTEGER_ARRAY => ParameterValue::IntegerArray(ros.integer_array_value.clone()),
        T::PARAMETER_DOUBLE_ARRAY => ParameterValue::DoubleArray(ros.double_array_value.clone()),
        T::PARAMETER_STRING_ARRAY => ParameterValue::StringArray(ros.string_array_value.clone()),
        other => return Err(format!("{other} is not an rcl_interfaces ParameterType")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_convert_both_ways_with_rcl_type_numbers() {
        for value in [
            ParameterValue::NotSet,
            ParameterValue::Bool(true),
            ParameterValue::Integer(-4),
            ParameterValue::Double(2.5),
            ParameterValue::String("x".into()),
            ParameterValue::ByteArray(vec![1, 2]),
            ParameterValue::BoolArray(vec![true]),
            ParameterValue::IntegerArray(vec![1, 2]),
            ParameterValue::DoubleArray(vec![0.5]),
            ParameterValue::StringArray(vec!["a".into()]),
        ] {
            let ros = to_ros(&value);
            assert_eq!(ros.r#type, value.kind() as u8);
            assert_eq!(from_ros(&ros).unwrap(), value);
        }
        assert_eq!(
            to_ros(&ParameterValue::Double(1.0)).r#type,
            rcl::ParameterType::PARAMETER_DOUBLE
        );
        let bad = rcl::ParameterValue {
            r#type: 42,
            ..Default::default()
        };
        assert!(from_ros(&bad).unwrap_err().contains("42"));
    }

    #[test]
    fn list_follows_prefixes_and_depth() {
        let names: Vec<String> = ["a", "b.c", "b.d.e", "use_sim_time"]
            .map(String::from)
            .into();
        assert_eq!(list(&names, &[], 0).names, names);
        assert_eq!(list(&names, &[], 1).names, ["a", "use_sim_time"]);
        let under_b = list(&names, &["b".into()], 1);
        assert_eq!(under_b.names, ["b.c"]);
        assert_eq!(under_b.prefixes, ["b"]);
        assert_eq!(list(&names, &["b".into()], 0).names, ["b.c", "b.d.e"]);
    }
}
