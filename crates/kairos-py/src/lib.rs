//! kairos for Python: the native module `kairos._kairos` under the `kairos` package.
//!
//! The Python package (`python/kairos`) gives rclpy's shapes (`kairos.init`, `Node`,
//! executors, callback groups, `spin*`); this crate gives them kairos's engine: every node,
//! entity, executor, clock and future here is the Rust one, so the promises hold as they do
//! in Rust (impossible waits raise `WouldDeadlock` at once, sleeps are never early and wake
//! on shutdown, shutdown returns by its deadline with a report). Python callbacks run with
//! the GIL; threads that wait never hold it.
//!
//! Modules, each using only those listed before it: `convert` (Python messages to Rust
//! ones and back), `errors`, `env` (where callbacks' exceptions go), `session` (the
//! shutdown token and the transport), `future` (futures and `async def` callbacks), `time`
//! (clocks and sleeps), `typed` (the Rust entities per message type), `action_server` and
//! `action_client` (kairos-action's server and client per action type, behind
//! `kairos.action.ActionServer` and `ActionClient`), `msg` (the
//! interfaces of kairos-msgs, by name), `node` (nodes and entities), `rust_node`,
//! `executor`, `tf2` (the transform buffer behind `tf2_py` and `tf2_ros`), `bag` (kairos-bag
//! behind `rosbag2_py`), `action` (kairos-action's goal state machine and ids for
//! `kairos.action`).

#![warn(missing_docs)]

mod action;
mod action_client;
mod action_server;
mod bag;
mod convert;
mod env;
mod errors;
mod executor;
mod future;
mod graph;
mod lifecycle;
mod msg;
mod node;
mod qos_status;
mod rust_node;
mod session;
mod tf2;
mod time;
mod typed;

use pyo3::prelude::*;

/// `kairos.init()`: the transport the environment asks for, and a fresh shutdown token.
#[pyfunction]
fn init() -> PyResult<()> {
    session::init_transport()?;
    session::renew_shutdown_token();
    Ok(())
}

/// `kairos.shutdown()`: wakes every sleep, shuts down every executor Python made within
/// `timeout_sec` each, and returns their reports.
#[pyfunction]
#[pyo3(signature = (timeout_sec = 1.0))]
fn shutdown(py: Python<'_>, timeout_sec: f64) -> PyResult<Vec<executor::PyShutdownReport>> {
    let deadline = time::duration_arg(&timeout_sec.into_pyobject(py)?.into_any())?;
    session::shutdown_token().cancel();
    Ok(executor::shutdown_all(py, deadline))
}

/// Whether kairos runs: not shut down by `kairos.shutdown()` or by a signal.
#[pyfunction]
fn ok() -> bool {
    !kairos::signal::shutdown_requested() && !session::shutdown_token().is_cancelled()
}

/// rcutils' severity numbers (10 debug, 20 info, 30 warn, 40 error, 50 fatal) as kairos's.
pub(crate) fn severity(number: u8) -> kairos::logging::Severity {
    use kairos::logging::Severity;
    match number {
        0..=10 => Severity::Debug,
        11..=20 => Severity::Info,
        21..=30 => Severity::Warn,
        31..=40 => Severity::Error,
        _ => Severity::Fatal,
    }
}

/// Sets the level of the loggers named `name` (rcutils' number; 0 unsets it, so the
/// nearest ancestor's applies); `""` is the default level, where 0 logs everything.
#[pyfunction]
fn set_logger_level(name: &str, level: u8) {
    use kairos::logging::levels;
    match (name.is_empty(), level) {
        (true, 0) => levels::set_default_level(kairos::logging::Severity::Debug),
        (true, level) => levels::set_default_level(severity(level)),
        (false, 0) => levels::set_logger_level(name, None),
        (false, level) => levels::set_logger_level(name, Some(severity(level))),
    }
}

/// The level set for `name` itself (0: none); `""`: the default level.
#[pyfunction]
fn logger_level(name: &str) -> u8 {
    use kairos::logging::levels;
    if name.is_empty() {
        levels::default_level() as u8
    } else {
        levels::logger_level(name).map_or(0, |level| level as u8)
    }
}

/// The level lines of logger `name` are filtered at; `""`: the default level.
#[pyfunction]
fn logger_effective_level(name: &str) -> u8 {
    use kairos::logging::levels;
    if name.is_empty() {
        levels::default_level() as u8
    } else {
        levels::effective_level(name) as u8
    }
}

/// Forgets every logger level and puts the default back to INFO (rcutils' clear config).
#[pyfunction]
fn clear_logger_levels() {
    kairos::logging::levels::clear();
}

/// Logs `message` at `severity` with the logger `name`, which no node owns
/// (`rclpy.logging.get_logger`): the console and the trace, not `/rosout`.
#[pyfunction]
fn log(severity: u8, name: &str, message: &str, file: &str, line: u32) {
    kairos::logging::Logger::new(name).log(self::severity(severity), message, file, line);
}

/// Whether a trace session records: Python skips formatting a goal's id when none does.
#[pyfunction]
fn tracing() -> bool {
    kairos::trace::tp::enabled()
}

/// The steady clock in nanoseconds (kairos's monotonic clock), for measurements.
#[pyfunction]
fn steady_ns() -> i64 {
    time::steady_now_ns()
}

#[pymodule]
fn _kairos(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("WouldDeadlock", py.get_type::<errors::WouldDeadlock>())?;
    m.add("CallError", py.get_type::<errors::CallError>())?;
    m.add("ExecutorError", py.get_type::<errors::ExecutorError>())?;
    m.add("WaitCancelled", py.get_type::<errors::WaitCancelled>())?;
    m.add("ClockStalled", py.get_type::<errors::ClockStalled>())?;
    m.add_class::<node::NodeCore>()?;
    m.add_class::<node::PyGroup>()?;
    m.add_class::<node::PyPublisher>()?;
    m.add_class::<node::PySubscription>()?;
    m.add_class::<node::PyTimer>()?;
    m.add_class::<node::PyGuardCondition>()?;
    m.add_class::<lifecycle::PyLifecycle>()?;
    m.add_class::<lifecycle::PyActivation>()?;
    m.add_class::<node::PyService>()?;
    m.add_class::<node::PyClient>()?;
    m.add_class::<future::PyFuture>()?;
    m.add_class::<executor::PyExecutor>()?;
    m.add_class::<executor::PyShutdownReport>()?;
    m.add_class::<executor::PyReadyCallback>()?;
    m.add_class::<time::PyClock>()?;
    m.add_class::<time::PyTime>()?;
    m.add_class::<time::PyCancel>()?;
    m.add_class::<rust_node::RustEchoNode>()?;
    m.add_class::<rust_node::RustRelay>()?;
    tf2::register(m)?;
    bag::register(m)?;
    action::register(m)?;
    action_server::register(m)?;
    action_client::register(m)?;
    m.add_function(wrap_pyfunction!(msg::interfaces, m)?)?;
    m.add_function(wrap_pyfunction!(msg::serialize_message, m)?)?;
    m.add_function(wrap_pyfunction!(msg::deserialize_message, m)?)?;
    m.add_function(wrap_pyfunction!(graph::graph_entities, m)?)?;
    m.add_function(wrap_pyfunction!(graph::expand_name, m)?)?;
    m.add_function(wrap_pyfunction!(graph::wait_for_node, m)?)?;
    m.add_function(wrap_pyfunction!(node::ros_args_error, m)?)?;
    m.add_function(wrap_pyfunction!(init, m)?)?;
    m.add_function(wrap_pyfunction!(tracing, m)?)?;
    m.add_function(wrap_pyfunction!(shutdown, m)?)?;
    m.add_function(wrap_pyfunction!(ok, m)?)?;
    m.add_function(wrap_pyfunction!(steady_ns, m)?)?;
    m.add_function(wrap_pyfunction!(log, m)?)?;
    m.add_function(wrap_pyfunction!(set_logger_level, m)?)?;
    m.add_function(wrap_pyfunction!(logger_level, m)?)?;
    m.add_function(wrap_pyfunction!(logger_effective_level, m)?)?;
    m.add_function(wrap_pyfunction!(clear_logger_levels, m)?)?;
    Ok(())
}
