//! What Python's actions (`kairos.action`) take from `kairos-action` beside the server and
//! client themselves (`action_server.rs`, `action_client.rs`): the goal state machine
//! (which status may follow which) and a goal id's text.

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

/// Adds this module's functions to `_kairos`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(goal_can_become, m)?)?;
    m.add_function(wrap_pyfunction!(goal_is_terminal, m)?)?;
    m.add_function(wrap_pyfunction!(goal_id_text, m)?)?;
    Ok(())
}
