//! Python exceptions for kairos errors: the message is the Rust error's, word for word.

use kairos::exec::ExecError;
use kairos::graph::{CallError as RustCallError, GraphError};
use kairos::time::WaitError;
use pyo3::PyErr;
use pyo3::Python;
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyTimeoutError, PyValueError};
use pyo3::types::PyAnyMethods;

create_exception!(
    kairos,
    WouldDeadlock,
    PyRuntimeError,
    "A blocking wait that could never complete (a `call()` whose service is in the group the caller holds, a nested spin, ...), raised at once instead of hanging. The message names the group and the fix."
);
create_exception!(
    kairos,
    CallError,
    PyRuntimeError,
    "A service call that got no response (no server, the server failed, the executor shut down)."
);
create_exception!(
    kairos,
    ExecutorError,
    PyRuntimeError,
    "An executor that cannot do what was asked (already spinning, shut down, node already added elsewhere)."
);
create_exception!(
    kairos,
    WaitCancelled,
    PyRuntimeError,
    "A sleep or wait ended early because the executor or kairos shut down (never because time ran early)."
);

create_exception!(
    kairos,
    ClockStalled,
    PyRuntimeError,
    "A wait on simulation time whose source (`/clock`) fell silent, under the stall policy `fail`: the message says since when and how to choose another policy."
);

pub(crate) fn call_error(err: RustCallError) -> PyErr {
    match err {
        RustCallError::WouldDeadlock(w) => would_deadlock_call(&w),
        RustCallError::Timeout { .. } => PyTimeoutError::new_err(err.to_string()),
        other => CallError::new_err(other.to_string()),
    }
}

/// A call's `WouldDeadlock`, with `request_sent`: whether the server already has the
/// request (True: it still runs it, its response counted in the client's late responses),
/// as the message says.
fn would_deadlock_call(w: &kairos::exec::WouldDeadlock) -> PyErr {
    let err = WouldDeadlock::new_err(w.to_string());
    Python::with_gil(|py| {
        let sent = w.request_sent();
        // An attribute on a fresh exception instance: setting it cannot fail but for memory.
        let _ = err.value(py).setattr("request_sent", sent);
    });
    err
}

pub(crate) fn exec_error(err: ExecError) -> PyErr {
    match err {
        ExecError::WouldDeadlock(w) => WouldDeadlock::new_err(w.to_string()),
        ExecError::Timeout { .. } => PyTimeoutError::new_err(err.to_string()),
        other => ExecutorError::new_err(other.to_string()),
    }
}

pub(crate) fn graph_error(err: GraphError) -> PyErr {
    PyValueError::new_err(err.to_string())
}

pub(crate) fn wait_error(err: WaitError) -> PyErr {
    match err {
        WaitError::Stalled { .. } => ClockStalled::new_err(err.to_string()),
        other => WaitCancelled::new_err(other.to_string()),
    }
}
