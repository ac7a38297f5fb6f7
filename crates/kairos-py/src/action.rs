//! What Python's actions (`kairos.action`) take from `kairos-action` beside the server
//! itself (`action_server.rs`): the goal state machine (which status may follow which), a
//! goal id's text, and the trace of a goal's steps, which Python's action client records
//! on its own services and topics.

use crate::node::NodeCore;
use kairos_action::{GoalId, GoalStatus};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Whether a goal in status `from` may move to `to` (`action_msgs/msg/GoalStatus` codes):
/// [`GoalStatus::can_become`], the machine Rust servers run.
#[pyfunction]
fn goal_can_become(from: i8, to: i8) -> bool {
    GoalStatus::from_code(from).can_become(GoalStatus::from_code(to))
}

/// Whether status `code` is one a goal ends in (succeeded, canceled or aborted).
#[pyfunction]
fn goal_is_terminal(code: i8) -> bool {
    GoalStatus::from_code(code).is_terminal()
}

/// A goal id's 16 bytes as the canonical UUID text (`8-4-4-4-12` hex digits), as Rust
/// servers and clients print and trace it.
#[pyfunction]
fn goal_id_text(uuid: Vec<u8>) -> PyResult<String> {
    let bytes: [u8; 16] = uuid.as_slice().try_into().map_err(|_| {
        PyValueError::new_err(format!(
            "a goal id is 16 bytes (unique_identifier_msgs/UUID), not {}",
            uuid.len()
        ))
    })?;
    Ok(GoalId(bytes).to_string())
}

/// Declares an action server (`server`) or client of `name` on `node` in the trace, and
/// returns the handle its goal steps name ([`trace_goal`]); the same events as
/// `kairos-action` records, so `kairos trace goals` reads Python and Rust actions alike.
#[pyfunction]
fn trace_action(node: &NodeCore, name: &str, server: bool) -> u64 {
    let handle = kairos::trace::next_handle();
    let node = node.node.trace_handle();
    if server {
        kairos::trace::tp::action_server_init(handle, node, name);
    } else {
        kairos::trace::tp::action_client_init(handle, node, name);
    }
    handle
}

/// Records step `event` of goal `goal_id` (UUID text) at the action server or client
/// `handle`, with the goal's status code after it (`kairos:goal`).
#[pyfunction]
fn trace_goal(handle: u64, goal_id: &str, event: &str, status: i32) {
    kairos::trace::tp::goal(handle, goal_id, event, status);
}

/// Adds this module's functions to `_kairos`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(goal_can_become, m)?)?;
    m.add_function(wrap_pyfunction!(goal_is_terminal, m)?)?;
    m.add_function(wrap_pyfunction!(goal_id_text, m)?)?;
    m.add_function(wrap_pyfunction!(trace_action, m)?)?;
    m.add_function(wrap_pyfunction!(trace_goal, m)?)?;
    Ok(())
}
