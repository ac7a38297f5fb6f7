//! The graph as a node sees it, for `kairos.node`'s rclpy graph API (`get_*_names_and_types`,
//! `count_*`, `get_*_info_by_topic`, `wait_for_node`): the Rust [`GraphView`] as plain
//! tuples, which the Python layer shapes as rclpy does.

use crate::env::FOREVER;
use crate::errors::graph_error;
use crate::node::NodeCore;
use crate::time::duration_arg;
use kairos::graph::{
    Durability, EntityKind, GraphEntity, GraphView, History, Liveliness, NameKind, Reliability,
    resolve,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// (history, depth, reliability, durability, deadline ns, lifespan ns, liveliness, lease
/// ns), with rclpy's policy numbers; a duration not set is 0 (rclpy's default).
type QosTuple = (u8, usize, u8, u8, i64, i64, u8, i64);
/// (kind, node name, node namespace, name, type, QoS, local, type hash).
type EntityTuple = (
    &'static str,
    String,
    String,
    String,
    String,
    Option<QosTuple>,
    bool,
    String,
);

fn kind_name(kind: EntityKind) -> &'static str {
    match kind {
        EntityKind::Node => "node",
        EntityKind::Publisher => "publisher",
        EntityKind::Subscription => "subscription",
        EntityKind::Service => "service",
        EntityKind::Client => "client",
    }
}

fn entity_tuple(entity: &GraphEntity) -> EntityTuple {
    let qos = entity.qos.map(|qos| {
        let (history, depth) = match qos.history {
            History::KeepLast(depth) => (1, depth),
            History::KeepAll { bound } => (2, bound),
        };
        let reliability = match qos.reliability {
            Reliability::Reliable => 1,
            Reliability::BestEffort => 2,
        };
        let durability = match qos.durability {
            Durability::TransientLocal => 1,
            Durability::Volatile => 2,
        };
        let ns = |d: Option<kairos::time::Duration>| d.map_or(0, |d| d.as_nanos());
        let liveliness = match qos.liveliness {
            Liveliness::Automatic => 1,
            Liveliness::ManualByTopic => 3,
        };
        (
            history,
            depth,
            reliability,
            durability,
            ns(qos.deadline),
            ns(qos.lifespan),
            liveliness,
            ns(qos.liveliness_lease),
        )
    });
    (
        kind_name(entity.kind),
        entity.node_name.clone(),
        entity.node_namespace.clone(),
        entity.name.clone(),
        entity.type_name.clone(),
        qos,
        entity.local,
        entity.type_hash.clone(),
    )
}

fn tuples(view: &GraphView) -> Vec<EntityTuple> {
    view.entities().iter().map(entity_tuple).collect()
}

/// Every entity `node` sees now.
#[pyfunction]
pub fn graph_entities(node: &NodeCore) -> Vec<EntityTuple> {
    tuples(&node.node.graph())
}

/// `name` expanded for `node` (relative and private names; `remap` also applies the
/// node's remapping rules); a `ValueError` saying what is wrong with a bad name.
#[pyfunction]
#[pyo3(signature = (node, name, is_service = false, remap = false))]
pub fn expand_name(node: &NodeCore, name: &str, is_service: bool, remap: bool) -> PyResult<String> {
    let kind = if is_service {
        NameKind::Service
    } else {
        NameKind::Topic
    };
    if remap {
        return node.node.resolve_name(kind, name).map_err(graph_error);
    }
    resolve(kind, name, node.node.namespace(), node.node.name()).map_err(|e| {
        PyValueError::new_err(format!(
            "{} name '{}' is invalid: {}",
            e.kind, e.name, e.reason
        ))
    })
}

/// Waits (without the GIL) until node `name` is in the graph; false after `timeout_sec`
/// (none or negative: no timeout) or at shutdown.
#[pyfunction]
#[pyo3(signature = (node, name, timeout_sec = None))]
pub fn wait_for_node(
    py: Python<'_>,
    node: &NodeCore,
    name: &str,
    timeout_sec: Option<&Bound<'_, PyAny>>,
) -> PyResult<bool> {
    let timeout = match timeout_sec {
        Some(t) if !t.is_none() => match t.extract::<f64>() {
            Ok(secs) if secs < 0.0 => FOREVER,
            _ => duration_arg(t)?,
        },
        _ => FOREVER,
    };
    let node = node.node.clone();
    py.allow_threads(move || node.wait_for_node(name, timeout))
        .map_err(graph_error)
}
